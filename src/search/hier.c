/* hier.c: enumeration and dynamic programme over hierarchical
 * decompositions (Ueno & Yokota 2019 SIV-C, SV). */
#include "search/hier.h"
#include "model/grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Divisors of P, ascending. */
static long long *divisors(long long P, int *n)
{
	long long *lo = NULL, *all;
	size_t cap = 0, k = 0, m = 0;

	for (long long i = 1; i * i <= P; i++)
		if (P % i == 0) {
			if (pm_grow(&lo, &cap, k + 1, sizeof *lo, 64)) {
				free(lo);
				return NULL;
			}
			lo[k++] = i;
		}
	if ((all = malloc(sizeof *all * (2 * k + 1)))) {
		for (size_t i = 0; i < k; i++)
			all[m++] = lo[i];
		for (size_t i = k; i-- > 0;)	/* the cofactors, ascending */
			if (lo[i] != P / lo[i])
				all[m++] = P / lo[i];
		*n = (int)m;
	}
	free(lo);
	return all;
}

double pm_hier_count(long long P)
{
	int n;
	long long *d = divisors(P, &n);
	double *c, r;

	if (!d)
		return -1;
	c = calloc((size_t)n, sizeof(double));
	if (!c) {
		free(d);
		return -1;
	}
	c[0] = 1;	/* H(1) = 1 */
	for (int i = 1; i < n; i++)
		for (int j = 0; j < i; j++)
			if (d[i] % d[j] == 0)
				c[i] += c[j];
	r = c[n - 1];
	free(c);
	free(d);
	return r;
}

void pm_hier_name(const struct pm_hier *h, char *buf, size_t size)
{
	size_t used = 0;
	if (h->h == 0) {
		snprintf(buf, size, "1");
		return;
	}
	for (int i = 0; i < h->h && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%d", i ? "x" : "", h->layers[i]);
}

/* Faster first; within 1e-12 relative, lexicographically smaller layers. */
static int better(const struct pm_hier *a, const struct pm_hier *b)
{
	double scale = fmax(fabs(a->time_s), fabs(b->time_s));
	if (fabs(a->time_s - b->time_s) > 1e-12 * scale)
		return a->time_s < b->time_s;
	for (int i = 0; i < a->h && i < b->h; i++)
		if (a->layers[i] != b->layers[i])
			return a->layers[i] < b->layers[i];
	return a->h < b->h;
}

/* Insert c into the sorted list top (n entries, room for k). */
static void keep(struct pm_hier *top, int *n, int k, const struct pm_hier *c)
{
	int i = *n;
	if (i == k) {
		if (!better(c, &top[k - 1]))
			return;
		i = k - 1;
	} else {
		(*n)++;
	}
	while (i > 0 && better(c, &top[i - 1])) {
		top[i] = top[i - 1];
		i--;
	}
	top[i] = *c;
}

struct ctx {
	const struct pm_hier_query *q;
	long long *div;
	int ndiv;
	long long *units;	/* machine unit sizes below P */
	int nunits;
	double *cost;		/* cost[i*ndiv + j]: layer from div[i] to div[j], or NAN */
	struct pm_hier *top;
	int ntop;
	double priced;
	struct pm_err *err;
	int rc;
};

/* A layer from prefix d to d*p jumps over a machine boundary. */
static int skips_unit(const struct ctx *c, long long d, long long e)
{
	for (int i = 0; i < c->nunits; i++)
		if (d < c->units[i] && c->units[i] < e)
			return 1;
	return 0;
}

/* Seconds for the layer from prefix d (stride) to e = d*p, both halves. */
static double layer_cost(struct ctx *c, int i, int j)
{
	double *slot = &c->cost[(size_t)i * c->ndiv + j];
	if (!isnan(*slot))
		return *slot;
	long long d = c->div[i], p = c->div[j] / d;
	struct pm_layer_bw w;
	if (c->q->aligned && skips_unit(c, d, c->div[j])) {
		*slot = INFINITY;
		return *slot;
	}
	if (pm_machine_layer(c->q->m, d, p, &w, c->err)) {
		c->rc = PM_EINPUT;
		*slot = INFINITY;
		return *slot;
	}
	double msg = c->q->n / (double)d;
	double half = c->q->s * c->q->alpha_s * (p - 1) + (p - 1) * (msg / p) / w.bw_Bps;
	*slot = 2 * half;
	return *slot;
}

static void enumerate(struct ctx *c, int i, struct pm_hier *cur)
{
	if (c->rc)
		return;
	if (i == c->ndiv - 1) {
		c->priced++;
		keep(c->top, &c->ntop, c->q->top, cur);
		return;
	}
	for (int j = i + 1; j < c->ndiv; j++) {
		if (c->div[j] % c->div[i] || cur->h == PM_HIER_MAX_LAYERS)
			continue;
		double lc = layer_cost(c, i, j);
		if (isinf(lc))
			continue;
		double saved = cur->time_s;
		cur->layers[cur->h++] = (int)(c->div[j] / c->div[i]);
		cur->time_s += lc;
		enumerate(c, j, cur);
		cur->h--;
		cur->time_s = saved;
	}
}

/* best[i]: the K fastest ways to reach prefix div[i], in one flat array. */
static void dynamic(struct ctx *c)
{
	int K = c->q->top, D = c->ndiv;
	struct pm_hier *best = malloc(sizeof *best * (size_t)D * (size_t)K);
	int *nb = calloc((size_t)D, sizeof(int));

	if (!best || !nb) {
		c->rc = pm_fail(c->err, PM_EINTERNAL, "out of memory");
		goto out;
	}
	best[0] = (struct pm_hier){.h = 0, .time_s = 0};
	nb[0] = 1;
	for (int i = 0; i < D && !c->rc; i++)
		for (int j = i + 1; j < D; j++) {
			if (c->div[j] % c->div[i])
				continue;
			double lc = layer_cost(c, i, j);
			if (isinf(lc))
				continue;
			for (int e = 0; e < nb[i]; e++) {
				struct pm_hier cand = best[(size_t)i * K + e];
				if (cand.h == PM_HIER_MAX_LAYERS)
					continue;
				cand.layers[cand.h++] = (int)(c->div[j] / c->div[i]);
				cand.time_s += lc;
				keep(best + (size_t)j * K, &nb[j], K, &cand);
			}
		}
	for (int e = 0; e < nb[D - 1]; e++)
		c->top[c->ntop++] = best[(size_t)(D - 1) * K + e];
out:
	free(best);
	free(nb);
}

/* What the query asks that no search can answer. */
static int check_query(const struct pm_hier_query *q, struct pm_err *err)
{
	if (q->P < 1)
		return pm_fail(err, PM_EINPUT, "invalid process count %lld (expected a positive integer)", q->P);
	if (q->P > q->m->capacity)
		return pm_fail(err, PM_EINPUT,
			       "%lld processes do not fit on machine '%s' (it holds %lld accelerators)",
			       q->P, q->m->name, q->m->capacity);
	if (q->top < 1 || q->top > PM_HIER_MAX_TOP)
		return pm_fail(err, PM_EINPUT, "invalid --top %d (expected 1 to %d)", q->top, PM_HIER_MAX_TOP);
	return PM_OK;
}

/* The divisors of P, the cost memo, and the machine's units smaller
 * than P (every one dividing P with --aligned). */
static int ctx_init(struct ctx *c, struct pm_err *err)
{
	const struct pm_hier_query *q = c->q;
	const struct pm_machine *m = q->m;

	c->div = divisors(q->P, &c->ndiv);
	c->units = malloc(sizeof(long long) * (size_t)m->nlevels);
	c->cost = malloc(sizeof(double) * (size_t)c->ndiv * (size_t)c->ndiv);
	if (!c->div || !c->units || !c->cost)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (size_t i = 0; i < (size_t)c->ndiv * (size_t)c->ndiv; i++)
		c->cost[i] = NAN;
	for (int k = 0; k < m->nlevels; k++)
		if (m->level[k].unit < q->P) {
			if (q->aligned && q->P % m->level[k].unit)
				return pm_fail(err, PM_EINPUT,
					       "no hierarchy of %lld processes follows the machine's boundaries: a %s holds %lld (expected P a multiple of it, or drop --aligned)",
					       q->P, m->level[k].name, m->level[k].unit);
			c->units[c->nunits++] = m->level[k].unit;
		}
	return PM_OK;
}

/* Enumeration where the factorizations are few enough (or asked),
 * else the dynamic program. */
static int choose_method(const struct pm_hier_query *q, struct pm_hier_stats *st, struct pm_err *err)
{
	int method = q->method;

	if (method == PM_HIER_AUTO)
		method = st->factorizations <= q->enum_limit ? PM_HIER_ENUM : PM_HIER_DP;
	if (method == PM_HIER_ENUM && st->factorizations > 5e7)
		return pm_fail(err, PM_EINPUT,
			       "%lld has %.3g ordered factorizations, too many to list (expected --method dp)",
			       q->P, st->factorizations);
	st->method = method;
	return PM_OK;
}

int pm_hier_search(const struct pm_hier_query *q, struct pm_hier *out, int *nout,
		   struct pm_hier_stats *st, struct pm_err *err)
{
	struct ctx c = {.q = q, .top = out, .err = err};

	*nout = 0;
	memset(st, 0, sizeof *st);
	if (check_query(q, err))
		return PM_EINPUT;
	if ((c.rc = ctx_init(&c, err)))
		goto out;
	st->divisors = c.ndiv;
	st->factorizations = pm_hier_count(q->P);
	if ((c.rc = choose_method(q, st, err)))
		goto out;
	if (st->method == PM_HIER_ENUM) {
		struct pm_hier cur = {.h = 0, .time_s = 0};
		enumerate(&c, 0, &cur);
	} else {
		dynamic(&c);
	}
	st->priced = c.priced;
	if (!c.rc && c.ntop == 0)
		c.rc = pm_fail(err, PM_EINPUT,
			       "no hierarchy of %lld processes fits the constraints (expected fewer restrictions)",
			       q->P);
	*nout = c.ntop;
out:
	free(c.div);
	free(c.units);
	free(c.cost);
	return c.rc;
}

int pm_hier_extends(const struct pm_hier *big, const struct pm_hier *small,
		    int *where)
{
	if (big->h == small->h + 1)	/* a layer of 2 inserted somewhere */
		for (int at = 0; at < big->h; at++) {
			if (big->layers[at] != 2)
				continue;
			int same = 1;
			for (int i = 0, j = 0; i < big->h && same; i++) {
				if (i == at)
					continue;
				same = big->layers[i] == small->layers[j++];
			}
			if (same) {
				*where = at;
				return 1;
			}
		}
	if (big->h == small->h)	/* one layer doubled */
		for (int at = 0; at < big->h; at++) {
			int same = big->layers[at] == 2 * small->layers[at];
			for (int i = 0; i < big->h && same; i++)
				if (i != at)
					same = big->layers[i] == small->layers[i];
			if (same) {
				*where = at;
				return 2;
			}
		}
	return 0;
}
