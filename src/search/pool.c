/* pool.c: independent tasks on several threads (pool.h). */
#include "search/pool.h"
#include "model/algo.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct pool {
	pthread_mutex_t mu;
	int next, n;
	const int *order;
	pm_task_fn fn;
	void *ctx;
	int *rc;		/* per task */
	struct pm_err *err;
};

struct worker {
	struct pool *p;
	int id;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		int k = p->next < p->n ? p->next++ : -1;
		pthread_mutex_unlock(&p->mu);
		if (k < 0)
			return NULL;
		int task = p->order ? p->order[k] : k;
		p->rc[task] = p->fn(p->ctx, task, w->id, &p->err[task]);
	}
}

void pm_pool_run_each(int n, int k, const int *order, pm_task_fn fn, void *ctx, int *rc,
		      struct pm_err *errs)
{
	struct pool p = {.n = n, .order = order, .fn = fn, .ctx = ctx, .rc = rc, .err = errs};
	pthread_t th[16];
	struct worker w[16];
	int started = 0;

	if (k > n)
		k = n;
	if (k > 16)
		k = 16;
	pthread_mutex_init(&p.mu, NULL);
	for (int i = 1; i < k; i++) {
		w[i] = (struct worker){&p, i};
		if (pthread_create(&th[started], NULL, work, &w[i]) == 0)
			started++;	/* a thread that cannot start leaves its share to the others */
	}
	w[0] = (struct worker){&p, 0};
	work(&w[0]);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&p.mu);
}

int pm_pool_run(int n, int k, const int *order, pm_task_fn fn, void *ctx, struct pm_err *err)
{
	int *rc = calloc((size_t)n + 1, sizeof *rc), first = PM_OK;
	struct pm_err *errs = calloc((size_t)n + 1, sizeof *errs);

	if (!rc || !errs) {
		free(rc);
		free(errs);
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	pm_pool_run_each(n, k, order, fn, ctx, rc, errs);
	for (int t = 0; t < n && !first; t++)
		if ((first = rc[t]))
			*err = errs[t];
	free(rc);
	free(errs);
	return first;
}

static _Thread_local int nested;

void pm_pool_nested(int on)
{
	nested = on;
}

int pm_pool_threads_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (int)(n > 16 ? 16 : n);
}

int pm_pool_threads(void)
{
	return nested ? 1 : pm_pool_threads_online();
}

int pm_pool_pricing_threads(int asked, int contention, int endpoints)
{
	if (asked > 0)
		return asked;
	return contention && endpoints >= 1024 ? pm_pool_threads() : 1;
}

struct resolving {
	enum pm_coll coll;
	char *const *names;
	const struct pm_topo *t;
	struct pm_inst *in;
};

static int resolve_one(void *ctx, int k, int worker, struct pm_err *err)
{
	const struct resolving *r = ctx;

	(void)worker;
	return pm_algo_resolve_coll(r->coll, r->names[k], r->t, 0, &r->in[k], err);
}

void pm_pool_resolve(enum pm_coll coll, char *const *names, int n, const struct pm_topo *t, int threads,
		     struct pm_inst *in, int *rc, struct pm_err *errs)
{
	struct resolving r = {coll, names, t, in};

	pm_pool_run_each(n, threads, NULL, resolve_one, &r, rc, errs);
}
