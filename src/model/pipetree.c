/* pipetree.c: the pipelined trees, built and priced for the three
 * algorithms that run them (algo_dbtree.c, algo_tree.c, algo_chain.c):
 * the double binary tree all-reduce (Sanders, Speck & Traff 2009) with
 * NCCL's two trees, as the MULTITREE supplement §II draws it on 9 nodes,
 * one of its trees (tree), and a chain (chain).
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
#include "model/pipetree.h"
#include "model/grow.h"
#include "model/limits.h"
#include "model/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_LIMIT pm_limit(5e7)	/* rank-steps run exactly (limits.h) */

struct dbt_state {
	int chunks;		/* pipeline chunks K */
	int from_size;		/* no K given: K from the size (at_size) */
	int shift;		/* dbtree:...,shift */
	double sent_units;	/* most chunk units one rank sends */
	double stored;		/* transfers the schedule stores */
	double sent_down;	/* most chunk units one rank sends in the broadcast */
};
_Static_assert(sizeof(struct dbt_state) <= PM_PRIV_BYTES, "dbt_state fits pm_inst.priv");

static struct dbt_state *dbs_of(struct pm_inst *in)
{
	return (struct dbt_state *)(void *)in->priv.bytes;
}

static const struct dbt_state *cdbs_of(const struct pm_inst *in)
{
	return (const struct dbt_state *)(const void *)in->priv.bytes;
}

struct dbt {
	int P, K;
	int ntrees;	/* 2: the double binary tree; 1: tree 0 alone (tree, chain) */
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

/* Which trees: NCCL's double binary tree (tree 1 shifted for odd P,
 * mirrored for even P, as the MULTITREE artifact's simulator builds it
 * too), the same with tree 1 shifted for every P, tree 0 alone, or a
 * chain 0 <- 1 <- ... */
enum dbt_shape { DBT_NCCL, DBT_SHIFTED, DBT_TREE, DBT_CHAIN };

static int shifted_parent(int n, int r)
{
	int u = btree_parent(n, (r - 1 + n) % n);
	return u < 0 ? -1 : (u + 1) % n;
}

static int dbt_init(struct dbt *d, int P, int K, enum dbt_shape shape)
{
	int ntrees = shape <= DBT_SHIFTED ? 2 : 1;
	int n = 2 * P;
	int *stack;

	memset(d, 0, sizeof *d);
	d->P = P;
	d->K = K;
	d->ntrees = ntrees;
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
		d->parent[r] = shape == DBT_CHAIN ? r - 1 : btree_parent(P, r);
		d->parent[P + r] = shape == DBT_NCCL ? tree1_parent(P, r)
				 : shape == DBT_SHIFTED ? shifted_parent(P, r) : -1;
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

/* May edge e carry a chunk in step `step`?  On its parity's steps; with
 * one tree, an edge without a sibling every step (its parent hears no
 * one else, and its child sends on no other edge). */
static int fires(const struct dbt *d, int e, int step)
{
	if (d->ntrees == 1) {
		const int *k = &d->kids[d->parent[e] * 2];
		if (k[0] < 0 || k[1] < 0)
			return 1;
	}
	return d->colour[e] == step % 2;
}

/* The pipelined reduce as it is played: the chunks each edge has sent
 * (now, before this step, and before the third step of a run), the edges
 * with chunks to send that may fire on even (on[0]) and odd (on[1])
 * steps, each list in edge order, so a step visits only its own and
 * emits in the order a scan of every edge would, and the edges left. */
struct reduce {
	int P, n, nch[2], left;
	int *sent, *prev, *mark, *on[2], non[2];
};

/* Does edge e carry chunks at all (a parent, and chunks in its tree)? */
static int carries(const struct dbt *d, const struct reduce *r, int e)
{
	return d->parent[e] >= 0 && r->nch[e / r->P] > 0;
}

static void reduce_free(struct reduce *r)
{
	free(r->sent);
	free(r->prev);
	free(r->mark);
	free(r->on[0]);
	free(r->on[1]);
}

static int reduce_init(const struct dbt *d, struct reduce *r)
{
	size_t n = (size_t)d->ntrees * (size_t)d->P;

	*r = (struct reduce){.P = d->P, .n = (int)n,
			     .nch = {d->ntrees == 2 ? (d->K + 1) / 2 : d->K, d->ntrees == 2 ? d->K / 2 : 0}};
	r->sent = calloc(n, sizeof(int));
	r->prev = malloc(sizeof(int) * n);
	r->mark = malloc(sizeof(int) * n);
	r->on[0] = malloc(sizeof(int) * n);
	r->on[1] = malloc(sizeof(int) * n);
	if (!r->sent || !r->prev || !r->mark || !r->on[0] || !r->on[1]) {
		reduce_free(r);
		return -1;
	}
	for (int e = 0; e < r->n; e++) {
		if (!carries(d, r, e))
			continue;
		r->left++;
		for (int q = 0; q < 2; q++)
			if (fires(d, e, q))
				r->on[q][r->non[q]++] = e;
	}
	return 0;
}

/* Step `step`: every edge of its parity whose children are ahead of it
 * sends its next chunk. */
static void reduce_step(const struct dbt *d, struct reduce *r, int step,
			void (*emit)(void *ctx, int step, int child, int parent, int chunk), void *ctx)
{
	const int *L = r->on[step % 2], *prev = r->prev;
	int P = r->P;

	for (int x = 0, m = r->non[step % 2]; x < m; x++) {
		int e = L[x], t = e / P, c = e % P, j = prev[e];
		if (j >= r->nch[t])
			continue;
		int ready = 1;
		for (int i = 0; i < 2; i++) {
			int k = d->kids[e * 2 + i];
			if (k >= 0 && prev[t * P + k] <= j)
				ready = 0;
		}
		if (!ready)
			continue;
		r->left -= ++r->sent[e] == r->nch[t];
		if (emit)
			emit(ctx, step, c, d->parent[e], d->ntrees == 2 ? 2 * j + t : j);
	}
}

/* Skip the passes of a run but its first two (steps t+4 .. t+2R-1 of a
 * run of R passes from step t): every edge sends in each pass what it
 * sent in the second (sent now less mark, sent before step t+2). */
static void skip_run(const struct dbt *d, struct reduce *r, int passes)
{
	r->left = 0;
	for (int e = 0; e < r->n; e++) {
		if (!carries(d, r, e))
			continue;
		r->sent[e] += passes * (r->sent[e] - r->mark[e]);
		r->left += r->sent[e] < r->nch[e / r->P];
	}
}

/* Run the pipelined reduce.  emit (may be NULL) receives each transfer
 * with its 1-based step.  rep (pass 2, may be NULL): the runs found by
 * pass 1 (plan_runs); a run's later passes are skipped, not played,
 * since emit stores none of them (the write pass then plays the fill and
 * drain steps only).  Returns the number of reduce steps, -1 on failure. */
static int dbt_reduce(const struct dbt *d, const int *rep,
		      void (*emit)(void *ctx, int step, int child, int parent,
				   int chunk),
		      void *ctx)
{
	struct reduce r;
	int step = 0;

	if (reduce_init(d, &r))
		return -1;
	while (r.left > 0) {
		step++;
		memcpy(r.prev, r.sent, sizeof(int) * (size_t)r.n);
		if (rep && step >= 3 && rep[step - 2] > 2)	/* step t+2 of a run from t */
			memcpy(r.mark, r.sent, sizeof(int) * (size_t)r.n);
		reduce_step(d, &r, step, emit, ctx);
		if (rep && step >= 4 && rep[step - 3] > 2) {	/* step t+3 of a run from t */
			skip_run(d, &r, rep[step - 3] - 2);
			step += 2 * (rep[step - 3] - 2);
		}
	}
	reduce_free(&r);
	return step;
}

/* The schedule stores what repeats once.  Once the pipeline is full,
 * reduce step t+2 is step t with every edge's chunk moved on by what that
 * edge carries in two steps: 2 on the double binary tree (its own tree's
 * next chunk but one), 1 or 2 on one tree (an edge below a rank with two
 * children sends every other step; one in a chain of only children every
 * step).  Such stretches are runs of two stored steps, each transfer
 * rotating by its edge's advance (sched.h); the broadcast mirrors them,
 * rotating backwards.  Pass 1 finds the repeating steps; pass 2 writes
 * the reduce half into the schedule as the pipeline runs (struct writer),
 * and the broadcast mirrors it, read back from the schedule. */
struct tx {
	int c, p, chunk;
	int by;		/* advance per pass (pass 2), or from step t-2 (pass 1) */
};

struct scan {
	struct tx *buf[3];	/* the last three steps, by step mod 3 */
	int n[3];
	int cur;		/* step being filled (1-based) */
	char *same;		/* same[t]: step t = step t-2, each chunk moved on */
	char *eq;		/* eq[t]: and moved on as far as step t-2 was */
	int *cnt;		/* cnt[t]: transfers in step t */
	int cap;		/* same, eq and cnt have room for steps 0 .. cap-1 */
	int failed;		/* out of memory */
};

enum { KEEP_STORE = 1, KEEP_ADVANCE = 2 };

static int grow_steps(struct scan *sc, int t)
{
	size_t cap = 2 * (size_t)t + 16;

	if (pm_resize(&sc->same, cap, 1) || pm_resize(&sc->eq, cap, 1) || pm_resize(&sc->cnt, cap, sizeof(int)))
		return -1;
	sc->cap = (int)cap;
	return 0;
}

static void close_step(struct scan *sc, int t)
{
	int a = t % 3, b = (t + 1) % 3;	/* (t - 2) mod 3 */
	int same = t >= 3 && sc->n[a] > 0 && sc->n[a] == sc->n[b];
	int eq;

	for (int i = 0; same && i < sc->n[a]; i++) {
		struct tx *x = &sc->buf[a][i], *y = &sc->buf[b][i];
		same = x->c == y->c && x->p == y->p && x->chunk > y->chunk;
		x->by = x->chunk - y->chunk;
	}
	eq = same && sc->same[t - 2];
	for (int i = 0; eq && i < sc->n[a]; i++)
		eq = sc->buf[a][i].by == sc->buf[b][i].by;
	if (t >= sc->cap && grow_steps(sc, t)) {
		sc->failed = 1;
		return;
	}
	sc->same[t] = (char)same;
	sc->eq[t] = (char)eq;
	sc->cnt[t] = sc->n[a];
}

/* Advance to step t, closing the steps before it (empty ones too). */
static void goto_step(struct scan *sc, int t)
{
	while (sc->cur < t) {
		if (sc->cur > 0)
			close_step(sc, sc->cur);
		sc->n[++sc->cur % 3] = 0;
	}
}

static void scan_emit(void *ctx, int step, int child, int parent, int chunk)
{
	struct scan *sc = ctx;

	goto_step(sc, step);
	sc->buf[step % 3][sc->n[step % 3]++] = (struct tx){child, parent, chunk, 0};
}

static void scan_free(struct scan *sc)
{
	for (int i = 0; i < 3; i++)
		free(sc->buf[i]);
	free(sc->same);
	free(sc->eq);
	free(sc->cnt);
}

/* Pass 1: run the reduce, recording per step its transfer count and
 * whether it repeats the steps before.  Returns S, or -1 (memory). */
static int dbt_scan(const struct dbt *d, struct scan *sc)
{
	int S = -1;

	memset(sc, 0, sizeof *sc);
	for (int i = 0; i < 3; i++)
		sc->buf[i] = malloc(sizeof(struct tx) * 2 * (size_t)d->P);
	if (sc->buf[0] && sc->buf[1] && sc->buf[2])
		S = dbt_reduce(d, NULL, scan_emit, sc);
	if (S >= 0)
		goto_step(sc, S + 1);
	return S < 0 || sc->failed ? -1 : S;
}

/* rep[t] > 1: steps t, t+1 start a run played rep[t] times (steps t+2,
 * t+3 repeat them, each edge moved on by its advance, and every later
 * pair moves on as far); 1: a step stored alone; 0: played by a run. */
static size_t plan_runs(const struct scan *sc, int S, int *rep, char *keep)
{
	size_t nk = 0;

	for (int t = 1; t <= S; t++)
		rep[t] = keep[t] = 0;
	for (int t = 1; t <= S;) {
		int R = 1;
		if (t + 3 <= S && sc->same[t + 2] && sc->same[t + 3])
			for (R = 2; t + 2 * R + 1 <= S && sc->eq[t + 2 * R] && sc->eq[t + 2 * R + 1];)
				R++;
		rep[t] = R;
		keep[t] = KEEP_STORE;
		nk += (size_t)sc->cnt[t];
		if (R > 1) {
			keep[t + 1] = KEEP_STORE;
			keep[t + 2] = keep[t + 3] = KEEP_ADVANCE;
			nk += (size_t)sc->cnt[t + 1];
			t += 2 * R;
		} else {
			t++;
		}
	}
	return nk;
}

/* The runs of a construction (plan_runs), kept with the network so that
 * build does not replay the pipeline a second time to find them. */
struct runs {
	int S;
	int *rep;
	char *keep;
	size_t nk;		/* reduce transfers stored */
};

static void runs_free(void *p)
{
	struct runs *r = p;
	if (r) {
		free(r->rep);
		free(r->keep);
	}
	free(r);
}

static struct runs *runs_new(const struct dbt *d)
{
	struct runs *r = calloc(1, sizeof *r);
	struct scan sc;

	if (!r)
		return NULL;
	r->S = dbt_scan(d, &sc);
	if (r->S >= 0) {
		r->rep = malloc(sizeof(int) * ((size_t)r->S + 2));
		r->keep = malloc((size_t)r->S + 2);
	}
	if (r->rep && r->keep)
		r->nk = plan_runs(&sc, r->S, r->rep, r->keep);
	scan_free(&sc);
	if (!r->rep || !r->keep) {
		runs_free(r);
		return NULL;
	}
	return r;
}

/* The runs for P, K and shape: kept with t (pm_topo_memo) when t is
 * given, else fresh (*fresh = 1: the caller frees them). */
static struct runs *runs_of(const struct dbt *d, enum dbt_shape shape,
			    const struct pm_topo *t, int *fresh)
{
	char key[96];
	struct runs *r;

	*fresh = 0;
	snprintf(key, sizeof key, "dbtree-runs:P=%d,K=%d,shape=%d", d->P, d->K, (int)shape);
	if (t && (r = pm_topo_memo(t, key)))
		return r;
	if (!(r = runs_new(d)))
		return NULL;
	if (!t || pm_topo_memo_keep(t, key, r, runs_free))
		*fresh = 1;
	return r;
}

/* What playing the pipeline costs: every step visits every edge, and the
 * chain's steps are K + P - 2, the trees' about 2 ceil(lg P) + K. */
static double construction_rank_steps(int P, int K, enum dbt_shape shape)
{
	double steps = shape == DBT_CHAIN ? (double)K + P : 2.0 * pm_ceil_log2(P) + K;
	return (double)P * steps;
}

/* Reduce steps S for P ranks and K chunks and the transfers the schedule
 * stores (the construction when it is cheap; else the bound 2h+K-2 and
 * the reduce half as played, (P-1)K, an upper bound). */
static int reduce_steps(int P, int K, enum dbt_shape shape, const struct pm_topo *t,
			int *exact, double *stored)
{
	struct dbt d;
	int h = pm_ceil_log2(P), S = -1;

	*exact = 1;
	*stored = 0;
	if (P < 2)
		return 0;
	if (construction_rank_steps(P, K, shape) <= EXACT_LIMIT && !dbt_init(&d, P, K, shape)) {
		int fresh;
		struct runs *r = runs_of(&d, shape, t, &fresh);
		if (r) {
			S = r->S;
			*stored = (double)r->nk;
		}
		if (fresh)
			runs_free(r);
		dbt_free(&d);
	}
	if (S < 0) {
		*exact = 0;
		*stored = (double)(P - 1) * K;	/* the reduce half, all played */
		/* two trees: Sanders et al.'s bound; one: an estimate (a node
		 * with two children hears each every other step) */
		return shape == DBT_CHAIN ? K + P - 2 : shape == DBT_TREE ? 2 * h + 2 * K : 2 * h + K - 2;
	}
	return S;
}

/* Most chunks one rank sends: up to its parent in each tree during the
 * reduce, down to each child during the broadcast. */
static double most_sent(int P, int K, enum dbt_shape shape, double *down)
{
	struct dbt d;
	int two = shape <= DBT_SHIFTED;
	int nch[2] = {two ? (K + 1) / 2 : K, two ? K / 2 : 0};
	double best = 0;

	*down = 0;
	if (P < 2 || dbt_init(&d, P, K, shape))
		return 0;
	for (int r = 0; r < P; r++) {
		double units = 0, dn = 0;
		for (int t = 0; t < 2; t++) {
			units += d.parent[t * P + r] >= 0 ? nch[t] : 0;
			for (int i = 0; i < 2; i++)
				dn += d.kids[(t * P + r) * 2 + i] >= 0 ? nch[t] : 0;
		}
		units += dn;
		if (dn > *down)
			*down = dn;
		if (units > best)
			best = units;
	}
	dbt_free(&d);
	return best;
}

/* The trees of a resolved instance: its algorithm, and dbtree's shift. */
static enum dbt_shape shape_of(const struct pm_inst *in)
{
	if (in->algo == &pm_algo_tree)
		return DBT_TREE;
	if (in->algo == &pm_algo_chain)
		return DBT_CHAIN;
	return cdbs_of(in)->shift ? DBT_SHIFTED : DBT_NCCL;
}

/* Argument: "K" (or "P": as many chunks as ranks), and for dbtree also
 * "shift" ("64,shift", "P,shift" or "shift"). */
static int parse_arg(struct pm_inst *in, const char *arg, long *k, int *shift,
		     struct pm_err *err)
{
	char buf[64];

	*shift = 0;
	if (!arg)
		return PM_OK;
	if (strlen(arg) >= sizeof buf)
		return pm_fail(err, PM_EINPUT, "invalid %s argument '%s' (expected K%s)", in->algo->name, arg,
			       in->algo == &pm_algo_dbtree ? ", K,shift or shift" : "");
	strcpy(buf, arg);
	for (char *save, *o = strtok_r(buf, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		if (strcmp(o, "shift") == 0 && in->algo == &pm_algo_dbtree)
			*shift = 1;
		else if (strcmp(o, "P") == 0)
			*k = in->P > 0 ? in->P : 1;	/* as many chunks as ranks */
		else if (pm_parse_int(o, 1, 1 << 20, "pipeline chunk count", k, err))
			return PM_EINPUT;
	}
	return PM_OK;
}

/* The default pipeline takes its chunk count from the size, as NCCL cuts
 * its trees' and its ring broadcast's data into chunks of a buffer step:
 * K = n / 32 KiB (PM_PIPE_CHUNK_B, NCCL's LL chunk) rounded up to a power
 * of two (pm_pipe_chunks), at most max(P, BIG_K); past
 * that the chunks grow, toward the 512 KiB NCCL's Simple protocol moves
 * (NCCL_BUFFSIZE 4 MiB / 8).  Past BIG_P ranks the trees take BIG_K
 * chunks and the chain P at every size: a schedule per octave there
 * costs 6x one size in a 24-size sweep (fill and drain steps are stored
 * one by one and routed for each), and K = P would store and price P^2
 * transfers (8.6e9 on 65,536 GPUs).  :K fixes K (the MULTITREE
 * supplement's baselines are dbtree:P). */
#define BIG_P 4096
#define BIG_K 256

static long most_chunks(const struct pm_inst *in)
{
	if (in->P <= 0)
		return 1;
	if (in->P > BIG_P)
		return in->algo == &pm_algo_chain ? in->P : BIG_K;
	return in->P > BIG_K ? in->P : BIG_K;
}

/* chunks, label, S and the send counts of K chunks */
static void set_chunks(struct pm_inst *in, long k)
{
	struct dbt_state *own = dbs_of(in);
	int exact;

	own->chunks = (int)k;
	snprintf(in->label, sizeof in->label, "%s:%d%s", in->algo->name, own->chunks,
		 own->shift ? ",shift" : "");
	enum dbt_shape shape = shape_of(in);
	in->steps = reduce_steps(in->P, own->chunks, shape, in->topo, &exact, &own->stored);
	own->sent_units = most_sent(in->P, own->chunks, shape, &own->sent_down);
	if (!exact)
		strcat(in->label, "~");
}

int pm_pipetree_prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct dbt_state *own = dbs_of(in);
	long k = 0;

	if (parse_arg(in, arg, &k, &own->shift, err))
		return PM_EINPUT;
	if (k == 0 && in->P > BIG_P)	/* past BIG_P one pipeline for every size */
		k = most_chunks(in);
	own->from_size = k == 0;
	in->sized = own->from_size;
	/* from the size: at_size makes it; until then it is the unpipelined
	 * instance, named without K */
	set_chunks(in, own->from_size ? 1 : k);
	if (own->from_size)
		snprintf(in->label, sizeof in->label, "%s%s", in->algo->name, own->shift ? ":shift" : "");
	return PM_OK;
}

int pm_pipetree_at_size(struct pm_inst *in, double n, struct pm_err *err)
{
	(void)err;
	if (dbs_of(in)->from_size)
		set_chunks(in, pm_pipe_chunks(n, PM_PIPE_CHUNK_B, most_chunks(in)));
	return PM_OK;
}

/* Pass 2 writes the reduce half straight into the schedule: a step
 * stored alone as the pipeline emits it; the two steps that start a run
 * held until the two after them give each transfer its advance, then
 * stored and repeated.  xb[t], xe[t]: stored reduce step t is
 * s->x[xb[t] .. xe[t]), for the broadcast to mirror. */
struct writer {
	struct pm_sched *s;
	const struct runs *r;
	int K, two;
	int step, idx;		/* step being emitted, transfers seen in it */
	int run;		/* first step of the run held; 0: none */
	struct tx *held;	/* its two steps' transfers */
	size_t nheld, second;	/* second: where step run+1 starts in held */
	size_t *xb, *xe;
	int failed;
};

static int flow_of(const struct writer *w, int chunk)
{
	return w->two ? chunk % 2 : 0;
}

static void flush_run(struct writer *w)
{
	int t = w->run;

	if (!t)
		return;
	if (w->second > w->nheld)	/* step t+1 emitted nothing */
		w->second = w->nheld;
	for (size_t i = 0; i < w->nheld; i++) {
		const struct tx *x = &w->held[i];
		int u = i < w->second ? t : t + 1;
		if (i == 0 || i == w->second)
			w->xb[u] = w->s->nx;
		pm_sched_add_rot(w->s, u - 1, x->c, x->p, (uint32_t)x->chunk, 1, PM_REDUCE,
				 flow_of(w, x->chunk), 0, (uint32_t)w->K, x->by);
		w->xe[u] = w->s->nx;
	}
	pm_sched_repeat(w->s, 2, w->r->rep[t]);
	w->run = 0;
}

static void begin_step(struct writer *w, int step)
{
	w->step = step;
	w->idx = 0;
	if (w->r->keep[step] != KEEP_STORE)
		return;
	if (w->run && step > w->run + 1)
		flush_run(w);	/* its advances were read: store it */
	if (w->r->rep[step] > 1) {
		w->run = step;
		w->nheld = 0;
		w->second = (size_t)-1;
	} else if (w->run && step == w->run + 1) {
		w->second = w->nheld;
	} else {
		w->xb[step] = w->xe[step] = w->s->nx;
	}
}

static void write_emit(void *ctx, int step, int child, int parent, int chunk)
{
	struct writer *w = ctx;
	int k = w->r->keep[step];

	if (step != w->step)
		begin_step(w, step);
	if (k == KEEP_ADVANCE) {
		struct tx *x = &w->held[(step == w->run + 2 ? 0 : w->second) + (size_t)w->idx++];
		x->by = chunk - x->chunk;
	} else if (k == KEEP_STORE && w->run && step <= w->run + 1) {
		w->held[w->nheld++] = (struct tx){child, parent, chunk, 0};
	} else if (k == KEEP_STORE) {
		pm_sched_add(w->s, step - 1, child, parent, (uint32_t)chunk, 1, PM_REDUCE,
			     flow_of(w, chunk));
		w->xe[step] = w->s->nx;
	}
}

/* The broadcast step mirroring stored reduce step t (logical step
 * `step`): its transfers reversed, each chunk moved on `ahead` passes of
 * its run. */
static void add_bcast(struct writer *w, int t, int step, int ahead, int run)
{
	struct pm_sched *s = w->s;

	for (size_t i = w->xe[t]; i-- > w->xb[t];) {
		struct pm_xfer x = s->x[i];
		int by = run ? s->rot[i].by : 0;
		uint32_t lo = (uint32_t)((int)x.lo + ahead * by);
		if (run)
			pm_sched_add_rot(s, step, x.dst, x.src, lo, 1, PM_COPY, x.flow, 0,
					 (uint32_t)w->K, -by);
		else
			pm_sched_add(s, step, x.dst, x.src, lo, 1, PM_COPY, x.flow);
	}
}

/* Reduce steps t .. t+2R-1 of a run mirrored: the first broadcast step
 * is step t+1 played R-1 passes on, then step t likewise. */
static void mirror(struct writer *w, int S)
{
	const int *rep = w->r->rep;

	for (int t = S; t >= 1; t--) {
		int R = rep[t];
		if (R == 1) {
			add_bcast(w, t, 2 * S - t, 0, 0);
		} else if (R > 1) {
			add_bcast(w, t + 1, 2 * S - t - 2 * R + 1, R - 1, 1);
			add_bcast(w, t, 2 * S - t - 2 * R + 2, R - 1, 1);
			pm_sched_repeat(w->s, 2, R);
		}
	}
}

int pm_pipetree_build(const struct pm_inst *in, struct pm_sched *s,
		      struct pm_err *err)
{
	const struct dbt_state *own = cdbs_of(in);
	struct dbt d;
	struct runs *r = NULL;
	struct writer w = {0};
	int S = -1, fresh = 0;

	s->nchunks = (uint32_t)own->chunks;
	if (in->P < 2)
		return PM_OK;
	if (construction_rank_steps(in->P, own->chunks, shape_of(in)) > EXACT_LIMIT)
		return pm_fail(err, PM_EINPUT,
			       "building it on %d ranks plays about %.3g rank-steps (expected at most %.0e; the closed form, --model closed, prices it)",
			       in->P, construction_rank_steps(in->P, own->chunks, shape_of(in)), EXACT_LIMIT);
	if (dbt_init(&d, in->P, own->chunks, shape_of(in)))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	if ((r = runs_of(&d, shape_of(in), in->topo, &fresh))) {
		w = (struct writer){.s = s, .r = r, .K = own->chunks, .two = d.ntrees == 2};
		/* two steps, each at most one transfer per edge (2P) */
		w.held = malloc(sizeof(struct tx) * (4 * (size_t)d.P + 4));
		w.xb = calloc((size_t)r->S + 2, sizeof(size_t));
		w.xe = calloc((size_t)r->S + 2, sizeof(size_t));
	}
	if (w.held && w.xb && w.xe && dbt_reduce(&d, r->rep, write_emit, &w) == r->S) {
		S = r->S;
		flush_run(&w);
		mirror(&w, S);
		s->second_phase = S;
	}
	dbt_free(&d);
	if (fresh)
		runs_free(r);
	free(w.held);
	free(w.xb);
	free(w.xe);
	return S < 0 ? pm_fail(err, PM_EINTERNAL, "out of memory") : PM_OK;
}

void pm_pipetree_closed(const struct pm_inst *in, double n,
			const struct pm_params *p, struct pm_cost *c)
{
	const struct dbt_state *own = cdbs_of(in);
	double S = in->steps, K = own->chunks;

	c->alpha_s = 2 * S * p->alpha_s;
	c->lat_s = 2 * S * pm_hop_lat(in, p);
	c->bw_s = 2 * S * pm_msg_bw_s(p, n / K);
	c->red_s = S * (n / K) * p->gamma_spB;
	c->steps = 2 * S;
	/* a broadcast alone: what a rank sends down to its children */
	c->sent_B = (in->coll == PM_COLL_BROADCAST ? own->sent_down : own->sent_units) * n / K;
}

int pm_dbtree_parent(int n, int r, int tree)
{
	return tree ? tree1_parent(n, r) : btree_parent(n, r);
}

int pm_dbtree_reduce_steps(int P, int K)
{
	int exact;
	double stored;
	return reduce_steps(P, K, DBT_NCCL, NULL, &exact, &stored);
}

/* every chunk crosses every edge of its tree, up and down; the steady
 * pipeline is stored once (prepare counted what is stored, twice: the
 * broadcast mirrors the reduce) */
double pm_pipetree_xfers(const struct pm_inst *in)
{
	const struct dbt_state *own = cdbs_of(in);
	return 2 * own->stored;
}
