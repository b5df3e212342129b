/* algo_binomial.c: binomial tree reduce to rank 0, then binomial broadcast.
 *
 * Steps: ceil(lg P) reduce rounds (in round k, rank r with
 * r mod 2^(k+1) = 2^k sends its whole vector to r - 2^k, which reduces)
 * and the same rounds reversed to broadcast.
 * Cost:  T = 2 ceil(lg P)(alpha + delta + w(n) beta) + ceil(lg P) n gamma
 *        (Shi et al. (MG-WFBP) Table 2 "binary tree": a = 2 alpha log N,
 *        b = (2 beta + gamma) log N).
 * Restrictions: none.  Ranks on endpoints in order.
 */
#include "model/algo.h"

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	int P = in->P, lg = pm_ceil_log2(P);

	(void)err;
	s->nchunks = 1;
	for (int k = 0; k < lg; k++)
		for (int r = 1 << k; r < P; r += 2 << k)
			pm_sched_add(s, k, r, r - (1 << k), 0, 1, PM_REDUCE, 0);
	s->second_phase = lg;
	for (int k = lg - 1; k >= 0; k--)
		for (int r = 0; r + (1 << k) < P; r += 2 << k)
			pm_sched_add(s, lg + (lg - 1 - k), r, r + (1 << k), 0, 1,
				     PM_COPY, 0);
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	double lg = pm_ceil_log2(in->P);

	c->alpha_s = 2 * lg * p->alpha_s;
	c->lat_s = 2 * lg * pm_hop_lat(in, p);
	c->bw_s = 2 * lg * pm_msg_bw_s(p, n);
	c->red_s = lg * n * p->gamma_spB;
	c->steps = 2 * lg;
	c->sent_B = lg * n;	/* the root broadcasts to ceil(lg P) children */
}

static double xfers(const struct pm_inst *in)
{
	return 2.0 * (in->P - 1);
}

const struct pm_algo pm_algo_btree = {
	.phases = PM_PHASES_REDUCE_BCAST,
	.name = "binomial",
	.summary = "binomial tree reduce to one root, then binomial broadcast",
	.formula = "2 ceil(lg P)(a + d + w(n) b) + ceil(lg P) n g",
	.reference = "Thakur, Rabenseifner & Gropp 2005; Shi et al. (MG-WFBP) Table 2",
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
