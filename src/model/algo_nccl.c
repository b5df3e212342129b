/* algo_nccl.c: nccl[:ALGO[/PROTO]], what NCCL runs on a GPU cluster.
 *
 * For every size NCCL prices each algorithm (ring, tree, nvls, nvlstree,
 * collnetdirect, collnetchain, pat; p2p for all-to-all) with each
 * protocol (LL, LL128, Simple) by its own model and runs the cheapest on
 * as many channels as the size fills (nccl.h, nccl.c).  The instance is
 * sized: made for each size, its label names the choice and channels,
 * e.g. nccl:nvls/simple(16ch).  ALGO and PROTO restrict the choice as
 * NCCL_ALGO and NCCL_PROTO do.
 * Cost:  T = launch + NCCL latency(algo, proto, P, nodes)
 *            + n / (algbw(algo, proto) x channel share),
 *        algbw = NCCL's bus bandwidth of the pair (achieved NVLink, NVLS
 *        and NIC rates of the machine description) x its busbw-to-algbw
 *        ratio.  docs/model.md, "NCCL".
 * Restrictions: a machine: network whose description gives the NCCL
 * parameters (arch, ring_busbw, ...).
 * Schedule: where NCCL's choice has one of ours (its ring, tree, NVLS,
 * NVLSTree and CollNetDirect all-reduces, its rings, its PAT, its
 * all-to-all: schedule_inst),
 * that schedule, priced with the protocol's wire bytes and NCCL's launch
 * and latency as alpha; its other algorithms are priced in closed form
 * only.
 * Reference: NCCL 2.30.7 src/graph/tuning.cc and src/enqueue.cc.
 */
#include "model/algo.h"
#include "model/machine.h"
#include "model/nccl.h"

#include <stdio.h>
#include <string.h>

struct nccl_state {
	struct pm_nccl_sys sys;
	unsigned algo_mask, proto_mask;
	int version;			/* -1: the machine's */
	struct {			/* at_size: what runs n bytes */
		enum pm_nccl_algo algo;
		enum pm_nccl_proto proto;
		int channels;
		double steps, lat_s, algbw_Bps;
	} pick;
	double n;			/* ... and n */
	int sched_steps;		/* steps of the schedule it runs (schedule_inst) */
};
_Static_assert(sizeof(struct nccl_state) <= PM_PRIV_BYTES, "nccl state fits pm_inst.priv");

static struct nccl_state *state(struct pm_inst *in) { return (struct nccl_state *)in->priv.bytes; }
static const struct nccl_state *cstate(const struct pm_inst *in)
{
	return (const struct nccl_state *)in->priv.bytes;
}

static int system_of(const struct pm_inst *in, struct pm_nccl_sys *s, struct pm_err *err)
{
	const struct pm_machine *m = pm_topo_machine_desc(in->topo);

	if (!m)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: needs a GPU cluster description, --topo machine:NAME:NODES such as machine:dgx-h100:4 (got %s)",
			       pm_topo_spec(in->topo));
	return pm_nccl_sys_of(m, in->P, s, err);
}

static int parse_choice(const char *arg, unsigned *am, unsigned *pm, struct pm_err *err);

/* "[ALGO[/PROTO]][,RELEASE]": the choice, and an NCCL release (digits and
 * dots, such as 2.18.5) whose constants price it. */
static int parse_arg(const char *arg, unsigned *am, unsigned *pm, int *version, struct pm_err *err)
{
	char buf[64];
	const char *comma = arg ? strchr(arg, ',') : NULL;
	const char *rel = comma ? comma + 1 : arg && strspn(arg, "0123456789.") == strlen(arg) ? arg : NULL;

	*version = -1;
	if (rel) {
		if ((*version = pm_nccl_version_find(rel)) < 0)
			return pm_fail(err, PM_EINPUT, "invalid NCCL release '%s' in 'nccl:%s' (expected 2.18 to %s, such as 2.24.3)",
				       rel, arg, pm_nccl_version);
		if (!comma)
			return parse_choice(NULL, am, pm, err);
		snprintf(buf, sizeof buf, "%.*s", (int)(comma - arg), arg);
		return parse_choice(buf, am, pm, err);
	}
	return parse_choice(arg, am, pm, err);
}

/* ALGO, PROTO or ALGO/PROTO into the masks. */
static int parse_choice(const char *arg, unsigned *am, unsigned *pm, struct pm_err *err)
{
	char buf[64];
	const char *slash = arg ? strchr(arg, '/') : NULL;
	int a = -1, p = -1;

	*am = (1u << PM_NCCL_NALGO) - 1;
	*pm = (1u << PM_NCCL_NPROTO) - 1;
	if (!arg)
		return PM_OK;
	snprintf(buf, sizeof buf, "%.*s", slash ? (int)(slash - arg) : (int)strlen(arg), arg);
	if (slash) {
		a = pm_nccl_algo_find(buf);
		p = pm_nccl_proto_find(slash + 1);
	} else if ((p = pm_nccl_proto_find(buf)) < 0) {
		a = pm_nccl_algo_find(buf);
	}
	if ((slash || p < 0) && a < 0)
		return pm_fail(err, PM_EINPUT,
			       "invalid NCCL algorithm '%s' in 'nccl:%s' (expected ring, tree, nvls, nvlstree, collnetdirect, collnetchain, pat or p2p, optionally /ll, /ll128 or /simple)",
			       buf, arg);
	if (slash && p < 0)
		return pm_fail(err, PM_EINPUT,
			       "invalid NCCL protocol '%s' in 'nccl:%s' (expected ll, ll128 or simple)",
			       slash + 1, arg);
	if (a >= 0)
		*am = 1u << a;
	if (p >= 0)
		*pm = 1u << p;
	return PM_OK;
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct nccl_state *st = state(in);
	int rc = parse_arg(arg, &st->algo_mask, &st->proto_mask, &st->version, err);

	if (rc == PM_OK)
		rc = system_of(in, &st->sys, err);
	if (rc == PM_OK && st->version >= 0)
		st->sys.version = st->version;
	in->sized = 1;
	return rc;
}

/* The schedules NCCL's choices run, a row each: its algorithm, the
 * collectives (bits of enum pm_coll), where (1 one node, 2 across nodes,
 * 0 either), our algorithm (%d: the channels it runs, at most the NIC
 * rails), whether its chunks come from the size, and the steps NCCL's
 * latency is spread over: 0 NCCL's own count (the ring's 2(P-1) or P-1,
 * p2p's one step, which the schedule has too), 1 the schedule's, 2 half
 * of them (pat's are its all-reduce's, a phase is half). */
#define C_(c) (1u << PM_COLL_##c)
static const struct sched_row {
	enum pm_nccl_algo algo;
	unsigned colls;
	int where;
	const char *spec;
	int sized;
	int steps;
} sched_rows[] = {
	/* its rings: one channel per NIC rail across nodes */
	{PM_NCCL_RING, C_(ALLREDUCE) | C_(REDUCESCATTER) | C_(ALLGATHER), 1, "ring", 0, 0},
	{PM_NCCL_RING, C_(ALLREDUCE) | C_(REDUCESCATTER) | C_(ALLGATHER), 2, "ring:%d", 0, 0},
	/* its ring broadcast and reduce, and its tree, on one node: one
	 * chain of the node's GPUs; across nodes a chain a ring channel */
	{PM_NCCL_RING, C_(BROADCAST) | C_(REDUCE), 1, "chain", 1, 1},
	{PM_NCCL_TREE, C_(ALLREDUCE), 1, "chain", 1, 1},
	{PM_NCCL_RING, C_(BROADCAST) | C_(REDUCE), 2, "railchain:channels=%d", 1, 1},
	/* its double binary tree of nodes on the rails */
	{PM_NCCL_TREE, C_(ALLREDUCE), 2, "nodetree:%d", 1, 1},
	/* NVLS on one node: the switch reduces and multicasts; its
	 * reduce-scatter the reduction alone, its all-gather the multicast */
	{PM_NCCL_NVLS, C_(ALLREDUCE) | C_(REDUCESCATTER) | C_(ALLGATHER), 1, "nvls", 1, 1},
	/* NVLSTree: NVLS in the nodes, the double binary tree on every rail */
	{PM_NCCL_NVLS_TREE, C_(ALLREDUCE), 2, "nvlstree", 1, 1},
	/* SHARP: the network's switches reduce, with direct copies, a chain
	 * or NVLS in the nodes */
	{PM_NCCL_COLLNET_DIRECT, C_(ALLREDUCE), 2, "collnet", 1, 1},
	{PM_NCCL_COLLNET_CHAIN, C_(ALLREDUCE), 2, "collnet:nodes=chain", 1, 1},
	{PM_NCCL_NVLS, C_(ALLREDUCE), 2, "collnet:nodes=nvls", 1, 1},
	/* PAT: all-gather and reduce-scatter at one GPU a node */
	{PM_NCCL_PAT, C_(REDUCESCATTER) | C_(ALLGATHER), 0, "pat", 0, 2},
	/* all-to-all: every pair at once */
	{PM_NCCL_P2P, C_(ALLTOALL), 0, "direct:grouped", 0, 0},
};
#undef C_

/* The row of the choice in runs for its collective, or NULL. */
static const struct sched_row *sched_row_of(const struct pm_inst *in)
{
	const struct nccl_state *st = cstate(in);
	int where = st->sys.nodes > 1 ? 2 : 1;

	for (size_t i = 0; i < sizeof sched_rows / sizeof *sched_rows; i++) {
		const struct sched_row *r = &sched_rows[i];
		if (r->algo == st->pick.algo && (r->colls >> in->coll & 1) && (!r->where || r->where == where))
			return r;
	}
	return NULL;
}

static int schedule_inst(const struct pm_inst *in, struct pm_inst *sub, struct pm_err *err);

static int at_size(struct pm_inst *in, double n, struct pm_err *err)
{
	struct nccl_state *st = state(in);
	struct pm_nccl_cost k;
	int rc = pm_nccl_select(&st->sys, in->coll, st->algo_mask, st->proto_mask, n, &k, err);

	st->n = n;
	if (rc)
		return rc;
	st->pick.algo = k.algo;
	st->pick.proto = k.proto;
	st->pick.channels = k.channels;
	st->pick.steps = k.steps;
	st->pick.lat_s = k.lat_s;
	st->pick.algbw_Bps = k.algbw_Bps;
	snprintf(in->label, sizeof in->label, "%s:%s/%s(%dch)", in->algo->name, pm_nccl_algo_names[st->pick.algo],
		 pm_nccl_proto_names[st->pick.proto], st->pick.channels);
	in->steps = (int)st->pick.steps;
	/* the steps its schedule spreads NCCL's latency over (sched_rows) */
	const struct sched_row *r = sched_row_of(in);
	struct pm_inst sub;
	struct pm_err e;
	st->sched_steps = (int)st->pick.steps;
	if (r && r->steps && !schedule_inst(in, &sub, &e))
		st->sched_steps = sub.steps / r->steps;
	return PM_OK;
}

/* The machine as the job launches it: p's host_gpus GPUs a host thread
 * (nccl.h). */
static struct pm_nccl_sys launched(const struct pm_inst *in, const struct pm_params *p)
{
	struct pm_nccl_sys s = cstate(in)->sys;

	s.host_gpus = p->host_gpus;
	return s;
}

/* NCCL's choice at n bytes priced as the job launches it. */
static int price_pick(const struct pm_inst *in, double n, const struct pm_params *p, struct pm_nccl_cost *k,
		      struct pm_err *e)
{
	const struct nccl_state *st = cstate(in);
	struct pm_nccl_sys s = launched(in, p);

	return pm_nccl_price(&s, in->coll, st->pick.algo, st->pick.proto, n, k, e);
}

static void closed(const struct pm_inst *in, double n, const struct pm_params *p,
		   struct pm_cost *c)
{
	struct pm_nccl_cost k;
	struct pm_err e;

	if (price_pick(in, n, p, &k, &e))
		return;
	c->alpha_s = k.launch_s;
	c->lat_s = k.lat_s + k.fill_s;	/* the pipeline's fill is paid once, as latency */
	c->bw_s = k.bw_s;
	c->steps = k.steps;
	c->sent_B = n * pm_coll_busbw_factor(in->coll, in->P);
}

/* --explain: where the closed form's time goes at n bytes. */
static void terms(const struct pm_inst *in, double n, const struct pm_params *p, char *buf, size_t size)
{
	const struct nccl_state *st = cstate(in);
	struct pm_nccl_cost k;
	struct pm_err e;
	int len;

	if (price_pick(in, n, p, &k, &e)) {
		snprintf(buf, size, "%s", e.msg);
		return;
	}
	const char *lib = st->sys.rccl && st->sys.nodes == 1 ? "RCCL" : "NCCL";
	if (p->host_gpus > 1)
		len = snprintf(buf, size, "launch %.4g us (%.4g us + %d x %.4g us: one thread enqueues on %d GPUs) + %s latency %.4g us",
			       k.launch_s * 1e6, st->sys.launch_s * 1e6, p->host_gpus - 1, st->sys.host_s * 1e6,
			       p->host_gpus, lib, k.lat_s * 1e6);
	else
		len = snprintf(buf, size, "launch %.3g us + %s latency %.4g us", k.launch_s * 1e6, lib, k.lat_s * 1e6);
	if (st->sys.nodes > 1 && st->sys.tuner_lat_s != st->sys.net_lat_s && len > 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len,
				" (NCCL selects by its own estimate, %.4g us, with the %.3g us a network step its plugin reports)",
				k.model_s * 1e6, st->sys.tuner_lat_s * 1e6);
	if (k.fill_s > 0 && len > 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len, " + fill %.4g us (%.0f-byte chunks through %d hops)",
				k.fill_s * 1e6, k.chunk_B, k.fill_hops);
	if (len > 0 && (size_t)len < size && k.proxy_s > 0 && k.proxy_s >= k.bw_s)
		snprintf(buf + len, size - (size_t)len,
			 " + bytes %.4g us (bound by each GPU's proxy: %.0f network messages at %.3g us, NCCL's network overhead a step, the first in the latency; %d/%d channels at NCCL's algbw %.4g GB/s would take less)",
			 k.bw_s * 1e6, k.proxy_msgs, k.proxy_s / (k.proxy_msgs - 1) * 1e6, k.channels, st->sys.channels,
			 k.algbw_Bps / 1e9);
	else if (len > 0 && (size_t)len < size)
		snprintf(buf + len, size - (size_t)len, " + bytes %.4g us (%d/%d channels: %.4g GB/s of %s's algbw %.4g GB/s)",
			 k.bw_s * 1e6, k.channels, st->sys.channels, k.bw_s > 0 ? n / k.bw_s / 1e9 : 0, lib,
			 k.algbw_Bps / 1e9);
}

static double xfers(const struct pm_inst *in)
{
	(void)in;
	return 0;
}

static int build(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	(void)s;
	return pm_fail(err, PM_EINTERNAL, "%s: built through its schedule instance", in->label);
}

/* The schedule NCCL's choice runs (sched_rows), its chunks from the
 * size where they come from it. */
static int schedule_inst(const struct pm_inst *in, struct pm_inst *sub, struct pm_err *err)
{
	const struct nccl_state *st = cstate(in);
	const struct sched_row *r = sched_row_of(in);

	if (!r)
		return pm_fail(err, PM_EINPUT, "NCCL's %s for %s has no schedule here, only NCCL's closed form",
			       pm_nccl_algo_names[st->pick.algo], pm_coll_info(in->coll)->title);
	int rails = pm_machine_rails(pm_topo_machine_desc(in->topo));
	char spec[48];
	snprintf(spec, sizeof spec, r->spec, st->pick.channels < rails ? st->pick.channels : rails);
	int rc = pm_algo_resolve_coll(in->coll, spec, in->topo, 0, sub, err);
	return rc || !r->sized ? rc : pm_algo_at_size(sub, st->n, sub, err);
}

/* The schedule priced as NCCL runs it: the protocol's lines on the wire
 * (LL: 8 bytes of data with 8 of flags in 16; LL128: 120 of 128; Simple:
 * the data), and NCCL's launch and latency as the steps' alpha, spread
 * over the schedule's steps (the ring's 2(P-1) or P-1, as NCCL counts
 * them; the grouped all-to-all's one; the node tree's K - 1 + 2H). */
static void params(const struct pm_inst *in, struct pm_params *p)
{
	const struct nccl_state *st = cstate(in);
	static const double payload[PM_NCCL_NPROTO] = {8, 120, 0}, flag[PM_NCCL_NPROTO] = {8, 8, 0};
	double steps = st->sched_steps;

	p->flow = st->pick.proto == PM_NCCL_SIMPLE ? PM_FLOW_NONE : PM_FLOW_PACKET;
	p->payload_B = payload[st->pick.proto];
	p->flit_B = flag[st->pick.proto];
	struct pm_nccl_sys s = launched(in, p);
	p->alpha_s = steps > 0 ? (pm_nccl_launch_s(&s) + st->pick.lat_s) / steps : 0;
	p->lat_in_alpha = 1;	/* NCCL's latency counts every hop */
	/* NVLS: the switch's reduction and multicast are no resource of the
	 * schedule, which moves n each way on a GPU's link (its reduce-scatter
	 * (P-1)/P n up, its all-gather as much down); NCCL's NVLS reaches its
	 * own rate (nvls_busbw), so the share of n a link carries takes it as
	 * long as n bytes at NVLS's algbw would */
	int one = st->sys.nodes == 1, P = in->P;
	double share = in->coll == PM_COLL_ALLREDUCE ? 1 : (P - 1.0) / P;
	if (st->pick.algo == PM_NCCL_NVLS && one && st->pick.algbw_Bps > 0 &&
	    st->sys.ring_Bps > share * st->pick.algbw_Bps)
		p->switch_scale = st->sys.ring_Bps / (share * st->pick.algbw_Bps);
	/* NVLSTree, and NVLS with SHARP across nodes: their nodes' NVLS at
	 * NVLS's rate in a node, the NICs at theirs */
	double node = st->sys.ppn > 1 ? st->sys.nvls_Bps * st->sys.ppn / (2.0 * (st->sys.ppn - 1)) : 0;
	if ((st->pick.algo == PM_NCCL_NVLS_TREE || (st->pick.algo == PM_NCCL_NVLS && !one)) && node > 0 &&
	    st->sys.ring_Bps > node)
		p->switch_scale = st->sys.ring_Bps / node;
}

const struct pm_algo pm_algo_nccl = {
	.name = "nccl",
	.summary = "what NCCL runs: its algorithm, protocol and channels chosen and priced by its own model on the machine's achieved rates",
	.arg_syntax = "[ALGO[/PROTO]][,RELEASE]",
	.arg_help = "restrict NCCL's choice as NCCL_ALGO and NCCL_PROTO do: ALGO ring, tree, nvls, nvlstree, collnetdirect, collnetchain, pat or p2p; PROTO ll, ll128 or simple (nccl:ring/ll128, nccl:nvls, nccl:simple); RELEASE prices with that NCCL release's constants, 2.18 on (nccl:2.18.5, nccl:ring,2.24.3; default: the machine's nccl_version, else the newest)",
	.flags = PM_ALGO_NEEDS_TOPO | PM_ALGO_EVERY_COLL,
	.phases = PM_PHASES_NONE,
	.formula = "launch + NCCL latency(algo, proto, P, nodes) + pipeline fill(chunk, hops; in latency_us) + n / (busbw(algo, proto) x algbw ratio x channel share)",
	.reference = "NCCL 2.30.7 src/graph/tuning.cc (model, constants) and src/enqueue.cc (channels); docs/model.md, NCCL",
	.prepare = prepare,
	.terms = terms,
	.build = build,
	.closed = closed,
	.xfers = xfers,
	.at_size = at_size,
	.schedule_inst = schedule_inst,
	.params = params,
};
