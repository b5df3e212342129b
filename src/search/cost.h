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

#endif
