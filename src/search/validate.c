/* validate.c: the evaluators checked against each other (see validate.h). */
#include "search/validate.h"
#include "search/pool.h"
#include "model/progress.h"

#include "model/algo.h"
#include "model/eval.h"
#include "search/pricer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const quick_topos[] = {"torus:4x4", "fattree:4,2", NULL};
static const char *const quick_algos[] = {"ring", "dbtree", "2d-ring", "multitree", NULL};
static const double quick_sizes[] = {65536, 1048576, 0};

static const char *const full_topos[] = {"torus:4x4", "torus:8x8", "mesh:4x4", "fattree:4,2",
					 "fattree:8,2", "bigraph:4x8", "machine:dgx-h100:1", "machine:dgx-h100:2", NULL};
/* the full matrix runs every all-reduce algorithm of the table (a new one
 * is never skipped), all but NCCL's model, which prices a machine's NCCL */
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

/* The network's fastest link and its shortest link latency: on a network
 * whose links differ (a GPU cluster's NVLink and NICs) the bounds take a
 * link's bytes at its own rate, and every transfer at least the shortest
 * latency. */
static void link_extremes(const struct pm_topo *t, double *fast_Bps, double *lat_s)
{
	const struct pm_link *l = pm_topo_links(t);

	*fast_Bps = 0;
	*lat_s = INFINITY;
	for (int i = 0; i < pm_topo_nlinks(t); i++) {
		*fast_Bps = fmax(*fast_Bps, l[i].bw_Bps);
		*lat_s = fmin(*lat_s, l[i].lat_s);
	}
}

/* The check of one priced row (see validate.h). */
static void check(struct pm_validate_row *r, const struct pm_topo *t, const struct pm_sched *s,
		  const struct pm_step_cost *st, const struct pm_cost *c, const struct pm_router_cfg *rc,
		  const struct pm_params *q)
{
	double unit = r->size_B / s->nchunks, fast, lat;
	double fixed = (2 * rc->inj_cycles + 2 * rc->pipe_cycles) / rc->clock_Hz;

	/* the exact check is the router network's cycle count; the link
	 * simulator's rows take the bounds */
	r->exact = !r->links_sim && fmod(unit, q->payload_B) == 0 && contention_free(s, st);
	if (r->exact) {
		r->bound_s = c->time_s + s->nsteps * fixed;
		r->ok = fabs(r->sim_s - r->bound_s) <= 1e-9 * r->bound_s;
		return;
	}
	/* each step: its slowest link (its bytes at that link's rate) and one
	 * link's latency; the run: the busiest link's bytes at the fastest rate */
	link_extremes(t, &fast, &lat);
	r->bound_s = 0;
	for (int k = 0; k < s->nsteps; k++)
		r->bound_s += st[k].bw_s + (st[k].hops_max > 0 ? lat : 0);
	r->ok = r->sim_s >= r->bound_s * (1 - 1e-9) && r->dataflow_s >= c->max_link_B / fast * (1 - 1e-9);
}

/* The simulator in barrier lockstep and in dataflow order. */
static int simulate_both(struct pm_pricer *q, struct pm_validate_row *r, struct pm_err *why)
{
	struct pm_cost s;
	int code = pm_pricer_price(q, PM_EVAL_SIM, r->size_B, &s, NULL, why);

	if (!code)
		r->sim_s = s.time_s;
	if (!code && !(code = pm_pricer_price(q, PM_EVAL_DATAFLOW, r->size_B, &s, NULL, why)))
		r->dataflow_s = s.time_s;
	return code;
}

/* One row of r's checks at the pricer's size: the closed form, the
 * contention evaluator (its per-step records in steps), and the
 * router-level simulator in barrier lockstep and dataflow order.  A row
 * an evaluator refuses keeps the reason as its note. */
static int price_row(struct pm_pricer *q, struct pm_validate_row *r, struct pm_step_cost *steps,
		     struct pm_err *err)
{
	struct pm_params pq = pm_inst_params(&q->at, q->cfg.p);
	struct pm_router_cfg rc;
	struct pm_cost c;
	struct pm_err why;
	int code;

	pm_router_cfg_default(&rc);
	pm_pricer_price(q, PM_EVAL_CLOSED, r->size_B, &c, NULL, &why);
	r->closed_s = c.time_s;
	if (pm_pricer_price(q, PM_EVAL_CONTENTION, r->size_B, &c, steps, &why)) {
		snprintf(r->note, sizeof r->note, "%.500s", why.msg);
		return PM_OK;
	}
	r->contention_s = c.time_s;
	/* where a switch reduces or multicasts, the link simulator plays the
	 * schedule (the router network runs transfers between ranks only) */
	const struct pm_sim_opts *router = q->cfg.so;
	struct pm_sim_opts links = *router;
	links.routers = 0;
	r->links_sim = pm_sched_switch_xfers(&q->sched) > 0;
	q->cfg.so = r->links_sim ? &links : router;
	code = simulate_both(q, r, &why);
	q->cfg.so = router;
	if (code == PM_ENOTAPPLICABLE) {
		snprintf(r->note, sizeof r->note, "%.500s", why.msg);
		return PM_OK;
	}
	if (code)
		return pm_fail(err, code, "%s", why.msg);
	check(r, q->at.topo, &q->sched, steps, &c, &rc, &pq);
	return PM_OK;
}

/* One size of q into row r: the instance made for it (a sized one, the
 * pipelines' chunk count from the size, gets its own schedule), then
 * every evaluator. */
static int price_size(struct pm_pricer *q, struct pm_validate_row *r, struct pm_err *err)
{
	struct pm_err why;
	int code = pm_pricer_size(q, r->size_B, &why, err);

	if (code == PM_ENOTAPPLICABLE || (!code && q->no_sched[0])) {
		snprintf(r->note, sizeof r->note, "%.500s", code ? why.msg : q->no_sched);
		return PM_OK;
	}
	if (code)
		return code;
	snprintf(r->algo, sizeof r->algo, "%.90s", q->at.label);
	struct pm_step_cost *steps = calloc((size_t)q->sched.nsteps + 1, sizeof *steps);
	if (!steps)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	code = price_row(q, r, steps, err);
	free(steps);
	return code;
}

/* Price one algorithm on one network at every size into rows (one a
 * size, in order). */
static int price(const struct pm_topo *t, const char *spec, const char *algo,
		 const double *sizes, const struct pm_params *p, struct pm_validate_row *rows,
		 struct pm_err *err)
{
	struct pm_sim_opts so = {.routers = 1};
	struct pm_pricer_cfg cfg = {t, p, &so, (1u << PM_NEVAL) - 1, 1, 1, NULL};	/* every evaluator */
	struct pm_pricer q = {0};
	struct pm_inst in;
	struct pm_err why;
	int code = PM_OK;

	pm_router_cfg_default(&so.router);
	int st = pm_algo_resolve(algo, t, 0, &in, &why);
	if (st == PM_OK && (code = pm_pricer_open(&q, &in, &cfg, NULL, err)))
		return code;
	for (int z = 0; sizes[z] > 0 && code == PM_OK; z++) {
		struct pm_validate_row *r = &rows[z];

		memset(r, 0, sizeof *r);
		snprintf(r->topo, sizeof r->topo, "%s", spec);
		snprintf(r->algo, sizeof r->algo, "%.90s", st == PM_OK ? in.label : algo);
		r->size_B = sizes[z];
		r->ok = 1;
		if (st != PM_OK) {
			snprintf(r->note, sizeof r->note, "%.500s", why.msg);
			continue;
		}
		code = price_size(&q, r, err);
	}
	pm_pricer_close(&q);
	return code;
}

int pm_validate_matrix(int quick, const char *const **topos, const char **algos,
		       const double **sizes)
{
	int n = 0;

	*topos = quick ? quick_topos : full_topos;
	*sizes = quick ? quick_sizes : full_sizes;
	if (!quick)
		return full_algos(algos, PM_VALIDATE_MAX_ALGOS + 1);
	for (; quick_algos[n]; n++)
		algos[n] = quick_algos[n];
	algos[n] = NULL;
	return n;
}

/* The matrix as tasks (search/pool.h): task i na + a prices algorithm a
 * on network i into its own rows and code. */
struct matrix {
	const char *const *topos;
	const char **algos;
	const double *sizes;
	int nt, na, ns;
	struct pm_topo **t;
	const struct pm_params *p;
	struct pm_validate *v;
};

static int price_task(void *ctx, int k, int worker, struct pm_err *err)
{
	struct matrix *m = ctx;
	int i = k / m->na, a = k % m->na;

	if (worker == 0)
		pm_progress("validating, algorithm and network", k, m->nt * m->na);
	return price(m->t[i], m->topos[i], m->algos[a], m->sizes, m->p, &m->v->rows[(size_t)k * m->ns], err);
}

/* The networks of the matrix, built before any pricing (the threads
 * share them). */
static int build_topos(const char *const *topos, int nt, const struct pm_params *p, struct pm_topo **t,
		       struct pm_err *err)
{
	struct pm_link_defaults ld = {.bw_Bps = p->link_bw_Bps, .lat_s = p->link_lat_s};

	for (int i = 0; i < nt; i++) {
		int rc = pm_topo_parse(topos[i], &ld, &t[i], err);
		if (rc)
			return rc;
	}
	return PM_OK;
}

int pm_validate_run(int quick, const struct pm_params *p, int threads, struct pm_validate *v,
		    struct pm_err *err)
{
	const char *algos[PM_VALIDATE_MAX_ALGOS + 1];
	struct matrix m = {.algos = algos, .p = p, .v = v};
	int nt = 0, rc;

	m.na = pm_validate_matrix(quick, &m.topos, algos, &m.sizes);
	while (m.topos[nt])
		nt++;
	m.nt = nt;
	while (m.sizes[m.ns] > 0)
		m.ns++;
	memset(v, 0, sizeof *v);
	v->rows = calloc((size_t)(nt * m.na * m.ns), sizeof *v->rows);
	m.t = calloc((size_t)nt, sizeof *m.t);
	if (!v->rows || !m.t)
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	else
		rc = build_topos(m.topos, nt, p, m.t, err);
	if (!rc)
		rc = pm_pool_run(nt * m.na, threads, NULL, price_task, &m, err);
	v->nrows = rc ? 0 : nt * m.na * m.ns;
	for (int r = 0; r < v->nrows; r++)
		v->failed += !v->rows[r].ok;
	for (int i = 0; m.t && i < nt; i++)
		pm_topo_free(m.t[i]);
	free(m.t);
	return rc;
}

void pm_validate_release(struct pm_validate *v)
{
	free(v->rows);
	memset(v, 0, sizeof *v);
}
