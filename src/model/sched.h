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
 * schedule is never sorted or copied: it can hold millions of transfers.
 */
#ifndef PM_SCHED_H
#define PM_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "model/err.h"

#define PM_SCHED_MAX_XFERS (1u << 24)

enum pm_op {
	PM_COPY = 0,
	PM_REDUCE = 1,
};

struct pm_xfer {
	int32_t src, dst;	/* ranks */
	uint32_t lo, cnt;	/* chunk units [lo, lo+cnt) */
	uint16_t op;		/* enum pm_op */
	uint16_t flow;		/* which tree/ring/stream carries it, for display */
};

struct pm_sched {
	int nranks;
	int *map;		/* map[rank] = endpoint */
	uint32_t nchunks;	/* the message is nchunks equal units */
	int nsteps;
	size_t *step_off;	/* step s is xfers [step_off[s], step_off[s+1]) */
	int capsteps;
	struct pm_xfer *x;
	size_t nx, cap;
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

/* Close the last step and report any error met while adding. */
int pm_sched_finish(struct pm_sched *s, struct pm_err *err);

static inline size_t pm_sched_step_len(const struct pm_sched *s, int step)
{
	return s->step_off[step + 1] - s->step_off[step];
}

/* Replay the schedule on sets of contributions and check it is an
 * all-reduce: at the end every rank holds every chunk reduced over all
 * ranks exactly once.  For P <= 512 ranks and nchunks <= 4096. */
int pm_sched_check_allreduce(const struct pm_sched *s, struct pm_err *err);

#endif
