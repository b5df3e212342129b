/* cmd_topo.c: perfmodel topo --topo SPEC, the properties of a network. */
#include "cli/cli.h"
#include "cli/common.h"
#include "model/units.h"

#include <stdio.h>
#include <string.h>

/* The network's description, a row a property. */
static void describe_rows(struct cli_table *tab, const struct pm_topo *t, const struct pm_params *p,
			  const struct pm_topo_info *info)
{
	char per[256];

	cli_table_kv(tab, "topology", "%s", pm_topo_spec(t));
	cli_table_kv(tab, "kind", "%s", info->kind);
	cli_table_kv(tab, "endpoints", "%d", info->endpoints);
	cli_table_kv(tab, "switches", "%d", info->switches);
	cli_table_kv(tab, "directed_links", "%d", info->links);
	cli_table_kv(tab, "endpoint_degree", "%d", info->degree);
	cli_table_kv(tab, "switch_radix", "%d", info->radix);
	cli_table_kv(tab, "diameter_links", "%d", info->diameter);
	cli_table_kv(tab, "nearest_links", "%d", info->min_hops);
	if (info->bisection_Bps >= 0) {
		cli_table_kv(tab, "bisection_GBps", "%.6g", info->bisection_Bps / 1e9);
	} else {
		cli_table_kv(tab, "bisection_GBps", "%s", "not computed");
	}
	cli_table_kv(tab, "bisection_cut", "%s", info->bisection_cut);
	if (cli_dim_links(t, p, per, sizeof per))
		cli_table_kv(tab, "links_per_dimension", "%s", per);
	cli_table_kv(tab, "routing", "%s", info->routing);
	cli_table_kv(tab, "ring_order", "%s", info->ring_order);
}

int cmd_topo(int argc, char **argv, struct pm_err *err)
{
	struct cli_net_opts net = {0};
	const char *format = "table", *pos[1];
	int help = 0, npos, n, rc;
	struct cli_opt opts[16];
	enum cli_format fmt;
	struct pm_params p;
	struct pm_topo *t = NULL;
	struct pm_topo_info info;

	cli_net_opt_rows(&net, opts);
	n = 5;	/* of the shared rows: topo, link-bw, link-lat, dim-bw, dim-lat */
	const struct cli_opt rows[] = {
		cli_format_opt(&format),
		{"help", NULL, "show this help", NULL, &help},
	};
	n = cli_opt_add(opts, n, rows, (int)(sizeof rows / sizeof rows[0]));
	if (cli_parse("topo", argc, argv, opts, n, pos, &npos, 0, err))
		return PM_EINPUT;
	if (help) {
		fprintf(cli_out(), "usage: perfmodel topo --topo SPEC [--link-bw BW] [--link-lat T] [--dim-bw LIST] [--dim-lat LIST] [--format F]\n\n"
		       "Describes a network: endpoints, switches, directed links, degree, diameter,\n"
		       "bisection bandwidth, how routes are chosen and the rank order of rings.\n\n"
		       "Examples:\n  perfmodel topo --topo torus:4x4\n"
		       "  perfmodel topo --topo torus:4x4x4 --dim-bw 200GB/s,25GB/s,25GB/s --dim-lat 72ns,402ns,402ns\n"
		       "    (Rashidi et al. 2021's L x V x H platform: a fast package ring in X, slower rings in Y and Z)\n\nOptions:\n");
		cli_print_opts(cli_out(), opts, n);
		return 0;
	}
	if (!net.topo)
		return pm_fail(err, PM_EINPUT, "missing --topo (expected a network such as torus:8x8; see perfmodel list)");
	if (cli_parse_format(format, &fmt, err))
		return PM_EINPUT;
	if ((rc = cli_net_build(&net, &p, &t, err)))
		return rc;
	pm_topo_describe(t, &info);

	static const char *const cols[] = {"property", "value"};
	static const unsigned flags[] = {0, COL_AUTO};
	struct cli_table tab;
	cli_table_init(&tab, 2, cols, flags);
	describe_rows(&tab, t, &p, &info);
	rc = cli_table_write(cli_out(), &tab, fmt, err);
	cli_table_release(&tab);
	pm_topo_free(t);
	return rc;
}
