/* params.h: the cost parameters every evaluator reads.
 *
 * Symbols as in the papers and docs/model.md:
 *   alpha   per-message startup (s), paid once per step by each sender;
 *   beta    seconds per byte on a link = 1 / link bandwidth;
 *   gamma   seconds per byte of reduction at the receiver;
 *   delta   latency of one link (s), paid per link a message crosses.
 * Flow control decides how many bytes a message puts on the wire: packet
 * flow control adds one head flit per packet (Huang et al. 2021 §II-C: 16-byte
 * flits, 256-byte payloads, 6% overhead), message flow control one head
 * flit per message (MULTITREE-MSG, §IV-B).
 */
#ifndef PM_PARAMS_H
#define PM_PARAMS_H

#include <stddef.h>

#include "model/err.h"

enum pm_flow {
	PM_FLOW_NONE,
	PM_FLOW_PACKET,
	PM_FLOW_MESSAGE,
};

/* The endpoint that drives the network (Rashidi et al. 2021 §III, §VI-A):
 * ideal costs nothing; baseline reads 2 bytes from memory for every byte
 * it sends in a reduction step (its data and what it received) and 1 per
 * byte in a copy step (1.5 N per N sent over an all-reduce); ace reads each
 * byte of its own data into the engine's SRAM once, the first time a step
 * sends it or reduces into it, and serves the rest from SRAM (N read for
 * 2.25 N sent on 4x4x4).  Reads are limited by mem_bw_Bps. */
enum pm_endpoint {
	PM_END_IDEAL,
	PM_END_BASELINE,
	PM_END_ACE,
};

/* One SM of Rashidi et al. 2021 §V moves 64 B a cycle at 1245 MHz. */
#define PM_SM_BW_Bps (64 * 1245e6)

struct pm_params {
	double alpha_s;		/* startup per message */
	double gamma_spB;	/* reduction, seconds per byte */
	double link_bw_Bps;	/* closed forms: beta = 1 / link_bw */
	double link_lat_s;	/* delta, per link crossed */
	double inj_bw_Bps;	/* endpoint injection/ejection; 0 = only links limit */
	int pipeline_s;		/* Ueno & Yokota's s for ring-based closed forms */
	enum pm_flow flow;
	double payload_B;	/* packet payload (packet flow control) */
	double flit_B;		/* head flit size */
	enum pm_endpoint endpoint;	/* contention evaluator only */
	double mem_bw_Bps;	/* memory bandwidth the collective may use */
	int lat_in_alpha;	/* the steps' alpha already holds each hop's latency
				 * (NCCL's per-hop constants): the evaluators and the
				 * simulators' links add none of their own */
	int host_gpus;		/* GPUs one host thread enqueues each collective on, in
				 * turn (nccl-tests -g G, a single-process job); 1: a
				 * process per GPU, as training frameworks run.  NCCL's
				 * rows add the host's cost of the others (nccl.h) */
	double switch_scale;	/* link time of a byte a switch that reduces or
				 * multicasts carries (a transfer at_switch, sched.h),
				 * in bytes (0: 1): NVLS's bytes at the rate the switch
				 * reaches rather than the links' own (algo_nvls.c) */
};

/* Seed 000 Table III: 16 GB/s, 150 ns links, 256-byte packet payloads
 * with 16-byte flits; no software startup (hardware-issued messages); no
 * reduction cost; s = 1. */
void pm_params_default(struct pm_params *p);

/* Bytes a message of msg_B payload bytes puts on a link. */
double pm_wire_bytes(const struct pm_params *p, double msg_B);
/* The same for a transfer that a switch carries (at_switch): times
 * switch_scale. */
double pm_switch_scale(const struct pm_params *p);

/* "none", "message", "packet:256" or "packet:256/16" (payload/flit). */
int pm_parse_flow(const char *s, struct pm_params *p, struct pm_err *err);
void pm_fmt_flow(const struct pm_params *p, char *buf, size_t n);

#endif
