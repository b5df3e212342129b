/* policy.h: the gradient-communication policies `perfmodel train`
 * compares (Shi et al., "MG-WFBP: Efficient data communication for
 * distributed synchronous SGD algorithms", INFOCOM 2019, and the
 * frameworks' buckets): which layers each all-reduce carries. */
#ifndef PM_POLICY_H
#define PM_POLICY_H

#include "model/err.h"
#include "search/train.h"

#define PM_POLICY_MAX 32	/* policies in one list */

enum pm_policy_kind {
	PM_POL_NAIVE, PM_POL_WFBP, PM_POL_SYNC, PM_POL_BUCKET, PM_POL_MGWFBP,
	PM_POL_MGWFBP_ALG1, PM_POL_OPT,
};

struct pm_policy_row {
	const char *name;
	enum pm_policy_kind kind;
	double cap, first;	/* buckets: the size of one, and of the first */
	const char *summary;
};

struct pm_policy {
	struct pm_policy_row row;
	char label[64];		/* as the user named it (bucket:25M/1M) */
};

/* "all" (the first seven of the table) or a comma list of names and
 * bucket:SIZE[/FIRST]; at most PM_POLICY_MAX. */
int pm_policy_parse(const char *list, struct pm_policy *out, int *n, struct pm_err *err);
/* The merge plan policy p makes for iteration it. */
int pm_policy_plan(const struct pm_policy *p, const struct pm_iter *it, struct pm_plan *plan);
/* Does the policy start its all-reduces only after the whole backward
 * pass (naive, Shi et al. (MG-WFBP) eq. 3)? */
int pm_policy_after_backward(const struct pm_policy *p);

#endif
