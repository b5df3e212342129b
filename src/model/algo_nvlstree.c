/* algo_nvlstree.c: nvlstree[:K], NCCL's NVLSTree all-reduce across
 * NVSwitch nodes: in each node the switch reduces (NVLink SHARP, as nvls),
 * across nodes NCCL's double binary tree, on each NIC rail (NVIDIA NCCL
 * src/graph/connect.cc and src/device/all_reduce.h, NVLSTree).
 *
 * GPU g of every node owns block g of the n-byte vector (n/G bytes, G the
 * GPUs a node), cut into K chunks; each chunk travels half on the double
 * binary tree's tree 0 and half on tree 1 (NCCL's channels alternate
 * between the two), so a unit is half a chunk of a block, n/(2 G K)
 * bytes.  Chunk j of block g:
 *   step j            every other GPU of each node sends its copy up its
 *                     link, the switch sums them and sends the node's sum
 *                     down to GPU g (nvls's reduction);
 *   step j + 1 + h    a node at height h in tree t (a leaf 0) sends its
 *                     half up the tree from GPU g to GPU g of the parent
 *                     node, over rail g, once its children have;
 *   step j + Ht + d   the half comes down to a node at depth d (Ht: the
 *                     tree's height);
 *   step j + Ht + d + 1  GPU g sends the finished half up once and the
 *                     switch multicasts it to the node's other GPUs.
 * So S = K + 2H + 1 steps, H the taller tree's height.  A step loads a
 * GPU's NVLink G units each way (G - 1 contributions and a multicast up;
 * a sum and G - 1 copies down) and its rail at most L units each way, L
 * the most half-chunks a node moves on one rail a step over both trees
 * (a node inner in one tree with two children and a leaf in the other:
 * 4; two nodes, each the root of one tree: 2).
 * Cost:  T = S (a + d + max(L m, 2 G s / r) w(n/(2 G K)) b) + n g,
 *        m the GPUs a NIC serves (1 with a NIC a GPU),
 *        b the slowest link's time a byte (on NVSwitch clusters the NIC),
 *        r how much faster a GPU's link to its switch is (370 / 48 on DGX
 *        H100), s the switch's rate as a scale on the bytes it carries
 *        (link / NVLS algbw, 370 / 274.3 = 1.35 there, as nvls): the
 *        busier of a rail's L halves and NVLink's 2G halves at the
 *        switch's rate, which the rails are from three DGX H100 nodes on
 *        (4 against 2.8) and NVLink on two (2.8 against 2); the switch's
 *        sums and the trees' reductions booked to the block's owner (n
 *        bytes each).  The contention evaluator charges the transfers in
 *        a node at the switch's rate and the rails at theirs.
 * Every transfer carries its links: inside a node through the switch as
 * nvls, across nodes the network's own route between the two GPUs.
 * Restrictions: a machine: network of two or more nodes whose NVSwitch
 * reduces (param nvls_busbw; PM_ALGO_NODES_REDUCE).
 */
#include "model/algo.h"
#include "model/machine.h"
#include "model/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOST_K 64
#define MAX_XFERS 1048576.0	/* stored transfers (as nodetree) */
#define MAX_P 4096		/* ranks with a schedule; beyond, the closed form */

struct nvt_state {
	struct pm_gpu_nodes n;	/* G GPUs a node, N nodes, ... */
	int K;			/* chunks a block */
	int H[2];		/* each tree's height in edges */
	int L;			/* most half-chunks on one rail a step, each way */
	int from_size;		/* K from the message size */
};
_Static_assert(sizeof(struct nvt_state) <= PM_PRIV_BYTES, "nvlstree state fits pm_inst.priv");

static struct nvt_state *nvs(struct pm_inst *in) { return (struct nvt_state *)(void *)in->priv.bytes; }
static const struct nvt_state *cnvs(const struct pm_inst *in)
{
	return (const struct nvt_state *)(const void *)in->priv.bytes;
}

/* Node v's depth in tree t and height (edges down to its deepest leaf). */
static void levels(int N, int t, int *depth, int *height)
{
	int maxd = 0;

	for (int v = 0; v < N; v++) {
		depth[v] = 0;
		height[v] = 0;
		for (int u = v; (u = pm_dbtree_parent(N, u, t)) >= 0;)
			depth[v]++;
		maxd = depth[v] > maxd ? depth[v] : maxd;
	}
	for (int d = maxd; d > 0; d--)	/* deepest first: children are final */
		for (int v = 0; v < N; v++) {
			int u = pm_dbtree_parent(N, v, t);
			if (depth[v] == d && height[u] < height[v] + 1)
				height[u] = height[v] + 1;
		}
}

/* The trees' heights and L: per node and tree, children in and the
 * parent's half out on the way up, the parent's half in and the
 * children's out on the way down, both at once in the steady pipeline. */
static int tree_shape(struct nvt_state *st, struct pm_err *err)
{
	int N = st->n.N, *kids = calloc(2 * (size_t)N, sizeof(int)), *lv = malloc(sizeof(int) * 2 * (size_t)N);

	if (!kids || !lv) {
		free(kids), free(lv);
		return pm_fail(err, PM_EINTERNAL, "nvlstree: out of memory");
	}
	st->L = 0;
	for (int t = 0; t < 2; t++) {
		levels(N, t, lv, lv + N);
		st->H[t] = 0;
		for (int v = 0; v < N; v++) {
			int u = pm_dbtree_parent(N, v, t);
			st->H[t] = lv[N + v] > st->H[t] ? lv[N + v] : st->H[t];
			if (u >= 0)
				kids[t * N + u]++;
		}
	}
	for (int v = 0; v < N; v++) {
		int load = 0;
		for (int t = 0; t < 2; t++)
			load += kids[t * N + v] + (pm_dbtree_parent(N, v, t) >= 0);
		st->L = load > st->L ? load : st->L;
	}
	free(kids);
	free(lv);
	return PM_OK;
}

static int steps_of(const struct nvt_state *st)
{
	return st->K + 2 * (st->H[0] > st->H[1] ? st->H[0] : st->H[1]) + 1;
}

/* Stored transfers a chunk, and in all. */
static double xfers_per_chunk(const struct nvt_state *st)
{
	return st->n.G * (3.0 * st->n.N * (st->n.G - 1) + 4.0 * (st->n.N - 1));
}

static double xfers_of(const struct nvt_state *st)
{
	return st->K * xfers_per_chunk(st);
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct nvt_state *st = nvs(in);
	long K = 1;
	int rc;

	memset(st, 0, sizeof *st);
	if ((rc = pm_gpu_nodes_of(in, "nvlstree", &st->n, err)))	/* the restriction row has checked the machine */
		return rc;
	if (arg && pm_parse_int(arg, 1, 4096, "chunk count", &K, err))
		return PM_EINPUT;
	st->K = (int)K;
	st->from_size = !arg;
	in->sized = st->from_size;
	rc = tree_shape(st, err);
	in->steps = steps_of(st);
	return rc;
}

/* K from the size: NCCL's NVLSTree chunk (128 KiB, 64 KiB from four
 * nodes: enqueue.cc calcCollChunking, 2.20 on) on each of Hopper's 16
 * NVLS channels, a block in steps of 16 chunks, at most 64 and, where
 * the schedule is built, within MAX_XFERS stored transfers. */
static int at_size(struct pm_inst *in, double n, struct pm_err *err)
{
	struct nvt_state *st = nvs(in);
	long most = in->P <= MAX_P ? pm_pipe_budget(xfers_per_chunk(st), MAX_XFERS, MOST_K) : MOST_K;

	(void)err;
	if (!st->from_size)
		return PM_OK;
	st->K = (int)pm_pipe_chunks(n / st->n.G, 16 * (st->n.N >= 4 ? 65536.0 : 131072.0), most);
	in->steps = steps_of(st);
	snprintf(in->label, sizeof in->label, "nvlstree:%d", st->K);
	return PM_OK;
}

struct tx {
	int step, src, dst;
	uint32_t lo, cnt;
	int op, flow;
	int nvia;		/* links in via; -1: the network's route */
	int via[2];
};

struct plan {			/* what build fills */
	const struct nvt_state *st;
	const int *up, *down, *lv;	/* lv: depth[t], height[t] of each tree */
	struct tx *x;
	size_t n;
};

/* Inside node v: chunk j of block g summed in the switch into its owner
 * (step j), then each half multicast from it when it is final. */
static void add_node(struct plan *pl, int j, int v, int g)
{
	const struct nvt_state *st = pl->st;
	int G = st->n.G, N = st->n.N, k = v * G + g, first = v * G + (g + 1) % G;
	uint32_t lo = (uint32_t)(j * G + g) * 2;

	for (int q = v * G; q < (v + 1) * G; q++)
		if (q != k) {
			struct tx *x = &pl->x[pl->n++];
			*x = (struct tx){j, q, k, lo, 2, PM_REDUCE, 0, 0, {0, 0}};
			x->nvia = pm_switch_via(pl->up, pl->down, q, k, PM_REDUCE, q == first, x->via);
		}
	for (int t = 0; t < 2; t++) {
		int at = j + st->H[t] + pl->lv[2 * t * N + v] + 1;
		for (int q = v * G; q < (v + 1) * G; q++)
			if (q != k) {
				struct tx *x = &pl->x[pl->n++];
				*x = (struct tx){at, k, q, lo + (uint32_t)t, 1, PM_COPY, 3, 0, {0, 0}};
				x->nvia = pm_switch_via(pl->up, pl->down, k, q, PM_COPY, q == first, x->via);
			}
	}
}

/* Across nodes: each half of chunk j of block g up its tree from GPU g
 * of node v to GPU g of the parent node, and back down. */
static void add_tree(struct plan *pl, int j, int v, int g)
{
	const struct nvt_state *st = pl->st;
	int G = st->n.G, N = st->n.N, k = v * G + g;
	uint32_t lo = (uint32_t)(j * G + g) * 2;

	for (int t = 0; t < 2; t++) {
		int u = pm_dbtree_parent(N, v, t), depth = pl->lv[2 * t * N + v], height = pl->lv[(2 * t + 1) * N + v];
		if (u < 0)
			continue;
		pl->x[pl->n++] = (struct tx){j + 1 + height, k, u * G + g, lo + (uint32_t)t, 1, PM_REDUCE, 1 + t, -1, {0, 0}};
		pl->x[pl->n++] = (struct tx){j + st->H[t] + depth, u * G + g, k, lo + (uint32_t)t, 1, PM_COPY, 1 + t, -1, {0, 0}};
	}
}

/* The transfers in step order (a counting sort: the order within a step
 * is the order they were made in), each with its links. */
static int emit(const struct pm_topo *topo, struct pm_sched *s, const struct tx *x, size_t n, int S,
		struct pm_err *err)
{
	size_t *at = calloc((size_t)S + 1, sizeof *at);
	const struct tx **by = malloc(sizeof *by * (n + 1));
	int *route = malloc(sizeof(int) * (size_t)pm_topo_max_hops(topo) + 8);

	if (!at || !by || !route) {
		free(at), free(by), free(route);
		return pm_fail(err, PM_EINTERNAL, "nvlstree: out of memory");
	}
	for (size_t i = 0; i < n; i++)
		at[x[i].step + 1]++;
	for (int k = 0; k < S; k++)
		at[k + 1] += at[k];
	for (size_t i = 0; i < n; i++)
		by[at[x[i].step]++] = &x[i];
	for (size_t i = 0; i < n; i++) {
		const struct tx *y = by[i];
		int h = y->nvia >= 0 ? y->nvia : pm_topo_route(topo, y->src, y->dst, route);
		pm_sched_add_routed(s, y->step, y->src, y->dst, y->lo, y->cnt, (enum pm_op)y->op, y->flow,
				    y->nvia >= 0 ? y->via : route, h);
		if (y->nvia >= 0)	/* in a node: the switch reduces or multicasts it */
			pm_sched_at_switch(s);
	}
	free(at), free(by), free(route);
	return PM_OK;
}

static int build(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	const struct nvt_state *st = cnvs(in);
	int G = st->n.G, N = st->n.N;

	if (in->P > MAX_P)
		return pm_fail(err, PM_EINPUT,
			       "past %d ranks nvlstree is priced in closed form only (its schedule would store %.3g transfers on %d ranks; --model closed)",
			       MAX_P, xfers_of(st), in->P);
	struct plan pl = {.st = st};
	int *links = malloc(sizeof(int) * (2 * (size_t)in->P + 4 * (size_t)N));
	pl.x = malloc(sizeof *pl.x * ((size_t)xfers_of(st) + 1));
	int rc = links && pl.x ? PM_OK : pm_fail(err, PM_EINTERNAL, "nvlstree: out of memory");
	if (!rc)
		rc = pm_node_switch_links(in->topo, G, N, links, links + in->P, "nvlstree", err);
	if (!rc) {
		pl.up = links, pl.down = links + in->P, pl.lv = links + 2 * in->P;
		for (int t = 0; t < 2; t++)
			levels(N, t, links + 2 * in->P + 2 * t * N, links + 2 * in->P + (2 * t + 1) * N);
		for (int j = 0; j < st->K; j++)
			for (int v = 0; v < N; v++)
				for (int g = 0; g < G; g++) {
					add_node(&pl, j, v, g);
					add_tree(&pl, j, v, g);
				}
		s->nchunks = (uint32_t)(2 * G * st->K);
		rc = emit(in->topo, s, pl.x, pl.n, steps_of(st), err);
	}
	free(links);
	free(pl.x);
	return rc;
}

static void closed(const struct pm_inst *in, double n, const struct pm_params *p, struct pm_cost *c)
{
	const struct nvt_state *st = cnvs(in);
	double S = steps_of(st), half = n / (2.0 * st->n.G * st->K);

	c->steps = S;
	c->alpha_s = S * p->alpha_s;
	c->lat_s = S * pm_hop_lat(in, p);
	double nvl = 2.0 * st->n.G * pm_switch_scale(p) / st->n.r;	/* NVLink's G units at the switch's rate */
	double rail = (double)st->L * st->n.share;	/* a NIC's halves: its GPUs' L each */
	c->bw_s = S * (nvl > rail ? nvl : rail) * pm_msg_bw_s(p, half);
	c->red_s = n * p->gamma_spB;	/* the switch's (G-1)/G n and the tree's n/G, booked to the owner */
	/* a GPU sends G - 1 copies and a multicast up to its switch a chunk
	 * (n in all) and L halves on its rail */
	c->sent_B = n + st->L * n / (2.0 * st->n.G);
}

static double xfers(const struct pm_inst *in)
{
	return in->P > MAX_P ? 0 : xfers_of(cnvs(in));
}

/* NVLS's rate on the transfers the switches carry (as nvls). */
static void params(const struct pm_inst *in, struct pm_params *p)
{
	p->switch_scale = pm_nvls_switch_scale(in->topo, cnvs(in)->n.G, cnvs(in)->n.nvl_Bps);
}

const struct pm_algo pm_algo_nvlstree = {
	.name = "nvlstree",
	.summary = "NCCL's NVLSTree across NVSwitch nodes: each node's switch reduces and multicasts, the double binary tree joins the nodes on every NIC rail, K chunks pipelined",
	.arg_syntax = "K",
	.arg_help = "pipeline chunks K (default from the size: a block n/G in steps of 16 of NCCL's NVLSTree chunks, 128 KiB, 64 KiB from four nodes, at most 64 and within 2^20 stored transfers); past 4,096 ranks closed form only",
	.formula = "S (a + d + max(L m, 2Gs/r) w(n/(2GK)) b) + n g, S = K + 2H + 1, H the taller tree's height, L the most half-chunks a GPU's rail carries a step (4; 2 on two nodes), m the GPUs a NIC serves, r = a GPU's switch link / the slowest link, s = the switch's rate as a scale on its bytes (link / NVLS algbw)",
	.reference = "NCCL src/graph/connect.cc, src/device/all_reduce.h (NVLSTree); Klenk et al., ISCA 2020; Sanders, Speck & Traff 2009",
	.flags = PM_ALGO_NEEDS_TOPO | PM_ALGO_NODES_REDUCE,
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
	.at_size = at_size,
	.params = params,
};
