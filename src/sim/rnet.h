/* rnet.h: the router-level network of the packet simulator.
 *
 * Every vertex of the topology is a router with input-queued virtual
 * channels, as BookSim2's input-queued router is (Jiang et al., "A
 * detailed and flexible cycle-accurate network-on-chip simulator",
 * ISPASS 2013), at the granularity of packets:
 *
 *  - a message is cut into packets of the flow control's payload; a packet
 *    is its payload plus a head flit (packet flow control), only the first
 *    packet of a message has one (message flow control) or none has one
 *    (flow none); it is a whole number of flits on every link;
 *  - virtual cut-through: a packet leaves for the next router only when a
 *    virtual channel there has room for all of its flits; its head then
 *    crosses the link (the link's latency) and the router pipeline (route,
 *    VC and switch allocation: pipe_cycles) before it may leave again, and
 *    the link carries it in flits x flit time;
 *  - credit-based flow control: each flit that leaves a buffer returns a
 *    credit to the upstream sender after the link's latency plus
 *    credit_cycles (exact per flit: a packet's credits come back one flit
 *    time apart, not all at its tail);
 *  - every input virtual channel is first in, first out: only the packet at
 *    its front competes for an output (head-of-line blocking);
 *  - the output arbiter grants, among the packets that can go now, the
 *    one of the earliest schedule step (BookSim's priority = schedule, as
 *    the MULTITREE artifact runs it), ties to the earliest arrival; or,
 *    with fcfs, the earliest arrival.  With islip, as BookSim's iSLIP
 *    allocators (which ignore priorities between input ports), the input
 *    channel next after the one it granted last wins, round robin, and
 *    that rule picks only among the packets of one input channel;
 *  - on a ring or torus the virtual channels are split into two classes
 *    and a packet takes the upper class after the wrap-around link of the
 *    dimension it travels (dateline), so dimension-order routing cannot
 *    deadlock; elsewhere every VC is open to every packet;
 *  - an endpoint has `ports` injection and as many ejection channels
 *    (inj_cycles of latency, the link bandwidth or --inj-bw); each
 *    injection channel sends one transfer at a time, packet by packet, as
 *    credits allow; ejection never blocks.
 * Time is continuous (seconds); cycles are converted with clock_Hz.
 * Same input, same output: ties are broken by fixed keys, never by
 * addresses or hashing.
 */
#ifndef PM_RNET_H
#define PM_RNET_H

#include <stdint.h>

#include "model/err.h"
#include "model/params.h"
#include "model/sched.h"
#include "model/topo.h"
#include "sim/net.h"
#include "sim/trace.h"

/* The MULTITREE artifact's BookSim configuration (Huang et al.,
 * "Communication Algorithm-Architecture Co-Design for Distributed Deep
 * Learning", ISCA 2021, Table III): 1 GHz, 4 VCs of 318 flits, routing
 * delay 0 with VC and switch allocation one cycle each, credit delay one
 * cycle, one-cycle injection and ejection channels. */
struct pm_router_cfg {
	int vcs;		/* virtual channels per input port */
	double vc_flits;	/* buffer depth of one VC, flits */
	int vc_auto;		/* 1: at least each channel's credit round trip */
	double clock_Hz;	/* router clock */
	double pipe_cycles;	/* route + VC alloc + switch alloc, per hop */
	double credit_cycles;	/* credit processing, added to the link latency */
	double inj_cycles;	/* latency of injection and ejection channels */
	int fcfs;		/* 1: arbitrate by arrival; 0: by schedule step */
	int islip;		/* 1: round robin over input channels first */
	int ni_buffer;		/* packets a port holds ahead of its wire (see
				 * pm_rnet_send); 0: none */
};
void pm_router_cfg_default(struct pm_router_cfg *c);

struct pm_rnet;

/* PM_EINPUT when the configuration cannot run (a packet larger than a
 * virtual channel's buffer). */
int pm_rnet_check(const struct pm_params *p, const struct pm_router_cfg *c,
	       struct pm_err *err);

/* unit: bytes per chunk of the schedule; routes[roff[i]..roff[i+1]) are
 * transfer i's network links (borrowed, must outlive the network). */
int pm_rnet_new(const struct pm_topo *t, const struct pm_sched *s, double unit,
	     const struct pm_params *p, const struct pm_router_cfg *c,
	     int ports, const size_t *roff, const int32_t *route,
	     const struct pm_net_hooks *h, struct pm_rnet **out, struct pm_err *err);
/* The endpoint in the loop (params.h, --endpoint baseline|ace with
 * --mem-bw): transfer x's sender reads sender_B bytes from memory before
 * its packets leave, in step with them (each packet's share, one endpoint
 * reading one thing at a time at the memory bandwidth, shared by its
 * ports); and endpoint `reader` loads reader_B bytes of its own data from
 * t on (ACE bringing a chunk it reduces into its SRAM).  Call before
 * pm_rnet_send; nothing happens for the ideal endpoint. */
void pm_rnet_reads(struct pm_rnet *n, uint32_t x, double sender_B, int reader, double reader_B, double t);
/* How many events the run is expected to take (for its progress line;
 * 0: unknown). */
void pm_rnet_expect(struct pm_rnet *n, double events);
/* Record every link's busy intervals in tr. */
void pm_rnet_trace(struct pm_rnet *n, struct pm_trace *tr);
/* Packets of transfer x start at t on a free injection channel of its
 * source, the lowest-numbered; the caller keeps each rank within its
 * ports (pm_rnet_run fails otherwise).  A channel is free when its last
 * transfer has left (the `left` hook).  With ni_buffer B > 0 it is a
 * network interface as the MULTITREE artifact's (a message buffer fed
 * one packet a cycle, drained to the wire): a transfer has left, and its
 * channel is free for the next, once at most B of the channel's packets
 * wait for the wire; the next transfer then queues behind them. */
void pm_rnet_send(struct pm_rnet *n, uint32_t x, double t);
/* With ni_buffer B > 0: how long a message of `bytes` takes to be handed
 * to a port's interface, its first B packets one a cycle, the rest as
 * packets leave at the link bandwidth (the MULTITREE artifact's NOP step
 * estimate, 17 cycles a packet past the first 58). */
double pm_rnet_handover_s(const struct pm_params *p, const struct pm_router_cfg *c, double bytes);
/* Run until no event is left; PM_EINTERNAL when memory ran out. */
int pm_rnet_run(struct pm_rnet *n);
void pm_rnet_stats(const struct pm_rnet *n, struct pm_net_stats *st);
void pm_rnet_free(struct pm_rnet *n);

/* The same as the simulator's network interface (net.h). */
extern const struct pm_net_ops pm_rnet_ops;

#endif
