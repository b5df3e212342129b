/* layout_search.h: the layout search (`perfmodel plan`): every layout of a job
 * that is possible and fits in memory, priced (layout.h), ranked by step
 * time.  An axis the user fixed takes only that value. */
#ifndef PM_LAYOUT_SEARCH_H
#define PM_LAYOUT_SEARCH_H

#include "search/layout.h"

/* Axis values: > 0 (or >= 0 for recompute and zero) fixes the axis; -1
 * leaves it free: tp the divisors of a node's GPUs, cp 1-32 in powers of
 * two, pp every stage count that divides the GPUs, ep the divisors of the
 * experts that divide dp, mb 1, 2, 4, 8, vpp 1, 2, 4, recompute none and
 * full, zero 0-2 (3 too without pipelining). */
struct pm_lsearch_req {
	struct pm_job job;
	struct pm_layout fix;	/* dp is never fixed: it is what is left */
	int top;		/* entries to keep */
};

struct pm_lsearch_entry {
	struct pm_layout l;
	struct pm_step s;
};

struct pm_lsearch_out {
	struct pm_lsearch_entry *best;	/* nbest entries, fastest first */
	int nbest;
	double candidates;		/* layouts enumerated */
	double valid, fits;		/* of them: possible, and fitting in memory */
	struct pm_lsearch_entry leanest;	/* the possible layout needing least memory */
	int have_leanest;
};

/* Layouts the request would enumerate, before any pricing. */
double pm_lsearch_count(const struct pm_lsearch_req *r);

/* Refused (PM_EINPUT) above this many candidates. */
#define PM_LSEARCH_MAX_CANDIDATES 2e7

/* Search.  PM_EINPUT when no layout is possible, or none fits (with the
 * leanest one's memory), naming the figures. */
int pm_lsearch(const struct pm_lsearch_req *r, struct pm_lsearch_out *out, struct pm_err *err);
void pm_lsearch_release(struct pm_lsearch_out *out);

#endif
