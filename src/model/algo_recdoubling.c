/* algo_recdoubling.c: recursive doubling all-reduce (Thakur, Rabenseifner & Gropp
 * 2005, SIV-A).
 *
 * Steps: lg P steps; in step k every rank exchanges its whole vector with
 * rank XOR 2^k and reduces.  A non-power-of-two P is folded as MPICH does:
 * one extra step before (even ranks below 2*rem hand their vector to the
 * next rank, which reduces) and one after (the result goes back).
 * Cost:  power of two:  T = lg P (alpha + delta + w(n) beta + n gamma)
 *        otherwise:     T = (lg p' + 2)(alpha + delta + w(n) beta)
 *                           + (lg p' + 1) n gamma,   p' = 2^floor(lg P)
 * Restrictions: none.  Ranks on endpoints in order.
 */
#include "model/algo.h"
#include "model/mpich.h"

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	int P = in->P, lg = pm_floor_log2(P), pof2 = 1 << lg, rem = P - pof2;
	int step = 0;

	(void)err;
	s->nchunks = 1;
	if (rem) {
		for (int r = 0; r < 2 * rem; r += 2)
			pm_sched_add(s, step, r, r + 1, 0, 1, PM_REDUCE, 0);
		step++;
	}
	for (int k = 0; k < lg; k++, step++)
		for (int nr = 0; nr < pof2; nr++)
			pm_sched_add(s, step, pm_fold_rank(nr, rem),
				     pm_fold_rank(nr ^ (1 << k), rem), 0, 1,
				     PM_REDUCE, 0);
	if (rem) {
		s->second_phase = step;
		for (int r = 0; r < 2 * rem; r += 2)
			pm_sched_add(s, step, r + 1, r, 0, 1, PM_COPY, 0);
	}
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	int lg = pm_floor_log2(in->P), rem = in->P - (1 << lg);
	double steps = lg + (rem ? 2 : 0), reduces = lg + (rem ? 1 : 0);

	c->alpha_s = steps * p->alpha_s;
	c->lat_s = steps * pm_hop_lat(in, p);
	c->bw_s = steps * pm_msg_bw_s(p, n);
	c->red_s = reduces * n * p->gamma_spB;
	c->steps = steps;
	c->sent_B = (lg + (rem ? 1 : 0)) * n;
}

static double xfers(const struct pm_inst *in)
{
	int lg = pm_floor_log2(in->P), pof2 = 1 << lg;
	return (double)lg * pof2 + 2.0 * (in->P - pof2);
}

const struct pm_algo pm_algo_rd = {
	.name = "recdoubling",
	.reduce_share = 1,
	.summary = "recursive doubling: lg P exchanges of the whole vector",
	.formula = "lg P (a + d + w(n) b + n g); non-power-of-two: 2 extra steps (MPICH)",
	.reference = "Thakur, Rabenseifner & Gropp 2005 SIV-A",
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
