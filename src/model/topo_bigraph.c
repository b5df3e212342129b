/* topo_bigraph.c: bigraph:MxN, the two-layer BiGraph of EFLOPS (Dong et
 * al., HPCA 2020) as Huang et al. 2021 §VI-A evaluates it ("4x8" = 32 nodes, "4x16"
 * = 64): N switches, the first N/2 the upper layer and the rest the lower
 * layer, every upper switch linked to every lower one, no links inside a
 * layer, M endpoints under each switch (endpoint e under switch e / M).
 * This is the wiring of the MULTITREE authors' simulator.
 *
 * Routing: endpoint -> switch -> endpoint under one switch; across the
 * layers through the one switch-to-switch link; between two switches of
 * the same layer through lower/upper switch (dst mod M) mod (N/2) of the
 * other layer.  Ring order alternates upper and lower switches so every
 * ring neighbour is one switch-to-switch link away and, while M <= N/2, no
 * such link carries two ring hops.
 */
#include "model/topo_impl.h"

#include <stdlib.h>

extern const struct pm_topo_kind pm_topo_bigraph_kind;

/* The BiGraph's shape, the kind's own (t->shape). */
struct bigraph {
	int m, n;	/* endpoints per switch, switches */
};

static const struct bigraph *bigraph_of(const struct pm_topo *t)
{
	return t->shape;
}

static int build(struct pm_topo *t, const char *args,
		 const struct pm_link_defaults *ld, struct pm_err *err)
{
	char *end;
	long m = strtol(args, &end, 10), n;
	int rc;

	if (end == args || *end != 'x' || m < 1 || m > 65536)
		goto bad;
	n = strtol(end + 1, &end, 10);
	if (*end || n < 2 || n % 2 || n > 65536)
		goto bad;
	if ((double)m * (double)n + (double)n > PM_TOPO_MAX_VERTICES)
		return pm_fail(err, PM_EINPUT,
			       "network too large: '%s' has %ld endpoints (expected at most %d vertices)",
			       t->spec, m * n, PM_TOPO_MAX_VERTICES);
	long half = n / 2, e = m * n;
	struct bigraph *g = malloc(sizeof *g);
	if (!(t->shape = g))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	g->m = (int)m;
	g->n = (int)n;
	rc = pm_topo_alloc(t, e + n, (int)e, 2 * e + 2 * half * half,
			   (int)(m + half), err);
	if (rc)
		return rc;
	for (int ep = 0; ep < e; ep++) {
		int sw = (int)e + ep / (int)m;
		pm_topo_add(t, ep, sw, ld->bw_Bps, ld->lat_s, 0);
		pm_topo_add(t, sw, ep, ld->bw_Bps, ld->lat_s, ep % (int)m);
	}
	for (int u = 0; u < half; u++)
		for (int l = 0; l < half; l++) {
			int su = (int)e + u, sl = (int)(e + half + l);
			pm_topo_add(t, su, sl, ld->bw_Bps, ld->lat_s, (int)m + l);
			pm_topo_add(t, sl, su, ld->bw_Bps, ld->lat_s, (int)m + u);
		}
	t->max_hops = half > 1 ? 4 : (e > m ? 3 : 2);
	t->min_hops = e > 1 ? 2 : 0;
	if (m == 1)
		t->min_hops = 3;
	return PM_OK;
bad:
	return pm_fail(err, PM_EINPUT,
		       "invalid topology '%s' (expected bigraph:MxN with M endpoints per switch and an even number N of switches, such as bigraph:4x8)",
		       t->spec);
}

static int route(const struct pm_topo *t, int src, int dst, int *links)
{
	int m = bigraph_of(t)->m, half = bigraph_of(t)->n / 2, hops = 0;
	int ss = src / m, sd = dst / m;	/* switch indices 0..N-1 */
	int sw0 = t->n_end;

	links[hops++] = pm_port_link(t, src, 0);
	if (ss != sd) {
		int up_s = ss < half, up_d = sd < half;
		if (up_s == up_d) {	/* detour through the other layer */
			int mid = (dst % m) % half;
			int mid_sw = up_s ? half + mid : mid;
			links[hops++] = pm_port_link(t, sw0 + ss, m + mid);
			links[hops++] = pm_port_link(t, sw0 + mid_sw,
						     m + (up_s ? sd : sd - half));
		} else {
			links[hops++] = pm_port_link(t, sw0 + ss,
						     m + (up_d ? sd : sd - half));
		}
	}
	links[hops++] = pm_port_link(t, sw0 + sd, dst % m);
	return hops;
}

static void ring_order(const struct pm_topo *t, int *order)
{
	int m = bigraph_of(t)->m, half = bigraph_of(t)->n / 2, n = 0;

	for (int i = 0; i < m; i++)
		for (int j = 0; j < half; j++) {
			order[n++] = j * m + i;
			order[n++] = (half + (j + i) % half) * m + i;
		}
}

static void describe(const struct pm_topo *t, struct pm_topo_info *info)
{
	int half = bigraph_of(t)->n / 2;
	double bw = t->links[0].bw_Bps;
	double cross = (double)(half / 2) * (half - half / 2) * 2;
	double ends = t->n_end / 2;

	info->routing = "up/down through one switch-to-switch link; same-layer switches via switch (dst mod M) mod N/2 of the other layer";
	info->ring_order = "alternating upper and lower switches, one switch-to-switch link per ring hop";
	info->bisection_Bps = (cross < ends ? cross : ends) * bw;
	info->bisection_cut = "half of each layer's switches on each side";
}

static int layers(const struct pm_topo *t, int *sizes)	/* endpoints per switch, switches */
{
	int n = 0;

	if (bigraph_of(t)->m > 1)
		sizes[n++] = bigraph_of(t)->m;
	sizes[n++] = bigraph_of(t)->n;
	return n;
}

int pm_topo_bigraph(const struct pm_topo *t, int *per_switch, int *switches)
{
	int is = t->kind == &pm_topo_bigraph_kind;

	*per_switch = is ? bigraph_of(t)->m : 0;
	*switches = is ? bigraph_of(t)->n : 0;
	return is;
}

const struct pm_topo_kind pm_topo_bigraph_kind = {
	.name = "bigraph",
	.syntax = "bigraph:MxN",
	.summary = "EFLOPS BiGraph: N switches in two layers, fully linked across layers, M endpoints per switch",
	.build = build,
	.route = route,
	.ring_order = ring_order,
	.describe = describe,
	.mirrored = 1,	/* an endpoint has one link each way */
	.turns = 1,
	.layers = layers,
};
