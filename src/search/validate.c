/* validate.c: the evaluators checked against each other (see validate.h). */
#include "search/validate.h"
#include "model/progress.h"

#include "model/algo.h"
#include "model/eval.h"
#include "sim/psim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const quick_topos[] = {"torus:4x4", "fattree:4,2", NULL};
static const char *const quick_algos[] = {"ring", "dbtree", "2d-ring", "multitree", NULL};
static const double quick_sizes[] = {65536, 1048576, 0};

static const char *const full_topos[] = {"torus:4x4", "torus:8x8", "mesh:4x4", "fattree:4,2",
					 "fattree:8,2", "bigraph:4x8", NULL};
/* the full matrix runs every all-reduce algorithm of the table (a new one
 * is never skipped), all but NCCL's model, which has no schedule */
static int full_algos(const char **out, int max)
{
	int n, k = 0;
	const struct pm_algo *const *a = pm_algos(&n);
	for (int i = 0; i < n && k < max - 1; i++)
		if (pm_algo_does(a[i], PM_COLL_ALLREDUCE) && !(a[i]->flags & PM_ALGO_EVERY_COLL) && !a[i]->only_coll)
			out[k++] = a[i]->name;
	out[k] = NULL;
	return k;
}
static const double full_sizes[] = {32768, 1048576, 16777216, 0};

/* Does every step send each transfer over one link of its own, with no
 * rank receiving more messages than it has ports? */
static int contention_free(const struct pm_sched *s, const struct pm_step_cost *st)
{
	int ports = 1, ok = 1;
	int *cnt = calloc((size_t)s->nranks + 1, sizeof(int));

	if (!cnt)
		return 0;
	for (int pass = 0; pass < 2 && ok; pass++)	/* 0: sends (the ports), 1: receives */
		for (int k = 0; k < s->nsteps && ok; k++) {
			for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
				int r = pass ? s->x[i].dst : s->x[i].src;
				if (++cnt[r] > ports && pass == 0)
					ports = cnt[r];
				if (pass == 1 && cnt[r] > ports)
					ok = 0;
			}
			for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++)
				cnt[pass ? s->x[i].dst : s->x[i].src] = 0;
			if (st[k].hops_max > 1 || (size_t)st[k].busy_links != st[k].xfers)
				ok = 0;
		}
	free(cnt);
	return ok;
}

/* The check of one priced row (see validate.h). */
static void check(struct pm_validate_row *r, const struct pm_sched *s,
		  const struct pm_step_cost *st, const struct pm_cost *c,
		  const struct pm_params *q, const struct pm_router_cfg *rc)
{
	double unit = r->size_B / s->nchunks;
	double fixed = (2 * rc->inj_cycles + 2 * rc->pipe_cycles) / rc->clock_Hz;

	r->exact = fmod(unit, q->payload_B) == 0 && contention_free(s, st);
	if (r->exact) {
		r->bound_s = c->time_s + s->nsteps * fixed;
		r->ok = fabs(r->sim_s - r->bound_s) <= 1e-9 * r->bound_s;
		return;
	}
	r->bound_s = 0;
	for (int k = 0; k < s->nsteps; k++)
		r->bound_s += st[k].max_link_B / q->link_bw_Bps + (st[k].hops_max > 0 ? q->link_lat_s : 0);
	r->ok = r->sim_s >= r->bound_s * (1 - 1e-9) &&
		r->dataflow_s >= c->max_link_B / q->link_bw_Bps * (1 - 1e-9);
}

static double simulate(const struct pm_topo *t, const struct pm_sched *s, double n,
		       const struct pm_params *q, int dataflow, struct pm_err *err, int *rc)
{
	struct pm_sim_opts o = {.dataflow = dataflow, .routers = 1};
	struct pm_sim_result res;

	pm_router_cfg_default(&o.router);
	*rc = pm_sim_run(t, s, n, q, &o, &res, err);
	return *rc ? -1 : res.time_s;
}

/* Price one algorithm on one network at every size into rows. */
static int price(const struct pm_topo *t, const char *spec, const char *algo,
		 const double *sizes, const struct pm_params *p, struct pm_validate *v,
		 struct pm_err *err)
{
	struct pm_inst in;
	struct pm_sched s, e;
	struct pm_err why;
	struct pm_router_cfg rc;
	int have = 0, code = PM_OK;

	pm_router_cfg_default(&rc);
	int st = pm_algo_resolve(algo, t, 0, &in, &why);
	if (st == PM_OK && (st = pm_algo_schedule(&in, &s, &why)) == PM_OK) {
		have = 1;
		if (pm_sched_is_compact(&s)) {	/* per-step records of every step */
			if ((st = pm_sched_expand(&s, &e, PM_SCHED_MAX_XFERS, &why)) == PM_OK) {
				pm_sched_release(&s);
				s = e;
			}
		}
	}
	struct pm_step_cost *steps = have && st == PM_OK ? calloc((size_t)s.nsteps + 1, sizeof *steps) : NULL;
	if (have && st == PM_OK && !steps)
		code = pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int z = 0; sizes[z] > 0 && code == PM_OK; z++) {
		struct pm_validate_row *r = &v->rows[v->nrows++];
		struct pm_cost c;
		struct pm_params q = st == PM_OK ? pm_inst_params(&in, p) : *p;
		int src;

		memset(r, 0, sizeof *r);
		snprintf(r->topo, sizeof r->topo, "%s", spec);
		snprintf(r->algo, sizeof r->algo, "%.90s", st == PM_OK ? in.label : algo);
		r->size_B = sizes[z];
		r->ok = 1;
		if (st != PM_OK) {
			snprintf(r->note, sizeof r->note, "%.500s", why.msg);
			continue;
		}
		pm_algo_closed(&in, sizes[z], p, &c);
		r->closed_s = c.time_s;
		if (pm_algo_contention(&in, &s, sizes[z], p, &c, steps, &why)) {
			snprintf(r->note, sizeof r->note, "%.500s", why.msg);
			continue;
		}
		r->contention_s = c.time_s;
		r->sim_s = simulate(t, &s, sizes[z], &q, 0, &why, &src);
		if (!src)
			r->dataflow_s = simulate(t, &s, sizes[z], &q, 1, &why, &src);
		if (src == PM_EINPUT) {
			snprintf(r->note, sizeof r->note, "%.500s", why.msg);
			continue;
		}
		if (src) {
			code = pm_fail(err, src, "%s", why.msg);
			break;
		}
		check(r, &s, steps, &c, &q, &rc);
		v->failed += !r->ok;
	}
	free(steps);
	if (have)
		pm_sched_release(&s);
	return code;
}

int pm_validate_run(int quick, const struct pm_params *p, struct pm_validate *v,
		    struct pm_err *err)
{
	const char *const *topos = quick ? quick_topos : full_topos;
	const char *every[64];
	const char *const *algos = quick ? quick_algos : every;
	const double *sizes = quick ? quick_sizes : full_sizes;
	int nt = 0, na = 0, ns = 0, rc = PM_OK;

	if (!quick)
		full_algos(every, 64);
	while (topos[nt])
		nt++;
	while (algos[na])
		na++;
	while (sizes[ns] > 0)
		ns++;
	memset(v, 0, sizeof *v);
	v->rows = calloc((size_t)(nt * na * ns), sizeof *v->rows);
	if (!v->rows)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int i = 0; i < nt && !rc; i++) {
		struct pm_link_defaults ld = {.bw_Bps = p->link_bw_Bps, .lat_s = p->link_lat_s};
		struct pm_topo *t;
		if ((rc = pm_topo_parse(topos[i], &ld, &t, err)))
			break;
		for (int a = 0; a < na && !rc; a++) {
			pm_progress("validating, algorithm and network", i * na + a, nt * na);
			rc = price(t, topos[i], algos[a], sizes, p, v, err);
		}
		pm_topo_free(t);
	}
	return rc;
}

void pm_validate_release(struct pm_validate *v)
{
	free(v->rows);
	memset(v, 0, sizeof *v);
}
