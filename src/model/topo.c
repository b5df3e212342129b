/* topo.c: the topology container: storage, adjacency, parsing a spec
 * into the right kind, and the accessors every evaluator uses. */
#include "model/topo_impl.h"
#include "model/grow.h"
#include "model/text.h"

#include <stdlib.h>
#include <pthread.h>
#include <string.h>

int pm_topo_alloc(struct pm_topo *t, long long n_vert, int n_end,
		  long long nlinks, int n_ports, struct pm_err *err)
{
	if (n_vert > PM_TOPO_MAX_VERTICES)
		return pm_fail(err, PM_EINPUT,
			       "network too large: '%s' has %lld vertices (expected at most %d)",
			       t->spec, n_vert, PM_TOPO_MAX_VERTICES);
	if (nlinks > PM_TOPO_MAX_LINKS)
		return pm_fail(err, PM_EINPUT,
			       "network too large: '%s' has %lld links (expected at most %d)",
			       t->spec, nlinks, PM_TOPO_MAX_LINKS);
	if (n_ports > 0 && n_vert * n_ports > PM_TOPO_MAX_PORTS)
		return pm_fail(err, PM_EINPUT,
			       "network too large: '%s' has %lld vertices of %d ports each (expected vertices x ports at most %d)",
			       t->spec, n_vert, n_ports, PM_TOPO_MAX_PORTS);
	t->n_vert = (int)n_vert;
	t->n_end = n_end;
	t->cap_links = nlinks > 0 ? (size_t)nlinks : 1;
	t->links = calloc(t->cap_links, sizeof *t->links);
	if (n_ports > 0) {
		t->n_ports = n_ports;
		t->port = malloc(sizeof(int) * (size_t)n_vert * (size_t)n_ports);
		if (t->port)
			for (long long i = 0; i < n_vert * n_ports; i++)
				t->port[i] = -1;
	}
	if (!t->links || (n_ports > 0 && !t->port))
		return pm_fail(err, PM_EINTERNAL, "out of memory building '%s'",
			       t->spec);
	return PM_OK;
}

int pm_topo_add(struct pm_topo *t, int src, int dst, double bw, double lat,
		int port)
{
	int id = t->n_links;

	if (pm_grow(&t->links, &t->cap_links, (size_t)id + 1, sizeof *t->links, 1))
		return -1;
	t->links[t->n_links++] = (struct pm_link){src, dst, bw, lat};
	if (port >= 0 && t->port)
		t->port[src * t->n_ports + port] = id;
	return id;
}

int pm_topo_finish(struct pm_topo *t, struct pm_err *err)
{
	if (t->out_off)
		return PM_OK;	/* a kind that routes by search finished early */
	t->out_off = calloc((size_t)t->n_vert + 1, sizeof(int));
	t->out_idx = malloc(sizeof(int) * (size_t)(t->n_links ? t->n_links : 1));
	if (!t->out_off || !t->out_idx)
		return pm_fail(err, PM_EINTERNAL, "out of memory building '%s'",
			       t->spec);
	for (int i = 0; i < t->n_links; i++)
		t->out_off[t->links[i].src + 1]++;
	for (int v = 0; v < t->n_vert; v++)
		t->out_off[v + 1] += t->out_off[v];
	int *fill = malloc(sizeof(int) * (size_t)t->n_vert);
	if (!fill)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	memcpy(fill, t->out_off, sizeof(int) * (size_t)t->n_vert);
	for (int i = 0; i < t->n_links; i++)
		t->out_idx[fill[t->links[i].src]++] = i;	/* ascending link id */
	free(fill);
	return PM_OK;
}

/* The memo is the one part of a network that changes while it is priced,
 * and a command may price several algorithms at once on threads: one lock
 * for every network's memo (two threads that both miss a key both build
 * it, and both are kept until the network is freed). */
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

void *pm_topo_memo(const struct pm_topo *t, const char *key)
{
	void *data = NULL;

	pthread_mutex_lock(&memo_lock);
	for (const struct pm_memo *m = t->memo; m && !data; m = m->next)
		if (strcmp(m->key, key) == 0)
			data = m->data;
	pthread_mutex_unlock(&memo_lock);
	return data;
}

int pm_topo_memo_keep(const struct pm_topo *t, const char *key, void *data,
		      void (*free_fn)(void *))
{
	struct pm_topo *w = (struct pm_topo *)t;	/* a cache, not the network */
	struct pm_memo *m = malloc(sizeof *m);

	if (!m)
		return -1;
	pm_strlcpy(m->key, key, sizeof m->key);
	m->data = data;
	m->free_fn = free_fn;
	pthread_mutex_lock(&memo_lock);
	m->next = w->memo;
	w->memo = m;
	pthread_mutex_unlock(&memo_lock);
	return 0;
}

void pm_topo_free(struct pm_topo *t)
{
	if (!t)
		return;
	while (t->memo) {
		struct pm_memo *m = t->memo;
		t->memo = m->next;
		m->free_fn(m->data);
		free(m);
	}
	if (t->kind && t->kind->shape_free)
		t->kind->shape_free(t->shape);
	else
		free(t->shape);
	void *own[] = {&t->links, &t->out_off, &t->out_idx, &t->port, &t->next, &t->hop_lat, &t->bw, &t};
	pm_free_each(own, sizeof own / sizeof *own);
}

static int unknown_kind(const char *spec, const char *name, struct pm_err *err)
{
	int n;
	const struct pm_topo_kind *const *kinds = pm_topo_kinds(&n);
	const char *names[32];
	char msg[1200];

	for (int i = 0; i < n && i < 32; i++)
		names[i] = kinds[i]->name;
	pm_unknown_text(msg, sizeof msg, "topology kind", name, names, n < 32 ? n : 32, ", as KIND:ARGS such as torus:8x8");
	return pm_fail(err, PM_EINPUT, "%s (in '%s')", msg, spec);
}

/* Where every link has the same latency, a route's latency is its hop
 * count's: t->hop_lat[h], summed link by link as pm_topo_route_lat would
 * (the same rounding), so the evaluators need not read each link; where
 * every link has the same bandwidth, t->same_bw says so. */
static int uniform_links(struct pm_topo *t, struct pm_err *err)
{
	int same_lat = t->n_links > 0, same_bw = t->n_links > 0;

	for (int i = 1; i < t->n_links; i++) {
		same_lat &= t->links[i].lat_s == t->links[0].lat_s;
		same_bw &= t->links[i].bw_Bps == t->links[0].bw_Bps;
	}
	t->same_bw = same_bw ? t->links[0].bw_Bps : 0;
	if (!same_bw && t->n_links > 0) {
		if (!(t->bw = malloc(sizeof(double) * (size_t)t->n_links)))
			return pm_fail(err, PM_EINTERNAL, "out of memory building '%s'", t->spec);
		for (int i = 0; i < t->n_links; i++)
			t->bw[i] = t->links[i].bw_Bps;
	}
	if (!same_lat || t->max_hops < 1)
		return PM_OK;
	if (!(t->hop_lat = malloc(sizeof(double) * ((size_t)t->max_hops + 1))))
		return pm_fail(err, PM_EINTERNAL, "out of memory building '%s'", t->spec);
	t->hop_lat[0] = 0;
	for (int h = 1; h <= t->max_hops; h++)
		t->hop_lat[h] = t->hop_lat[h - 1] + t->links[0].lat_s;
	return PM_OK;
}

int pm_topo_parse(const char *spec, const struct pm_link_defaults *ld,
		  struct pm_topo **out, struct pm_err *err)
{
	const char *colon = spec ? strchr(spec, ':') : NULL;
	char name[32];
	int n, rc;
	const struct pm_topo_kind *const *kinds = pm_topo_kinds(&n);
	const struct pm_topo_kind *kind = NULL;
	struct pm_link_defaults def = {.bw_Bps = PM_DEFAULT_LINK_BW, .lat_s = PM_DEFAULT_LINK_LAT};

	if (!spec || !*spec)
		return pm_fail(err, PM_EINPUT,
			       "missing topology (expected a spec such as torus:8x8)");
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
	if (len >= sizeof name)
		return unknown_kind(spec, spec, err);
	memcpy(name, spec, len);
	name[len] = '\0';
	for (int i = 0; i < n; i++)
		if (strcmp(kinds[i]->name, name) == 0)
			kind = kinds[i];
	if (!kind)
		return unknown_kind(spec, name, err);
	if (!colon || !colon[1])
		return pm_fail(err, PM_EINPUT,
			       "topology '%s' has no arguments (expected %s)",
			       spec, kind->syntax);
	struct pm_topo *t = calloc(1, sizeof *t);
	if (!t)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	pm_strlcpy(t->spec, spec, sizeof t->spec);
	t->kind = kind;
	if (!ld)
		ld = &def;
	rc = kind->build(t, colon + 1, ld, err);
	if (rc == PM_OK && (ld->ndim_bw || ld->ndim_lat) && !kind->grid)
		rc = pm_fail(err, PM_EINPUT,
			     "per-dimension links given for '%s' (expected a ring, torus or mesh; use --link-bw and --link-lat for other networks)",
			     spec);
	if (rc == PM_OK)
		rc = pm_topo_finish(t, err);
	if (rc == PM_OK)
		rc = uniform_links(t, err);
	if (rc != PM_OK) {
		pm_topo_free(t);
		return rc;
	}
	*out = t;
	return PM_OK;
}

const char *pm_topo_spec(const struct pm_topo *t) { return t->spec; }
const char *pm_topo_kind_name(const struct pm_topo *t) { return t->kind->name; }
const struct pm_topo_kind *pm_topo_kind_of(const struct pm_topo *t) { return t->kind; }
int pm_topo_endpoints(const struct pm_topo *t) { return t->n_end; }
int pm_topo_vertices(const struct pm_topo *t) { return t->n_vert; }
int pm_topo_nlinks(const struct pm_topo *t) { return t->n_links; }
int pm_topo_max_hops(const struct pm_topo *t) { return t->max_hops; }
int pm_topo_switch_reduces(const struct pm_topo *t) { return t->switch_reduces; }
int pm_topo_nodes_reduce(const struct pm_topo *t) { return t->nodes_reduce; }
int pm_topo_net_reduces(const struct pm_topo *t) { return t->net_reduces; }
int pm_topo_min_hops(const struct pm_topo *t) { return t->min_hops; }

const struct pm_link *pm_topo_link(const struct pm_topo *t, int id)
{
	return &t->links[id];
}

double pm_topo_route_lat(const struct pm_topo *t, const int *route, int h)
{
	double lat = 0;

	if (t->hop_lat && h <= t->max_hops)
		return t->hop_lat[h];
	for (int j = 0; j < h; j++)
		lat += t->links[route[j]].lat_s;
	return lat;
}

double pm_topo_same_bw(const struct pm_topo *t)
{
	return t->same_bw;
}

const double *pm_topo_bws(const struct pm_topo *t)
{
	return t->bw;
}

const struct pm_link *pm_topo_links(const struct pm_topo *t)
{
	return t->links;
}

const int *pm_topo_out(const struct pm_topo *t, int v, int *count)
{
	*count = t->out_off[v + 1] - t->out_off[v];
	return t->out_idx + t->out_off[v];
}

int pm_topo_route(const struct pm_topo *t, int src, int dst, int *links)
{
	if (src == dst)
		return 0;
	return t->kind->route(t, src, dst, links);
}

int pm_topo_route_set(const struct pm_topo *t, int n, const int *src,
		      const int *dst, int *links, int *len)
{
	size_t H = (size_t)t->max_hops;

	if (t->kind->route_set)
		return t->kind->route_set(t, n, src, dst, links, len);
	for (int i = 0; links && i < n; i++)
		len[i] = pm_topo_route(t, src[i], dst[i], links + (size_t)i * H);
	return 0;
}

int pm_topo_routes_sets(const struct pm_topo *t)
{
	return t->kind->route_set != NULL;
}

/* Is link b the reverse of link a? */
static int reverse_of(const struct pm_topo *t, int a, int b)
{
	return t->links[a].src == t->links[b].dst && t->links[a].dst == t->links[b].src;
}

int pm_topo_mirrored(const struct pm_topo *t)
{
	int P = t->n_end, H = t->max_hops > 0 ? t->max_hops : 1, ok = 1;
	int *a = malloc(sizeof(int) * (size_t)H), *b = malloc(sizeof(int) * (size_t)H);

	if (t->kind->mirrored || !a || !b) {
		ok = t->kind->mirrored;
		goto out;
	}
	for (int p = 0; ok && p < P; p++)
		for (int c = p + 1; ok && c < P; c++) {
			int n = pm_topo_route(t, p, c, a), m = pm_topo_route(t, c, p, b);
			ok = n > 0 && m > 0 && reverse_of(t, a[0], b[m - 1]) && reverse_of(t, a[n - 1], b[0]);
		}
out:
	free(a);
	free(b);
	return ok;
}

int pm_topo_neighbors(const struct pm_topo *t, int v, int *links)
{
	int n;
	const int *out;

	if (t->kind->neighbors)
		return t->kind->neighbors(t, v, links);
	out = pm_topo_out(t, v, &n);
	for (int i = 0; i < n; i++)
		links[i] = out[i];
	return n;
}

int pm_topo_max_degree(const struct pm_topo *t)
{
	int best = 0;
	for (int v = 0; v < t->n_vert; v++)
		if (t->out_off[v + 1] - t->out_off[v] > best)
			best = t->out_off[v + 1] - t->out_off[v];
	return best;
}

int pm_topo_endpoint_degree(const struct pm_topo *t)
{
	int least = -1;
	for (int v = 0; v < t->n_end; v++)
		if (least < 0 || t->out_off[v + 1] - t->out_off[v] < least)
			least = t->out_off[v + 1] - t->out_off[v];
	return least < 0 ? 0 : least;
}

void pm_topo_slowest(const struct pm_topo *t, double *bw_Bps, double *lat_s)
{
	for (int i = 0; i < t->n_links; i++) {
		if (i == 0 || t->links[i].bw_Bps < *bw_Bps)
			*bw_Bps = t->links[i].bw_Bps;
		if (i == 0 || t->links[i].lat_s > *lat_s)
			*lat_s = t->links[i].lat_s;
	}
}

int pm_topo_closed_link(const struct pm_topo *t, const struct pm_link_defaults *ld,
			double *bw_Bps, double *lat_s)
{
	for (int i = 0; i < t->n_links; i++)
		if (t->links[i].bw_Bps != ld->bw_Bps || t->links[i].lat_s != ld->lat_s) {
			pm_topo_slowest(t, bw_Bps, lat_s);
			return 1;
		}
	return 0;
}

void pm_topo_ring_order(const struct pm_topo *t, int *order)
{
	if (t->kind->ring_order) {
		t->kind->ring_order(t, order);
		return;
	}
	for (int i = 0; i < t->n_end; i++)
		order[i] = i;
}

void pm_topo_describe(const struct pm_topo *t, struct pm_topo_info *info)
{
	memset(info, 0, sizeof *info);
	info->kind = t->kind->name;
	info->endpoints = t->n_end;
	info->switches = t->n_vert - t->n_end;
	info->links = t->n_links;
	for (int v = 0; v < t->n_vert; v++) {
		int d = t->out_off[v + 1] - t->out_off[v];
		int *slot = v < t->n_end ? &info->degree : &info->radix;
		if (d > *slot)
			*slot = d;
	}
	info->min_hops = t->min_hops;
	info->diameter = t->max_hops;
	info->bisection_Bps = -1;
	info->bisection_cut = "not computed";
	info->ring_order = "identity: rank i on endpoint i";
	t->kind->describe(t, info);
}

int pm_topo_grid(const struct pm_topo *t, int dims[3], int *wrap)
{
	if (t->kind->grid)
		return t->kind->grid(t, dims, wrap);
	dims[0] = dims[1] = dims[2] = 1;
	if (wrap)
		*wrap = 0;
	return 0;
}

int pm_topo_layers(const struct pm_topo *t, int *sizes)
{
	return t->kind->layers ? t->kind->layers(t, sizes) : 0;
}
