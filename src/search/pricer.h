/* pricer.h: one owner for pricing an algorithm at a size.
 *
 * Four evaluators price an algorithm instance (model/algo.h): its closed
 * form, the contention evaluator on its schedule, and the packet
 * simulator in barrier lockstep (sim) or dataflow order.  The evaluator
 * table (pm_evals) says which needs the schedule; the pricer owns the
 * schedule's lifetime:
 *  - an instance that does not depend on the size has one schedule, built
 *    when the pricer opens and, when several sizes are priced by the
 *    contention evaluator, counted once into a profile (eval.h) that
 *    prices every size without routing;
 *  - a sized instance (multiphase with chunk= or sram=, NCCL's choice,
 *    the pipelines' chunk count from the size) is made for each size
 *    (pm_pricer_size) and its schedule built for that size, kept while
 *    the instance stays the same.
 * The commands, best, the training cost fit and validate price through it;
 * the caller picks the evaluators and what a missing row means.
 */
#ifndef PM_PRICER_H
#define PM_PRICER_H

#include "model/algo.h"
#include "sim/psim.h"

enum pm_evaluator { PM_EVAL_CLOSED, PM_EVAL_CONTENTION, PM_EVAL_SIM, PM_EVAL_DATAFLOW, PM_NEVAL };

struct pm_eval_row {
	const char *name;
	int schedule;		/* 1: prices a schedule */
};
extern const struct pm_eval_row pm_evals[PM_NEVAL];

/* What the pricer is asked to do. */
struct pm_pricer_cfg {
	const struct pm_topo *t;		/* the network (sim and dataflow) */
	const struct pm_params *p;
	const struct pm_sim_opts *so;		/* sim and dataflow; NULL if not asked */
	unsigned evals;				/* bit e: evaluator e will be asked */
	int nsizes;				/* > 1: contention from a profile */
	int expand;				/* per-step records of every step
						 * (validate's checks of compact schedules) */
	double *sim_spent;			/* not NULL: the events simulated so far,
						 * shared by a command's pricers, which
						 * together simulate at most the per-run
						 * limit (psim.h) */
};

struct pm_pricer {
	struct pm_inst base;		/* as resolved */
	struct pm_inst at;		/* as made for the current size */
	struct pm_pricer_cfg cfg;
	struct pm_sched sched;
	int have_sched;
	struct pm_profile *prof;
	char no_sched[600];		/* why there is no schedule ("" if there is
					 * or none was asked for) */
};

/* Open a pricer for in.  prev, when not NULL, is the pricer of the
 * algorithm priced just before: its schedule is taken over when in builds
 * the same one (pm_algo_same_schedule: multitree then multitree-msg) and
 * released otherwise before this one's is built, so one schedule is in
 * memory at a time.  A schedule the algorithm refuses (PM_EINPUT) leaves
 * the reason in no_sched; other failures are returned. */
int pm_pricer_open(struct pm_pricer *q, const struct pm_inst *in, const struct pm_pricer_cfg *cfg,
		   struct pm_pricer *prev, struct pm_err *err);

/* Make the instance for n bytes: PM_OK, or PM_ENOTAPPLICABLE with the
 * reason in *why when the algorithm cannot run this size (multiphase's
 * SRAM).  A sized instance's schedule is built here (a refusal goes to
 * no_sched); a hard failure is returned in *err with its code. */
int pm_pricer_size(struct pm_pricer *q, double n, struct pm_err *why, struct pm_err *err);

/* Price the current size n with evaluator e into *c (a simulated row
 * gives time_s, steps and util_avg = the links' busy share; the other
 * fields unknown).  steps, for the contention evaluator, receives the
 * per-step records.  PM_ENOTAPPLICABLE: no row, the reason in *err (no
 * schedule, the simulator's refusal); other codes are failures. */
int pm_pricer_price(struct pm_pricer *q, enum pm_evaluator e, double n, struct pm_cost *c,
		    struct pm_step_cost *steps, struct pm_err *err);

void pm_pricer_close(struct pm_pricer *q);

/* The order in which to price n instances on threads.  ins[i] is the
 * instance of the i-th, or NULL where it did not resolve.  A chain is a
 * run of instances that build the same schedule (pm_algo_same_schedule:
 * multitree then multitree-msg), priced in order on one thread so the
 * schedule passes from pricer to pricer (pm_pricer_open's prev); chain c
 * is instances [chain[c], chain[c + 1]) and chain[nchains] = n (room for
 * n + 1).  order[] (room for n) lists the chains by the transfers their
 * schedules store, the most first (ties in the given order): without it
 * the last taken, dbtree on 100,000 endpoints, left the other thread
 * idle for a third of the run.  Returns the number of chains. */
int pm_pricer_chains(const struct pm_inst *const *ins, int n, int *chain, int *order);

#endif
