/* pool.c: independent tasks on several threads (pool.h). */
#include "search/pool.h"

#include <pthread.h>
#include <unistd.h>

struct pool {
	pthread_mutex_t mu;
	int next, n;
	pm_task_fn fn;
	void *ctx;
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
		int task = p->next < p->n ? p->next++ : -1;
		pthread_mutex_unlock(&p->mu);
		if (task < 0)
			return NULL;
		p->fn(p->ctx, task, w->id);
	}
}

void pm_pool_run(int n, int k, pm_task_fn fn, void *ctx)
{
	struct pool p = {.next = 0, .n = n, .fn = fn, .ctx = ctx};
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
