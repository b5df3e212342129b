/* algo_ring.c: ring all-reduce (Baidu; Patarasuk & Yuan 2009; Ueno & Yokota 2019
 * §III-A1); its bidirectional form is algo_bidir_ring.c.
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
 * ring:C, channels (a machine: network, a GPU cluster): C rings at once,
 * each over n/C, as NCCL runs one or two channels per NIC rail.  Channel
 * c starts each node at local GPU c x G/C and leaves it by the GPU whose
 * NIC is on the rail the next node is entered by: even nodes are walked
 * up from the start (c, c+1, ..., c-1), odd nodes down from where the
 * last one left (c-1, c-2, ..., c), so every crossing between nodes stays
 * on one rail and the C channels cross on C different rails.  The default
 * on a machine: network of more than one node is one channel per NIC
 * (param nics); ring:1 is the single ring.
 * Cost:  as ring, with each step's n/P spread over the C channels; the
 *        closed form's link is the ring's own bottleneck on the machine:
 *        min(GPU rate x C/(C-1) when C = G else the GPU rate, min(C, nics)
 *        x rail rate) across nodes (with a channel per GPU each GPU sends
 *        one of its C parts by the NIC), the GPU rate in one node
 *        (achieved rates: pm_machine_gpu_bw, _egress_bw); --link-bw, when
 *        given, instead.
 *
 * Restrictions: none; any P.  Ranks follow the network's ring order (snake
 * on a torus) so neighbours are one link apart.  Channels over one need a
 * machine: network.
 */
#include "model/algo.h"
#include "model/algo_ring.h"
#include "model/machine.h"
#include "model/ringlib.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ring_state {
	int channels;		/* 1: the single ring */
	int G;			/* GPUs per node (channel orders); 0 not a machine */
	double bw_Bps;		/* machine: the bandwidth a ring step gets; 0 elsewhere */
	double slowest_Bps;	/* the network's slowest link (the closed forms' default) */
};
_Static_assert(sizeof(struct ring_state) <= PM_PRIV_BYTES, "ring state fits pm_inst.priv");

static const struct ring_state *rstate(const struct pm_inst *in)
{
	return (const struct ring_state *)in->priv.bytes;
}

void pm_ring_channel_members(int P, int G, int C, int c, int *members)
{
	int start = c * G / C;

	for (int i = 0; i < P; i++) {
		int node = i / G, j = i % G;
		int local = node % 2 == 0 ? (start + j) % G : ((start - 1 - j) % G + G) % G;
		members[i] = node * G + local;
	}
}

static int build_channels(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	const struct ring_state *st = rstate(in);
	int P = in->P, C = st->channels;
	int *members = malloc(sizeof(int) * (size_t)P * (size_t)C);

	if (!members)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	s->nchunks = (uint32_t)(C * P);
	for (int i = 0; i < P; i++)	/* the channels' orders name GPUs themselves */
		s->map[i] = i;
	snprintf(s->mapping, sizeof s->mapping, "rank i on GPU i; %d channels, one per NIC rail", C);
	for (int c = 0; c < C; c++)
		pm_ring_channel_members(P, st->G, C, c, members + (size_t)c * P);
	for (int c = 0; c < C; c++)
		pm_ring_rs_step(s, members + (size_t)c * P, P, (uint32_t)(c * P), (uint32_t)P, 0, 0, +1, c);
	pm_sched_repeat(s, 1, P - 1);
	for (int c = 0; c < C; c++)
		pm_ring_ag_step(s, members + (size_t)c * P, P, (uint32_t)(c * P), (uint32_t)P, P - 1, 0, +1, c);
	pm_sched_repeat(s, 1, P - 1);
	s->second_phase = P - 1;
	free(members);
	return PM_OK;
}

int pm_ring_build_dirs(const struct pm_inst *in, struct pm_sched *s, int dirs,
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

void pm_ring_closed_dirs(const struct pm_inst *in, double n, int dirs,
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

/* ring[:C]: the channels, and on a machine: network the bandwidth a ring
 * step gets there. */
static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct ring_state *st = (struct ring_state *)in->priv.bytes;
	const struct pm_machine *m = in->topo ? pm_topo_machine_desc(in->topo) : NULL;
	long C = 1;

	memset(st, 0, sizeof *st);
	if (arg && pm_parse_int(arg, 1, 64, "channel count", &C, err))
		return PM_EINPUT;
	if (!m) {
		if (C > 1)
			return pm_fail(err, PM_ENOTAPPLICABLE,
				       "not applicable: ring channels over NIC rails need a GPU cluster, --topo machine:NAME:NODES (got %s; on other networks C rings over one order load the same links as one)",
				       in->topo ? pm_topo_spec(in->topo) : "no network");
		st->channels = 1;
		return PM_OK;
	}
	int G = (int)m->level[0].count, nics = pm_machine_rails(m);
	int nodes = (in->P + G - 1) / G;
	if (!arg)
		C = nodes > 1 ? nics : 1;
	if (C > G)
		return pm_fail(err, PM_EINPUT, "invalid channel count %ld in '%s' (expected 1 to %d, the GPUs of a node of '%s')",
			       C, in->label, G, m->name);
	st->channels = (int)C;
	st->G = G;
	st->bw_Bps = pm_ring_channels_bw(m, in->P, (int)C);
	double lat = 0;
	pm_topo_slowest(in->topo, &st->slowest_Bps, &lat);
	if (C > 1)
		snprintf(in->label, sizeof in->label, "ring:%ld", C);
	return PM_OK;
}

double pm_ring_channels_bw(const struct pm_machine *m, int P, int C)
{
	int G = (int)m->level[0].count, nics = pm_machine_rails(m), nodes = (P + G - 1) / G;
	double gpu = pm_machine_gpu_bw(m), nic = pm_machine_egress_bw(m) / nics;	/* per rail */
	/* across nodes each channel leaves a node by its own GPU, whose send
	 * then takes the NIC, not NVLink: with a channel per GPU the busiest
	 * NVLink carries C-1 of the C parts */
	double nvlink = nodes > 1 && C == G && C > 1 ? gpu * C / (C - 1) : gpu;

	return nodes > 1 ? fmin(nvlink, (C < nics ? C : nics) * nic) : gpu;
}

static int build(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	return rstate(in)->channels > 1 ? build_channels(in, s, err) : pm_ring_build_dirs(in, s, 1, err);
}

/* On a machine: network the link a ring step meets is the ring's own
 * bottleneck there (unless --link-bw names another: p's link is then not
 * the network's slowest); C channels send n/(CP) each. */
static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	const struct ring_state *st = rstate(in);
	struct pm_params q = *p;
	int C = st->channels;

	if (st->bw_Bps > 0 && p->link_bw_Bps == st->slowest_Bps)
		q.link_bw_Bps = st->bw_Bps / C;
	pm_ring_closed_dirs(in, n / C, 1, &q, c);
	c->red_s *= C;
	c->sent_B *= C;
}

/* stored: one reduce-scatter and one all-gather step of P transfers per
 * channel */
static double xfers(const struct pm_inst *in)
{
	return in->P > 1 ? 2.0 * in->P * rstate(in)->channels : 0;
}

const struct pm_algo pm_algo_ring = {
	.phases = PM_PHASES_RS_AG,
	.name = "ring",
	.summary = "ring all-reduce: reduce-scatter then all-gather around one ring (on a GPU cluster one channel per NIC rail)",
	.arg_syntax = "C",
	.arg_help = "channels: C rings at once over n/C each, crossing between nodes on C NIC rails (machine: networks; default one per NIC there when the ring spans nodes, else 1)",
	.formula = "2(P-1)(a+d) + 2(P-1) w(n/P) b + (P-1)(n/P) g",
	.reference = "Patarasuk & Yuan 2009; Ueno & Yokota 2019 SIII-A1; channels as NCCL runs them",
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
