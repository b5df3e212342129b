/* topo_switch.c: switch:N, N endpoints on one non-blocking crossbar (an
 * NVSwitch box seen as one switch).  Endpoint i's up link has id i and its
 * down link id N+i; every route is those two links. */
#include "model/topo_impl.h"
#include "model/units.h"

static int build(struct pm_topo *t, const char *args,
		 const struct pm_link_defaults *ld, struct pm_err *err)
{
	long n;
	int rc;

	if (pm_parse_int(args, 1, PM_TOPO_MAX_VERTICES - 1, "endpoint count", &n, err))
		return PM_EINPUT;
	rc = pm_topo_alloc(t, n + 1, (int)n, 2 * n, 0, err);
	if (rc)
		return rc;
	for (int i = 0; i < n; i++)
		pm_topo_add(t, i, (int)n, ld->bw_Bps, ld->lat_s, -1);
	for (int i = 0; i < n; i++)
		pm_topo_add(t, (int)n, i, ld->bw_Bps, ld->lat_s, -1);
	t->max_hops = n > 1 ? 2 : 0;
	t->min_hops = t->max_hops;
	return PM_OK;
}

static int route(const struct pm_topo *t, int src, int dst, int *links)
{
	links[0] = src;
	links[1] = t->n_end + dst;
	return 2;
}

static void describe(const struct pm_topo *t, struct pm_topo_info *info)
{
	info->routing = "endpoint -> switch -> endpoint";
	info->bisection_Bps = (double)(t->n_end / 2) *
			      (t->n_links ? t->links[0].bw_Bps : 0);
	info->bisection_cut = "half the endpoints' links into the switch";
}

const struct pm_topo_kind pm_topo_switch = {
	.name = "switch",
	.syntax = "switch:N",
	.summary = "N endpoints on one crossbar switch (like an NVSwitch box)",
	.build = build,
	.route = route,
	.describe = describe,
	.mirrored = 1,	/* an endpoint has one link each way */
};
