/* layout_search.c: the layout search (layout_search.h). */
#include "search/layout_search.h"
#include "model/progress.h"
#include "model/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VALUES 512

struct axes {
	int tp[16], ntp, cp[8], ncp, mb[4], nmb, v[3], nv, rec[2], nrec, zero[4], nzero;
};

static int pick(int fixed, const int *all, int nall, int *out)
{
	if (fixed >= 0) {
		out[0] = fixed;
		return 1;
	}
	memcpy(out, all, sizeof(int) * (size_t)nall);
	return nall;
}

static void axes_of(const struct pm_lsearch_req *r, struct axes *a)
{
	int G = (int)r->job.mach->level[0].count, tps[16], n = 0;
	static const int cps[] = {1, 2, 4, 8, 16, 32}, mbs[] = {1, 2, 4, 8}, vs[] = {1, 2, 4}, recs[] = {0, 1},
			 zeros[] = {0, 1, 2, 3};

	for (int t = 1; t <= G && n < 16; t++)
		if (G % t == 0)
			tps[n++] = t;
	a->ntp = pick(r->fix.tp > 0 ? r->fix.tp : -1, tps, n, a->tp);
	a->ncp = pick(r->fix.cp > 0 ? r->fix.cp : -1, cps, 6, a->cp);
	a->nmb = pick(r->fix.mb > 0 ? r->fix.mb : -1, mbs, 4, a->mb);
	a->nv = pick(r->fix.vpp > 0 ? r->fix.vpp : -1, vs, 3, a->v);
	a->nrec = pick(r->fix.recompute, recs, 2, a->rec);
	a->nzero = pick(r->fix.zero, zeros, 4, a->zero);
}

/* The values of pp and ep for one tp x cp. */
static int pps(const struct pm_lsearch_req *r, long long rest, int *out)
{
	int n = 0, L = (int)r->job.model->layers;
	if (r->fix.pp > 0) {
		out[0] = r->fix.pp;
		return 1;
	}
	for (int p = 1; p <= L && n < MAX_VALUES; p++)
		if (rest % p == 0)
			out[n++] = p;
	return n;
}

static int eps(const struct pm_lsearch_req *r, int dp, int *out)
{
	int n = 0, E = (int)r->job.model->experts;
	if (r->fix.ep > 0) {
		out[0] = r->fix.ep;
		return 1;
	}
	out[n++] = 1;
	for (int e = 2; e <= E && e <= dp && n < MAX_VALUES; e++)
		if (E % e == 0 && dp % e == 0)
			out[n++] = e;
	return n;
}

/* Walk every candidate; fn is called on each (NULL: count only). */
typedef int (*visit_fn)(void *ctx, const struct pm_layout *l, struct pm_err *err);

static int walk(const struct pm_lsearch_req *r, visit_fn fn, void *ctx, double *count, struct pm_err *err)
{
	struct axes a;
	int pv[MAX_VALUES], ev[MAX_VALUES];
	long long N = r->job.gpus;

	axes_of(r, &a);
	*count = 0;
	for (int i = 0; i < a.ntp; i++)
		for (int j = 0; j < a.ncp; j++) {
			long long tc = (long long)a.tp[i] * a.cp[j];
			if (N % tc)
				continue;
			int np = pps(r, N / tc, pv);
			for (int k = 0; k < np; k++) {
				if ((N / tc) % pv[k])
					continue;
				int dp = (int)(N / tc / pv[k]), ne = eps(r, dp, ev);
				/* without a pipeline interleaving is the same layout as v1;
				 * ZeRO-3 (weights gathered per micro-batch) goes without one */
				int nv = pv[k] == 1 && r->fix.vpp <= 1 ? 1 : a.nv;
				int nz = pv[k] > 1 && r->fix.zero < 0 ? a.nzero - 1 : a.nzero;
				double per = (double)ne * a.nmb * nv * a.nrec * nz;
				*count += per;
				if (!fn)
					continue;
				for (int e = 0; e < ne; e++)
					for (int b = 0; b < a.nmb; b++)
						for (int v = 0; v < nv; v++)
							for (int q = 0; q < a.nrec; q++)
								for (int z = 0; z < nz; z++) {
									struct pm_layout l = {a.tp[i], pv[k], dp, a.cp[j], ev[e],
											      a.v[v], a.mb[b], a.rec[q], a.zero[z]};
									int rc = fn(ctx, &l, err);
									if (rc)
										return rc;
								}
			}
		}
	return PM_OK;
}

double pm_lsearch_count(const struct pm_lsearch_req *r)
{
	double n;
	walk(r, NULL, NULL, &n, NULL);
	return n;
}

struct search {
	const struct pm_lsearch_req *r;
	struct pm_lsearch_out *o;
	double done, total;
	struct pm_err first;	/* why the first candidate was impossible */
	int have_first;
};

static void keep(struct search *s, const struct pm_layout *l, const struct pm_step *st)
{
	struct pm_lsearch_out *o = s->o;
	int n = o->nbest, at = n;

	while (at > 0 && st->step_s < o->best[at - 1].s.step_s)
		at--;
	if (at >= s->r->top)
		return;
	if (n == s->r->top)
		n--;
	memmove(&o->best[at + 1], &o->best[at], sizeof o->best[0] * (size_t)(n - at));
	o->best[at] = (struct pm_lsearch_entry){*l, *st};
	o->nbest = n + 1;
}

static int visit(void *ctx, const struct pm_layout *l, struct pm_err *err)
{
	struct search *s = ctx;
	struct pm_step st;
	struct pm_err why;
	int rc;

	if (++s->done == 1 || fmod(s->done, 4096) == 0)
		pm_progress("plan: pricing layouts", s->done, s->total);
	if (pm_layout_check(&s->r->job, l, &why)) {
		if (!s->have_first)
			s->first = why, s->have_first = 1;
		return PM_OK;
	}
	if ((rc = pm_layout_price(&s->r->job, l, &st, err)))
		return rc == PM_ENOTAPPLICABLE ? PM_EINPUT : rc;
	s->o->valid++;
	if (!s->o->have_leanest || st.mem.total_B < s->o->leanest.s.mem.total_B)
		s->o->leanest = (struct pm_lsearch_entry){*l, st}, s->o->have_leanest = 1;
	if (!st.fits)
		return PM_OK;
	s->o->fits++;
	keep(s, l, &st);
	return PM_OK;
}

int pm_lsearch(const struct pm_lsearch_req *r, struct pm_lsearch_out *o, struct pm_err *err)
{
	struct search s = {r, o, 0, 0, {{0}}, 0};
	int rc;

	memset(o, 0, sizeof *o);
	s.total = o->candidates = pm_lsearch_count(r);
	if (o->candidates > PM_LSEARCH_MAX_CANDIDATES)
		return pm_fail(err, PM_EINPUT, "%.3g layouts to price (at most %.0e: fix an axis such as --tp or --pp to narrow the search)",
			       o->candidates, PM_LSEARCH_MAX_CANDIDATES);
	if (!(o->best = calloc((size_t)(r->top > 0 ? r->top : 1), sizeof *o->best)))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	if ((rc = walk(r, visit, &s, &o->candidates, err)))
		return rc;
	if (!o->valid && !s.have_first) {
		/* nothing reached the check: the fixed degrees do not divide the
		 * GPUs; let the check say so with the figures */
		struct pm_layout l = r->fix;
		int *ax[] = {&l.tp, &l.pp, &l.cp, &l.ep, &l.vpp, &l.mb};
		for (size_t k = 0; k < sizeof ax / sizeof ax[0]; k++)
			if (*ax[k] < 1)
				*ax[k] = 1;
		l.recompute = l.recompute < 0 ? 0 : l.recompute;
		l.zero = l.zero < 0 ? 0 : l.zero;
		l.dp = (int)(r->job.gpus / ((long long)l.tp * l.pp * l.cp));
		if (l.dp < 1)
			l.dp = 1;
		s.have_first = pm_layout_check(&r->job, &l, &s.first) != PM_OK;
	}
	if (!o->valid)
		return s.have_first ? pm_fail(err, PM_EINPUT, "no possible layout: %s", s.first.msg)
				    : pm_fail(err, PM_EINPUT, "no possible layout of %lld GPUs for the axes given", r->job.gpus);
	if (!o->fits) {
		char name[96];
		pm_layout_name(&o->leanest.l, name, sizeof name);
		/* every figure in GB (1e9 bytes), as the table's memory columns */
		return pm_fail(err, PM_EINPUT,
			       "no layout fits in memory: the leanest, %s, needs %.1f GB a GPU (weights %.1f GB, gradients %.1f GB, optimizer %.1f GB, activations %.1f GB) where one %s has %.1f GB",
			       name, o->leanest.s.mem.total_B / 1e9, o->leanest.s.mem.weights_B / 1e9,
			       o->leanest.s.mem.grads_B / 1e9, o->leanest.s.mem.optim_B / 1e9,
			       o->leanest.s.mem.act_B / 1e9, r->job.dev->name, r->job.dev->mem_B / 1e9);
	}
	return PM_OK;
}

void pm_lsearch_release(struct pm_lsearch_out *o)
{
	free(o->best);
	o->best = NULL;
}
