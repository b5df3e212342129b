/* algo_ring2.c: bidirectional ring all-reduce, the two counter-rotating
 * rings NCCL-style libraries run on full-duplex links.
 *
 * Steps: the message is halved; one half runs the ring algorithm clockwise
 * and the other counter-clockwise at the same time, so each rank sends two
 * n/(2P) chunks per step on two different links.  2(P-1) steps.
 * Cost:  T = 2(P-1)(alpha + delta) + 2(P-1) w(n/2P) beta + (P-1)(n/P) gamma
 *        (startup paid once per step: the two sends go out together; each
 *        rank reduces two halves per reduce-scatter step).
 * Restrictions: none.  Ports: 2 links per endpoint, so the bandwidth lower
 * bound it is held to is (P-1)/P n beta.  With P = 2 both rings are the
 * same pair of links and the beta term doubles.
 */
#include "model/algo.h"
#include "model/ringlib.h"

#include <stdlib.h>
#include <string.h>

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	(void)arg;
	(void)err;
	in->ports = in->P > 2 ? 2 : 1;	/* two ranks: both rings on one link pair */
	return PM_OK;
}

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	int P = in->P;
	int *members = malloc(sizeof(int) * (size_t)P);

	if (!members)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	s->nchunks = 2 * (uint32_t)P;
	if (in->topo) {
		pm_topo_ring_order(in->topo, s->map);
		strcpy(s->mapping, "ring order of the network (see perfmodel topo)");
	}
	for (int i = 0; i < P; i++)
		members[i] = i;
	for (int t = 0; t + 1 < P; t++)	/* both rings, step by step */
		for (int dir = 0; dir < 2; dir++)
			pm_ring_rs_step(s, members, P, dir ? (uint32_t)P : 0, (uint32_t)P,
					t, t, dir ? -1 : +1, dir);
	for (int t = 0; t + 1 < P; t++)
		for (int dir = 0; dir < 2; dir++)
			pm_ring_ag_step(s, members, P, dir ? (uint32_t)P : 0, (uint32_t)P,
					P - 1 + t, t, dir ? -1 : +1, dir);
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
	/* with P = 2 both halves cross the same link in the same step */
	c->bw_s = s * steps * pm_msg_bw_s(p, n / (2 * P * s)) * (P > 2 ? 1 : 2);
	c->red_s = s > 1 ? 0 : (P - 1) * (n / P) * p->gamma_spB;
	c->steps = steps;
	c->sent_B = steps * n / P;
}

static double xfers(const struct pm_inst *in)
{
	return 4.0 * in->P * (in->P - 1);
}

const struct pm_algo pm_algo_biring = {
	.name = "bidir-ring",
	.summary = "two counter-rotating rings, half the message each (NCCL-style)",
	.formula = "2(P-1)(a+d) + 2(P-1) w(n/2P) b + (P-1)(n/P) g",
	.reference = "Patarasuk & Yuan 2009 with both link directions",
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
