/* topo_fattree.c: fattree:K,L, the K-ary L-tree (Petrini & Vanneschi):
 * K^L endpoints, L levels of K^(L-1) switches, K links down and K up from
 * every switch below the top.  fattree:8,2 is the 64-node network of seed
 * 000 §VI-A; fattree:4,2 is our 16-node one.
 *
 * A switch at level l (1 = leaf) has L-1 base-K digits u_0..u_(L-2):
 * u_(l-1).. are the endpoint digits a_l.. of its subtree, u_0..u_(l-2)
 * say which of the parallel switches it is.  Up port j of (l, w) leads to
 * (l+1, w with u_(l-1) = j); down port d of (l+1, w') leads back to
 * (l, w' with u_(l-1) = d).  Routing is up/down: climb to the lowest level
 * that covers both endpoints choosing up port a_(l-1)(dst) at level l
 * (destination-mod-K), then the unique way down.
 */
#include "model/topo_impl.h"
#include "model/edgecolor.h"

#include <stdio.h>
#include <stdlib.h>

static long ipow(long k, int e)
{
	long r = 1;
	while (e-- > 0)
		r *= k;
	return r;
}

static int digit(long w, int i, int k)
{
	return (int)((w / ipow(k, i)) % k);
}

static long set_digit(long w, int i, int k, int v)
{
	long p = ipow(k, i);
	return w - (long)digit(w, i, k) * p + (long)v * p;
}

/* The fat tree's shape, the kind's own (t->shape). */
struct fat {
	int k, l;	/* arity, levels */
};

static const struct fat *fat_of(const struct pm_topo *t)
{
	return t->shape;
}

static int sw_id(const struct pm_topo *t, int level, long w)
{
	return t->n_end + (level - 1) * (int)ipow(fat_of(t)->k, fat_of(t)->l - 1) + (int)w;
}

static int build(struct pm_topo *t, const char *args,
		 const struct pm_link_defaults *ld, struct pm_err *err)
{
	long k, l;
	char *end;
	int rc;

	k = strtol(args, &end, 10);
	if (end == args || *end != ',' || k < 2 || k > 1024)
		goto bad;
	l = strtol(end + 1, &end, 10);
	if (*end || l < 1 || l > 20)
		goto bad;
	double e = 1;
	for (int i = 0; i < l; i++)
		e *= (double)k;
	if (e * (double)(l + 1) > PM_TOPO_MAX_VERTICES)
		return pm_fail(err, PM_EINPUT,
			       "network too large: '%s' has %.0f endpoints and their switches (expected at most %d vertices)",
			       t->spec, e, PM_TOPO_MAX_VERTICES);
	struct fat *f = malloc(sizeof *f);
	if (!(t->shape = f))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	f->k = (int)k;
	f->l = (int)l;
	long n = ipow(k, (int)l), s = ipow(k, (int)l - 1);
	rc = pm_topo_alloc(t, n + l * s, (int)n, 2 * n * l, (int)(2 * k), err);
	if (rc)
		return rc;
	for (long ep = 0; ep < n; ep++) {	/* endpoint <-> leaf */
		int leaf = sw_id(t, 1, ep / k);
		pm_topo_add(t, (int)ep, leaf, ld->bw_Bps, ld->lat_s, 0);
		pm_topo_add(t, leaf, (int)ep, ld->bw_Bps, ld->lat_s, (int)(ep % k));
	}
	for (int lv = 1; lv < l; lv++)
		for (long w = 0; w < s; w++)
			for (int j = 0; j < k; j++) {
				long up = set_digit(w, lv - 1, (int)k, j);
				int a = sw_id(t, lv, w), b = sw_id(t, lv + 1, up);
				pm_topo_add(t, a, b, ld->bw_Bps, ld->lat_s, (int)k + j);
				pm_topo_add(t, b, a, ld->bw_Bps, ld->lat_s,
					    digit(w, lv - 1, (int)k));
			}
	t->max_hops = n > 1 ? 2 * (int)l : 0;
	t->min_hops = n > 1 ? 2 : 0;
	return PM_OK;
bad:
	return pm_fail(err, PM_EINPUT,
		       "invalid topology '%s' (expected fattree:K,L with arity K from 2 to 1024 and L from 1 to 20 levels, such as fattree:8,2)",
		       t->spec);
}

/* The up/down route from src to dst taking up port up[lv] at level lv
 * (1 .. the lowest common level - 1), or the destination's digit there
 * when up is NULL (D-mod-K). */
static int route_by(const struct pm_topo *t, int src, int dst, const int *up, int *links)
{
	int k = fat_of(t)->k, top = 1, hops = 0;

	while (src / ipow(k, top) != dst / ipow(k, top))
		top++;
	/* up: endpoint -> leaf, then levels 1..top-1 */
	links[hops++] = pm_port_link(t, src, 0);
	long w = src / k;
	for (int lv = 1; lv < top; lv++) {
		int j = up ? up[lv] : digit(dst, lv - 1, k);
		links[hops++] = pm_port_link(t, sw_id(t, lv, w), k + j);
		w = set_digit(w, lv - 1, k, j);
	}
	/* down: at level lv take port a_(lv-1)(dst) ... to the leaf, then out */
	for (int lv = top; lv > 1; lv--) {
		int d = digit(dst, lv - 1, k);
		links[hops++] = pm_port_link(t, sw_id(t, lv, w), d);
		w = set_digit(w, lv - 2, k, d);
	}
	links[hops++] = pm_port_link(t, sw_id(t, 1, w), dst % k);
	return hops;
}

static int route(const struct pm_topo *t, int src, int dst, int *links)
{
	return route_by(t, src, dst, NULL, links);
}

/* Scratch of route_set: per transfer its lowest common level, the level-lv
 * switches of its way up and down, the up port per level; per level the
 * transfers that climb past it as a bipartite multigraph. */
struct rs {
	int *top, *wu, *wd, *up, *idx, *eu, *ev, *pref, *col, *deg;
	int moved;	/* some up port is not the destination's digit */
};

/* Up ports at level lv for the transfers that climb past it: an edge
 * colouring of the graph joining the level-lv switch each leaves upward
 * (left) to the one it comes down to (right), colour = up port: no two
 * share a link up or down.  The destination's digit (the network's own
 * route) where it is free.  More transfers at a switch than its K ports
 * (endpoints sending several at once) take colours past K, folded onto
 * the ports: they share links, as they must. */
static int colour_level(const struct pm_topo *t, int n, const int *dst, int lv,
			struct pm_ecolor *g, struct rs *r)
{
	int k = fat_of(t)->k, L = fat_of(t)->l, m = 0, most = k;

	for (int i = 0; i < n; i++)
		if (r->top[i] > lv) {
			r->idx[m] = i;
			r->eu[m] = r->wu[i];
			r->ev[m] = r->wd[i];
			r->pref[m] = digit(dst[i], lv - 1, k);
			if (++r->deg[2 * r->wu[i]] > most)
				most = r->deg[2 * r->wu[i]];
			if (++r->deg[2 * r->wd[i] + 1] > most)
				most = r->deg[2 * r->wd[i] + 1];
			m++;
		}
	for (int j = 0; j < m; j++)
		r->deg[2 * r->eu[j]] = r->deg[2 * r->ev[j] + 1] = 0;
	if (most > g->ncol) {
		int nsw = g->nl;
		pm_ecolor_free(g);
		if (pm_ecolor_init(g, nsw, nsw, most))
			return -1;
	}
	if (pm_ecolor_run(g, m, r->eu, r->ev, r->pref, r->col))
		return -1;
	for (int j = 0; j < m; j++) {
		int i = r->idx[j], c = r->col[j] % k;
		r->moved |= c != r->pref[j];
		r->up[(size_t)i * (size_t)L + (size_t)lv] = c;
		r->wu[i] = (int)set_digit(r->wu[i], lv - 1, k, c);
		r->wd[i] = (int)set_digit(r->wd[i], lv - 1, k, c);
	}
	return 0;
}

/* Routes for transfers sent at once (pm_topo_route_set).  A K-ary L-tree
 * is a Clos network folded and nested: the K up ports of a leaf lead into
 * K disjoint (L-1)-level trees whose endpoints are the leaves, so a set
 * of transfers whose leaves each send and receive at most K is routed
 * level by level, an edge colouring a level (edgecolor.h), with no link
 * carrying two (Benes 1965, rearrangeable networks).  1 if some route
 * is not D-mod-K's, 0 if none, -1 out of memory. */
static int route_set(const struct pm_topo *t, int n, const int *src, const int *dst,
		     int *links, int *len)
{
	int k = fat_of(t)->k, L = fat_of(t)->l, H = t->max_hops, nsw = (int)ipow(k, L - 1), rc = -1;
	size_t N = n > 0 ? (size_t)n : 1;
	struct rs r = {malloc(sizeof(int) * N), malloc(sizeof(int) * N), malloc(sizeof(int) * N),
		       malloc(sizeof(int) * N * (size_t)L), malloc(sizeof(int) * N), malloc(sizeof(int) * N),
		       malloc(sizeof(int) * N), malloc(sizeof(int) * N), malloc(sizeof(int) * N),
		       calloc(2 * (size_t)nsw, sizeof(int)), 0};
	struct pm_ecolor g = {0};

	if (!r.top || !r.wu || !r.wd || !r.up || !r.idx || !r.eu || !r.ev || !r.pref || !r.col || !r.deg ||
	    pm_ecolor_init(&g, nsw, nsw, k))
		goto out;
	for (int i = 0; i < n; i++) {
		int top = 1;
		while (src[i] / ipow(k, top) != dst[i] / ipow(k, top))
			top++;
		r.top[i] = top;
		r.wu[i] = src[i] / k;
		r.wd[i] = dst[i] / k;
	}
	for (int lv = 1; lv < L; lv++)
		if (colour_level(t, n, dst, lv, &g, &r))
			goto out;
	for (int i = 0; links && i < n; i++)
		len[i] = route_by(t, src[i], dst[i], r.up + (size_t)i * (size_t)L, links + (size_t)i * (size_t)H);
	rc = r.moved;
out:
	pm_ecolor_free(&g);
	free(r.top);
	free(r.wu);
	free(r.wd);
	free(r.up);
	free(r.idx);
	free(r.eu);
	free(r.ev);
	free(r.pref);
	free(r.col);
	free(r.deg);
	return rc;
}

static void describe(const struct pm_topo *t, struct pm_topo_info *info)
{
	info->routing = "up/down: climb to the lowest common level, up port = destination digit (D-mod-K), then the unique way down";
	info->ring_order = "identity: endpoints under one leaf switch are consecutive";
	info->bisection_Bps = (double)(t->n_end / 2) * t->links[0].bw_Bps;
	info->bisection_cut = "full bisection: half the endpoints' links";
}

static int layers(const struct pm_topo *t, int *sizes)	/* the arity, once per level */
{
	int n = 0;

	for (int i = 0; i < fat_of(t)->l && fat_of(t)->k > 1; i++)
		sizes[n++] = fat_of(t)->k;
	return n;
}

const struct pm_topo_kind pm_topo_fattree_kind = {
	.name = "fattree",
	.syntax = "fattree:K,L",
	.summary = "K-ary L-level fat tree, K^L endpoints, full bisection",
	.build = build,
	.route = route,
	.route_set = route_set,
	.describe = describe,
	.mirrored = 1,	/* an endpoint has one link each way */
	.layers = layers,
};
