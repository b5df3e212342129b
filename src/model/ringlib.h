/* ringlib.h: ring reduce-scatter and all-gather over any group of ranks,
 * the building block of ring, bidir-ring, 2d-ring and hring.  The _step
 * forms add one step of one ring, so a builder running several rings at
 * once can add them step by step (schedules are built in step order).
 * Every transfer records how its part rotates from one step to the next
 * (by -dir parts within [lo, lo+len)), so a builder may add only the first
 * step of a phase and play it p-1 times with pm_sched_repeat. */
#ifndef PM_RINGLIB_H
#define PM_RINGLIB_H

#include "model/sched.h"

/* Step t (0 <= t < p-1) of a ring reduce-scatter among members[0..p-1]
 * over chunk units [lo, lo+len), len a multiple of p, added as schedule
 * step `step`.  Member i sends to member i+dir (dir = +1 or -1, modulo p).
 * After all p-1 steps member i holds part i, units
 * [lo + i*len/p, lo + (i+1)*len/p), fully reduced. */
void pm_ring_rs_step(struct pm_sched *s, const int *members, int p,
		     uint32_t lo, uint32_t len, int step, int t, int dir,
		     int flow);

/* Step t of the inverse all-gather: member i starts with part i and after
 * p-1 steps every member holds all of [lo, lo+len). */
void pm_ring_ag_step(struct pm_sched *s, const int *members, int p,
		     uint32_t lo, uint32_t len, int step, int t, int dir,
		     int flow);

/* All p-1 steps of one ring, as steps step0 .. step0+p-2: one stored
 * step played p-1 times. */
void pm_ring_rs(struct pm_sched *s, const int *members, int p, uint32_t lo,
		uint32_t len, int step0, int dir, int flow);
void pm_ring_ag(struct pm_sched *s, const int *members, int p, uint32_t lo,
		uint32_t len, int step0, int dir, int flow);

#endif
