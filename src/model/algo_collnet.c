/* algo_collnet.c: collnet[:K][,nodes=nvls|chain], NCCL's CollNetDirect all-reduce: the
 * network's switches reduce (SHARP, Graham et al., "Scalable Hierarchical
 * Aggregation Protocol (SHArP)", COMHPC 2016; NCCL src/device/all_reduce.h,
 * runTreeCollnetDirect, with the SHARP network plugin).
 *
 * GPU g of every node owns block g of the n-byte vector (n/G bytes, G the
 * GPUs a node) and sends it through its own NIC, rail g, cut into K
 * chunks of u = n/(G K).  Chunk j of block g:
 *   step j      every other GPU of a node sends its copy to GPU g (a
 *               direct reduce-scatter over NVLink);
 *   step j + 1  GPU g of every node sends the node's sum up rail g; the
 *               switches sum what meets in them and pass one sum up, so
 *               the sum of all nodes reaches GPU g of node 0;
 *   step j + 2  it comes back down, the switches copying it to every
 *               node's GPU g (multicast);
 *   step j + 3  GPU g sends it to the other GPUs of its node.
 * S = K + 3 steps (K + 1 with one GPU a node).  With nodes=nvls (NCCL's NVLS
 * across nodes, SHARP between them) the node's switch does steps j and
 * j + 3 as in nvls: the copies go up to it, one sum down to GPU g, and
 * GPU g's result up once and multicast, those transfers at NVLS's rate
 * (at_switch, switch_scale); a GPU's link then carries G units each way a
 * steady step, G - 1 where one of the two runs.  The switches' part is
 * charged as NVLink SHARP's is in nvls: every transfer carries its links,
 * node v's sum the links of its route to node 0's GPU g that no earlier
 * node's sum has crossed this step (where routes join, the switch has
 * summed, and one sum goes on), and the multicast the links of node 0's
 * route to node v that no earlier copy has crossed.  So each link of the
 * rail's tree carries one unit each way a step, as in SHARP's aggregation
 * tree.  A step loads a GPU's NVLink 2(G-1) units each way (the G-1
 * copies it scatters and the G-1 it gathers, from two chunks in flight)
 * and its NIC one each way.
 * With nodes=chain (NCCL's CollNetChain, src/device/all_reduce.h: each
 * channel a chain in the node whose head sends to the network) block g
 * is reduced along GPUs g+1, g+2, ..., g+G-1, g of every node (mod G), a
 * hop a step, so its head GPU g holds the node's sum after D = G - 1
 * steps; up and down the rail as above; then broadcast back down the
 * chain, D steps.  Chunk j: reduce hop p at step j + p, up at j + D,
 * down at j + D + 1, broadcast hop q at j + D + 2 + q: S = K + 2D + 1,
 * the direct form's with D = 1.  A GPU sits at every position of some
 * block's chain, so in a step it sends (and receives) one unit for each
 * chain hop that runs: 2(G-1) in the steady pipeline, as direct.
 * Cost:  T = S (a + d) + sum over steps k of max(e_k (G-1)/r, f_k) w(n/(GK)) b
 *            + (n/G)(G-1+N-1)/N g,
 *        e_k the in-node phases step k runs (2 in the steady pipeline, 1
 *        in its first and last three steps; chain: the chain hops that
 *        run over G - 1), f_k the GPUs a NIC serves
 *        (1 with a NIC a GPU; 2 on AWS p4d) where a rail phase runs, else
 *        0; b the slowest link's time a byte (the NIC's), r how much
 *        faster a GPU's link to its node's switch is (370 / 48 GB/s on DGX
 *        H100: the NVLink side binds there, 14 units a steady step against
 *        one on the NIC, 7.7 times faster); the reductions booked to the
 *        block's owner: G-1 copies in the node, the N-1 nodes' sums in the
 *        switches.
 * Restrictions: a machine: network of two or more nodes whose switches
 * reduce (param sharp 1; PM_ALGO_NET_REDUCES).
 */
#include "model/algo.h"
#include "model/machine.h"
#include "model/text.h"
#include "model/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOST_K 64
#define MAX_XFERS 1048576.0	/* stored transfers (as nodetree) */
#define MAX_P 4096		/* ranks with a schedule; beyond, the closed form */

enum cn_nodes { CN_DIRECT, CN_NVLS, CN_CHAIN };	/* what runs in the nodes */
static const char *const cn_keys[] = {"", "nodes=nvls", "nodes=chain"};

struct cn_state {
	struct pm_gpu_nodes n;	/* G GPUs a node, N nodes, ... */
	int K;			/* chunks a block */
	enum cn_nodes mode;	/* direct copies, NVLS (the switch reduces) or a chain */
	int from_size;		/* K from the message size */
};
_Static_assert(sizeof(struct cn_state) <= PM_PRIV_BYTES, "collnet state fits pm_inst.priv");

static struct cn_state *cns(struct pm_inst *in) { return (struct cn_state *)(void *)in->priv.bytes; }
static const struct cn_state *ccns(const struct pm_inst *in)
{
	return (const struct cn_state *)(const void *)in->priv.bytes;
}

/* Hops a chunk takes in a node on its way to the rail (D): none with one
 * GPU a node, one direct or through the switch, G - 1 along a chain. */
static int depth_of(const struct cn_state *st)
{
	return st->n.G < 2 ? 0 : st->mode == CN_CHAIN ? st->n.G - 1 : 1;
}

static int steps_of(const struct cn_state *st)
{
	return st->K + 2 * depth_of(st) + 1;
}

/* Stored transfers a chunk, and in all. */
static double xfers_per_chunk(const struct cn_state *st)
{
	return st->n.G * (2.0 * st->n.N * (st->n.G - 1) + 2.0 * (st->n.N - 1));
}

static double xfers_of(const struct cn_state *st)
{
	return st->K * xfers_per_chunk(st);
}

/* "K", "nodes=M" or "K,nodes=M", M nvls or chain (a key, since a bare
 * "nvls" in an --algo list names that algorithm).  Sets *sized when K
 * is not given. */
static int parse_arg(const char *arg, long *K, enum cn_nodes *mode, int *sized, struct pm_err *err)
{
	char buf[32];
	const char *comma = strchr(arg, ','), *key = strncmp(arg, "nodes=", 6) ? (comma ? comma + 1 : NULL) : arg;
	int m = key ? pm_pick(key, cn_keys + 1, 2) : -1;

	*mode = m < 0 ? CN_DIRECT : (enum cn_nodes)(m + 1);
	*sized = key == arg;
	if (key == arg && m >= 0)
		return PM_OK;
	snprintf(buf, sizeof buf, "%.*s", comma ? (int)(comma - arg) : (int)strlen(arg), arg);
	if ((key && m < 0) || pm_parse_int(buf, 1, 4096, "chunk count", K, err))
		return pm_fail(err, PM_EINPUT,
			       "invalid argument '%s' for collnet (expected K, nodes=nvls, nodes=chain or K,nodes=..., K a chunk count from 1 to 4096)",
			       arg);
	return PM_OK;
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct cn_state *st = cns(in);
	const struct pm_machine *m = pm_topo_machine_desc(in->topo);
	long K = 1;
	int rc;

	memset(st, 0, sizeof *st);
	if ((rc = pm_gpu_nodes_of(in, "collnet", &st->n, err)))	/* the restriction row has checked the machine */
		return rc;
	st->from_size = 1;
	if (arg && parse_arg(arg, &K, &st->mode, &st->from_size, err))
		return PM_EINPUT;
	if (st->mode == CN_NVLS && (m->nccl.nvls_Bps <= 0 || st->n.G < 2))
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: collnet:nodes=nvls needs nodes whose NVSwitch reduces (NVLink SHARP, param nvls_busbw) and two or more GPUs a node");
	st->K = (int)K;
	in->sized = st->from_size;
	in->steps = steps_of(st);
	return PM_OK;
}

/* K from the size: a block in 2 MiB steps (16 channels of 128 KiB, as
 * nvls), at most 64 and, where the schedule is built, within MAX_XFERS
 * stored transfers. */
static int at_size(struct pm_inst *in, double n, struct pm_err *err)
{
	struct cn_state *st = cns(in);
	long most = in->P <= MAX_P ? pm_pipe_budget(xfers_per_chunk(st), MAX_XFERS, MOST_K) : MOST_K;

	(void)err;
	if (!st->from_size)
		return PM_OK;
	st->K = (int)pm_pipe_chunks(n / st->n.G, 16 * 131072.0, most);
	in->steps = steps_of(st);
	snprintf(in->label, sizeof in->label, "collnet:%d%s%s", st->K, st->mode ? "," : "", cn_keys[st->mode]);
	return PM_OK;
}

/* The rail's routes, node by node (way 0 up from node v's GPU g to node
 * 0's, way 1 down from node 0's to node v's; v = 1 .. N-1), each less the
 * links an earlier node's route has taken: route (g, way, v) is
 * links[off[i] .. off[i+1]), i = (g * 2 + way) * (N-1) + v-1. */
struct rail_routes {
	int *off, *links;
	size_t n;
};

static int claim_routes(const struct pm_topo *t, const struct cn_state *st, struct rail_routes *R,
			struct pm_err *err)
{
	int G = st->n.G, N = st->n.N, H = pm_topo_max_hops(t), i = 0;
	char *used = calloc((size_t)pm_topo_nlinks(t) + 1, 1);
	int *buf = malloc(sizeof(int) * (size_t)H + 8);

	R->off = malloc(sizeof(int) * ((size_t)G * 2 * (N - 1) + 1));
	R->links = malloc(sizeof(int) * (size_t)G * 2 * (N - 1) * (size_t)H + 1);
	R->n = 0;
	if (!used || !buf || !R->off || !R->links) {
		free(used), free(buf);
		return pm_fail(err, PM_EINTERNAL, "collnet: out of memory");
	}
	for (int g = 0; g < G; g++)
		for (int way = 0; way < 2; way++) {
			size_t first = R->n;
			for (int v = 1; v < N; v++) {
				int h = way ? pm_topo_route(t, g, v * G + g, buf) : pm_topo_route(t, v * G + g, g, buf);
				R->off[i++] = (int)R->n;
				for (int k = 0; k < h; k++)
					if (!used[buf[k]])
						used[buf[k]] = 1, R->links[R->n++] = buf[k];
			}
			for (size_t k = first; k < R->n; k++)	/* the next step's claims start afresh */
				used[R->links[k]] = 0;
		}
	R->off[i] = (int)R->n;
	free(used), free(buf);
	return PM_OK;
}

/* Chunk j inside every node: phase 0 each GPU's copy of every other
 * block to the block's GPU (reduced there), phase 3 each block's GPU to
 * every other; in rounds d = 1 .. G-1 of GPU h with GPU h + d, so each
 * GPU's link starts on a different peer (the link simulator serves a
 * link's transfers in order). */
static void add_node(const struct pm_topo *t, const struct cn_state *st, const int *up, const int *down,
		     struct pm_sched *s, int step, int j, int phase, int *buf)
{
	int G = st->n.G;

	for (int d = 1; d < G; d++)
		for (int v = 0; v < st->n.N; v++)
			for (int h = 0; h < G; h++) {
				int g = (h + d) % G, a = v * G + (phase == 0 ? h : g), b = v * G + (phase == 0 ? g : h);
				uint32_t lo = (uint32_t)(j * G + g);	/* block g, to or from its GPU */
				enum pm_op op = phase == 0 ? PM_REDUCE : PM_COPY;
				if (st->mode != CN_NVLS) {
					pm_sched_add_routed(s, step, a, b, lo, 1, op, phase, buf, pm_topo_route(t, a, b, buf));
					continue;
				}
				/* NVLS, as nvls, the first (d = 1) carrying the sum
				 * down or the multicast up */
				int via[2], h = pm_switch_via(up, down, a, b, op, d == 1, via);
				pm_sched_add_routed(s, step, a, b, lo, 1, op, phase, via, h);
				pm_sched_at_switch(s);
			}
}

/* Chunk j of every block up the rails to node 0 (phase 1) or down from
 * it (phase 2), each node's transfer on the links it claimed. */
static void add_rails(const struct cn_state *st, const struct rail_routes *R, struct pm_sched *s, int step, int j,
		      int phase)
{
	int G = st->n.G, N = st->n.N;

	for (int g = 0; g < G; g++)
		for (int v = 1; v < N; v++) {
			int i = (g * 2 + phase - 1) * (N - 1) + v - 1, a = phase == 1 ? v * G + g : g;
			pm_sched_add_routed(s, step, a, phase == 1 ? g : v * G + g, (uint32_t)(j * G + g), 1,
					    phase == 1 ? PM_REDUCE : PM_COPY, phase, R->links + R->off[i],
					    R->off[i + 1] - R->off[i]);
		}
}

/* Chunk j one hop along every node's chain of every block: reduce hop p
 * (way 0) from position p to p + 1, or broadcast hop p (way 1) from
 * position G-1-p to G-2-p; block g's chain is GPUs g+1, ..., g+G-1, g. */
static void add_chain(const struct pm_topo *t, const struct cn_state *st, struct pm_sched *s, int step, int j,
		      int way, int p, int *buf)
{
	int G = st->n.G, from = way ? G - 1 - p : p, to = way ? from - 1 : from + 1;

	for (int v = 0; v < st->n.N; v++)
		for (int g = 0; g < G; g++) {
			int a = v * G + (g + 1 + from) % G, b = v * G + (g + 1 + to) % G;
			pm_sched_add_routed(s, step, a, b, (uint32_t)(j * G + g), 1, way ? PM_COPY : PM_REDUCE,
					    way ? 3 : 0, buf, pm_topo_route(t, a, b, buf));
		}
}

/* Step `step` of a chain: chunk step - p on reduce hop p, step - D up the
 * rails, step - D - 1 down, step - D - 2 - q on broadcast hop q. */
static void add_chain_step(const struct pm_topo *t, const struct cn_state *st, const struct rail_routes *R,
			   struct pm_sched *s, int step, int *buf)
{
	int D = depth_of(st), K = st->K;

	for (int p = 0; p < D; p++)
		if (step - p >= 0 && step - p < K)
			add_chain(t, st, s, step, step - p, 0, p, buf);
	for (int phase = 1; phase <= 2; phase++)
		if (step - D - phase + 1 >= 0 && step - D - phase + 1 < K)
			add_rails(st, R, s, step, step - D - phase + 1, phase);
	for (int q = 0; q < D; q++)
		if (step - D - 2 - q >= 0 && step - D - 2 - q < K)
			add_chain(t, st, s, step, step - D - 2 - q, 1, q, buf);
}

/* Step `step`: chunk step reduced in the nodes, step-1 up the rails,
 * step-2 down, step-3 out to the nodes (with one GPU a node, only the
 * rails: chunk step up, step-1 down). */
static void add_step(const struct pm_topo *t, const struct cn_state *st, const struct rail_routes *R,
		     const int *up, const int *down, struct pm_sched *s, int step, int *buf)
{
	if (st->mode == CN_CHAIN) {
		add_chain_step(t, st, R, s, step, buf);
		return;
	}
	for (int phase = 0; phase < 4; phase++) {
		int j = step - (st->n.G > 1 ? phase : phase - 1);
		if (j < 0 || j >= st->K)
			continue;
		if (phase == 1 || phase == 2)
			add_rails(st, R, s, step, j, phase);
		else if (st->n.G > 1)
			add_node(t, st, up, down, s, step, j, phase, buf);
	}
}

static int build(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	const struct cn_state *st = ccns(in);
	struct rail_routes R = {0};

	if (in->P > MAX_P)
		return pm_fail(err, PM_EINPUT,
			       "past %d ranks collnet is priced in closed form only (its schedule would store %.3g transfers on %d ranks; --model closed)",
			       MAX_P, xfers_of(st), in->P);
	int *buf = malloc(sizeof(int) * (size_t)pm_topo_max_hops(in->topo) + 8);
	int nvls = st->mode == CN_NVLS;
	int *sw = nvls ? malloc(sizeof(int) * 2 * (size_t)in->P) : NULL;	/* up, down */
	int rc = buf && (sw || !nvls) ? claim_routes(in->topo, st, &R, err)
					  : pm_fail(err, PM_EINTERNAL, "collnet: out of memory");
	if (!rc && sw)
		rc = pm_node_switch_links(in->topo, st->n.G, st->n.N, sw, sw + in->P, "collnet:nodes=nvls", err);
	if (!rc) {
		s->nchunks = (uint32_t)(st->n.G * st->K);
		for (int step = 0; step < steps_of(st); step++)
			add_step(in->topo, st, &R, sw, sw ? sw + in->P : NULL, s, step, buf);
	}
	free(R.off), free(R.links), free(buf), free(sw);
	return rc;
}

/* Chain hops (reduce and broadcast) that run in step k: chunk k - p on
 * reduce hop p, k - D - 2 - q on broadcast hop q. */
static int chain_hops(const struct cn_state *st, int k)
{
	int D = depth_of(st), h = 0;
	for (int p = 0; p < D; p++)
		h += (k - p >= 0 && k - p < st->K) + (k - D - 2 - p >= 0 && k - D - 2 - p < st->K);
	return h;
}

/* Step k's busiest link in units of n/(GK) at the slowest link's rate:
 * the in-node phases (chunk k scattered, chunk k-3 gathered) load a GPU's
 * switch link G-1 units each, r times faster (a chain: a unit for each
 * hop that runs); the rail phases (chunk k-D up, k-D-1 down) a NIC one
 * unit each way. */
static double step_units(const struct cn_state *st, int k, double s)
{
	int K = st->K, at = st->n.G > 1, D = depth_of(st);
	int in_node = at * ((k < K) + (k >= 3 && k - 3 < K));
	int rail = ((k - D >= 0 && k - D < K) || (k - D - 1 >= 0 && k - D - 1 < K)) * st->n.share;
	/* NVLS: a link carries G - 1 copies one way and one unit the other a
	 * phase, so G each way when both run */
	double nvl = (st->mode == CN_NVLS ? (in_node == 2 ? st->n.G : in_node ? st->n.G - 1 : 0) * s
		      : st->mode == CN_CHAIN ? chain_hops(st, k)
					     : in_node * (st->n.G - 1)) / st->n.r;

	return nvl > rail ? nvl : rail;
}

static void closed(const struct pm_inst *in, double n, const struct pm_params *p, struct pm_cost *c)
{
	const struct cn_state *st = ccns(in);
	int S = steps_of(st);
	double units = 0;

	for (int k = 0; k < S; k++)
		units += step_units(st, k, pm_switch_scale(p));
	c->steps = S;
	c->alpha_s = S * p->alpha_s;
	c->lat_s = S * pm_hop_lat(in, p);
	c->bw_s = units * pm_msg_bw_s(p, n / ((double)st->n.G * st->K));
	c->red_s = n / st->n.G * (st->n.G - 1 + st->n.N - 1) / st->n.N * p->gamma_spB;
	/* the G-1 copies scattered and gathered in the node (2 (G-1)/G n; with
	 * NVLS the G-1 contributions and one multicast up, n), and the block
	 * up the rail (n/G) */
	c->sent_B = n / st->n.G * (st->mode == CN_NVLS ? st->n.G + 1 : 2.0 * (st->n.G - 1) + 1);
}

static double xfers(const struct pm_inst *in)
{
	return in->P > MAX_P ? 0 : xfers_of(ccns(in));
}

/* collnet:nodes=nvls: NVLS's rate on the transfers its nodes' switches carry. */
static void params(const struct pm_inst *in, struct pm_params *p)
{
	const struct cn_state *st = ccns(in);

	if (st->mode == CN_NVLS)
		p->switch_scale = pm_nvls_switch_scale(in->topo, st->n.G, st->n.nvl_Bps);
}

const struct pm_algo pm_algo_collnet = {
	.name = "collnet",
	.summary = "NCCL's CollNetDirect across nodes: the network's switches reduce and multicast (SHARP), each GPU's block through its own NIC, direct reduce-scatter and all-gather in the node (or NVLS, or CollNetChain's chain), K chunks pipelined",
	.arg_syntax = "[K][,nodes=nvls|chain]",
	.arg_help = "pipeline chunks K (default from the size: a block n/G in 2 MiB steps, at most 64 and within 2^20 stored transfers; past 4,096 ranks closed form only); nodes=nvls: in the nodes NVLS instead of direct copies, each node's switch reducing and multicasting at NVLS's rate (NCCL's NVLS across nodes with SHARP; machines with nvls_busbw); nodes=chain: NCCL's CollNetChain, each block reduced along a chain of the node's GPUs to the GPU on its rail and broadcast back, S = K + 2G - 1",
	.formula = "S (a + d) + sum_k max(e_k (G-1)/r, f_k) w(n/(GK)) b + (n/G)(G-1+N-1)/N g, S = K + 2D + 1 (D = 1; chain G-1), e_k in-node phases of step k (2 steady), f_k the GPUs a NIC serves where a rail phase runs (else 0), r = a GPU's switch link / the slowest link",
	.reference = "NCCL src/device/all_reduce.h (CollNetDirect); Graham et al., COMHPC 2016 (SHARP)",
	.flags = PM_ALGO_NEEDS_TOPO | PM_ALGO_NET_REDUCES,
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
	.at_size = at_size,
	.params = params,
};
