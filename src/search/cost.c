/* cost.c: all-reduce cost lines for the training timeline. */
#include "search/cost.h"

#include <math.h>
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

int pm_cost_fit_algo(const struct pm_inst *in, const struct pm_params *p,
		     int contention, double lo, double hi, struct pm_fit *f,
		     struct pm_err *err)
{
	struct pm_points pts = {0};
	struct pm_sched s;
	int rc = PM_OK;

	if (!(lo > 0) || hi < lo)
		return pm_fail(err, PM_EINPUT, "invalid size range for the cost fit");
	if (hi == lo)
		hi = 2 * lo;
	if (contention && (rc = pm_algo_schedule(in, &s, err)))
		return rc;
	for (int i = 0; i <= 32 && !rc; i++) {
		double m = lo * pow(hi / lo, i / 32.0);
		struct pm_cost c;
		if (contention)
			rc = pm_algo_contention(in, &s, m, p, &c, NULL, err);
		else
			pm_algo_closed(in, m, p, &c);
		if (!rc && pm_points_add(&pts, m, c.time_s))
			rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	if (!rc)
		rc = pm_fit_line(&pts, 0, 0, f, err);
	if (contention)
		pm_sched_release(&s);
	pm_points_release(&pts);
	return rc;
}
