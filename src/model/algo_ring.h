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

/* NCCL's ring channels on a machine of G GPUs a node (ring:C, railchain):
 * channel c's P members in order, node by node, walked up on even nodes
 * from the channel's start (GPU c G/C) and down on odd ones, so each
 * crossing between nodes stays on one NIC rail and C channels cross on C
 * rails. */
void pm_ring_channel_members(int P, int G, int C, int c, int *members);
struct pm_machine;
/* What a step of C such channels moves at once over P ranks of machine
 * m: the slower of a GPU's NVLink and the rails they cross, min(C,
 * rails) NICs, at the machine's achieved rates. */
double pm_ring_channels_bw(const struct pm_machine *m, int P, int C);

#endif
