/* algo_nvls.c: all-reduce reduced and multicast in the switch, as NCCL's
 * NVLS algorithm runs it on an NVSwitch node with NVLink SHARP (Klenk et
 * al., "An In-Network Architecture for Accelerating Shared-Memory
 * Multiprocessor Collectives", ISCA 2020; NCCL's multimem.ld_reduce and
 * multimem.st).  Rank k owns block k of the n-byte vector (n/P bytes),
 * cut into C chunks.  Per chunk, every other rank's copy of block k goes
 * up its own link to the switch, which reduces the copies and sends the
 * one sum down to rank k (the switch's load); rank k then sends the sum up
 * once and the switch multicasts it down every other rank's link.  So a
 * rank's uplink carries its P-1 contributions and its one multicast, and
 * its downlink one sum and P-1 multicast copies: P units of n/(C P) each
 * way per chunk, where a ring carries 2(P-1) a step and a direct exchange
 * P-1 down one link for every block it reduces.
 *
 * Pipelined as NCCL runs it, reduction and multicast at once in both
 * directions: step j reduces chunk j and multicasts chunk j-1, C + 1 steps.
 * Cost:  T = (C+1)(a + d) + (2(P-1) + (C-1)P) w(n/(C P)) b + (P-1)(n/P) g
 *        (the first step only reduces, P-1 units up a link; the last only
 *        multicasts, P-1 down; the C-1 between carry P each way),
 *        d the two links' latency, b a byte's time at the rate the
 *        machine states for NVLS (its nvls_busbw, the switch's reduction
 *        and multicast, below the links' own); the switch's reduction is
 *        booked to the block's owner (g, 0 by default) (docs/model.md,
 *        nvls).
 *
 * Its reduce-scatter is the reduction alone and its all-gather the
 * multicast alone (NCCL's NVLS reduce-scatter, multimem.ld_reduce of a
 * rank's own block, and all-gather, multimem.st of it): C steps each,
 * built as one whole of C reduce steps then C multicast steps.  Cost
 * of either: T = C(a + d) + C(P-1) w(n/(C P)) b, the reduce-scatter
 * adding C(P-1)(n/(C P)) g (a rank's uplink carries its P-1
 * contributions a step, or its downlink P-1 multicast copies).
 *
 * Every transfer carries its links (a source-routed schedule), since the
 * switch, not a rank, ends or starts most of them: rank g's contribution to
 * block k crosses g's uplink only, and one of them, the first (from rank
 * k+1), carries the sum on down k's link; of the multicast, the copy to
 * rank k+1 crosses k's uplink and k+1's downlink, the others the
 * receiver's downlink only.  Chunks: C P units, unit j P + k = chunk j of
 * block k.  Needs every rank one link from one switch that reduces: a
 * machine node whose NVSwitch has NVLS (param nvls_busbw), one node.
 */
#include "model/algo.h"
#include "model/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A step's chunk of each block: NCCL's NVLS chunk, 128 KiB (enqueue.cc
 * calcCollChunking, 2.21 on), on each of its 16 NVLS channels on Hopper
 * (transport/nvls.cc), which run side by side */
#define NVLS_CHUNK_B (16 * 131072.0)
#define NVLS_MOST_CHUNKS 64

struct nvls_state {
	int chunks;		/* C */
	int from_size;		/* C from the message size */
};

_Static_assert(sizeof(struct nvls_state) <= PM_PRIV_BYTES, "nvls state must fit pm_inst.priv");

static const struct nvls_state *nstate(const struct pm_inst *in)
{
	return (const struct nvls_state *)in->priv.bytes;
}

/* Its all-reduce pipelines reduction and multicast (C + 1 steps); its
 * reduce-scatter and all-gather run one of them (C steps). */
static int pipelined(const struct pm_inst *in)
{
	return in->coll != PM_COLL_REDUCESCATTER && in->coll != PM_COLL_ALLGATHER;
}

static int steps_of(const struct pm_inst *in)
{
	return nstate(in)->chunks + pipelined(in);
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct nvls_state *st = (struct nvls_state *)in->priv.bytes;
	char *end;

	memset(st, 0, sizeof *st);
	if (in->P < 2)
		return pm_fail(err, PM_ENOTAPPLICABLE, "not applicable: nvls needs at least 2 ranks");
	if (arg) {
		long c = strtol(arg, &end, 10);
		if (end == arg || *end || c < 1 || c > 4096)
			return pm_fail(err, PM_EINPUT, "invalid argument '%s' for nvls (expected chunks C from 1 to 4096)", arg);
		st->chunks = (int)c;
	} else {
		st->chunks = 1;
		st->from_size = 1;
	}
	/* the restriction row has checked the switch; build finds its links */
	in->sized = st->from_size;
	in->steps = steps_of(in);
	in->hop_links = 2;
	return PM_OK;
}

static int at_size(struct pm_inst *in, double n, struct pm_err *err)
{
	struct nvls_state *st = (struct nvls_state *)in->priv.bytes;

	(void)err;
	if (st->from_size) {
		st->chunks = (int)pm_pipe_chunks(n / in->P, NVLS_CHUNK_B, NVLS_MOST_CHUNKS);
		in->steps = steps_of(in);
		snprintf(in->label, sizeof in->label, "nvls:%d", st->chunks);	/* the chunks it runs */
	}
	return PM_OK;
}

/* Into step `step`: chunk r reduced into its owners (r >= 0), chunk m
 * multicast from them (m >= 0). */
static void add_step(const struct pm_inst *in, struct pm_sched *s, int step, int r, int m, const int *up,
		     const int *down)
{
	int P = in->P;

	for (int k = 0; k < P; k++) {
		int first = (k + 1) % P;
		int via[2];
		if (r >= 0)
			for (int g = 0; g < P; g++) {
				if (g == k)
					continue;
				int h = pm_switch_via(up, down, g, k, PM_REDUCE, g == first, via);
				pm_sched_add_routed(s, step, g, k, (uint32_t)(r * P + k), 1, PM_REDUCE, 0, via, h);
				pm_sched_at_switch(s);
			}
		if (m >= 0)
			for (int g = 0; g < P; g++) {
				if (g == k)
					continue;
				int h = pm_switch_via(up, down, k, g, PM_COPY, g == first, via);
				pm_sched_add_routed(s, step, k, g, (uint32_t)(m * P + k), 1, PM_COPY, 1, via, h);
				pm_sched_at_switch(s);
			}
	}
}

static int build(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	int P = in->P, C = nstate(in)->chunks;
	int *links = malloc(sizeof(int) * 2 * (size_t)P);

	if (!links)
		return pm_fail(err, PM_EINTERNAL, "nvls: out of memory");
	int rc = pm_node_switch_links(in->topo, P, 1, links, links + P, "nvls", err);
	if (!rc) {
		s->nchunks = (uint32_t)(C * P);
		if (pipelined(in)) {	/* step j: chunk j reduced, chunk j-1 multicast */
			for (int j = 0; j <= C; j++)
				add_step(in, s, j, j < C ? j : -1, j - 1, links, links + P);
			s->second_phase = 1;	/* chunk 0's multicast, as multiphase marks its all-gather */
		} else {	/* every chunk reduced, then every chunk multicast */
			for (int j = 0; j < 2 * C; j++)
				add_step(in, s, j, j < C ? j : -1, j >= C ? j - C : -1, links, links + P);
			s->second_phase = C;
		}
	}
	free(links);
	return rc;
}

static void closed(const struct pm_inst *in, double n, const struct pm_params *p, struct pm_cost *c)
{
	double P = in->P, C = nstate(in)->chunks, u = n / (C * P);

	c->steps = steps_of(in);
	c->alpha_s = c->steps * p->alpha_s;
	c->lat_s = c->steps * pm_hop_lat(in, p);
	if (!pipelined(in)) {	/* P-1 units a step on an uplink (reducing) or a downlink (multicast) */
		int rs = in->coll == PM_COLL_REDUCESCATTER;
		c->bw_s = C * (P - 1) * pm_msg_bw_s(p, u) * pm_switch_scale(p);
		c->red_s = rs ? C * (P - 1) * u * p->gamma_spB : 0;
		c->sent_B = rs ? n * (P - 1) / P : n / P;	/* its contributions up, or its block once */
		return;
	}
	/* the first step only reduces (P-1 units up a link), the last only
	 * multicasts (P-1 down), the C-1 between do both (P each way) */
	c->bw_s = (2 * (P - 1) + (C - 1) * P) * pm_msg_bw_s(p, u) * pm_switch_scale(p);
	c->red_s = C * (P - 1) * u * p->gamma_spB;
	c->sent_B = n;		/* (P-1)/P n up to the switch, n/P multicast */
}

double pm_nvls_switch_scale(const struct pm_topo *t, int G, double link_Bps)
{
	const struct pm_machine *m = pm_topo_machine_desc(t);
	double alg = m && G > 1 ? m->nccl.nvls_Bps * G / (2.0 * (G - 1)) : 0;

	return alg > 0 && link_Bps > alg ? link_Bps / alg : 1;
}

/* The switch's rate: what limits NVLS is how fast the switch reduces and
 * multicasts, which the machine states as NVLS's all-reduce bus bandwidth
 * (param nvls_busbw), below its links' rate.  Each byte then takes a link
 * as long as link / NVLS algbw bytes would. */
static void params(const struct pm_inst *in, struct pm_params *p)
{
	int cnt;
	const int *out = pm_topo_out(in->topo, 0, &cnt);
	double link = cnt > 0 ? pm_topo_link(in->topo, out[0])->bw_Bps : 0;	/* one node: its only link, up */

	p->switch_scale = pm_nvls_switch_scale(in->topo, in->P, link);
}

static double xfers(const struct pm_inst *in)
{
	return 2.0 * nstate(in)->chunks * in->P * (in->P - 1);
}

const struct pm_algo pm_algo_nvls = {
	.name = "nvls",
	.summary = "all-reduce reduced and multicast in the switch (NCCL's NVLS on an NVSwitch node), C chunks pipelined; its reduce-scatter the reduction alone, its all-gather the multicast alone",
	.arg_syntax = "C",
	.arg_help = "pipeline chunks C (default from the size: n/P in 2 MiB steps, NCCL's 128 KiB NVLS chunk on each of 16 channels, at most 64)",
	.formula = "(C+1)(a+d) + (2(P-1) + (C-1)P) w(n/(CP)) b + (P-1)(n/P) g; reduce-scatter, all-gather: C(a+d) + C(P-1) w(n/(CP)) b (+ (P-1)(n/P) g reducing)",
	.reference = "Klenk et al., ISCA 2020 (in-network reduction and multicast); NCCL's NVLS all-reduce",
	.flags = PM_ALGO_NEEDS_TOPO | PM_ALGO_SWITCH_REDUCES | PM_ALGO_PRICES_PARTS,
	.phases = PM_PHASES_RS_AG,
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
	.at_size = at_size,
	.params = params,
};
