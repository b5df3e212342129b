/* psim.h: the packet simulator, the third evaluator of DESIGN.md §2.
 *
 * It runs a schedule from model/ over a topology with discrete events:
 * every message is cut into packets, every packet crosses the links of its
 * route one after another, and every directed link sends one packet at a
 * time in the order they reach it (first come, first served), taking
 * wire bytes / bandwidth, then the link's latency before the packet is at
 * the next node (store and forward per packet).  Endpoint injection and
 * ejection are links of their own when --inj-bw is given.  A receiver
 * reduces what it receives one message at a time (gamma per byte).
 * Buffers are unbounded: no credit stalls, no deadlock.
 *
 * Two ways to start a transfer:
 *   lockstep  step k starts when every transfer of step k-1 has arrived
 *             and been reduced (what the contention evaluator assumes), or
 *             each rank keeps its own step counter (enum pm_lockstep);
 *   dataflow  a transfer starts as soon as its source holds the chunks it
 *             sends (every earlier transfer that wrote them into the
 *             source has arrived and been reduced) and the source has a
 *             port free; no barriers.  The port budget is the schedule's
 *             own: the most transfers one rank sends in one step.  A port
 *             is busy until the message's last segment has left its first
 *             link; ready transfers wait for a port in schedule order
 *             (earlier step first).
 * Each transfer pays alpha once before its first packet leaves.
 *
 * A message of m bytes puts w(m) wire bytes on each link (the flow control
 * of params.h); it is simulated as min(packets, max_segments) segments of
 * equal wire size, so a 64 MiB message is 64 trains of packets rather than
 * 262,144 events per link.  Segments change only how much of a message is
 * pipelined over consecutive hops, never the bytes a link carries.
 */
#ifndef PM_PSIM_H
#define PM_PSIM_H

#include "model/eval.h"
#include "model/params.h"
#include "model/sched.h"
#include "model/topo.h"
#include "sim/rnet.h"
#include "sim/trace.h"

#define PM_SIM_DEFAULT_SEGMENTS 64
#define PM_SIM_MAX_EVENTS pm_limit(5e7)		/* limits.h */
#define PM_SIM_MAX_PACKET_HOPS pm_limit(1.5e8)

/* How a lockstep run moves from step to step:
 *   BARRIER  step k starts when every transfer of step k-1 has arrived;
 *   NOP      each rank's own step counter (Huang et al. 2021 SIV-A): it
 *            moves on once every transfer the rank sends in the step has
 *            left its port, and a step the rank sends nothing in lasts the
 *            step's estimated length (a NOP); dataflow dependencies and
 *            the port budget apply;
 *   ORDER    each rank's own step counter without NOP time: it moves on
 *            once every transfer the rank sends in the step has started,
 *            and a step it sends nothing in is skipped at once, so a rank
 *            issues its transfers in step order, each as its data arrive
 *            and a port is free (the MULTITREE artifact's endpoints without
 *            --estimate-lockstep: src/hmc.py only takes flows of its
 *            earliest unfinished timestep). */
enum pm_lockstep { PM_LOCK_BARRIER, PM_LOCK_NOP, PM_LOCK_ORDER };

struct pm_sim_opts {
	int dataflow;		/* 0: lockstep, 1: dataflow */
	int max_segments;	/* per message; 0 = PM_SIM_DEFAULT_SEGMENTS */
	int routers;		/* 1: the router-level network of rnet.h */
	enum pm_lockstep lockstep;	/* with dataflow 0: how steps follow */
	int parallel_reduce;	/* 1: a rank reduces messages from several
				 * senders at once, each at gamma per byte;
				 * 0 (default): one message at a time */
	struct pm_router_cfg router;	/* its configuration */
	struct pm_trace *trace;	/* record the run there, or NULL */
	double budget;		/* > 0: events this run may use at most, what is
				 * left of a command's (pm_pricer: one command
				 * simulates at most the per-run limit in all) */
};

struct pm_sim_result {
	double time_s;		/* when the last transfer is done */
	double segments;	/* segments (routers: packets) simulated */
	double events;		/* link traversals (routers: packet crossings of network links) */
	double link_busy;	/* time-weighted share of network links busy */
};

/* The simulator as a driver, as GSL's solvers: init sets the run up
 * (a compact schedule is played out first; a run of more than
 * PM_SIM_MAX_EVENTS link traversals, PM_SIM_MAX_PACKET_HOPS packet
 * crossings with routers, or more than o->budget is refused, PM_EINPUT,
 * before any segment moves); each step plays one schedule step under
 * lockstep (the whole run in dataflow or with per-rank step counters)
 * and returns 1 while there is more; now is the simulated time so far;
 * done gives the result (or the deadlock or failure the run met) and
 * frees the driver.  o must outlive the driver only for its trace. */
struct pm_sim;
int pm_sim_init(struct pm_sim **d, const struct pm_topo *t, const struct pm_sched *s, double n,
		const struct pm_params *p, const struct pm_sim_opts *o, struct pm_err *err);
int pm_sim_step(struct pm_sim *d);
double pm_sim_now(const struct pm_sim *d);
int pm_sim_done(struct pm_sim *d, struct pm_sim_result *r, struct pm_err *err);

/* init, every step, done. */
int pm_sim_run(const struct pm_topo *t, const struct pm_sched *s, double n,
	       const struct pm_params *p, const struct pm_sim_opts *o,
	       struct pm_sim_result *r, struct pm_err *err);

#endif
