/* best.c: the fastest algorithm per size and the crossovers (best.h). */
#include "search/best.h"
#include "search/pool.h"
#include "search/pricer.h"
#include "model/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pricer {
	const struct pm_inst *in;
	struct pm_pricer *q;		/* per algorithm */
	int contention;
};

/* Algorithm a's time for n bytes; INFINITY when it cannot be priced
 * there, with the reason in *e (a size it cannot run, or a schedule made
 * for this size that is too large to price). */
static double price_why(const struct pricer *b, int a, double n, struct pm_err *e)
{
	struct pm_pricer *q = &b->q[a];
	struct pm_cost c;
	struct pm_err hard;
	int rc = pm_pricer_size(q, n, e, &hard);

	if (rc && rc != PM_ENOTAPPLICABLE)
		*e = hard;
	if (rc)
		return INFINITY;	/* cannot run this size (multiphase's SRAM) */
	/* NCCL's model is its own evaluator (protocols and channels are not
	 * link loads): its closed form is its price in both modes */
	int closed = !b->contention || (q->at.algo->flags & PM_ALGO_EVERY_COLL);
	rc = pm_pricer_price(q, closed ? PM_EVAL_CLOSED : PM_EVAL_CONTENTION, n, &c, NULL, e);
	return rc ? INFINITY : c.time_s;
}

static double price(const struct pricer *q, int a, double n)
{
	struct pm_err e;
	return price_why(q, a, n, &e);
}

/* The size between lo and hi where a and b cost the same (a wins at lo,
 * b at hi): geometric bisection to 0.01%. */
static double crossing(const struct pricer *q, int a, int b, double lo, double hi)
{
	while (hi / lo > 1.0001) {
		double mid = sqrt(lo * hi);
		if (price(q, a, mid) <= price(q, b, mid))
			lo = mid;
		else
			hi = mid;
	}
	return sqrt(lo * hi);
}

static void rank_size(const struct pricer *q, const struct pm_best *b, int n,
		      double size, struct pm_best_point *pt)
{
	*pt = (struct pm_best_point){size, -1, -1, INFINITY, INFINITY, ""};
	for (int a = 0; a < n; a++) {
		struct pm_err e;
		if (!b->usable[a])
			continue;
		double t = price_why(q, a, size, &e);
		if (!isfinite(t) && !pt->why[0])
			snprintf(pt->why, sizeof pt->why, "%.60s: %.130s", q->in[a].label, e.msg);
		if (t < pt->time_s) {
			pt->second = pt->winner;
			pt->second_s = pt->time_s;
			pt->winner = a;
			pt->time_s = t;
		} else if (t < pt->second_s) {
			pt->second = a;
			pt->second_s = t;
		}
	}
}

/* Opening the pricers, one task an algorithm (search/pool.h): each writes
 * its own pricer and usability. */
struct opening {
	struct pricer *q;
	int nsizes;
	const struct pm_params *p;
	struct pm_best *b;
};

static int open_one(void *ctx, int a, int worker, struct pm_err *err)
{
	struct opening *o = ctx;
	struct pricer *q = o->q;
	struct pm_pricer_cfg cfg = {NULL, o->p, NULL, 1u << PM_EVAL_CLOSED, o->nsizes, 0, NULL};

	(void)worker;
	/* NCCL's model is priced by its closed form (price_why): no schedule */
	if (q->contention && !(q->in[a].algo->flags & PM_ALGO_EVERY_COLL))
		cfg.evals = 1u << PM_EVAL_CONTENTION;
	int rc = pm_pricer_open(&q->q[a], &q->in[a], &cfg, NULL, err);
	if (!rc && q->q[a].no_sched[0]) {
		o->b->usable[a] = 0;
		snprintf(o->b->why[a], sizeof o->b->why[a], "%s", q->q[a].no_sched);
	}
	return rc;
}

/* Every algorithm's pricer, on threads: an unsized one builds its
 * schedule (and its profile when more than one size is priced: several
 * sizes, and the bisection between them) and holds it for the bisection.
 * The first failure in the algorithms' order is the one returned. */
static int open_pricers(struct pricer *q, int n, int nsizes, const struct pm_params *p, int threads,
			struct pm_best *b, struct pm_err *err)
{
	struct opening o = {q, nsizes, p, b};

	if (!(q->q = calloc((size_t)n, sizeof *q->q)))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	return pm_pool_run(n, threads, NULL, open_one, &o, err);
}

int pm_best_run(const struct pm_inst *in, int n, const double *sizes, int nsizes,
		const struct pm_params *p, int contention, int threads, struct pm_best *b,
		struct pm_err *err)
{
	struct pricer q = {in, NULL, contention};
	int rc = PM_OK, any = 0;

	memset(b, 0, sizeof *b);
	b->pts = calloc((size_t)nsizes + 1, sizeof *b->pts);
	b->cross = calloc((size_t)nsizes + 1, sizeof *b->cross);
	b->usable = malloc(sizeof(int) * ((size_t)n + 1));
	b->why = calloc((size_t)n + 1, sizeof *b->why);
	if (!b->pts || !b->cross || !b->usable || !b->why)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int a = 0; a < n; a++)
		b->usable[a] = 1;
	pm_progress("building the schedules", 0, 0);
	if ((rc = open_pricers(&q, n, nsizes, p, threads, b, err)))
		goto out;
	for (int a = 0; a < n; a++)
		any |= b->usable[a];
	if (!any) {
		rc = pm_fail(err, PM_EINPUT, "no algorithm can be priced: %s: %s", in[0].label, b->why[0]);
		goto out;
	}
	for (int i = 0; i < nsizes; i++) {
		pm_progress("pricing every algorithm, size by size", i, nsizes);
		rank_size(&q, b, n, sizes[i], &b->pts[b->npts++]);
		if (i == 0)
			continue;
		const struct pm_best_point *x = &b->pts[i - 1], *y = &b->pts[i];
		if (x->winner == y->winner || x->winner < 0 || y->winner < 0)
			continue;	/* no crossing where no algorithm runs a size */
		struct pm_best_cross *c = &b->cross[b->ncross++];
		c->from = x->winner;
		c->to = y->winner;
		c->size_B = crossing(&q, x->winner, y->winner, x->size_B, y->size_B);
		c->time_s = price(&q, c->to, c->size_B);
		struct pm_err e;
		c->limit = !isfinite(price_why(&q, c->from, c->size_B * 1.0001, &e));
		if (c->limit)
			snprintf(c->why, sizeof c->why, "%s", e.msg);
	}
out:
	for (int a = 0; q.q && a < n; a++)
		pm_pricer_close(&q.q[a]);
	free(q.q);
	return rc;
}

void pm_best_release(struct pm_best *b)
{
	free(b->pts);
	free(b->cross);
	free(b->usable);
	free(b->why);
	memset(b, 0, sizeof *b);
}
