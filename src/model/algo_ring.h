/* algo_ring.h: rings turning one way or both (algo_ring.c), shared by
 * ring and bidir-ring (algo_bidir_ring.c). */
#ifndef PM_ALGO_RING_H
#define PM_ALGO_RING_H

#include "model/algo.h"

/* dirs rings (1, or 2 turning opposite ways), each over its own 1/dirs
 * of the message, step by step, ranks in the network's ring order. */
int pm_ring_build_dirs(const struct pm_inst *in, struct pm_sched *s, int dirs,
		       struct pm_err *err);
/* Their closed form: 2(P-1) steps of w(n/(dirs P)) each, and the
 * reduction of one ring (see algo_ring.c and algo_bidir_ring.c). */
void pm_ring_closed_dirs(const struct pm_inst *in, double n, int dirs,
			 const struct pm_params *p, struct pm_cost *c);

#endif
