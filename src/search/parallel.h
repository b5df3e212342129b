/* parallel.h: sharded data parallelism on the training timeline.
 *
 * The collectives each scheme issues per iteration (Rajbhandari et al.,
 * "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
 * SC 2020, §5 and §7; Zhao et al., "PyTorch FSDP", VLDB 2023):
 *   ddp    all-reduce the gradients, bucket by bucket as backward produces
 *          them (the plan of a gradient-merging policy);
 *   zero1  reduce-scatter the gradients bucket by bucket (each rank keeps
 *          the shard its optimizer state covers), then all-gather every
 *          updated parameter after backward and the optimizer step;
 *   zero2  the same collectives (gradients are sharded too: only memory
 *          differs);
 *   zero3  (FSDP FULL_SHARD) all-gather each layer's parameters before
 *          its forward and again before its backward, reduce-scatter its
 *          gradients after its backward; one layer of prefetch in each
 *          direction; no collective after backward.
 * One collective at a time on one communication stream, as pm_plan_time.
 * Costs: T_AR(M) = a + b M as the rest of train; reduce-scatter and
 * all-gather cost half of it, a/2 + (b/2) M, the phase rule of the
 * all-reduce algorithms that split (docs/model.md, Collectives).
 * Per-layer forward times are not in the profiles: zero3 spreads the
 * forward over the layers in proportion to their backward times.
 * Model-state memory per rank, mixed-precision Adam as ZeRO §3.1 counts it
 * (2 bytes of parameters, 2 of gradients, K = 12 of optimizer state per
 * parameter; activations and buffers not counted): ddp 16 Psi, zero1
 * 4 Psi + 12 Psi/N, zero2 2 Psi + 14 Psi/N, zero3 16 Psi/N.
 */
#ifndef PM_PARALLEL_H
#define PM_PARALLEL_H

#include "search/train.h"

enum pm_parallel { PM_PAR_DDP, PM_PAR_ZERO1, PM_PAR_ZERO2, PM_PAR_ZERO3, PM_NPAR };

const char *pm_parallel_name(enum pm_parallel s);
const char *pm_parallel_summary(enum pm_parallel s);
/* By name ("fsdp" is zero3); -1 if none. */
int pm_parallel_find(const char *name);

struct pm_par_result {
	struct pm_timing tm;	/* t_iter, t_comp, exposed, all communication, calls */
	double state_B;		/* model-state bytes per rank (see above) */
};

/* One iteration of scheme s: plan groups the gradients of ddp, zero1 and
 * zero2 (zero3 works layer by layer and ignores it); params is the
 * parameter count Psi, N the data-parallel ranks. */
int pm_parallel_time(enum pm_parallel s, const struct pm_iter *it, const struct pm_plan *plan,
		     double params, int N, struct pm_par_result *r);

#endif
