/* algo_ring.c: ring all-reduce (Baidu; Patarasuk & Yuan 2009; Ueno & Yokota 2019
 * §III-A1) and its bidirectional form, the two counter-rotating rings
 * NCCL-style libraries run on full-duplex links.
 *
 * ring: P-1 reduce-scatter steps then P-1 all-gather steps; in each, every
 * rank sends one n/P chunk to the next rank on the ring.
 * Cost:  T = 2(P-1)(alpha + delta) + 2(P-1) w(n/P) beta + (P-1)(n/P) gamma,
 *        w(m) = wire bytes of an m-byte message (= m without flow control),
 *        so the beta term is the bandwidth lower bound 2(P-1)/P n beta.
 *        With Ueno & Yokota's pipelining factor s > 1 (Ueno & Yokota 2019 §IV-C) each
 *        message is cut into s pieces: the alpha and delta terms grow s-fold
 *        and the reduction is hidden behind communication.
 *
 * bidir-ring: the message is halved; one half runs the ring clockwise and
 * the other counter-clockwise at the same time, so each rank sends two
 * n/(2P) chunks per step on two different links.  2(P-1) steps.
 * Cost:  T = 2(P-1)(alpha + delta) + 2(P-1) w(n/2P) beta + (P-1)(n/P) gamma
 *        (startup paid once per step: the two sends go out together; each
 *        rank reduces two halves per reduce-scatter step).  Ports: 2 links
 *        per endpoint, so the bandwidth lower bound it is held to is
 *        (P-1)/P n beta.  With P = 2 both rings are the same pair of links
 *        and the beta term doubles.
 *
 * Restrictions: none; any P.  Ranks follow the network's ring order (snake
 * on a torus) so neighbours are one link apart.
 */
#include "model/algo.h"
#include "model/ringlib.h"

#include <stdlib.h>
#include <string.h>

/* dirs rings (1, or 2 turning opposite ways), each over its own
 * 1/dirs of the message, step by step. */
static int build_rings(const struct pm_inst *in, struct pm_sched *s, int dirs,
		       struct pm_err *err)
{
	int P = in->P;
	int *members = malloc(sizeof(int) * (size_t)P);

	if (!members)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	s->nchunks = (uint32_t)(dirs * P);
	if (P < 2) {
		free(members);
		return PM_OK;
	}
	if (in->topo) {
		pm_topo_ring_order(in->topo, s->map);
		strcpy(s->mapping, "ring order of the network (see perfmodel topo)");
	}
	for (int i = 0; i < P; i++)
		members[i] = i;
	/* each phase: its first step, played P-1 times */
	for (int d = 0; d < dirs; d++)
		pm_ring_rs_step(s, members, P, (uint32_t)(d * P), (uint32_t)P,
				0, 0, d ? -1 : +1, d);
	pm_sched_repeat(s, 1, P - 1);
	for (int d = 0; d < dirs; d++)
		pm_ring_ag_step(s, members, P, (uint32_t)(d * P), (uint32_t)P,
				P - 1, 0, d ? -1 : +1, d);
	pm_sched_repeat(s, 1, P - 1);
	s->second_phase = P - 1;
	free(members);
	return PM_OK;
}

static void closed_rings(const struct pm_inst *in, double n, int dirs,
			 const struct pm_params *p, struct pm_cost *c)
{
	double P = in->P, s = p->pipeline_s;
	double steps = 2 * (P - 1);
	/* with P = 2, or one link per endpoint, both halves cross the same
	 * link in the same step */
	double shared = dirs == 2 && in->ports < 2 ? 2 : 1;

	c->alpha_s = s * steps * p->alpha_s;
	c->lat_s = s * steps * pm_hop_lat(in, p);
	c->bw_s = s * steps * pm_msg_bw_s(p, n / (dirs * P * s)) * shared;
	c->red_s = s > 1 ? 0 : (P - 1) * (n / P) * p->gamma_spB;
	c->steps = steps;
	c->sent_B = steps * n / P;
}

static int build(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	return build_rings(in, s, 1, err);
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	closed_rings(in, n, 1, p, c);
}

/* stored: one reduce-scatter and one all-gather step of P transfers */
static double xfers(const struct pm_inst *in)
{
	return in->P > 1 ? 2.0 * in->P : 0;
}

const struct pm_algo pm_algo_ring = {
	.phases = PM_PHASES_RS_AG,
	.name = "ring",
	.summary = "ring all-reduce: reduce-scatter then all-gather around one ring",
	.formula = "2(P-1)(a+d) + 2(P-1) w(n/P) b + (P-1)(n/P) g",
	.reference = "Patarasuk & Yuan 2009; Ueno & Yokota 2019 SIII-A1",
	.build = build,
	.closed = closed,
	.xfers = xfers,
};

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
	return build_rings(in, s, 2, err);
}

static void closed_bidir(const struct pm_inst *in, double n,
			 const struct pm_params *p, struct pm_cost *c)
{
	closed_rings(in, n, 2, p, c);
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
