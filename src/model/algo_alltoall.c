/* algo_alltoall.c: all-to-all, each rank sending block d of its n-byte
 * buffer (n/P bytes) to rank d.
 *
 * direct (pairwise exchange; Thakur, Rabenseifner & Gropp,
 * "Optimization of collective communication operations in MPICH", IJHPCA
 * 2005, §3.6): P-1 steps; in step k every rank r sends its block for
 * rank (r+k) mod P straight there.
 * Cost:  T = (P-1)(alpha + delta + w(n/P) beta)
 *
 * bruck (Bruck et al., "Efficient algorithms for all-to-all
 * communications in multiport message-passing systems", IEEE TPDS 1997):
 * ceil(lg P) steps; in step k every rank r sends to (r + 2^k) mod P every
 * block it holds whose remaining distance (destination - holder, mod P)
 * has bit k set: B_k = #{ j in 1..P-1 : j has bit k } blocks.
 * Cost:  T = sum over k of (alpha + delta + w(B_k n/P) beta)
 *        (about lg P (alpha + delta) + lg P (n/2) beta: fewer startups,
 *        more bytes; the local rotations are not charged).
 * direct:grouped puts every pair in one step, as NCCL runs all-to-all
 * (its point-to-point sends grouped between ncclGroupStart and
 * ncclGroupEnd, every channel at once): bounded by the links each block
 * crosses, not by P - 1 steps.
 * Cost:  T = alpha + delta + (P-1) w(n/P) beta (one link per endpoint).
 * Both place rank i on endpoint i (topology-oblivious, as MPI does); on a
 * network the contention evaluator routes every block.  Chunks: P units
 * of n/P; a transfer's units say how many blocks it carries (which ones
 * is the algorithm's bookkeeping, checked in tests/test_coll.c).
 */
#include "model/algo.h"

#include <string.h>

/* direct's state: 1 for direct:grouped, every pair in one step */
static int grouped(const struct pm_inst *in) { return in->priv.bytes[0]; }

static int prepare_direct(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	if (arg && strcmp(arg, "grouped"))
		return pm_fail(err, PM_EINPUT, "invalid argument '%s' for direct (expected grouped, or none)", arg);
	in->priv.bytes[0] = arg != NULL;
	return PM_OK;
}

static int build_direct(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	int P = in->P, one = grouped(in);

	(void)err;
	s->nchunks = (uint32_t)P;
	for (int k = 1; k < P; k++)
		for (int r = 0; r < P; r++)
			pm_sched_add(s, one ? 0 : k - 1, r, (r + k) % P, (uint32_t)((r + k) % P), 1, PM_COPY, 0);
	return PM_OK;
}

static void closed_direct(const struct pm_inst *in, double n, const struct pm_params *p,
			  struct pm_cost *c)
{
	double P = in->P, steps = grouped(in) ? 1 : P - 1;

	c->alpha_s = steps * p->alpha_s;
	c->lat_s = steps * pm_hop_lat(in, p);
	c->bw_s = (P - 1) * pm_msg_bw_s(p, n / P);
	c->steps = steps;
	c->sent_B = (P - 1) / P * n;
}

static double xfers_direct(const struct pm_inst *in)
{
	return (double)in->P * (in->P - 1);
}

const struct pm_algo pm_algo_a2a_direct = {
	.name = "direct",
	.summary = "all-to-all: P-1 steps, each rank sends one block straight to rank r+k",
	.arg_syntax = "grouped",
	.arg_help = "grouped: every pair in one step, as NCCL's grouped point-to-point sends, bounded by the links instead of P-1 steps",
	.formula = "(P-1)(a+d) + (P-1) w(n/P) b; grouped: a + d + (P-1) w(n/P) b",
	.reference = "Thakur, Rabenseifner & Gropp 2005 SIII-F (pairwise exchange)",
	.only_coll = 1 + PM_COLL_ALLTOALL,
	.prepare = prepare_direct,
	.build = build_direct,
	.closed = closed_direct,
	.xfers = xfers_direct,
};

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
