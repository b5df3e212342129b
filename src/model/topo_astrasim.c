/* topo_astrasim.c: astrasim:FILE.yml, an ASTRA-sim 2.0 network file
 * (Won et al., "ASTRA-sim2.0: Modeling Hierarchical Networks and
 * Disaggregated Systems for Large-model Training at Scale", ISPASS 2023;
 * the analytical backend's network.yml):
 *
 *     topology: [ Ring, FullyConnected, Switch ]
 *     npus_count: [ 4, 2, 2 ]
 *     bandwidth: [ 50.0, 25.0, 12.5 ]    # GB/s per link and direction
 *     latency: [ 500.0, 500.0, 500.0 ]   # ns per link
 *
 * The network ASTRA-sim builds from it: NPU id = x0 + k0 (x1 + k1 x2 ...),
 * dimension 0 varying fastest; along dimension d every group of k_d NPUs
 * that differ only in x_d is a Ring (each NPU linked to the next and the
 * previous, both directions), FullyConnected (a link each way between every
 * pair) or Switch (one switch of that group, a link each way to each NPU),
 * with the dimension's bandwidth and latency.  GB is 2^30 bytes, as the
 * ASTRA-sim analytical backend converts it (1 GB/s = 2^30 / 10^9 bytes a
 * nanosecond); `latency` is nanoseconds.  Routing: shortest path in links,
 * dimension by dimension from the lowest, by arithmetic on the NPU id (no
 * tables: any size up to the endpoint limit).  Parsed with libyaml (Debian libyaml-dev);
 * any other key is ignored, as ASTRA-sim ignores it.
 */
#include "model/csvread.h"
#include "model/topo_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DIMS 8
#define GIB 1073741824.0

enum { K_RING, K_FULL, K_SWITCH };
enum { F_TOPO, F_NPUS, F_BW, F_LAT, NF };
static const char *const fields[NF] = {"topology", "npus_count", "bandwidth", "latency"};

struct yml {
	const char *path;
	int n[NF];			/* items read per field */
	char kind_name[MAX_DIMS][32];
	double val[NF][MAX_DIMS];	/* numbers of npus_count, bandwidth, latency */
	int line[NF];
};

static int bad(const struct yml *y, int line, struct pm_err *err, const char *what)
{
	return pm_fail(err, PM_EINPUT, "ASTRA-sim network file '%s' line %d: %s", y->path, line, what);
}

/* One item of the flow sequence of field f. */
static int item(struct yml *y, int f, const char *v, int line, struct pm_err *err)
{
	char msg[200];

	if (y->n[f] == MAX_DIMS) {
		snprintf(msg, sizeof msg, "'%s' has more than %d dimensions (expected at most %d)", fields[f], MAX_DIMS, MAX_DIMS);
		return bad(y, line, err, msg);
	}
	if (f == F_TOPO) {
		snprintf(y->kind_name[y->n[f]++], sizeof y->kind_name[0], "%.31s", v);
		return PM_OK;
	}
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	/* a rate from 1 B/s to 1 PB/s, as every bandwidth perfmodel reads */
	double lo = f == F_BW ? 1.0 / GIB : 0, hi = f == F_NPUS ? PM_TOPO_MAX_VERTICES : f == F_BW ? 1e15 / GIB : 1e9;
	if (*end || end == v || errno || !isfinite(x) || (f == F_LAT ? x < 0 : x <= 0) || (f == F_BW && x < lo) || x > hi) {
		snprintf(msg, sizeof msg, "invalid %s '%.60s' (expected %s)", fields[f], v,
			 f == F_NPUS ? "a whole number of NPUs from 1" : f == F_BW ? "GB/s from 1e-9 (1 B/s) to 1e6 (1 PB/s)" : "ns, 0 to 1e9");
		return bad(y, line, err, msg);
	}
	if (f == F_NPUS && x != floor(x)) {
		snprintf(msg, sizeof msg, "invalid npus_count '%.60s' (expected a whole number)", v);
		return bad(y, line, err, msg);
	}
	y->val[f][y->n[f]++] = x;
	return PM_OK;
}

/* Where the walk stands: mapping depth, the key being read, inside a
 * list, a key expected next, the end reached. */
struct walk {
	int depth, field, in_seq, want_key, done;
};

/* A scalar: a list item, a key, or a key's single value. */
static int on_scalar(struct yml *y, struct walk *w, const char *v, int line, struct pm_err *err)
{
	int rc = PM_OK;

	if (w->in_seq)
		return w->field >= 0 ? item(y, w->field, v, line, err) : PM_OK;
	if (w->want_key) {
		w->field = -1;
		for (int k = 0; k < NF; k++)
			if (!strcmp(v, fields[k]))
				w->field = k;
		if (w->field >= 0 && y->line[w->field])
			rc = bad(y, line, err, "key given twice");
		if (w->field >= 0)
			y->line[w->field] = line;
		w->want_key = 0;
		return rc;
	}
	if (w->field >= 0)	/* a key with one scalar: one dimension */
		rc = item(y, w->field, v, line, err);
	w->want_key = 1;
	w->field = -1;
	return rc;
}

/* One event of the document. */
static int on_event(struct yml *y, struct walk *w, const yaml_event_t *e, struct pm_err *err)
{
	int line = (int)e->start_mark.line + 1;

	switch (e->type) {
	case YAML_STREAM_END_EVENT:
		w->done = 1;
		return PM_OK;
	case YAML_MAPPING_START_EVENT:
		w->want_key = 1;
		if (++w->depth > 1)
			return bad(y, line, err, "nested mapping (expected flat keys with lists such as npus_count: [4, 4])");
		return PM_OK;
	case YAML_MAPPING_END_EVENT:
		w->depth--;
		return PM_OK;
	case YAML_SEQUENCE_START_EVENT:
		if (w->in_seq || w->want_key)
			return bad(y, line, err, "nested list (expected lists of numbers or topology names)");
		w->in_seq = 1;
		return PM_OK;
	case YAML_SEQUENCE_END_EVENT:
		w->in_seq = 0;
		w->want_key = 1;
		w->field = -1;
		return PM_OK;
	case YAML_ALIAS_EVENT:
		return bad(y, line, err, "a YAML alias (expected the values written out: perfmodel does not follow anchors)");
	case YAML_SCALAR_EVENT:
		return on_scalar(y, w, (const char *)e->data.scalar.value, line, err);
	default:
		return PM_OK;
	}
}

/* Walk the events: a mapping whose four keys hold sequences of scalars. */
static int read_yml(struct yml *y, FILE *f, struct pm_err *err)
{
	yaml_parser_t p;
	yaml_event_t e;
	struct walk w = {0, -1, 0, 0, 0};
	int rc = PM_OK;

	if (!yaml_parser_initialize(&p))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	yaml_parser_set_input_file(&p, f);
	while (!rc && !w.done) {
		if (!yaml_parser_parse(&p, &e)) {
			char msg[200];
			snprintf(msg, sizeof msg, "not YAML: %.120s (expected keys topology, npus_count, bandwidth, latency)",
				 p.problem ? p.problem : "syntax error");
			rc = bad(y, (int)p.problem_mark.line + 1, err, msg);
			break;
		}
		rc = on_event(y, &w, &e, err);
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	return rc;
}

static int check(struct yml *y, int *kinds, struct pm_err *err)
{
	char msg[200];

	for (int f = 0; f < NF; f++)
		if (!y->line[f] || y->n[f] == 0) {
			snprintf(msg, sizeof msg, "no '%s' (expected topology, npus_count, bandwidth and latency, one item per dimension)", fields[f]);
			return bad(y, 1, err, msg);
		}
	for (int f = 1; f < NF; f++)
		if (y->n[f] != y->n[F_TOPO]) {
			snprintf(msg, sizeof msg, "'%s' has %d items and 'topology' %d (expected one per dimension)",
				 fields[f], y->n[f], y->n[F_TOPO]);
			return bad(y, y->line[f], err, msg);
		}
	for (int d = 0; d < y->n[F_TOPO]; d++) {
		const char *k = y->kind_name[d];
		kinds[d] = !strcmp(k, "Ring") ? K_RING : !strcmp(k, "FullyConnected") ? K_FULL
			: !strcmp(k, "Switch") ? K_SWITCH : -1;
		if (kinds[d] < 0) {
			snprintf(msg, sizeof msg, "unknown topology '%s' (expected Ring, FullyConnected or Switch)", k);
			return bad(y, y->line[F_TOPO], err, msg);
		}
	}
	return PM_OK;
}

/* The network's shape for routing by arithmetic (the kind's own,
 * t->shape): per dimension its kind, size, NPU id stride
 * and the first of its ports.  An NPU's ports: a Ring dimension 2 (+1,
 * -1), a FullyConnected one k (to member j), a Switch one 1 (up); a
 * switch's ports: its k members. */
struct geo {
	int D, kind[MAX_DIMS], k[MAX_DIMS], stride[MAX_DIMS], base[MAX_DIMS];
};

static int width(int kind, int k)
{
	return k < 2 ? 0 : kind == K_RING ? 2 : k;	/* FullyConnected: a port per member; Switch: the switch's members */
}

/* Shortest path, dimension by dimension from dimension 0: the path the
 * breadth-first tables gave (among equal next hops the link added first:
 * the lower dimension's; on a ring at exactly half way, the -1 link, added
 * before the +1 one, except at member 0, whose -1 link closes the ring
 * last).  A test holds every route to the tables'. */
static int route(const struct pm_topo *t, int src, int dst, int *links)
{
	const struct geo *g = t->shape;
	int hops = 0, v = src;

	for (int d = 0; d < g->D; d++) {
		int k = g->k[d], st = g->stride[d], c = v / st % k, want = dst / st % k;
		if (k < 2 || c == want)
			continue;
		if (g->kind[d] == K_FULL) {
			links[hops++] = pm_port_link(t, v, g->base[d] + want);
			v += (want - c) * st;
		} else if (g->kind[d] == K_SWITCH) {
			int up = pm_port_link(t, v, g->base[d]), sw = t->links[up].dst;
			links[hops++] = up;
			links[hops++] = pm_port_link(t, sw, g->base[d] + want);
			v += (want - c) * st;
		} else {
			int fwd = (want - c + k) % k, dir = fwd < k - fwd ? 0 : fwd > k - fwd ? 1 : c == 0 ? 0 : 1;
			for (int n = dir ? k - fwd : fwd; n > 0; n--) {
				links[hops++] = pm_port_link(t, v, g->base[d] + dir);
				int next = dir ? (c + k - 1) % k : (c + 1) % k;
				v += (next - c) * st;
				c = next;
			}
		}
	}
	return hops;
}

/* NPUs, switches and links the dimensions make. */
static int count_shape(const struct yml *y, const int *kinds, const char *args, long long *N,
		       long long *nsw, long long *nlinks, struct pm_err *err)
{
	int D = y->n[F_TOPO];

	*N = 1;
	*nsw = *nlinks = 0;
	for (int d = 0; d < D; d++) {
		*N *= (long long)y->val[F_NPUS][d];
		if (*N > PM_TOPO_MAX_VERTICES)
			return pm_fail(err, PM_EINPUT, "ASTRA-sim network file '%s' has more than %d NPUs (expected at most %d)",
				       args, PM_TOPO_MAX_VERTICES, PM_TOPO_MAX_VERTICES);
	}
	for (int d = 0; d < D; d++) {
		long long k = (long long)y->val[F_NPUS][d], groups = *N / k;
		if (k < 2)
			continue;
		*nlinks += groups * (kinds[d] == K_FULL ? k * (k - 1) : 2 * k);
		*nsw += kinds[d] == K_SWITCH ? groups : 0;
	}
	if (*N < 2)
		return pm_fail(err, PM_EINPUT, "ASTRA-sim network file '%s' has %lld NPU (expected at least 2: nothing to reduce)", args, *N);
	return PM_OK;
}

/* Dimension d's links: a ring's two directions, a full mesh's pairs, or
 * every NPU to its group's switch and back; *sw is the next switch id. */
static void add_dim(struct pm_topo *t, const struct yml *y, const struct geo *g, int d, long long N, int *sw)
{
	int k = g->k[d], pb = g->base[d], stride = g->stride[d], kind = g->kind[d];
	double bw = y->val[F_BW][d] * GIB, lat = y->val[F_LAT][d] * 1e-9;

	if (k < 2)
		return;
	for (int base = 0; base < N; base++) {
		if ((base / stride) % k)
			continue;	/* one group per base with x_d = 0 */
		for (int i = 0; i < k; i++) {
			int a = base + i * stride;
			if (kind == K_RING) {	/* a's +1 port, b's -1 port */
				int b = base + ((i + 1) % k) * stride;
				pm_topo_add(t, a, b, bw, lat, pb);
				pm_topo_add(t, b, a, bw, lat, pb + 1);
			} else if (kind == K_FULL) {
				for (int j = 0; j < k; j++)
					if (j != i)
						pm_topo_add(t, a, base + j * stride, bw, lat, pb + j);
			} else {
				pm_topo_add(t, a, *sw, bw, lat, pb);
				pm_topo_add(t, *sw, a, bw, lat, pb + i);
			}
		}
		*sw += kind == K_SWITCH;
	}
}

/* The longest and shortest routes between NPUs, in links. */
static void set_hops(struct pm_topo *t, const struct geo *g)
{
	t->max_hops = 0;
	for (int d = 0; d < g->D; d++) {
		int k = g->k[d];
		t->max_hops += k < 2 ? 0 : g->kind[d] == K_RING ? k / 2 : g->kind[d] == K_FULL ? 1 : 2;
	}
	t->min_hops = 1;
	for (int d = 0; d < g->D; d++)
		if (g->kind[d] == K_SWITCH && g->k[d] >= 2 && t->min_hops == 1) {
			int others = 0;
			for (int e = 0; e < g->D; e++)
				others += e != d && g->k[e] >= 2 && g->kind[e] != K_SWITCH;
			t->min_hops = others ? 1 : 2;
		}
}

/* Vertex ids: NPUs 0..N-1, then the switches of each Switch dimension. */
static int build(struct pm_topo *t, const char *args, const struct pm_link_defaults *ld,
		 struct pm_err *err)
{
	struct yml y = {.path = args};
	int kinds[MAX_DIMS], D, rc, ports = 0;
	long long N, nsw, nlinks;
	FILE *f = pm_input_open(args, "ASTRA-sim network file", err);

	(void)ld;
	if (!f)
		return PM_EINPUT;
	rc = read_yml(&y, f, err);
	fclose(f);
	if (rc || (rc = check(&y, kinds, err)) || (rc = count_shape(&y, kinds, args, &N, &nsw, &nlinks, err)))
		return rc;
	D = y.n[F_TOPO];
	struct geo *g = calloc(1, sizeof *g);
	if (!(t->shape = g))
		return pm_fail(err, PM_EINTERNAL, "out of memory building '%s'", t->spec);
	g->D = D;
	for (int d = 0, stride = 1; d < D; stride *= (int)y.val[F_NPUS][d], d++) {
		g->kind[d] = kinds[d], g->k[d] = (int)y.val[F_NPUS][d], g->stride[d] = stride, g->base[d] = ports;
		ports += width(kinds[d], g->k[d]);
	}
	if ((rc = pm_topo_alloc(t, N + nsw, (int)N, nlinks, ports, err)))
		return rc;
	int sw = (int)N;
	for (int d = 0; d < D; d++)
		add_dim(t, &y, g, d, N, &sw);
	if (t->n_links != nlinks)
		return pm_fail(err, PM_EINTERNAL, "out of memory building '%s'", t->spec);
	if ((rc = pm_topo_finish(t, err)))
		return rc;
	set_hops(t, g);
	return PM_OK;
}

static void describe(const struct pm_topo *t, struct pm_topo_info *info)
{
	(void)t;
	info->routing = "shortest path in links; among equal next hops the lower dimension";
	info->bisection_cut = "not computed for ASTRA-sim networks";
}

/* Its dimensions of more than one NPU, dimension 0 (the innermost)
 * first: hring's default layers, the per-dimension all-reduce ASTRA-sim
 * runs. */
static int layers(const struct pm_topo *t, int *sizes)
{
	const struct geo *g = t->shape;
	int n = 0;

	for (int d = 0; d < g->D; d++)
		if (g->k[d] > 1)
			sizes[n++] = g->k[d];
	return n;
}

const struct pm_topo_kind pm_topo_astrasim = {
	.name = "astrasim",
	.syntax = "astrasim:FILE.yml",
	.summary = "an ASTRA-sim 2.0 network.yml: topology [Ring|FullyConnected|Switch, ...], npus_count, bandwidth (GB/s = 2^30 B/s), latency (ns) per dimension",
	.build = build,
	.route = route,
	.describe = describe,
	.turns = 1,
	.layers = layers,
};
