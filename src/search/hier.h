/* hier.h: choosing a hierarchy before the cluster job (Ueno & Yokota 2019).
 *
 * A hierarchy of P processes is an ordered factorization p1 x ... x ph = P
 * (factors >= 2, p1 innermost); every one is a hierarchical ring all-reduce
 * from the flat ring (h = 1) to Rabenseifner (all factors 2).  The search
 * prices them with the machine model (model/machine.h) either by listing
 * every factorization or by an exact dynamic programme over the divisors
 * of P, and keeps the K fastest.  Ties (within a relative 1e-12) go to the
 * lexicographically smaller layer list.
 */
#ifndef PM_HIER_H
#define PM_HIER_H

#include <stddef.h>

#include "model/machine.h"

#define PM_HIER_MAX_LAYERS 64
#define PM_HIER_MAX_TOP 100

struct pm_hier {
	int layers[PM_HIER_MAX_LAYERS];
	int h;
	double time_s;
};

enum pm_hier_method {
	PM_HIER_AUTO,		/* enumerate when few enough, else DP */
	PM_HIER_ENUM,
	PM_HIER_DP,
};

struct pm_hier_query {
	const struct pm_machine *m;
	long long P;
	double n;		/* bytes per process */
	double alpha_s;
	int s;
	int aligned;		/* every machine unit below P must be a layer boundary */
	int top;		/* K */
	enum pm_hier_method method;
	double enum_limit;	/* AUTO enumerates up to this many factorizations */
};

struct pm_hier_stats {
	double factorizations;	/* ordered factorizations of P (A074206) */
	int divisors;
	int method;		/* the one used */
	double priced;		/* hierarchies priced (enumeration) */
};

/* Ordered factorizations of P into factors >= 2 (OEIS A074206); 1 for P = 1. */
double pm_hier_count(long long P);

/* The K fastest hierarchies, fastest first, into out (room for q->top). */
int pm_hier_search(const struct pm_hier_query *q, struct pm_hier *out, int *nout,
		   struct pm_hier_stats *st, struct pm_err *err);

/* How big extends small (Ueno & Yokota 2019 SV-B5): 0 no; 1 a layer of 2 was added
 * at position *where; 2 layer *where was doubled. */
int pm_hier_extends(const struct pm_hier *big, const struct pm_hier *small,
		    int *where);

/* "4x8x4", or "1" for the empty hierarchy. */
void pm_hier_name(const struct pm_hier *h, char *buf, size_t size);

#endif
