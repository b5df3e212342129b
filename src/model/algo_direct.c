/* algo_direct.c: pairwise all-to-all, each rank sending block d of its
 * n-byte buffer (n/P bytes) straight to rank d (Thakur, Rabenseifner &
 * Gropp, "Optimization of collective communication operations in MPICH",
 * IJHPCA 2005, §3.6): P-1 steps; in step k every rank r sends its block
 * for rank (r+k) mod P.
 * Cost:  T = (P-1)(alpha + delta + w(n/P) beta)
 * direct:grouped puts every pair in one step, as NCCL runs all-to-all
 * (its point-to-point sends grouped between ncclGroupStart and
 * ncclGroupEnd, every channel at once): bounded by the links each block
 * crosses, not by P - 1 steps.
 * Cost:  T = alpha + delta + (P-1) w(n/P) beta (one link per endpoint).
 * Rank i on endpoint i (topology-oblivious, as MPI does); on a network
 * the contention evaluator routes every block.  Chunks: P units of n/P;
 * a transfer's units say how many blocks it carries (checked in
 * tests/test_coll.c).
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
