/* algo_nodetree.c: nodetree[:C], NCCL's tree on a GPU cluster.
 *
 * NCCL's Tree algorithm across nodes (NVIDIA NCCL src/graph/trees.cc,
 * src/graph/connect.cc): inside a node the GPUs form a chain, and the
 * chains' heads form NCCL's double binary tree over the nodes (tree 0 the
 * in-order binary tree, tree 1 shifted or mirrored: dbtree's trees); a
 * channel runs one of the two trees, channels alternating, and channel c
 * leaves its node by the GPU on NIC rail c, so C channels cross on C
 * rails.  Each channel carries n / C in K chunks, reduced up the tree
 * and broadcast down as soon as the root has each chunk (NCCL's
 * treeUpDown).  A rank forwards a chunk the step after it has it from all
 * its children, one chunk an edge a step: with H the tree's height in
 * edges (G - 1 in the chain plus the node tree's height), the root has
 * chunk j at step j + H and the deepest rank at j + 2H, so
 *   S = K - 1 + 2H steps in all (the larger H of the two trees),
 * K = n / (C x 32 KiB) rounded up to a power of two, at most 256 (NCCL's
 * LL chunk, as dbtree) and at most what keeps the schedule within 2^20
 * stored transfers (2 C K (P - 1): K <= 64 on 1,024 GPUs, 16 on 4,096); past 4,096
 * ranks there is no schedule, only the closed form.
 * Cost:  T = S (a + d + C w(n/(C K)) b) + (S/2) (n/(C K)) g: each step a
 *        GPU's one link carries a chunk of every channel (closed forms
 *        see one link); the contention evaluator routes the chains over
 *        NVLink and the heads over the rails.
 * Restrictions: a machine: network of whole nodes (P a multiple of the
 * GPUs a node holds).
 * Reference: NCCL trees.cc and connect.cc; Sanders, Speck & Traff 2009.
 */
#include "model/algo.h"
#include "model/machine.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_K 256
#define MAX_XFERS 1048576.0	/* stored transfers (about 0.3 s to route and price) */
#define MAX_P 4096		/* ranks with a schedule; beyond, the closed form */

struct nt_state {
	int C, K, G, N, R;	/* channels, chunks a channel, GPUs a node, nodes, rails */
	int H[2];		/* height of tree 0 and 1 in edges */
};
_Static_assert(sizeof(struct nt_state) <= PM_PRIV_BYTES, "nodetree state fits pm_inst.priv");

static struct nt_state *nts(struct pm_inst *in) { return (struct nt_state *)(void *)in->priv.bytes; }
static const struct nt_state *cnts(const struct pm_inst *in)
{
	return (const struct nt_state *)(const void *)in->priv.bytes;
}

/* The node tree's height: the longest chain of parents. */
static int node_height(int N, int tree)
{
	int h = 0;

	for (int v = 0; v < N; v++) {
		int d = 0;
		for (int u = v; (u = pm_dbtree_parent(N, u, tree)) >= 0 && d <= N;)
			d++;
		if (d > h)
			h = d;
	}
	return h;
}

/* K from the size (PM_PIPE_CHUNK_B a channel), at most MAX_K and at
 * most what keeps the schedule within MAX_XFERS transfers (2 C K (P - 1)). */
static int chunks_for(int C, int P, double n)
{
	long most = MAX_K;

	while (most > 1 && 2.0 * C * most * (P - 1) > MAX_XFERS)
		most /= 2;
	return (int)pm_pipe_chunks(n, C * PM_PIPE_CHUNK_B, most);
}

static int steps_of(const struct nt_state *st)
{
	int H = st->H[0] > st->H[1] || st->C < 2 ? st->H[0] : st->H[1];
	return st->K - 1 + 2 * H;
}

/* The cluster's shape: GPUs a node, nodes, rails; the channel count. */
static int shape(struct pm_inst *in, const char *arg, struct nt_state *st, struct pm_err *err)
{
	const struct pm_machine *m = in->topo ? pm_topo_machine_desc(in->topo) : NULL;
	long C;

	if (!m)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: NCCL's tree over nodes needs a GPU cluster, --topo machine:NAME:NODES (got %s)",
			       in->topo ? pm_topo_spec(in->topo) : "no network");
	st->G = (int)m->level[0].count;
	st->R = pm_machine_rails(m);
	if (in->P % st->G)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: nodetree needs whole nodes (%d ranks on nodes of %d GPUs)", in->P, st->G);
	st->N = in->P / st->G;
	C = st->R;
	if (arg && pm_parse_int(arg, 1, 64, "channel count", &C, err))
		return PM_EINPUT;
	st->C = (int)C;
	for (int t = 0; t < 2; t++)
		st->H[t] = st->G - 1 + node_height(st->N, t);
	return PM_OK;
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct nt_state *st = nts(in);
	int rc = shape(in, arg, st, err);

	if (rc)
		return rc;
	st->K = 1;
	in->sized = 1;
	in->steps = steps_of(st);
	snprintf(in->label, sizeof in->label, "nodetree:%d", st->C);
	return PM_OK;
}

static int at_size(struct pm_inst *in, double n, struct pm_err *err)
{
	struct nt_state *st = nts(in);

	(void)err;
	st->K = chunks_for(st->C, in->P, n);
	in->steps = steps_of(st);
	snprintf(in->label, sizeof in->label, "nodetree:%d/%d", st->C, st->K);
	return PM_OK;
}

/* Rank of local GPU g (chain position) of node v in channel c: the chain
 * starts at the GPU on rail c and goes up the local numbers. */
static int rank_of(const struct nt_state *st, int c, int v, int pos)
{
	int head = (c % st->R) * st->G / st->R;
	return v * st->G + (head + pos) % st->G;
}

/* Parent of chain position pos of node v in channel c (-1 at the root). */
static int parent_of(const struct nt_state *st, int c, int v, int pos)
{
	if (pos > 0)
		return rank_of(st, c, v, pos - 1);
	int u = pm_dbtree_parent(st->N, v, c % 2);
	return u < 0 ? -1 : rank_of(st, c, u, 0);
}

/* Node v's depth in tree t (edges from the root node) and its head's
 * height (edges to the deepest rank below): a head's children are its
 * chain's next GPU (G - 1 below it) and its child nodes' heads. */
static void node_levels(const struct nt_state *st, int t, int *depth, int *height)
{
	int N = st->N, maxd = 0;

	for (int v = 0; v < N; v++) {
		depth[v] = 0;
		for (int u = v; (u = pm_dbtree_parent(N, u, t)) >= 0;)
			depth[v]++;
		height[v] = st->G - 1;
		if (depth[v] > maxd)
			maxd = depth[v];
	}
	for (int d = maxd; d > 0; d--)	/* deepest first: children are final */
		for (int v = 0; v < N; v++) {
			int u = pm_dbtree_parent(N, v, t);
			if (depth[v] == d && height[u] < height[v] + 1)
				height[u] = height[v] + 1;
		}
}

static double xfers_of(const struct nt_state *st, int P)
{
	return 2.0 * st->C * st->K * (P - 1);
}

struct tx {
	int step, src, dst;
	uint32_t chunk;
	int reduce;
};

static int by_step(const void *a, const void *b)
{
	const struct tx *x = a, *y = b;
	return (x->step > y->step) - (x->step < y->step);
}

/* A rank at height h sends chunk j up at step j + 1 + h (a leaf at j + 1;
 * a rank once its children have, one chunk an edge a step); the root has
 * it at j + H; a rank at depth d receives it down at j + H + d. */
static void add_channel(const struct nt_state *st, int c, const int *depth, const int *height,
			struct tx *x, size_t *n)
{
	int H = st->H[c % 2];	/* the root head's height */

	for (int v = 0; v < st->N; v++)
		for (int pos = 0; pos < st->G; pos++) {
			int r = rank_of(st, c, v, pos), p = parent_of(st, c, v, pos);
			int h = pos ? st->G - 1 - pos : height[v], d = depth[v] + pos;
			if (p < 0)
				continue;
			for (int j = 0; j < st->K; j++) {
				uint32_t ch = (uint32_t)(c * st->K + j);
				x[(*n)++] = (struct tx){j + 1 + h, r, p, ch, 1};
				x[(*n)++] = (struct tx){j + H + d, p, r, ch, 0};
			}
		}
}

static int build(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	const struct nt_state *st = cnts(in);

	s->nchunks = (uint32_t)(st->C * st->K);
	if (in->P > MAX_P)
		return pm_fail(err, PM_EINPUT,
			       "past %d ranks nodetree is priced in closed form only (its schedule would store %.3g transfers on %d ranks; --model closed)",
			       MAX_P, xfers_of(st, in->P), in->P);
	size_t n = 0, cap = (size_t)xfers_of(st, in->P) + 1;
	struct tx *x = malloc(sizeof *x * cap);
	int *lv = malloc(sizeof(int) * 4 * (size_t)st->N);
	if (!x || !lv) {
		free(x), free(lv);
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	for (int t = 0; t < 2; t++)
		node_levels(st, t, lv + 2 * t * st->N, lv + (2 * t + 1) * st->N);
	for (int c = 0; c < st->C && in->P > 1; c++)
		add_channel(st, c, lv + 2 * (c % 2) * st->N, lv + (2 * (c % 2) + 1) * st->N, x, &n);
	qsort(x, n, sizeof *x, by_step);
	for (size_t i = 0; i < n; i++)
		pm_sched_add(s, x[i].step - 1, x[i].src, x[i].dst, x[i].chunk, 1, x[i].reduce ? PM_REDUCE : PM_COPY, 0);
	free(x);
	free(lv);
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n, const struct pm_params *p, struct pm_cost *c)
{
	const struct nt_state *st = cnts(in);
	double S = in->steps, u = n / (st->C * st->K);

	c->alpha_s = S * p->alpha_s;
	c->lat_s = S * pm_hop_lat(in, p);
	c->bw_s = S * st->C * pm_msg_bw_s(p, u);
	c->red_s = S / 2 * u * p->gamma_spB;
	c->steps = S;
	c->sent_B = 2.0 * n;	/* a head sends every chunk up and to up to three below */
}

static double xfers(const struct pm_inst *in)
{
	return in->P > MAX_P ? 0 : xfers_of(cnts(in), in->P);
}

const struct pm_algo pm_algo_nodetree = {
	.name = "nodetree",
	.summary = "NCCL's tree on a GPU cluster: a chain in each node, the double binary tree over the nodes' heads, one channel per NIC rail",
	.arg_syntax = "C",
	.arg_help = "channels (default one per NIC rail); chunks a channel from the size, n / (C x 32 KiB) rounded up to a power of two, at most 256 and within 2^20 stored transfers; past 4,096 ranks closed form only",
	.flags = PM_ALGO_NEEDS_TOPO,
	.phases = PM_PHASES_NONE,
	.formula = "S (a + d + C w(n/(C K)) b) + (S/2)(n/(C K)) g, S = K - 1 + 2H, H = G - 1 + the node tree's height",
	.reference = "NCCL src/graph/trees.cc, connect.cc (Tree); Sanders, Speck & Traff 2009",
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
	.at_size = at_size,
};
