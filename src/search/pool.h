/* pool.h: independent tasks on several threads (a command's algorithms).
 *
 * Tasks 0..n-1 are taken by k threads (the calling thread is one of them,
 * worker 0), in the order given (order[0], order[1], ...; NULL: 0, 1,
 * ...); each runs once.  A task writes only its own results, so the
 * caller merges them in task order and the output does not depend on
 * which thread ran what; the failure returned is the first in task order,
 * whatever ran first.  k = 1 runs everything on the caller's thread
 * without starting any. */
#ifndef PM_POOL_H
#define PM_POOL_H

#include "model/coll.h"
#include "model/err.h"

/* One task: PM_OK, or a code with the reason in *err. */
typedef int (*pm_task_fn)(void *ctx, int task, int worker, struct pm_err *err);

int pm_pool_run(int n, int k, const int *order, pm_task_fn fn, void *ctx, struct pm_err *err);
/* The same, keeping every task's code in rc[task] and its reason in
 * errs[task] (both n long) instead of only the first failure. */
void pm_pool_run_each(int n, int k, const int *order, pm_task_fn fn, void *ctx, int *rc,
		      struct pm_err *errs);

/* Threads a command may use: the cores online (at most 16), or 1 inside
 * an in-process run (cli_run_cmd: a sweep already runs its points on
 * every core). */
int pm_pool_threads(void);
void pm_pool_nested(int on);
/* The cores online, at most 16 (inside an in-process run too). */
int pm_pool_threads_online(void);

/* Threads for pricing algorithms: asked (> 0), else pm_pool_threads()
 * where the contention evaluator prices 1,024 endpoints or more (a
 * schedule costs tens of milliseconds and up), else 1. */
int pm_pool_pricing_threads(int asked, int contention, int endpoints);

struct pm_inst;
struct pm_topo;
/* Resolve algorithms names[0..n) for collective coll on t, on threads
 * (a pipelined tree past 4,096 ranks plays its pipeline once as it is
 * resolved): in[k] and rc[k] for each, the reason of a failure in
 * errs[k].  The results do not depend on the threads. */
void pm_pool_resolve(enum pm_coll coll, char *const *names, int n, const struct pm_topo *t, int threads,
		     struct pm_inst *in, int *rc, struct pm_err *errs);

#endif
