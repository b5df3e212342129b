/* policy.c: the gradient-merging policies (see policy.h). */
#include "search/policy.h"
#include "model/text.h"
#include "model/units.h"

#include <stdio.h>
#include <string.h>

/* The policies by name; "all" runs the first seven. */
static const struct pm_policy_row policies[] = {
	{"naive", PM_POL_NAIVE, 0, 0, "layer-wise all-reduce after the whole backward pass (Shi et al. (MG-WFBP) eq. 3)"},
	{"wfbp", PM_POL_WFBP, 0, 0, "each layer as soon as its gradients exist (WFBP, eqs. 6-8)"},
	{"synceasgd", PM_POL_SYNC, 0, 0, "one all-reduce of everything after backward (SyncEASGD, eq. 9)"},
	{"ddp", PM_POL_BUCKET, 25.0 * 1048576, 1048576, "PyTorch DDP buckets: 25 MiB, the first 1 MiB"},
	{"horovod", PM_POL_BUCKET, 64.0 * 1048576, 64.0 * 1048576, "Horovod tensor fusion, 64 MB threshold (before v0.21); fusion cycles ignored"},
	{"mgwfbp", PM_POL_MGWFBP, 0, 0, "MG-WFBP: merge by Theorem 1 (Shi et al. (MG-WFBP)), the O(L) pass"},
	{"optimal", PM_POL_OPT, 0, 0, "the fastest grouping of consecutive layers (dynamic programme)"},
	{"horovod-0.21", PM_POL_BUCKET, 128.0 * 1048576, 128.0 * 1048576, "Horovod tensor fusion, 128 MB threshold (v0.21 on)"},
	{"mgwfbp-alg1", PM_POL_MGWFBP_ALG1, 0, 0, "MG-WFBP as Shi et al. (MG-WFBP) Algorithm 1, O(L^2)"},
};
#define NPOL (int)(sizeof policies / sizeof policies[0])
#define NALL 7

int pm_policy_parse(const char *list, struct pm_policy *out, int *n, struct pm_err *err)
{
	char buf[512];

	*n = 0;
	if (strcmp(list, "all") == 0) {
		for (int i = 0; i < NALL; i++) {
			out[(*n)].row = policies[i];
			snprintf(out[(*n)++].label, sizeof out->label, "%s", policies[i].name);
		}
		return PM_OK;
	}
	if (pm_check_list("policy", list, ',', "wfbp,mgwfbp,bucket:25M", err))
		return PM_EINPUT;
	if (strlen(list) >= sizeof buf)
		return pm_fail(err, PM_EINPUT, "policy list too long (expected at most %zu characters)", sizeof buf - 1);
	strcpy(buf, list);
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		struct pm_policy *p = &out[*n];
		int found = 0;
		if (*n == PM_POLICY_MAX)
			return pm_fail(err, PM_EINPUT, "too many policies (expected at most %d)", PM_POLICY_MAX);
		if (strcmp(t, "all") == 0)
			return pm_fail(err, PM_EINPUT,
				       "policy 'all' in the list '%s' (expected all alone, or a list of the others such as wfbp,mgwfbp,optimal)",
				       list);
		if (strncmp(t, "bucket:", 7) == 0) {
			char given[64];
			char *slash = strchr(t + 7, '/');
			pm_strlcpy(given, t, sizeof given);
			double cap, first;
			if (slash)
				*slash = '\0';
			if (pm_parse_size(t + 7, &cap, err) || (slash && pm_parse_size(slash + 1, &first, err)))
				return pm_fail(err, PM_EINPUT, "invalid bucket policy '%s' (expected bucket:SIZE or bucket:SIZE/FIRST such as bucket:25M/1M)", given);
			p->row = (struct pm_policy_row){"bucket", PM_POL_BUCKET, cap, slash ? first : cap, "buckets by size"};
			snprintf(p->label, sizeof p->label, "%s", given);
			(*n)++;
			continue;
		}
		for (int i = 0; i < NPOL && !found; i++)
			if (strcmp(t, policies[i].name) == 0) {
				p->row = policies[i];
				snprintf(p->label, sizeof p->label, "%s", t);
				found = 1;
			}
		if (!found)
			return pm_fail(err, PM_EINPUT,
				       "unknown policy '%s' (expected all, naive, wfbp, synceasgd, ddp, horovod, horovod-0.21, bucket:SIZE[/FIRST], mgwfbp, mgwfbp-alg1 or optimal)",
				       t);
		(*n)++;
	}
	return PM_OK;
}

int pm_policy_plan(const struct pm_policy *p, const struct pm_iter *it, struct pm_plan *plan)
{
	switch (p->row.kind) {
	case PM_POL_NAIVE:
	case PM_POL_WFBP:
		return pm_plan_each(it->L, plan);
	case PM_POL_SYNC:
		return pm_plan_single(it->L, plan);
	case PM_POL_BUCKET:
		return pm_plan_buckets(it, p->row.cap, p->row.first, plan);
	case PM_POL_MGWFBP:
		return pm_mgwfbp_fast(it, plan);
	case PM_POL_MGWFBP_ALG1:
		return pm_mgwfbp_alg1(it, plan);
	default:
		return pm_optimal_plan(it, plan);
	}
}

int pm_policy_after_backward(const struct pm_policy *p)
{
	return p->row.kind == PM_POL_NAIVE;
}
