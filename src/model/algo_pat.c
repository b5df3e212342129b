/* algo_pat.c: pat, Bruck's all-gather with its dimensions reversed and
 * its mirror as reduce-scatter, the pattern of NCCL's PAT (Jeaugey, "PAT:
 * a new algorithm for all-gather and reduce-scatter operations at scale",
 * arXiv 2506.20252, 2025; Bruck et al., IEEE TPDS 1997), which NCCL runs
 * for all-gather and reduce-scatter at one GPU per node.
 *
 * Rank r owns block r (n/P bytes).  With m = ceil(lg P), all-gather step
 * k = 0 .. m-1 has distance d = 2^(m-1-k), far first: rank r receives from
 * rank r + d every block that rank holds whose offset from r stays below
 * P.  Rank r holds the blocks at offsets S from itself, S = {0} at first
 * and S u {s + d : s in S, s + d < P} after the step, so every offset
 * below P once after m steps (each is one sum of distinct powers of two).
 * The reduce-scatter is the all-gather played backwards: each transfer
 * reversed and reducing, so every block's contributions climb the tree its
 * all-gather broadcast it down.  The all-reduce is the two, unpipelined.
 * The blocks a rank sends in a step are not contiguous (offsets s + d, s
 * in S), so each block is a transfer of its own: P (P-1) transfers a phase.
 * Cost:  T = 2 sum_k (a + d + c_k w(n/P) b) + (P-1)/P n g,
 *        c_k the blocks of step k (2^k for P a power of two: P - 1 in
 *        all); a phase is half of it.  NCCL's PAT bounds its buffers and
 *        splits the far steps of large messages; this schedule is PAT with
 *        buffers that hold the aggregate.
 * Restrictions: none.
 */
#include "model/algo.h"

#include <stdlib.h>

/* Blocks all-gather step k moves to each rank: the offsets below P that
 * are odd multiples of its distance d = 2^(m-1-k). */
static int blocks(int P, int m, int k)
{
	int d = 1 << (m - 1 - k);
	return d < P ? (P - 1 - d) / (2 * d) + 1 : 0;
}

/* The offsets (from the receiver) of each step's blocks, step k's at
 * sends[k * P ..] in the order the held set grows. */
static int offsets(int P, int m, int *sends, struct pm_err *err)
{
	int *S = malloc(sizeof(int) * (size_t)P), nS = 1;

	if (!S)
		return pm_fail(err, PM_EINTERNAL, "pat: out of memory");
	S[0] = 0;
	for (int k = 0; k < m; k++) {
		int d = 1 << (m - 1 - k), n = nS, c = 0;
		for (int i = 0; i < n; i++)
			if (S[i] + d < P)
				sends[(size_t)k * P + c++] = S[nS++] = S[i] + d;
	}
	free(S);
	return PM_OK;
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	(void)arg;
	(void)err;
	in->steps = 2 * pm_ceil_log2(in->P);
	return PM_OK;
}

static int build(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	int P = in->P, m = pm_ceil_log2(P);
	int *sends = malloc(sizeof(int) * (size_t)P * (size_t)(m + 1));

	if (!sends)
		return pm_fail(err, PM_EINTERNAL, "pat: out of memory");
	if (offsets(P, m, sends, err)) {
		free(sends);
		return PM_EINTERNAL;
	}
	s->nchunks = (uint32_t)P;
	for (int i = 0; i < m; i++) {	/* reduce-scatter: all-gather step m-1-i backwards */
		int k = m - 1 - i, d = 1 << (m - 1 - k), c = blocks(P, m, k);
		for (int r = 0; r < P; r++)
			for (int j = 0; j < c; j++)
				pm_sched_add(s, i, r, (r + d) % P, (uint32_t)((r + sends[(size_t)k * P + j]) % P), 1, PM_REDUCE, 0);
	}
	s->second_phase = m;
	for (int k = 0; k < m; k++) {	/* all-gather */
		int d = 1 << (m - 1 - k), c = blocks(P, m, k);
		for (int r = 0; r < P; r++)
			for (int j = 0; j < c; j++)
				pm_sched_add(s, m + k, (r + d) % P, r, (uint32_t)((r + sends[(size_t)k * P + j]) % P), 1, PM_COPY, 0);
	}
	free(sends);
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n, const struct pm_params *p, struct pm_cost *c)
{
	int P = in->P, m = pm_ceil_log2(P);

	c->steps = 2 * m;
	c->alpha_s = 2 * m * p->alpha_s;
	c->lat_s = 2 * m * pm_hop_lat(in, p);
	for (int k = 0; k < m; k++)
		c->bw_s += 2 * blocks(P, m, k) * pm_msg_bw_s(p, n / P);
	c->red_s = (P - 1) * (n / P) * p->gamma_spB;
	c->sent_B = 2.0 * (P - 1) / P * n;
}

static double xfers(const struct pm_inst *in)
{
	return 2.0 * in->P * (in->P - 1);
}

const struct pm_algo pm_algo_pat = {
	.name = "pat",
	.summary = "Bruck's all-gather with its dimensions reversed (far steps first) and its mirror as reduce-scatter: ceil(lg P) steps each (the pattern of NCCL's PAT)",
	.formula = "2 sum_k (a + d + c_k w(n/P) b) + (P-1)/P n g, k < ceil(lg P), c_k the blocks of step k (2^k for a power of two)",
	.reference = "Jeaugey, arXiv 2506.20252, 2025 (PAT); Bruck et al., IEEE TPDS 1997",
	.phases = PM_PHASES_RS_AG,
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
