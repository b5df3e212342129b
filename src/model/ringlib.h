/* ringlib.h: ring reduce-scatter and all-gather over any group of ranks,
 * the building block of ring, bidir-ring, 2d-ring and hring. */
#ifndef PM_RINGLIB_H
#define PM_RINGLIB_H

#include "model/sched.h"

/* Ring reduce-scatter among members[0..p-1] over chunk units
 * [lo, lo+len), len a multiple of p, in steps step0 .. step0+p-2.  Member
 * i sends to member i+dir (dir = +1 or -1, modulo p).  Afterwards member i
 * holds part i, units [lo + i*len/p, lo + (i+1)*len/p), fully reduced. */
void pm_ring_rs(struct pm_sched *s, const int *members, int p, uint32_t lo,
		uint32_t len, int step0, int dir, int flow);

/* The inverse: member i starts with part i and after p-1 steps every
 * member holds all of [lo, lo+len). */
void pm_ring_ag(struct pm_sched *s, const int *members, int p, uint32_t lo,
		uint32_t len, int step0, int dir, int flow);

#endif
