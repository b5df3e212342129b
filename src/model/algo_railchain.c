/* algo_railchain.c: railchain[:K][,channels=C], NCCL's ring broadcast and
 * reduce on a GPU cluster: C pipelined chains at once, one per ring
 * channel, each over n/C (NCCL src/device/broadcast.h and reduce.h, the
 * ring's next and previous ranks walked as a chain from or to the root;
 * Thakur, Rabenseifner & Gropp 2005, pipelined broadcast).
 *
 * Channel c follows ring channel c's order (pm_ring_channel_members: a
 * node's GPUs walked up or down so every crossing between nodes stays on
 * NIC rail c), turned so that it starts at rank 0, the root.  Its n/C
 * bytes are K chunks of u = n/(CK).  The all-reduce is the reduce then
 * the broadcast: chunk j moves from position P-1-i to P-2-i at step j + i
 * (reduced there), then from position i to i + 1 at step S + j + i,
 * S = K + P - 2 steps each; reduce and broadcast are its halves.
 * Cost:  T = 2S(a + d + w(u) C/B) + S u g, B what a step of the C channels
 *        moves at once: the slower of a GPU's NVLink and the min(C,
 *        rails) NICs they cross (pm_ring_channels_bw, the machine's
 *        achieved rates; as ring:C), or --link-bw / C when given.  Every
 *        link is that busy in the pipeline's steady steps; in its first
 *        and last P - 2 steps fewer hops run, so the closed form is an
 *        upper bound of the contention evaluator's there.
 * Restrictions: a machine: network (the channels' orders follow its NIC
 * rails); C at most the GPUs of a node.
 */
#include "model/algo.h"
#include "model/algo_ring.h"
#include "model/machine.h"
#include "model/text.h"
#include "model/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOST_K 1024
#define MAX_XFERS 1048576.0	/* stored transfers, as nodetree and collnet */
#define MAX_CHUNK_B 1048576.0	/* past this a chain's fill is not NCCL's: closed form only */
#define MAX_P 4096		/* ranks with a schedule (as collnet, nvlstree); beyond, the closed form */

struct rc_state {
	int K;			/* chunks a channel */
	int C;			/* channels */
	int G;			/* GPUs a node */
	int from_size;		/* K from the message size */
	double coarse_B;	/* > 0: the chunks the stored transfers allow at this
				 * size, past MAX_CHUNK_B (no schedule) */
	double bw_Bps;		/* what a step of the C channels moves at once */
	double slowest_Bps;	/* the network's slowest link (the closed forms' default) */
};
_Static_assert(sizeof(struct rc_state) <= PM_PRIV_BYTES, "railchain state fits pm_inst.priv");

static struct rc_state *rcs(struct pm_inst *in) { return (struct rc_state *)(void *)in->priv.bytes; }
static const struct rc_state *crcs(const struct pm_inst *in)
{
	return (const struct rc_state *)(const void *)in->priv.bytes;
}

/* Stored transfers a chunk (each channel's chunk down every hop, each
 * way), and in all. */
static double xfers_per_chunk(const struct rc_state *st, int P)
{
	return 2.0 * st->C * (P - 1);
}

static double xfers_of(const struct rc_state *st, int P)
{
	return st->K * xfers_per_chunk(st, P);
}

/* "K", "channels=C" or "K,channels=C". */
static int parse_arg(const char *arg, long *K, long *C, int *sized, struct pm_err *err)
{
	const char *comma = strchr(arg, ','), *key = strncmp(arg, "channels=", 9) ? (comma ? comma + 1 : NULL) : arg;
	char buf[32];
	int bad;

	*sized = key == arg;
	bad = key && (strncmp(key, "channels=", 9) || pm_parse_int(key + 9, 1, 64, "channel count", C, err));
	if (!bad && key != arg) {
		snprintf(buf, sizeof buf, "%.*s", comma ? (int)(comma - arg) : (int)strlen(arg), arg);
		bad = pm_parse_int(buf, 1, 4096, "chunk count", K, err) != PM_OK;
	}
	if (bad)
		return pm_fail(err, PM_EINPUT,
			       "invalid argument '%s' for railchain (expected K, channels=C or K,channels=C; K chunks from 1 to 4096, C channels from 1 to 64)",
			       arg);
	return PM_OK;
}

static void set_label(struct pm_inst *in)
{
	const struct rc_state *st = crcs(in);
	snprintf(in->label, sizeof in->label, "railchain:%d,channels=%d", st->K, st->C);
	in->steps = st->K + in->P - 2;	/* a phase's, as chain's */
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct rc_state *st = rcs(in);
	const struct pm_machine *m = pm_topo_machine_desc(in->topo);
	long K = 1, C = 0;
	double lat;

	memset(st, 0, sizeof *st);
	st->from_size = 1;
	if (!m)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: railchain follows a GPU cluster's NIC rails, --topo machine:NAME:NODES (got %s; elsewhere chain is the pipelined chain)",
			       pm_topo_spec(in->topo));
	if (in->P < 2)
		return pm_fail(err, PM_ENOTAPPLICABLE, "not applicable: railchain needs at least 2 ranks");
	if (arg && parse_arg(arg, &K, &C, &st->from_size, err))
		return PM_EINPUT;
	st->G = (int)m->level[0].count;
	if (C == 0)
		C = pm_machine_rails(m) < st->G ? pm_machine_rails(m) : st->G;
	if (C > st->G)
		return pm_fail(err, PM_EINPUT, "invalid channel count %ld in '%s' (expected 1 to %d, the GPUs of a node of '%s')",
			       C, in->label, st->G, m->name);
	st->C = (int)C;
	st->K = (int)K;
	st->bw_Bps = pm_ring_channels_bw(m, in->P, st->C);
	pm_topo_slowest(in->topo, &st->slowest_Bps, &lat);
	in->sized = st->from_size;
	set_label(in);
	return PM_OK;
}

/* K from the size as chain's: each channel's n/C in 32 KiB chunks
 * (PM_PIPE_CHUNK_B; NCCL's LL and LL128 stream a chain line by line,
 * Simple by slices of its steps), at most 1024 and within MAX_XFERS
 * stored transfers.  A long chain (many ranks) gets few chunks within
 * them; where they pass MAX_CHUNK_B the first chunk's trip down the
 * chain would be its own, not NCCL's (8 MiB chunks down 4,096 ranks fill
 * for 0.7 s where NCCL's 512 KiB take 0.09), so there is no schedule. */
static int at_size(struct pm_inst *in, double n, struct pm_err *err)
{
	struct rc_state *st = rcs(in);
	long most = pm_pipe_budget(xfers_per_chunk(st, in->P), MAX_XFERS, MOST_K);

	(void)err;
	if (!st->from_size)
		return PM_OK;
	st->K = (int)pm_pipe_chunks(n / st->C, PM_PIPE_CHUNK_B, most);
	st->coarse_B = n / ((double)st->C * st->K) > MAX_CHUNK_B ? n / ((double)st->C * st->K) : 0;
	set_label(in);
	return PM_OK;
}

/* Channel c's order, turned to start at the root, rank 0. */
static void chain_of(const struct rc_state *st, int P, int c, int *order, int *tmp)
{
	int at = 0;

	pm_ring_channel_members(P, st->G, st->C, c, tmp);
	while (tmp[at] != 0)
		at++;
	for (int i = 0; i < P; i++)
		order[i] = tmp[(at + i) % P];
}

/* Step t of a phase: every channel's chunk t - i on hop i, toward the
 * root (reduce: position P-1-i to P-2-i) or away from it (broadcast:
 * position i to i+1). */
static void add_step(const struct rc_state *st, int P, const int *order, struct pm_sched *s, int step, int t,
		     int bcast)
{
	for (int c = 0; c < st->C; c++)
		for (int i = 0; i < P - 1; i++) {
			int j = t - i;
			if (j < 0 || j >= st->K)
				continue;
			const int *o = order + (size_t)c * P;
			int a = bcast ? o[i] : o[P - 1 - i], b = bcast ? o[i + 1] : o[P - 2 - i];
			pm_sched_add(s, step, a, b, (uint32_t)(c * st->K + j), 1, bcast ? PM_COPY : PM_REDUCE, c);
		}
}

static int build(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	const struct rc_state *st = crcs(in);
	int P = in->P, S = st->K + P - 2;
	int *order = malloc(sizeof(int) * (size_t)P * (size_t)(st->C + 1));

	if (xfers_of(st, P) > PM_SCHED_MAX_XFERS)
		return pm_fail(err, PM_EINPUT, "railchain:%d on %d ranks would store %.3g transfers (--model closed)", st->K, P,
			       xfers_of(st, P));
	if (P > MAX_P)
		return pm_fail(err, PM_EINPUT, "past %d ranks railchain is priced in closed form only (%d ranks; --model closed)",
			       MAX_P, P);
	if (st->coarse_B > 0)
		return pm_fail(err, PM_EINPUT,
			       "railchain on %d ranks: the %.0f chunks its stored transfers allow are %.3g MiB each, where a chain's fill needs NCCL's (512 KiB at most); the closed form only (--model closed)",
			       P, (double)st->K, st->coarse_B / 1048576);
	if (!order)
		return pm_fail(err, PM_EINTERNAL, "railchain: out of memory");
	for (int c = 0; c < st->C; c++)
		chain_of(st, P, c, order + (size_t)c * P, order + (size_t)st->C * P);
	s->nchunks = (uint32_t)(st->C * st->K);
	snprintf(s->mapping, sizeof s->mapping, "rank i on GPU i; %d chains from rank 0, one per ring channel", st->C);
	for (int t = 0; t < S; t++)
		add_step(st, P, order, s, t, t, 0);
	for (int t = 0; t < S; t++)
		add_step(st, P, order, s, S + t, t, 1);
	s->second_phase = S;
	free(order);
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n, const struct pm_params *p, struct pm_cost *c)
{
	const struct rc_state *st = crcs(in);
	struct pm_params q = *p;
	double S = st->K + in->P - 2.0, u = n / ((double)st->C * st->K);

	if (st->bw_Bps > 0 && p->link_bw_Bps == st->slowest_Bps)
		q.link_bw_Bps = st->bw_Bps / st->C;
	c->steps = 2 * S;
	c->alpha_s = 2 * S * p->alpha_s;
	c->lat_s = 2 * S * pm_hop_lat(in, p);
	c->bw_s = 2 * S * pm_msg_bw_s(&q, u);
	c->red_s = S * u * p->gamma_spB;
	/* a middle rank forwards every chunk of every channel each way; a
	 * broadcast alone, once */
	c->sent_B = in->coll == PM_COLL_BROADCAST ? n : 2 * n;
}

static double xfers(const struct pm_inst *in)
{
	return xfers_of(crcs(in), in->P);
}

const struct pm_algo pm_algo_railchain = {
	.phases = PM_PHASES_REDUCE_BCAST,
	.name = "railchain",
	.summary = "C pipelined chains at once, one per ring channel over the NIC rails (NCCL's ring broadcast and reduce on a GPU cluster), K chunks each",
	.arg_syntax = "[K][,channels=C]",
	.arg_help = "pipeline chunks K a channel (default from the size: n/C in 32 KiB chunks, as chain, at most 1024 and within 2^20 stored transfers); channels=C (default one per NIC rail, at most the GPUs of a node)",
	.formula = "2S(a + d + w(n/(CK)) C/B) + S (n/(CK)) g, S = K + P - 2, B what a step of C channels moves (the slower of NVLink and min(C, rails) NICs)",
	.reference = "NCCL src/device/broadcast.h and reduce.h (ring channels as chains); Thakur, Rabenseifner & Gropp 2005 (pipelined broadcast)",
	.flags = PM_ALGO_NEEDS_TOPO,
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
	.at_size = at_size,
};
