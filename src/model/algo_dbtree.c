/* algo_dbtree.c: double binary tree all-reduce (Sanders, Speck & Traff
 * 2009) with NCCL's two trees, as the MULTITREE supplement §II draws it on 9 nodes.
 *
 * Trees: tree 0 is NCCL's binary tree on ranks 0..P-1 (root 0, one child;
 * a rank's parent found from its lowest set bit); tree 1 is tree 0 shifted
 * by one rank when P is odd and mirrored (r -> P-1-r) when P is even, so
 * the leaves of one tree are inner nodes of the other.
 * Colouring: every tree edge gets a parity.  A rank's two parent edges
 * (one per tree) differ, and the edges into one parent differ, so a rank
 * sends at most one and receives at most one message per step (Sanders et
 * al. §3: the union of both trees is bipartite with degree <= 2).  Ties are
 * fixed by giving tree 0's top edge the odd parity and tree 1's the even
 * one, then following the constraints in increasing rank order.
 * Steps: the message is cut into K chunks, the even ones reduced along
 * tree 0 and the odd ones along tree 1.  In step t (1-based) an edge of
 * parity t mod 2 carries its child's next chunk once that child has it
 * from all its own children.  The broadcast is the reduce run backwards.
 * On 9 ranks this takes 15 reduce steps with K = 9 and 8 with K = 2
 * (unpipelined), as the MULTITREE supplement reports.
 * Cost:  T = 2 S (alpha + delta + w(n/K) beta) + S (n/K) gamma, with S the
 *        reduce steps of the construction; 2h+K-3 <= S <= 2h+K-2 for
 *        h = ceil(lg P).  Above 5e7 rank-steps the closed form uses the
 *        upper bound 2h+K-2 instead of running the construction.
 * Restrictions: none.  K defaults to P (the MULTITREE supplement).  Ranks on endpoints in
 * order (topology-oblivious, as NCCL places them).
 */
#include "model/algo.h"
#include "model/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_LIMIT 5e7

struct dbt {
	int P, K;
	int *parent;	/* parent[t*P + r], -1 at the root */
	int *colour;	/* parity of edge r -> parent in tree t */
	int *kids;	/* kids[(t*P + r)*2 + i], -1 */
};

static int btree_parent(int n, int r)
{
	int bit = 1;

	if (r == 0)
		return -1;
	while (bit < n && !(bit & r))
		bit <<= 1;
	int up = (r ^ bit) | (bit << 1);
	return up >= n ? (r ^ bit) : up;
}

static int tree1_parent(int n, int r)
{
	int u;
	if (n % 2) {
		u = btree_parent(n, (r - 1 + n) % n);
		return u < 0 ? -1 : (u + 1) % n;
	}
	u = btree_parent(n, n - 1 - r);
	return u < 0 ? -1 : n - 1 - u;
}

/* Edges conflicting with edge (t, c): same child or same parent. */
static int conflicts(const struct dbt *d, int t, int c, int out[4][2])
{
	int n = 0, p = d->parent[t * d->P + c];
	int o = 1 - t;

	if (d->parent[o * d->P + c] >= 0) {
		out[n][0] = o;
		out[n++][1] = c;
	}
	for (int tt = 0; tt < 2; tt++)
		for (int i = 0; i < 2; i++) {
			int k = d->kids[(tt * d->P + p) * 2 + i];
			if (k >= 0 && !(tt == t && k == c) && n < 4) {
				out[n][0] = tt;
				out[n++][1] = k;
			}
		}
	return n;
}

static void colour_from(struct dbt *d, int t, int c, int col, int *stack)
{
	int sp = 0;

	d->colour[t * d->P + c] = col;
	stack[sp++] = t * d->P + c;
	while (sp) {
		int e = stack[--sp], nb[4][2];
		int et = e / d->P, ec = e % d->P;
		int m = conflicts(d, et, ec, nb);
		for (int i = 0; i < m; i++) {
			int f = nb[i][0] * d->P + nb[i][1];
			if (d->colour[f] < 0) {
				d->colour[f] = 1 - d->colour[e];
				stack[sp++] = f;
			}
		}
	}
}

static void dbt_free(struct dbt *d)
{
	free(d->parent);
	free(d->colour);
	free(d->kids);
}

static int dbt_init(struct dbt *d, int P, int K)
{
	int n = 2 * P;
	int *stack;

	memset(d, 0, sizeof *d);
	d->P = P;
	d->K = K;
	d->parent = malloc(sizeof(int) * (size_t)n);
	d->colour = malloc(sizeof(int) * (size_t)n);
	d->kids = malloc(sizeof(int) * (size_t)n * 2);
	stack = malloc(sizeof(int) * (size_t)n * 4);
	if (!d->parent || !d->colour || !d->kids || !stack) {
		free(stack);
		dbt_free(d);
		return -1;
	}
	for (int i = 0; i < 2 * n; i++)
		d->kids[i] = -1;
	for (int r = 0; r < P; r++) {
		d->parent[r] = btree_parent(P, r);
		d->parent[P + r] = tree1_parent(P, r);
	}
	for (int t = 0; t < 2; t++)
		for (int r = 0; r < P; r++) {
			int p = d->parent[t * P + r];
			d->colour[t * P + r] = -1;
			if (p >= 0) {
				int *slot = &d->kids[(t * P + p) * 2];
				slot[slot[0] < 0 ? 0 : 1] = r;
			}
		}
	/* top edges first: tree 0 odd, tree 1 even; then the rest */
	for (int t = 0; t < 2; t++)
		for (int r = 0; r < P; r++) {
			int p = d->parent[t * P + r];
			if (p >= 0 && d->parent[t * P + p] < 0 && d->colour[t * P + r] < 0)
				colour_from(d, t, r, t == 0 ? 1 : 0, stack);
		}
	for (int t = 0; t < 2; t++)
		for (int r = 0; r < P; r++)
			if (d->parent[t * P + r] >= 0 && d->colour[t * P + r] < 0)
				colour_from(d, t, r, 1, stack);
	free(stack);
	return 0;
}

/* Run the pipelined reduce.  emit (may be NULL) receives each transfer
 * with its 1-based step.  Returns the number of reduce steps, -1 on
 * failure. */
static int dbt_reduce(const struct dbt *d,
		      void (*emit)(void *ctx, int step, int child, int parent,
				   int chunk),
		      void *ctx)
{
	int P = d->P, n = 2 * P, step = 0;
	int nch[2] = {(d->K + 1) / 2, d->K / 2};
	int *sent = calloc((size_t)n, sizeof(int));
	int *prev = malloc(sizeof(int) * (size_t)n);

	if (!sent || !prev) {
		free(sent);
		free(prev);
		return -1;
	}
	for (;;) {
		int done = 1;
		for (int e = 0; e < n && done; e++)
			if (d->parent[e] >= 0 && sent[e] < nch[e / P])
				done = 0;
		if (done)
			break;
		step++;
		memcpy(prev, sent, sizeof(int) * (size_t)n);
		for (int e = 0; e < n; e++) {
			int t = e / P, c = e % P, j = prev[e];
			if (d->parent[e] < 0 || d->colour[e] != step % 2 || j >= nch[t])
				continue;
			int ready = 1;
			for (int i = 0; i < 2; i++) {
				int k = d->kids[e * 2 + i];
				if (k >= 0 && prev[t * P + k] <= j)
					ready = 0;
			}
			if (!ready)
				continue;
			sent[e]++;
			if (emit)
				emit(ctx, step, c, d->parent[e], 2 * j + t);
		}
	}
	free(sent);
	free(prev);
	return step;
}

/* Reduce steps S for P ranks and K chunks (the construction when it is
 * cheap, else the bound 2h+K-2). */
static int reduce_steps(int P, int K, int *exact)
{
	struct dbt d;
	int h = pm_ceil_log2(P), s;

	*exact = 1;
	if (P < 2)
		return 0;
	if ((double)P * (2.0 * h + K) > EXACT_LIMIT || dbt_init(&d, P, K)) {
		*exact = 0;
		return 2 * h + K - 2;
	}
	s = dbt_reduce(&d, NULL, NULL);
	dbt_free(&d);
	if (s < 0) {
		*exact = 0;
		return 2 * h + K - 2;
	}
	return s;
}

/* Most chunks one rank sends: up to its parent in each tree during the
 * reduce, down to each child during the broadcast. */
static double most_sent(int P, int K)
{
	struct dbt d;
	int nch[2] = {(K + 1) / 2, K / 2};
	double best = 0;

	if (P < 2 || dbt_init(&d, P, K))
		return 0;
	for (int r = 0; r < P; r++) {
		double units = 0;
		for (int t = 0; t < 2; t++) {
			units += d.parent[t * P + r] >= 0 ? nch[t] : 0;
			for (int i = 0; i < 2; i++)
				units += d.kids[(t * P + r) * 2 + i] >= 0 ? nch[t] : 0;
		}
		if (units > best)
			best = units;
	}
	dbt_free(&d);
	return best;
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	long k = in->P > 0 ? in->P : 1;
	int exact;

	if (arg && pm_parse_int(arg, 1, 1 << 20, "pipeline chunk count", &k, err))
		return PM_EINPUT;
	in->chunks = (int)k;
	in->steps = reduce_steps(in->P, in->chunks, &exact);
	in->sent_units = most_sent(in->P, in->chunks);
	snprintf(in->label, sizeof in->label, "dbtree:%d%s", in->chunks,
		 exact ? "" : "~");
	return PM_OK;
}

/* The reduce is emitted as it runs; the broadcast (the reduce backwards
 * in time) is collected and appended reversed, so steps stay in order. */
struct emit_ctx {
	struct pm_sched *s;
	struct pm_xfer *bc;
	size_t nbc;
};

static void emit(void *ctx, int step, int child, int parent, int chunk)
{
	struct emit_ctx *e = ctx;
	int t = chunk % 2;

	pm_sched_add(e->s, step - 1, child, parent, (uint32_t)chunk, 1,
		     PM_REDUCE, t);
	e->bc[e->nbc++] = (struct pm_xfer){parent, child, (uint32_t)chunk, 1,
					   PM_COPY, (uint16_t)t};
}

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	struct dbt d;
	struct emit_ctx e = {s, NULL, 0};
	int S;
	int *step_of;

	s->nchunks = (uint32_t)in->chunks;
	if (in->P < 2)
		return PM_OK;
	if (dbt_init(&d, in->P, in->chunks))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	e.bc = malloc(sizeof *e.bc * (size_t)(in->P - 1) * (size_t)in->chunks + 1);
	S = e.bc ? dbt_reduce(&d, emit, &e) : -1;
	dbt_free(&d);
	if (S < 0) {
		free(e.bc);
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	/* reduce step r (0-based) is mirrored at broadcast step 2S-1-r */
	step_of = malloc(sizeof(int) * (e.nbc + 1));
	if (!step_of) {
		free(e.bc);
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	for (int k = 0, i = 0; k < S; k++)
		for (size_t j = s->step_off[k]; j < s->step_off[k + 1]; j++)
			step_of[i++] = 2 * S - 1 - k;
	for (size_t i = e.nbc; i-- > 0;)
		pm_sched_add(s, step_of[i], e.bc[i].src, e.bc[i].dst, e.bc[i].lo,
			     e.bc[i].cnt, PM_COPY, e.bc[i].flow);
	free(step_of);
	free(e.bc);
	s->second_phase = S;
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	double S = in->steps, K = in->chunks;

	c->alpha_s = 2 * S * p->alpha_s;
	c->lat_s = 2 * S * pm_hop_lat(in, p);
	c->bw_s = 2 * S * pm_msg_bw_s(p, n / K);
	c->red_s = S * (n / K) * p->gamma_spB;
	c->steps = 2 * S;
	c->sent_B = in->sent_units * n / K;
}

int pm_dbtree_reduce_steps(int P, int K)
{
	int exact;
	return reduce_steps(P, K, &exact);
}

/* every chunk crosses every edge of its tree, up and down */
static double xfers(const struct pm_inst *in)
{
	return 2.0 * (in->P - 1) * in->chunks;
}

const struct pm_algo pm_algo_dbtree = {
	.name = "dbtree",
	.summary = "double binary tree, pipelined into K chunks (NCCL trees, Sanders et al.)",
	.arg_syntax = "K",
	.arg_help = "pipeline chunks (default P, as the MULTITREE supplement; dbtree:2 is unpipelined)",
	.formula = "2S(a + d + w(n/K) b) + S (n/K) g, S = reduce steps of the construction",
	.reference = "Sanders, Speck & Traff 2009; NCCL trees.cc; the MULTITREE supplement SII",
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
