/* best.h: which all-reduce algorithm wins where.  For a network and a
 * sweep of sizes, every algorithm is priced by one evaluator; per size the
 * fastest and the runner-up, and between sweep points where the winner
 * changes, the crossover size found by bisection (as NCCL's tuner sets
 * its thresholds between algorithms). */
#ifndef PM_BEST_H
#define PM_BEST_H

#include "model/algo.h"

struct pm_best_point {
	double size_B;
	int winner, second;		/* algorithm indices; winner -1 when none runs
					 * this size (why says why), second -1 if one */
	double time_s, second_s;
	char why[200];
};

/* Where the winner changes from `from` to `to`: the size at which their
 * times are equal, to 0.01% (bisection on the size, geometric). */
struct pm_best_cross {
	double size_B, time_s;
	int from, to;
	int limit;		/* 1: not a tie, the largest size `from` can be
				 * priced at (pm_algo_at_size: multiphase's
				 * SRAM; or its schedule for the next size is
				 * too large) ... */
	char why[600];		/* ... and why not beyond */
};

struct pm_best {
	struct pm_best_point *pts;
	int npts;
	struct pm_best_cross *cross;
	int ncross;
	int *usable;			/* per algorithm: 1, or 0 with why[] */
	char (*why)[600];
};

/* Price the n instances at every size with the closed form (contention
 * 0) or the contention evaluator (1; schedules built here, one per
 * algorithm on `threads` threads, held for the bisection).  An algorithm
 * whose schedule is refused is left out with the reason in why[];
 * PM_EINPUT when none is left.  The result does not depend on threads. */
int pm_best_run(const struct pm_inst *in, int n, const double *sizes, int nsizes,
		const struct pm_params *p, int contention, int threads, struct pm_best *b,
		struct pm_err *err);
void pm_best_release(struct pm_best *b);

#endif
