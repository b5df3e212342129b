/* cost.h: the all-reduce cost T(M) = a + b M a training timeline needs,
 * from Shi et al. (MG-WFBP) Table 2 or fitted to any perfmodel algorithm. */
#ifndef PM_COST_H
#define PM_COST_H

#include "model/algo.h"
#include "search/fit.h"

/* Seed 002 Table 2: a and b of the classic all-reduce algorithms on N
 * workers from alpha, beta (s/B) and gamma (s/B). */
struct pm_table2 {
	const char *name;
	const char *a_text, *b_text;
	double (*a)(double N, double alpha);
	double (*b)(double N, double beta, double gamma);
};
const struct pm_table2 *pm_table2_find(const char *name);
const struct pm_table2 *pm_table2_rows(int *n);

/* Fit a + b M to the closed form (or, with contention, the contention
 * evaluator) of an algorithm instance at 33 sizes from lo to hi bytes,
 * geometrically spaced. */
int pm_cost_fit_algo(const struct pm_inst *in, const struct pm_params *p,
		     int contention, double lo, double hi, struct pm_fit *f,
		     struct pm_err *err);

/* The inverse of a fit: the per-link alpha and bandwidth with which
 * algorithm `algo` on P ranks reproduces a measured whole-collective line
 * T(n) = A + B n.  Its closed form without link latency, flow control or
 * pipelining is c_a alpha + c_b n / bw (ring: c_a = 2(P-1), c_b =
 * 2(P-1)/P); the two coefficients are read off the closed form itself, so
 * alpha = A / c_a and bw = c_b / B.  The measurement is of collective c
 * (an all-gather's line is half a ring all-reduce's).  PM_ENOTAPPLICABLE
 * when the algorithm needs a network, does not implement c, or its cost
 * is not of that form. */
int pm_fit_to_link(const char *algo, enum pm_coll c, int P, double A, double B,
		   double *alpha_s, double *bw_Bps, struct pm_err *err);

/* Where a training timeline's T(M) = a + b M comes from: given, fitted
 * to measurements, Shi et al. (MG-WFBP) Table 2 on N workers, or fitted
 * to an algorithm of perfmodel's (its closed form or, with contention,
 * the contention evaluator) over the sizes the layers span. */
enum pm_cost_kind { PM_COST_FIXED, PM_COST_FIT, PM_COST_TABLE2, PM_COST_ALGO };
struct pm_cost_src {
	enum pm_cost_kind kind;
	enum pm_coll coll;	/* PM_COST_ALGO: the collective priced (all-reduce) */
	double a, b;
	const struct pm_table2 *t2;
	const char *algo;
	struct pm_params params;
	struct pm_topo *topo;
	int contention;
	char desc[600];
};

/* a and b for N workers and messages of lo to hi bytes (desc says
 * where from; a fit's a below zero, within its error, becomes 0). */
int pm_cost_src_line(struct pm_cost_src *c, int N, double lo, double hi,
		     double *a, double *b, struct pm_err *err);

#endif
