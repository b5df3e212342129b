/* algo_bruck.c: Bruck's all-to-all (Bruck et al., "Efficient algorithms
 * for all-to-all communications in multiport message-passing systems",
 * IEEE TPDS 1997), each rank holding block d of its n-byte buffer (n/P
 * bytes) for rank d: ceil(lg P) steps; in step k every rank r sends to
 * (r + 2^k) mod P every block it holds whose remaining distance
 * (destination - holder, mod P) has bit k set: B_k = #{ j in 1..P-1 : j
 * has bit k } blocks.
 * Cost:  T = sum over k of (alpha + delta + w(B_k n/P) beta)
 *        (about lg P (alpha + delta) + lg P (n/2) beta: fewer startups
 *        than direct, more bytes; the local rotations are not charged).
 * Rank i on endpoint i; chunks: P units of n/P, a transfer's units say
 * how many blocks it carries (which ones is the algorithm's bookkeeping,
 * checked in tests/test_coll.c).
 */
#include "model/algo.h"

/* Blocks Bruck's step k moves: j in 1..P-1 with bit k set. */
static uint32_t bruck_blocks(int P, int k)
{
	uint32_t b = 0;
	for (int j = 1; j < P; j++)
		b += (j >> k) & 1;
	return b;
}

static int build_bruck(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	int P = in->P, lg = pm_ceil_log2(P);

	(void)err;
	s->nchunks = (uint32_t)P;
	for (int k = 0; k < lg; k++)
		for (int r = 0; r < P; r++)
			pm_sched_add(s, k, r, (r + (1 << k)) % P, 0, bruck_blocks(P, k), PM_COPY, 0);
	return PM_OK;
}

static void closed_bruck(const struct pm_inst *in, double n, const struct pm_params *p,
			 struct pm_cost *c)
{
	int P = in->P, lg = pm_ceil_log2(P);

	c->alpha_s = lg * p->alpha_s;
	c->lat_s = lg * pm_hop_lat(in, p);
	c->bw_s = 0;
	c->sent_B = 0;
	for (int k = 0; k < lg; k++) {
		c->bw_s += pm_msg_bw_s(p, bruck_blocks(P, k) * n / P);
		c->sent_B += bruck_blocks(P, k) * n / P;
	}
	c->steps = lg;
}

static double xfers_bruck(const struct pm_inst *in)
{
	return (double)in->P * pm_ceil_log2(in->P);
}

const struct pm_algo pm_algo_a2a_bruck = {
	.name = "bruck",
	.summary = "all-to-all: ceil(lg P) steps to rank r+2^k, blocks forwarded (fewer, larger messages)",
	.formula = "lg P (a+d) + sum_k w(B_k n/P) b, B_k = #{j < P: bit k of j}",
	.reference = "Bruck et al. 1997; Thakur, Rabenseifner & Gropp 2005 SIII-F",
	.only_coll = 1 + PM_COLL_ALLTOALL,
	.build = build_bruck,
	.closed = closed_bruck,
	.xfers = xfers_bruck,
};
