/* algo_bidir_ring.c: bidirectional ring all-reduce, the two
 * counter-rotating rings NCCL-style libraries run on full-duplex links
 * (Patarasuk & Yuan 2009 with both link directions).  The message is
 * halved; one half runs the ring clockwise and the other
 * counter-clockwise at the same time, so each rank sends two n/(2P)
 * chunks per step on two different links.  2(P-1) steps.
 * Cost:  T = 2(P-1)(alpha + delta) + 2(P-1) w(n/2P) beta + (P-1)(n/P) gamma
 *        (startup paid once per step: the two sends go out together; each
 *        rank reduces two halves per reduce-scatter step).  Ports: 2 links
 *        per endpoint, so the bandwidth lower bound it is held to is
 *        (P-1)/P n beta.  With P = 2 both rings are the same pair of links
 *        and the beta term doubles.
 */
#include "model/algo.h"
#include "model/algo_ring.h"
#include "model/topo.h"

static int prepare_bidir(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	(void)arg;
	(void)err;
	/* two ranks, or endpoints with one link (a switch or a fat tree):
	 * both rings share one link pair */
	in->ports = in->P > 2 && (!in->topo || pm_topo_endpoint_degree(in->topo) >= 2) ? 2 : 1;
	return PM_OK;
}

static int build_bidir(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	return pm_ring_build_dirs(in, s, 2, err);
}

static void closed_bidir(const struct pm_inst *in, double n,
			 const struct pm_params *p, struct pm_cost *c)
{
	pm_ring_closed_dirs(in, n, 2, p, c);
}

static double xfers_bidir(const struct pm_inst *in)
{
	return in->P > 1 ? 4.0 * in->P : 0;
}

const struct pm_algo pm_algo_biring = {
	.phases = PM_PHASES_RS_AG,
	.name = "bidir-ring",
	.summary = "two counter-rotating rings, half the message each (NCCL-style)",
	.formula = "2(P-1)(a+d) + 2(P-1) w(n/2P) b + (P-1)(n/P) g",
	.reference = "Patarasuk & Yuan 2009 with both link directions",
	.prepare = prepare_bidir,
	.build = build_bidir,
	.closed = closed_bidir,
	.xfers = xfers_bidir,
};
