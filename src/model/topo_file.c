/* topo_file.c: file:PATH.csv, a network given as an edge list.
 *
 * Header row: src,dst,bandwidth,latency[,direction].  A vertex named by a
 * non-negative integer is an endpoint (they must be numbered 0..N-1); any
 * other name ("s0", "spine1") is a switch.  bandwidth and latency take
 * units (16GB/s, 150ns) or are left empty for the --link-bw/--link-lat
 * defaults; direction is "both" (default: a full-duplex cable, two links)
 * or "one".  Lines starting with # are comments.  Routing is shortest path
 * in links; among equal next hops a vertex sends each destination by the
 * one the fewest destinations so far leave by (the first listed among
 * those), destinations in endpoint order: the port balancing of OpenSM's
 * default MinHop routing engine, so a leaf cabled to two spines sends
 * even destinations through one and odd ones through the other.
 */
#include "model/topo_impl.h"
#include "model/grow.h"
#include "model/text.h"
#include "model/units.h"

#include "model/csvread.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COL_SRC, COL_DST, COL_BW, COL_LAT, COL_DIR, NCOLS };
static const char *const col_names[NCOLS] = {"src", "dst", "bandwidth",
					     "latency", "direction"};

/* Twice the most names a file may have, so probing always ends. */
#define NSLOTS (2 * PM_TOPO_MAX_FILE_VERTICES)

/* Routing costs one breadth-first search per endpoint: endpoints x
 * (vertices + links) steps, refused above this before any work. */
#define ROUTE_BUDGET (1LL << 30)

struct edge {
	int a, b;		/* vertex name indices */
	double bw, lat;
	int both;
};

struct reader {
	const char *path;
	const struct pm_link_defaults *ld;
	int map[NCOLS];		/* header position of each column, -1 */
	char **names;		/* vertex names in order of first use */
	int nnames;
	size_t capnames;
	int slot[NSLOTS];	/* open-addressing index of names: name + 1, 0 free */
	struct edge *edges;
	int nedges;
	size_t capedges;
};

static unsigned name_hash(const char *s)
{
	unsigned h = 2166136261u;	/* FNV-1a */
	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % NSLOTS;
}

static int name_index(struct reader *r, const char *s, struct pm_err *err)
{
	unsigned h = name_hash(s);
	for (; r->slot[h]; h = (h + 1) % NSLOTS)
		if (strcmp(r->names[r->slot[h] - 1], s) == 0)
			return r->slot[h] - 1;
	if (r->nnames >= PM_TOPO_MAX_FILE_VERTICES)
		return -pm_fail(err, PM_EINPUT,
				"topology file '%s' has more than %d vertices (expected at most %d)",
				r->path, PM_TOPO_MAX_FILE_VERTICES, PM_TOPO_MAX_FILE_VERTICES);
	if (pm_grow(&r->names, &r->capnames, (size_t)r->nnames + 1, sizeof *r->names, 64) ||
	    !(r->names[r->nnames] = strdup(s)))
		return -pm_fail(err, PM_EINTERNAL, "out of memory");
	r->slot[h] = r->nnames + 1;
	return r->nnames++;
}

static int row_error(struct reader *r, int row, const char *what,
		     const char *value, const char *expected, struct pm_err *err)
{
	return pm_fail(err, PM_EINPUT, "topology file '%s' row %d: invalid %s '%s' (expected %s)",
		       r->path, row, what, value, expected);
}

static const char *cell(const struct reader *r, char *const *cells, int n, int c)
{
	int i = r->map[c];
	return i >= 0 && i < n ? cells[i] : NULL;
}

static int take_row(struct reader *r, int row, char *const *cells, int n,
		    struct pm_err *err)
{
	struct edge e = {0, 0, r->ld->bw_Bps, r->ld->lat_s, 1};
	const char *s = cell(r, cells, n, COL_SRC), *d = cell(r, cells, n, COL_DST);
	const char *bw = cell(r, cells, n, COL_BW), *lat = cell(r, cells, n, COL_LAT);
	const char *dir = cell(r, cells, n, COL_DIR);
	struct pm_err sub;

	if (!s || !d || !*s || !*d)
		return pm_fail(err, PM_EINPUT,
			       "topology file '%s' row %d: missing src or dst (expected a vertex name in each)",
			       r->path, row);
	if (strcmp(s, d) == 0)
		return row_error(r, row, "link", s, "two different vertices", err);
	if (bw && *bw && pm_parse_bw(bw, &e.bw, &sub))
		return row_error(r, row, "bandwidth", bw, "a rate such as 16GB/s or 100Gbps", err);
	if (lat && *lat && pm_parse_time(lat, &e.lat, &sub))
		return row_error(r, row, "latency", lat, "a duration such as 150ns", err);
	if (dir && *dir) {
		if (strcmp(dir, "one") == 0)
			e.both = 0;
		else if (strcmp(dir, "both") != 0)
			return row_error(r, row, "direction", dir, "both or one", err);
	}
	if ((e.a = name_index(r, s, err)) < 0)
		return -e.a;
	if ((e.b = name_index(r, d, err)) < 0)
		return -e.b;
	if (pm_grow(&r->edges, &r->capedges, (size_t)r->nedges + 1, sizeof *r->edges, 64))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	r->edges[r->nedges++] = e;
	return PM_OK;
}

static int on_row(void *ctx, int row, char *const *cells, int n, struct pm_err *err)
{
	struct reader *r = ctx;

	if (row > 0)
		return take_row(r, row, cells, n, err);
	for (int c = 0; c < NCOLS; c++) {
		r->map[c] = pm_csv_column(cells, n, col_names[c]);
		if (r->map[c] < 0 && c < COL_DIR)
			return pm_fail(err, PM_EINPUT,
				       "topology file '%s' has no '%s' column (expected a header row src,dst,bandwidth,latency[,direction])",
				       r->path, col_names[c]);
	}
	return PM_OK;
}

static int read_file(struct reader *r, struct pm_err *err)
{
	int rc = pm_csv_read(r->path, "topology file", on_row, NULL, r, err);
	if (!rc && r->nedges == 0)
		rc = pm_fail(err, PM_EINPUT,
			     "topology file '%s' has no links (expected one row per link after the header)",
			     r->path);
	return rc;
}

/* Endpoint number of a name, or -1 for a switch name. */
static long endpoint_of(const char *s)
{
	char *end;
	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	long v = strtol(s, &end, 10);
	return *end || errno ? -2 : v;
}

/* The search's arrays: distances and queue per vertex, the in-links of
 * every vertex (in_off, in_idx: their sources), the head of every
 * out-link and how many destinations leave by each link so far. */
struct bfs {
	int *dist, *queue, *in_off, *in_idx, *out_dst, *through;
};

static void bfs_free(struct bfs *z)
{
	free(z->dist);
	free(z->queue);
	free(z->in_off);
	free(z->in_idx);
	free(z->out_dst);
	free(z->through);
}

/* Allocate z and index the links both ways (in-links by their head,
 * out-links' heads in out_idx order). */
static int bfs_init(const struct pm_topo *t, struct bfs *z)
{
	int V = t->n_vert;
	int *pos = malloc(sizeof(int) * (size_t)V);

	z->dist = malloc(sizeof(int) * (size_t)V);
	z->queue = malloc(sizeof(int) * (size_t)V);
	z->in_off = calloc((size_t)V + 1, sizeof(int));
	z->in_idx = malloc(sizeof(int) * (size_t)(t->n_links + 1));
	z->out_dst = malloc(sizeof(int) * (size_t)(t->n_links + 1));
	z->through = calloc((size_t)t->n_links + 1, sizeof(int));
	if (!pos || !z->dist || !z->queue || !z->in_off || !z->in_idx || !z->out_dst || !z->through) {
		free(pos);
		return -1;
	}
	for (int i = 0; i < t->n_links; i++)
		z->in_off[t->links[i].dst + 1]++;
	for (int v = 0; v < V; v++)
		z->in_off[v + 1] += z->in_off[v];
	memcpy(pos, z->in_off, sizeof(int) * (size_t)V);
	for (int i = 0; i < t->n_links; i++)	/* the source of each in-link, */
		z->in_idx[pos[t->links[i].dst]++] = t->links[i].src;
	for (int j = 0; j < t->n_links; j++)	/* the head of each out-link: */
		z->out_dst[j] = t->links[t->out_idx[j]].dst;	/* both read in order */
	free(pos);
	return 0;
}

/* Every vertex's hop distance to d over the links (-1: none). */
static void bfs_to(const struct pm_topo *t, struct bfs *z, int d)
{
	int head = 0, tail = 0;

	for (int v = 0; v < t->n_vert; v++)
		z->dist[v] = -1;
	z->dist[d] = 0;
	z->queue[tail++] = d;
	while (head < tail) {
		int v = z->queue[head++];
		for (int j = z->in_off[v]; j < z->in_off[v + 1]; j++) {
			int u = z->in_idx[j];
			if (z->dist[u] < 0) {
				z->dist[u] = z->dist[v] + 1;
				z->queue[tail++] = u;
			}
		}
	}
}

/* Each vertex's next link toward d (t->next), one hop nearer; with
 * balance the one the fewest destinations leave by so far.  Fails when
 * an endpoint cannot reach d. */
static int next_toward(struct pm_topo *t, struct bfs *z, int d, int balance, struct pm_err *err)
{
	int V = t->n_vert, N = t->n_end;

	for (int v = 0; v < V; v++) {
		int best = -1, dv = z->dist[v];
		if (v < N && v != d && dv < 0)
			return pm_fail(err, PM_EINPUT,
				       "topology file '%s': endpoint %d cannot reach endpoint %d (expected a connected network)",
				       t->spec + 5, v, d);
		for (int j = t->out_off[v]; dv > 0 && j < t->out_off[v + 1]; j++)
			if (z->dist[z->out_dst[j]] == dv - 1) {
				int l = t->out_idx[j];	/* ascending: the first is the lowest */
				if (best < 0 || z->through[l] < z->through[best])
					best = l;
				if (!balance)
					break;
			}
		if (best >= 0)
			z->through[best]++;
		t->next[(size_t)d * V + v] = best;
		if (v < N && v != d) {
			if (dv > t->max_hops)
				t->max_hops = dv;
			if (dv < t->min_hops)
				t->min_hops = dv;
		}
	}
	return PM_OK;
}

/* Breadth-first search toward every endpoint over reversed links; at
 * each vertex the route takes a link one step nearer.  Among several,
 * balance = 0 takes the first listed; balance = 1 the one the fewest
 * destinations so far leave by, the first listed among those: the
 * port balancing of OpenSM's default MinHop routing engine, destinations
 * in endpoint order. */
int pm_topo_route_shortest(struct pm_topo *t, int balance, struct pm_err *err)
{
	int V = t->n_vert, N = t->n_end, rc = PM_OK;
	long long cost = (long long)N * ((long long)V + t->n_links);
	struct bfs z = {0};

	if (cost > ROUTE_BUDGET)
		return pm_fail(err, PM_EINPUT,
			       "network '%s' is too large to route: %d endpoints x (%d vertices + %d links) = %lld search steps (expected at most %lld; fewer links or endpoints)",
			       t->spec, N, V, t->n_links, cost, ROUTE_BUDGET);
	t->next = malloc(sizeof(int) * (size_t)N * (size_t)V);
	if (!t->next || bfs_init(t, &z)) {
		bfs_free(&z);
		return pm_fail(err, PM_EINTERNAL, "out of memory routing '%s'", t->spec);
	}
	t->max_hops = 0;
	t->min_hops = 1 << 30;
	for (int d = 0; d < N && !rc; d++) {
		bfs_to(t, &z, d);
		rc = next_toward(t, &z, d, balance, err);
	}
	if (N < 2)
		t->min_hops = 0;
	bfs_free(&z);
	return rc;
}

/* Each name's endpoint number (-1: a switch) into epid, and the
 * endpoint count: numbers 0 to N-1 without gaps, at least one. */
static int number_endpoints(const struct reader *r, const char *args, long *epid, int *nend,
			    struct pm_err *err)
{
	char *seen;

	*nend = 0;
	for (int i = 0; i < r->nnames; i++) {
		epid[i] = endpoint_of(r->names[i]);
		if (epid[i] == -2 || epid[i] >= PM_TOPO_MAX_FILE_VERTICES)
			return pm_fail(err, PM_EINPUT,
				       "topology file '%s': invalid vertex name '%s' (expected an endpoint number below %d or a switch name starting with a letter)",
				       args, r->names[i], PM_TOPO_MAX_FILE_VERTICES);
		if (epid[i] >= 0 && epid[i] + 1 > *nend)
			*nend = (int)epid[i] + 1;
	}
	if (*nend == 0)
		return pm_fail(err, PM_EINPUT,
			       "topology file '%s' has no endpoints (expected vertices named 0, 1, ... for the accelerators)",
			       args);
	if (!(seen = calloc((size_t)*nend, 1)))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int i = 0; i < r->nnames; i++)
		if (epid[i] >= 0)
			seen[epid[i]] = 1;
	for (long want = 0; want < *nend; want++)	/* no gaps in 0..N-1 */
		if (!seen[want]) {
			free(seen);
			return pm_fail(err, PM_EINPUT,
				       "topology file '%s' has no endpoint %ld (expected endpoints numbered 0 to %d without gaps)",
				       args, want, *nend - 1);
		}
	free(seen);
	return PM_OK;
}

/* The network of r's links: endpoints first, then the switches in the
 * order they are named; routed by shortest paths, ports balanced. */
static int add_links(struct pm_topo *t, const struct reader *r, const long *epid, int nend, int *vid,
		     struct pm_err *err)
{
	int nsw = 0, rc;
	long long nlinks = 0;

	for (int i = 0; i < r->nnames; i++)
		vid[i] = epid[i] >= 0 ? (int)epid[i] : nend + nsw++;
	for (int i = 0; i < r->nedges; i++)
		nlinks += r->edges[i].both ? 2 : 1;
	rc = pm_topo_alloc(t, nend + nsw, nend, nlinks, 0, err);
	for (int i = 0; !rc && i < r->nedges; i++) {
		const struct edge *e = &r->edges[i];
		pm_topo_add(t, vid[e->a], vid[e->b], e->bw, e->lat, -1);
		if (e->both)
			pm_topo_add(t, vid[e->b], vid[e->a], e->bw, e->lat, -1);
	}
	if (!rc)
		rc = pm_topo_finish(t, err);
	if (!rc)
		rc = pm_topo_route_shortest(t, 1, err);
	return rc;
}

static int build(struct pm_topo *t, const char *args,
		 const struct pm_link_defaults *ld, struct pm_err *err)
{
	struct reader r = {.path = args, .ld = ld};
	int rc = read_file(&r, err), nend = 0;
	int *vid = NULL;
	long *epid = NULL;

	if (!rc) {
		vid = malloc(sizeof(int) * (size_t)r.nnames);
		epid = malloc(sizeof(long) * (size_t)r.nnames);
		if (!vid || !epid)
			rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	if (!rc)
		rc = number_endpoints(&r, args, epid, &nend, err);
	if (!rc)
		rc = add_links(t, &r, epid, nend, vid, err);
	pm_free_strings(r.names, r.nnames);
	free(r.edges);
	free(vid);
	free(epid);
	return rc;
}

int pm_topo_route_table(const struct pm_topo *t, int src, int dst, int *links)
{
	int v = src, hops = 0;

	while (v != dst) {
		int l = t->next[(size_t)dst * t->n_vert + v];
		links[hops++] = l;
		v = t->links[l].dst;
	}
	return hops;
}

static void describe(const struct pm_topo *t, struct pm_topo_info *info)
{
	(void)t;
	info->routing = "shortest path in links; among equal next hops the one fewest destinations use so far, first listed on a tie (OpenSM MinHop balancing)";
	info->bisection_cut = "not computed for file topologies";
}

const struct pm_topo_kind pm_topo_file = {
	.name = "file",
	.syntax = "file:PATH.csv",
	.summary = "edge list with header src,dst,bandwidth,latency[,direction]",
	.build = build,
	.route = pm_topo_route_table,
	.describe = describe,
	.turns = 1,
};
