/* simopts.c: the packet simulator's command-line options (--sim-net,
 * --vcs, --lockstep, ...): their rows, their parsing into pm_sim_opts, and
 * the lines of a table's head that say how the simulator was set up. */
#include "cli/simopts.h"

#include "model/text.h"
#include "model/units.h"

#include <string.h>

int cli_sim_opt_rows(struct cli_sim_args *a, struct cli_opt *o)
{
	int n = 0;
	const struct cli_opt rows[] = {
		{"sim-net", "NET", "packet simulator network: routers (default; input-queued routers, virtual cut-through, credits, VCs) or links (packet trains over FCFS links, unbounded buffers, faster)", &a->net, NULL},
		{"sim-segments", "N", "links network: most segments one message is cut into (default 64; more = finer pipelining, slower)", &a->segs, NULL},
		{"vcs", "N", "routers network: virtual channels per input port (default 4; on rings and tori half of them after the dateline)", &a->vcs, NULL},
		{"vc-flits", "N", "routers network: buffer depth of one virtual channel in flits (default 318, or more where a link's bandwidth x credit round trip needs more)", &a->vc_flits, NULL},
		{"router-delay", "CYCLES", "routers network: route + VC + switch allocation per hop at 1 GHz (default 2)", &a->pipe, NULL},
		{"ni-buffer", "N", "routers network: packets an endpoint's network interface holds per port ahead of the wire (default 0: a port takes its next message when the last packet of the one before has left); with N, a port counts as free once at most N of its packets wait, and the next message takes the port free first (the lowest-numbered among those free) and queues behind them, as in the MULTITREE artifact (52: its 32-message buffer, BookSim's 16-message input buffer and the 4 packets of its 80-flit injection queue; docs/simulator.md)", &a->nib, NULL},
		{"arbitration", "A", "routers network: schedule (default: a packet of an earlier step wins an output) or fcfs (earliest arrival wins)", &a->arb, NULL},
		{"allocator", "S", "routers network: priority (default: the --arbitration rule picks among every input asking for an output) or islip (round robin over the input channels, as BookSim2's iSLIP allocators, which ignore priorities between inputs; the --arbitration rule picks only among one input's packets: the MULTITREE artifact's runs, docs/simulator.md)", &a->alloc, NULL},
		{"trace", "FILE.json", "write the simulated run as Chrome trace-event JSON for Perfetto (ui.perfetto.dev) or chrome://tracing: one track per endpoint (its transfers), per busy link and for the steps; needs one algorithm, one size and one of --model sim or dataflow", &a->trace, NULL},
		{"reduce-at", "R", "--model sim|dataflow with --gamma: serial (default: a rank reduces one arrived message at a time) or parallel (messages from several senders reduced at once, each at gamma per byte)", &a->reduce, NULL},
		{"lockstep", "L", "--model sim: barrier (default: step k starts when step k-1 has arrived everywhere), nop (each rank's own step counter, NOP steps timed by serialization, data dependencies and ports as dataflow: the MULTITREE artifact's --estimate-lockstep) or order (each rank's own step counter without NOP time: a rank starts its transfers in step order, each as its data arrive and a port is free: the artifact's endpoints without lockstep)", &a->lockstep, NULL},
	};
	n = cli_opt_add(o, n, rows, (int)(sizeof rows / sizeof rows[0]));
	return n;
}

/* The router network's words: arbitration and allocator. */
static int parse_router_words(const struct cli_sim_args *a, struct pm_sim_opts *o, struct pm_err *err)
{
	static const char *const arbs[] = {"schedule", "fcfs", NULL};
	static const char *const allocs[] = {"priority", "islip", NULL};
	int k = 0;

	if (a->arb && (k = pm_pick_word("--arbitration", a->arb, arbs, err)) < 0)
		return PM_EINPUT;
	o->router.fcfs = a->arb && k == 1;
	if (a->alloc && (k = pm_pick_word("--allocator", a->alloc, allocs, err)) < 0)
		return PM_EINPUT;
	o->router.islip = a->alloc && k == 1;
	if (o->router.islip && !o->routers)
		return pm_fail(err, PM_EINPUT, "--allocator islip needs --sim-net routers (the links network has no routers)");
	return PM_OK;
}

/* The router network's options (o->routers already set). */
static int parse_router_opts(const struct cli_sim_args *a, struct pm_sim_opts *o, struct pm_err *err)
{
	struct pm_router_cfg *r = &o->router;
	long vcs = r->vcs, flits = 0, pipe = 0, nib = r->ni_buffer;

	if (cli_opt_long(a->vcs, 1, 64, "virtual channel count", &vcs, err) ||
	    cli_opt_long(a->vc_flits, 1, 1 << 20, "virtual channel depth in flits", &flits, err) ||
	    cli_opt_long(a->pipe, 0, 1000000, "router delay in cycles", &pipe, err) ||
	    cli_opt_long(a->nib, 0, 1 << 20, "network interface buffer in packets", &nib, err))
		return PM_EINPUT;
	r->vcs = (int)vcs;
	r->ni_buffer = (int)nib;
	if (a->vc_flits) {
		r->vc_flits = (double)flits;
		r->vc_auto = 0;
	}
	if (a->pipe)
		r->pipe_cycles = (double)pipe;
	if (a->nib && !o->routers)
		return pm_fail(err, PM_EINPUT, "--ni-buffer %s needs --sim-net routers (the links network has no network interfaces)", a->nib);
	return parse_router_words(a, o, err);
}

/* The simulator's words: network, lockstep and reduction. */
static int parse_sim_words(const struct cli_sim_args *a, struct pm_sim_opts *o, struct pm_err *err)
{
	static const char *const nets[] = {"routers", "links", NULL};
	static const char *const locks[] = {"barrier", "nop", "order", NULL};	/* enum pm_lockstep */
	static const char *const reduces[] = {"serial", "parallel", NULL};
	int net = 0, lock = PM_LOCK_BARRIER, red = 0;

	if ((a->net && (net = pm_pick_word("--sim-net", a->net, nets, err)) < 0) ||
	    (a->lockstep && (lock = pm_pick_word("--lockstep", a->lockstep, locks, err)) < 0) ||
	    (a->reduce && (red = pm_pick_word("--reduce-at", a->reduce, reduces, err)) < 0))
		return PM_EINPUT;
	o->routers = net == 0;
	o->lockstep = (enum pm_lockstep)lock;
	o->parallel_reduce = red == 1;
	return PM_OK;
}

int cli_sim_parse(const struct cli_sim_args *a, struct pm_sim_opts *o, struct pm_err *err)
{
	long segs = PM_SIM_DEFAULT_SEGMENTS;

	memset(o, 0, sizeof *o);
	pm_router_cfg_default(&o->router);
	if (parse_sim_words(a, o, err) || cli_opt_long(a->segs, 1, 1 << 20, "segment count", &segs, err))
		return PM_EINPUT;
	o->max_segments = (int)segs;
	return parse_router_opts(a, o, err);
}

/* The routers line of the table's head. */
static void router_meta(struct cli_table *tab, const struct pm_router_cfg *c)
{
	cli_table_meta(tab, "packet simulator: routers at %.4g GHz, %d VCs x %.0f flits%s, virtual cut-through, %.0f-cycle pipeline, credits after link latency + %.0f cycle, %.0f-cycle injection/ejection, arbitration by %s%s",
		       c->clock_Hz / 1e9, c->vcs, c->vc_flits,
		       c->vc_auto ? " (or the credit round trip where longer)" : "", c->pipe_cycles, c->credit_cycles,
		       c->inj_cycles, c->fcfs ? "arrival (fcfs)" : "schedule step",
		       c->islip ? " among one input's packets, round robin over inputs (islip)" : "");
	if (c->ni_buffer > 0)
		cli_table_meta(tab, "network interfaces: %d packets per port ahead of the wire; a port is free once at most that many wait", c->ni_buffer);
}

/* What the packet simulator was configured with, for the table's head. */
/* How the sim rows step, where not all in lockstep. */
static void lockstep_meta(struct cli_table *tab, const struct pm_sim_opts *o)
{
	if (o->lockstep == PM_LOCK_NOP)
		cli_table_meta(tab, "sim rows: NOP lockstep (per-rank step counters; a step a rank does not send in lasts %s)",
			       o->router.ni_buffer > 0 ? "the hand-over of its largest message to the interface"
						       : "its largest message's serialization");
	if (o->lockstep == PM_LOCK_ORDER)
		cli_table_meta(tab, "sim rows: in-order lockstep (per-rank step counters: a rank moves to its next step once every transfer of its step has started; a step it does not send in is skipped)");
}

void cli_sim_meta(struct cli_table *tab, const struct pm_sim_opts *o)
{
	if (!o->routers) {
		cli_table_meta(tab, "packet simulator: links (packet trains of at most %d segments per message, first come first served, unbounded buffers)",
			       o->max_segments);
		return;
	}
	router_meta(tab, &o->router);
	lockstep_meta(tab, o);
}
