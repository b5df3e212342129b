/* group.h: a collective of one group of a training layout, priced where
 * its members sit on a machine.
 *
 * Ranks fill the machine's accelerators in order (ranks 0..G-1 the first
 * node).  A group is p ranks `stride` apart; every group of its kind runs
 * the same collective at the same time (the 8 data-parallel groups of a
 * node reduce together), so a node's NICs are shared by the groups that
 * have members on it.  Priced with NCCL's own model (nccl.h) where the
 * machine gives NCCL parameters, NCCL's choice of algorithm and protocol;
 * else a ring at the machine's bandwidth rule (Ueno & Yokota 2019).
 */
#ifndef PM_GROUP_H
#define PM_GROUP_H

#include "model/coll.h"
#include "model/err.h"
#include "model/machine.h"

struct pm_group_cost {
	double time_s;
	int nodes, ppn;		/* nodes the group spans, members per node */
	double net_Bps;		/* the node egress this group gets */
	char how[48];		/* what runs it: "nccl ring/simple", "ring" */
};

/* An n-byte collective c (n as nccl-tests counts it) of p ranks stride
 * apart.  p = 1 costs nothing. */
int pm_group_time(const struct pm_machine *m, long long stride, int p, enum pm_coll c, double n,
		  struct pm_group_cost *out, struct pm_err *err);

/* A point-to-point send of n bytes to the rank stride away (a pipeline
 * stage boundary, a ring-attention pass), every rank sending at once. */
int pm_group_p2p(const struct pm_machine *m, long long stride, double n, struct pm_group_cost *out,
		 struct pm_err *err);

#endif
