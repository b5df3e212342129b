/* pool.h: independent tasks on several threads (a command's algorithms).
 *
 * Tasks 0..n-1 are taken in order by k threads (the calling thread is one
 * of them, worker 0); each task runs once.  A task writes only its own
 * results: the caller merges them in task order, so the output does not
 * depend on which thread ran what.  k = 1 runs everything on the caller's
 * thread without starting any. */
#ifndef PM_POOL_H
#define PM_POOL_H

typedef void (*pm_task_fn)(void *ctx, int task, int worker);

void pm_pool_run(int n, int k, pm_task_fn fn, void *ctx);

/* Threads a command may use: the cores online, or 1 inside an in-process
 * run (cli_run_cmd: a sweep already runs its points on every core). */
int pm_pool_threads(void);
void pm_pool_nested(int on);
/* The cores online, at most 16 (inside an in-process run too). */
int pm_pool_threads_online(void);

#endif
