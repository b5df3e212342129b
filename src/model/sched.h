/* sched.h: the schedule, the one representation all evaluators price.
 *
 * A schedule is what an algorithm does, independent of the message size:
 * the ranks, where each rank sits in the network, and an ordered list of
 * steps, each a set of transfers.  A transfer moves chunk units
 * [lo, lo+cnt) of the nchunks equal units the message is cut into, from
 * one rank to another; the receiver either reduces them into its copy or
 * copies them.  Within a step all transfers run at once and see the data
 * as it was when the step began (lockstep, as MULTITREE's NOP-timed
 * steps).  A rank forwards a chunk only in a later step than the one it
 * received it in.  Builders add steps in order (step k before k+1), so a
 * schedule is never sorted or copied.
 *
 * What repeats is stored once.  A run is a block of `span` stored steps
 * played `rep` times (a ring's P-1 reduce-scatter steps are one stored
 * step played P-1 times); in pass j of a run, a transfer that carries a
 * rotation (struct pm_rot) moves units wlo + ((lo - wlo) + j by) mod wlen,
 * one that carries none moves the same units every pass.  nsteps counts
 * the steps as played (logical steps); nstored and step_off describe what
 * is stored.  The contention evaluator prices a run's stored steps once
 * and multiplies by rep, so its cost grows with the distinct step
 * patterns, not with the transfers played; consumers that need every
 * transfer (replay check, simulator, views) call pm_sched_expand.
 */
#ifndef PM_SCHED_H
#define PM_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "model/err.h"
#include "model/limits.h"

/* Most transfers one stored schedule may hold: 2^25 = 33,554,432, just
 * above the 2P(P-1) = 33,546,240 of MULTITREE or a double binary tree on
 * 4096 endpoints.  20 bytes a transfer plus 8 per source-routed link: at
 * most about 1 GB, and the allreduce command holds one at a time. */
#define PM_SCHED_MAX_XFERS ((uint32_t)pm_limit(1u << 25))	/* limits.h */

enum pm_op {
	PM_COPY = 0,
	PM_REDUCE = 1,
};

struct pm_xfer {
	int32_t src, dst;	/* ranks */
	uint32_t lo, cnt;	/* chunk units [lo, lo+cnt) */
	uint8_t op;		/* enum pm_op */
	uint8_t at_switch;	/* 1: a switch that reduces or multicasts carries it
				 * (nvls, nvlstree): its bytes take the links at the
				 * switch's rate, pm_params.switch_scale */
	uint16_t flow;		/* which tree/ring/stream carries it, for display */
};

/* Stored steps [first, first+span) played rep times. */
struct pm_run {
	int first, span, rep;
};

/* How a transfer of a repeated run moves through the message. */
struct pm_rot {
	uint32_t wlo, wlen;	/* window [wlo, wlo+wlen) of chunk units */
	int32_t by;		/* units moved per pass (mod wlen) */
};

struct pm_sched {
	int nranks;
	int *map;		/* map[rank] = endpoint */
	uint32_t nchunks;	/* the message is nchunks equal units */
	int nsteps;		/* logical steps, as played */
	double nx_played;	/* transfers as played (sum over runs) */
	int nstored;		/* stored steps */
	size_t *step_off;	/* stored step k is xfers [step_off[k], step_off[k+1]) */
	size_t capsteps;
	struct pm_run *runs;	/* in order, covering the stored steps */
	int nruns;
	size_t capruns;
	struct pm_xfer *x;
	struct pm_rot *rot;	/* per stored transfer, NULL when none rotates */
	size_t nx, cap;		/* stored transfers */
	int huge;		/* x came from the page-aligned allocator */
	/* Source-routed schedules (MULTITREE) carry each transfer's links:
	 * transfer i crosses route[route_off[i] .. route_off[i+1]).  NULL: the
	 * network's own routing applies. */
	uint32_t *route_off;
	int32_t *route;
	size_t nroute, caproute, capoff;
	int second_phase;	/* first all-gather/broadcast step, -1 if none */
	int failed;		/* sticky: too many transfers, out of order, no memory */
	size_t limit;		/* most transfers allowed (PM_SCHED_MAX_XFERS) */
	char mapping[96];	/* how ranks were placed, for the reader */
};

/* Identity mapping, no steps. */
int pm_sched_init(struct pm_sched *s, int nranks, uint32_t nchunks,
		  struct pm_err *err);
void pm_sched_release(struct pm_sched *s);

/* Make room for n transfers in one allocation (optional). */
void pm_sched_reserve(struct pm_sched *s, size_t n);

/* Append a transfer to step `step`, which must not be earlier than the
 * step of the previous transfer (empty steps in between are allowed).
 * Errors are sticky and reported by pm_sched_finish. */
void pm_sched_add(struct pm_sched *s, int step, int src, int dst,
		  uint32_t lo, uint32_t cnt, enum pm_op op, int flow);

/* As pm_sched_add, with the links the transfer must cross.  A schedule
 * is routed either for every transfer or for none. */
void pm_sched_add_routed(struct pm_sched *s, int step, int src, int dst,
			 uint32_t lo, uint32_t cnt, enum pm_op op, int flow,
			 const int *links, int nlinks);

/* Mark the transfer just added as carried by a switch that reduces or
 * multicasts (struct pm_xfer, at_switch). */
void pm_sched_at_switch(struct pm_sched *s);
/* The stored transfers a switch carries (marked by pm_sched_at_switch). */
size_t pm_sched_switch_xfers(const struct pm_sched *s);

/* As pm_sched_add, for a transfer that rotates through the units
 * [wlo, wlo+wlen) by `by` units per pass when its step is repeated. */
void pm_sched_add_rot(struct pm_sched *s, int step, int src, int dst,
		      uint32_t lo, uint32_t cnt, enum pm_op op, int flow,
		      uint32_t wlo, uint32_t wlen, int32_t by);

/* Play the last `span` stored steps (logical steps nsteps-span ..
 * nsteps-1, none of them repeated yet) `rep` times in all; the next step
 * added is then logical step nsteps (the new count).  rep = 1 does
 * nothing. */
void pm_sched_repeat(struct pm_sched *s, int span, int rep);

/* Does any run play more than once? */
int pm_sched_is_compact(const struct pm_sched *s);

/* Write into out (uninitialised) the same schedule with every pass
 * stored: one stored step per logical step, rotations applied.  Refused
 * (PM_EINPUT) above `limit` played transfers. */
int pm_sched_expand(const struct pm_sched *s, struct pm_sched *out,
		    size_t limit, struct pm_err *err);

/* Keep only logical steps [from, to) (a collective that is one phase of
 * an all-reduce); a repeated run cut in the middle is played out first. */
int pm_sched_keep(struct pm_sched *s, int from, int to, struct pm_err *err);

/* Chunk units transfer i moves in pass j of its run. */
uint32_t pm_sched_lo(const struct pm_sched *s, size_t i, long j);

/* Close the last step and report any error met while adding. */
int pm_sched_finish(struct pm_sched *s, struct pm_err *err);

/* Transfers of stored step k. */
static inline size_t pm_sched_step_len(const struct pm_sched *s, int k)
{
	return s->step_off[k + 1] - s->step_off[k];
}

/* Replay the schedule on sets of contributions and check it is an
 * all-reduce: at the end every rank holds every chunk reduced over all
 * ranks exactly once.  For P <= 512 ranks and nchunks <= 4096; a
 * compact schedule is expanded first. */
int pm_sched_check_allreduce(const struct pm_sched *s, struct pm_err *err);

/* What a replay must end with: every rank holds every chunk reduced over
 * all ranks (all-reduce, all-gather, broadcast), every chunk is complete
 * at some rank (reduce-scatter), or one rank holds all of them complete
 * (reduce). */
enum pm_coll_end {
	PM_END_ALL_EVERYWHERE,
	PM_END_EACH_SOMEWHERE,
	PM_END_ONE_HAS_ALL,
};
/* The general replay: each rank starts with its own contribution to every
 * chunk; no contribution may be counted twice.  With split >= 0 the
 * logical steps before split must reach first_end, then every chunk a
 * rank holds incomplete is dropped (as if the rank had only the output of
 * the first part: a reduce-scatter's blocks, a reduce's root) and the
 * steps from split on must reach end: that checks an all-gather or a
 * broadcast against the data the first part leaves. */
int pm_sched_check(const struct pm_sched *s, int split, enum pm_coll_end first_end,
		   enum pm_coll_end end, struct pm_err *err);

#endif
