/* algo_ring.c: ring all-reduce (Baidu; Patarasuk & Yuan 2009; seed 001
 * §III-A1).
 *
 * Steps: P-1 reduce-scatter steps then P-1 all-gather steps; in each, every
 * rank sends one n/P chunk to the next rank on the ring.
 * Cost:  T = 2(P-1)(alpha + delta) + 2(P-1) w(n/P) beta + (P-1)(n/P) gamma,
 *        w(m) = wire bytes of an m-byte message (= m without flow control),
 *        so the beta term is the bandwidth lower bound 2(P-1)/P n beta.
 *        With Ueno & Yokota's pipelining factor s > 1 (seed 001 §IV-C) each
 *        message is cut into s pieces: the alpha and delta terms grow s-fold
 *        and the reduction is hidden behind communication.
 * Restrictions: none; any P.  Ranks follow the network's ring order (snake
 * on a torus) so neighbours are one link apart.
 */
#include "model/algo.h"
#include "model/ringlib.h"

#include <stdlib.h>
#include <string.h>

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	int P = in->P;
	int *members = malloc(sizeof(int) * (size_t)P);

	if (!members)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	s->nchunks = (uint32_t)P;
	if (in->topo) {
		pm_topo_ring_order(in->topo, s->map);
		strcpy(s->mapping, "ring order of the network (see perfmodel topo)");
	}
	for (int i = 0; i < P; i++)
		members[i] = i;
	pm_ring_rs(s, members, P, 0, (uint32_t)P, 0, +1, 0);
	pm_ring_ag(s, members, P, 0, (uint32_t)P, P - 1, +1, 0);
	s->second_phase = P - 1;
	free(members);
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	double P = in->P, s = p->pipeline_s;
	double steps = 2 * (P - 1);

	c->alpha_s = s * steps * p->alpha_s;
	c->lat_s = s * steps * pm_hop_lat(in, p);
	c->bw_s = s * steps * pm_msg_bw_s(p, n / (P * s));
	c->red_s = s > 1 ? 0 : (P - 1) * (n / P) * p->gamma_spB;
	c->steps = steps;
	c->sent_B = steps * n / P;
}

static double xfers(const struct pm_inst *in)
{
	return 2.0 * in->P * (in->P - 1);
}

const struct pm_algo pm_algo_ring = {
	.name = "ring",
	.summary = "ring all-reduce: reduce-scatter then all-gather around one ring",
	.formula = "2(P-1)(a+d) + 2(P-1) w(n/P) b + (P-1)(n/P) g",
	.reference = "Patarasuk & Yuan 2009; seed 001 SIII-A1",
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
