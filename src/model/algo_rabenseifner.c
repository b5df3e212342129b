/* algo_rabenseifner.c: Rabenseifner's all-reduce, recursive halving reduce-scatter
 * then recursive doubling all-gather (Thakur, Rabenseifner & Gropp 2005,
 * SIV-B; Ueno & Yokota 2019 SIII-A2).
 *
 * Steps: in reduce-scatter step k = 0..lg P-1 a rank exchanges half of the
 * part it still holds with rank XOR 2^k (distance 1, 2, 4, ...), keeping
 * the lower half if its bit k is 0; the all-gather retraces the steps in
 * reverse.  Non-power-of-two P is folded as MPICH does (one whole-vector
 * step before and after).
 * Cost:  power of two:  T = 2 lg P (alpha + delta)
 *                         + 2 sum_{k=1..lg P} w(n/2^k) beta + (P-1)/P n gamma
 *        (= 2 lg P alpha + 2 (P-1)/P n beta + (P-1)/P n gamma without flow
 *        control, Thakur eq. for MPI_Allreduce);
 *        otherwise add 2 (alpha + delta + w(n) beta) + n gamma, with p' in
 *        place of P.
 * Restrictions: none.  Ranks on endpoints in order.
 */
#include "model/algo.h"
#include "model/mpich.h"

#include <stdlib.h>

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	int P = in->P, lg = pm_floor_log2(P), pof2 = 1 << lg, rem = P - pof2;
	int step = 0;
	uint32_t *lo = malloc(sizeof(uint32_t) * (size_t)pof2);
	uint32_t *len = malloc(sizeof(uint32_t) * (size_t)pof2);

	if (!lo || !len) {
		free(lo);
		free(len);
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	s->nchunks = (uint32_t)pof2;
	if (rem) {
		for (int r = 0; r < 2 * rem; r += 2)
			pm_sched_add(s, step, r, r + 1, 0, (uint32_t)pof2, PM_REDUCE, 0);
		step++;
	}
	for (int nr = 0; nr < pof2; nr++) {
		lo[nr] = 0;
		len[nr] = (uint32_t)pof2;
	}
	for (int k = 0; k < lg; k++, step++) {	/* halving */
		int mask = 1 << k;
		for (int nr = 0; nr < pof2; nr++) {
			uint32_t half = len[nr] / 2;
			uint32_t send_lo = nr & mask ? lo[nr] : lo[nr] + half;
			pm_sched_add(s, step, pm_fold_rank(nr, rem),
				     pm_fold_rank(nr ^ mask, rem), send_lo, half,
				     PM_REDUCE, 0);
		}
		for (int nr = 0; nr < pof2; nr++) {
			len[nr] /= 2;
			if (nr & mask)
				lo[nr] += len[nr];
		}
	}
	s->second_phase = step;
	for (int k = lg - 1; k >= 0; k--, step++) {	/* doubling */
		int mask = 1 << k;
		for (int nr = 0; nr < pof2; nr++)
			pm_sched_add(s, step, pm_fold_rank(nr, rem),
				     pm_fold_rank(nr ^ mask, rem), lo[nr], len[nr],
				     PM_COPY, 0);
		for (int nr = 0; nr < pof2; nr++) {
			if (nr & mask)
				lo[nr] -= len[nr];
			len[nr] *= 2;
		}
	}
	if (rem)
		for (int r = 0; r < 2 * rem; r += 2)
			pm_sched_add(s, step, r + 1, r, 0, (uint32_t)pof2, PM_COPY, 0);
	free(lo);
	free(len);
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	int lg = pm_floor_log2(in->P), pof2 = 1 << lg, rem = in->P - pof2;
	double fold = rem ? 2 : 0;

	c->alpha_s = (2 * lg + fold) * p->alpha_s;
	c->lat_s = (2 * lg + fold) * pm_hop_lat(in, p);
	for (int k = 1; k <= lg; k++)
		c->bw_s += 2 * pm_msg_bw_s(p, n / (double)(1L << k));
	c->bw_s += fold * pm_msg_bw_s(p, n);
	c->red_s = ((pof2 - 1.0) / pof2 * n + (rem ? n : 0)) * p->gamma_spB;
	c->steps = 2 * lg + fold;
	c->sent_B = 2 * (pof2 - 1.0) / pof2 * n + (rem ? n : 0);
}

static double xfers(const struct pm_inst *in)
{
	int lg = pm_floor_log2(in->P), pof2 = 1 << lg;
	return 2.0 * lg * pof2 + 2.0 * (in->P - pof2);
}

const struct pm_algo pm_algo_rhd = {
	.phases = PM_PHASES_RS_AG,
	.name = "rabenseifner",
	.summary = "recursive halving reduce-scatter + recursive doubling all-gather",
	.formula = "2 lg P (a+d) + 2 sum_k w(n/2^k) b + (P-1)/P n g; non-power-of-two: MPICH fold",
	.reference = "Thakur, Rabenseifner & Gropp 2005 SIV-B; Ueno & Yokota 2019 SIII-A2",
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
