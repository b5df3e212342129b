/* topo_full.c: full:N, every endpoint linked directly to every other.
 * Link u->v has id u*(N-1) + (v < u ? v : v-1), so routing is one lookup. */
#include "model/topo_impl.h"
#include "model/units.h"

#include <string.h>

static int build(struct pm_topo *t, const char *args,
		 const struct pm_link_defaults *ld, struct pm_err *err)
{
	long n;
	int rc;

	if (pm_parse_int(args, 1, PM_TOPO_MAX_VERTICES, "endpoint count", &n, err))
		return PM_EINPUT;
	rc = pm_topo_alloc(t, n, (int)n, (long long)n * (n - 1), 0, err);
	if (rc)
		return rc;
	for (int u = 0; u < n; u++)
		for (int v = 0; v < n; v++)
			if (u != v && pm_topo_add(t, u, v, ld->bw_Bps, ld->lat_s, -1) < 0)
				return pm_fail(err, PM_EINTERNAL, "out of memory");
	t->max_hops = n > 1 ? 1 : 0;
	t->min_hops = t->max_hops;
	return PM_OK;
}

static int route(const struct pm_topo *t, int src, int dst, int *links)
{
	links[0] = src * (t->n_end - 1) + (dst < src ? dst : dst - 1);
	return 1;
}

static void describe(const struct pm_topo *t, struct pm_topo_info *info)
{
	double half = t->n_end / 2, rest = t->n_end - half;
	info->routing = "direct: every pair has its own link";
	info->bisection_Bps = half * rest * (t->n_links ? t->links[0].bw_Bps : 0);
	info->bisection_cut = "any balanced split";
}

const struct pm_topo_kind pm_topo_full = {
	.name = "full",
	.syntax = "full:N",
	.summary = "N endpoints, fully connected (one link per ordered pair)",
	.build = build,
	.route = route,
	.describe = describe,
};
