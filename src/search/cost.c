/* cost.c: all-reduce cost lines for the training timeline. */
#include "search/cost.h"
#include "search/pricer.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double a_btree(double N, double al) { return 2 * al * log2(N); }
static double b_btree(double N, double be, double g) { return (2 * be + g) * log2(N); }
static double a_rd(double N, double al) { return al * log2(N); }
static double b_rd(double N, double be, double g) { return (be + g) * log2(N); }
static double a_rhd(double N, double al) { return 2 * al * log2(N); }
static double b_rhd(double N, double be, double g) { return 2 * be - (2 * be + g) / N + g; }
static double a_dbt(double N, double al) { return 2 * al * log2(N); }
static double b_dbt(double N, double be, double g) { (void)N; return be + g; }
static double a_ring(double N, double al) { return 2 * (N - 1) * al; }
static double b_ring(double N, double be, double g) { return 2 * (N - 1) / N * be + (N - 1) / N * g; }

/* Seed 002 Table 2; the double binary tree's a is printed there as
 * "2 log N": we read it as 2 alpha log N, like the other tree rows. */
static const struct pm_table2 rows[] = {
	{"binary-tree", "2 alpha lg N", "(2 beta + gamma) lg N", a_btree, b_btree},
	{"recursive-doubling", "alpha lg N", "(beta + gamma) lg N", a_rd, b_rd},
	{"halving-doubling", "2 alpha lg N", "2 beta - (2 beta + gamma)/N + gamma", a_rhd, b_rhd},
	{"dbtree", "2 alpha lg N", "beta + gamma", a_dbt, b_dbt},
	{"ring", "2 (N-1) alpha", "2 (N-1)/N beta + (N-1)/N gamma", a_ring, b_ring},
};

const struct pm_table2 *pm_table2_rows(int *n)
{
	*n = (int)(sizeof rows / sizeof rows[0]);
	return rows;
}

const struct pm_table2 *pm_table2_find(const char *name)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	return NULL;
}

int pm_fit_to_link(const char *algo, enum pm_coll c, int P, double A, double B,
		   double *alpha_s, double *bw_Bps, struct pm_err *err)
{
	struct pm_inst in;
	struct pm_params p;
	struct pm_cost c1, c2;
	const double n = 1 << 20;
	int rc = pm_algo_resolve_coll(c, algo, NULL, P, &in, err);

	if (rc)
		return rc;
	pm_params_default(&p);
	p.alpha_s = 1;		/* one second a message: c_a seconds */
	p.link_bw_Bps = 1;	/* one byte a second: c_b n seconds */
	p.link_lat_s = 0;
	p.gamma_spB = 0;
	p.flow = PM_FLOW_NONE;
	pm_algo_closed(&in, n, &p, &c1);
	pm_algo_closed(&in, 2 * n, &p, &c2);
	double ca = c1.alpha_s, cb = c1.bw_s / n;
	if (!(ca > 0) || !(cb > 0) || fabs(c2.bw_s - 2 * c1.bw_s) > 1e-9 * c2.bw_s ||
	    c2.alpha_s != c1.alpha_s)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "%s on %d ranks is not alpha x c_a + n x c_b / bw (expected an algorithm whose closed form is a line in the message size, such as ring)",
			       algo, P);
	*alpha_s = A / ca;
	*bw_Bps = cb / B;
	return PM_OK;
}

int pm_cost_fit_algo(const struct pm_inst *in, const struct pm_params *p,
		     int contention, double lo, double hi, struct pm_fit *f,
		     struct pm_err *err)
{
	enum { NPOINTS = 33 };	/* sizes from lo to hi, geometric */
	struct pm_pricer_cfg cfg = {NULL, p, NULL, 1u << PM_EVAL_CLOSED, NPOINTS, 0, NULL};
	enum pm_evaluator e = contention ? PM_EVAL_CONTENTION : PM_EVAL_CLOSED;
	struct pm_points pts = {0};
	struct pm_pricer q;
	int rc;

	if (!(lo > 0) || hi < lo)
		return pm_fail(err, PM_EINPUT, "invalid size range for the cost fit");
	if (hi == lo)
		hi = 2 * lo;
	cfg.evals |= 1u << e;
	if ((rc = pm_pricer_open(&q, in, &cfg, NULL, err)))
		return rc;
	for (int i = 0; i < NPOINTS && !rc; i++) {
		double m = lo * pow(hi / lo, i / (NPOINTS - 1.0));
		struct pm_cost c;
		if ((rc = pm_pricer_size(&q, m, err, err)))
			break;	/* a size it cannot run (multiphase's SRAM) */
		if (q.no_sched[0])
			rc = pm_fail(err, PM_EINPUT, "%s", q.no_sched);
		else
			rc = pm_pricer_price(&q, e, m, &c, NULL, err);
		if (!rc && pm_points_add(&pts, m, c.time_s))
			rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	if (!rc)
		rc = pm_fit_line(&pts, 0, 0, f, err);
	pm_pricer_close(&q);
	pm_points_release(&pts);
	return rc;
}

int pm_cost_src_line(struct pm_cost_src *c, int N, double lo, double hi,
		     double *a, double *b, struct pm_err *err)
{
	char bw[32], al[32];
	struct pm_inst in;
	struct pm_fit f;
	int rc;

	switch (c->kind) {
	case PM_COST_FIXED:
	case PM_COST_FIT:
		*a = c->a;
		*b = c->b;
		return PM_OK;
	case PM_COST_TABLE2:
		*a = c->t2->a(N, c->params.alpha_s);
		*b = c->t2->b(N, 1 / c->params.link_bw_Bps, c->params.gamma_spB);
		pm_fmt_bw(c->params.link_bw_Bps, bw, sizeof bw);
		pm_fmt_time(c->params.alpha_s, al, sizeof al);
		snprintf(c->desc, sizeof c->desc,
			 "Shi et al. (MG-WFBP) Table 2 '%s': a = %s, b = %s with alpha %s, beta = 1/(%s), gamma %.4g ns/B",
			 c->t2->name, c->t2->a_text, c->t2->b_text, al, bw, c->params.gamma_spB * 1e9);
		return PM_OK;
	default:
		rc = pm_algo_resolve_coll(c->coll, c->algo, c->topo, N, &in, err);
		if (rc == PM_ENOTAPPLICABLE)
			rc = PM_EINPUT;
		if (rc || (rc = pm_cost_fit_algo(&in, &c->params, c->contention, lo, hi, &f, err)))
			return rc;
		*a = f.alpha_s;
		*b = f.beta_spB;
		if (*a < 0)
			*a = 0;	/* a fit may dip below zero within its error */
		snprintf(c->desc, sizeof c->desc,
			 "fitted to the %s of %s%s on %s over %.4g to %.4g bytes (33 sizes, R^2 %.6f)",
			 c->contention ? "contention evaluator" : "closed form", in.label,
			 c->coll == PM_COLL_ALLTOALL ? " (all-to-all)" : "",
			 c->topo ? pm_topo_spec(c->topo) : "P ranks (no network)", lo, hi, f.r2);
		return PM_OK;
	}
}
