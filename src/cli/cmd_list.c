/* cmd_list.c: perfmodel list, generated from the algorithm and topology
 * tables. */
#include "cli/cli.h"
#include "cli/args.h"
#include "model/algo.h"
#include "model/machine.h"
#include "model/preset.h"
#include "model/text.h"
#include "model/topo.h"

#include <stdlib.h>

#include <stdio.h>
#include <string.h>

/* One algorithm: its name and argument, what it needs, the collectives
 * it implements, its closed form and its source. */
static void print_algo(const struct pm_algo *a)
{
	char name[64], needs[256], colls[160] = "";

	snprintf(name, sizeof name, "%s%s%s", a->name, a->arg_syntax ? "[:" : "", a->arg_syntax ? a->arg_syntax : "");
	if (a->arg_syntax)
		strncat(name, "]", sizeof name - strlen(name) - 1);
	fprintf(cli_out(), "  %-18s %s\n", name, a->summary);
	if (a->arg_help)
		fprintf(cli_out(), "  %-18s   argument: %s\n", "", a->arg_help);
	if (pm_algo_needs(a, needs, sizeof needs))
		fprintf(cli_out(), "  %-18s   needs: %s\n", "", needs);
	for (int c = 0; c < PM_NCOLL; c++)
		if (pm_algo_does(a, (enum pm_coll)c)) {
			strncat(colls, colls[0] ? ", " : "", sizeof colls - strlen(colls) - 1);
			strncat(colls, pm_coll_info((enum pm_coll)c)->title, sizeof colls - strlen(colls) - 1);
		}
	fprintf(cli_out(), "  %-18s   collectives: %s\n", "", colls);
	fprintf(cli_out(), "  %-18s   T = %s%s\n", "", a->formula,
	       a->phases != PM_PHASES_NONE && !(a->flags & PM_ALGO_PRICES_PARTS) ? "  (all-reduce; a phase: half of a, d and b terms)" : "");
	fprintf(cli_out(), "  %-18s   from: %s\n", "", a->reference);
}

static void print_machines(void)
{
	char **names;
	int n;

	if (pm_preset_names("machines", &names, &n) != PM_OK)
		return;
	fprintf(cli_out(), "\nMachines (perfmodel hier --machine NAME; files in data/machines):\n");
	for (int i = 0; i < n; i++) {
		struct pm_machine m;
		struct pm_err e;
		if (pm_machine_load(names[i], &m, &e) == PM_OK)
			fprintf(cli_out(), "  %-18s %s\n", names[i], m.description);
	}
	pm_free_strings(names, n);
}

static void print_references(void)
{
	fprintf(cli_out(), "\nReferences (the short names above):\n"
	       "  Huang et al. 2021         J. Huang, P. Majumder, S. Kim, A. Muzahid, K. H. Yum, E. J. Kim, \"Communication\n"
	       "                            Algorithm-Architecture Co-Design for Distributed Deep Learning\", ISCA 2021\n"
	       "  the MULTITREE supplement  the same authors, \"A MULTITREE Example and Comparison with Double Binary Tree\"\n"
	       "  Ueno & Yokota 2019        Y. Ueno, R. Yokota, \"Exhaustive Study of Hierarchical AllReduce Patterns for\n"
	       "                            Large Messages Between GPUs\", CCGrid 2019\n"
	       "  Shi et al. (MG-WFBP)      S. Shi, X. Chu, B. Li, \"MG-WFBP: Merging Gradients Wisely for Efficient\n"
	       "                            Communication in Distributed Deep Learning\" (journal version of IEEE INFOCOM 2019)\n"
	       "  Rashidi et al. 2021       S. Rashidi, M. Denton, S. Sridharan, S. Srinivasan, A. Suresh, J. Nie, T. Krishna,\n"
	       "                            \"Enabling Compute-Communication Overlap in Distributed Deep Learning Training\n"
	       "                            Platforms\", ISCA 2021 (ACE)\n"
	       "  Others are cited in full where they are used (docs/model.md).\n");
}

int cmd_list(int argc, char **argv, struct pm_err *err)
{
	int help = 0, npos, n;
	const char *pos[1];
	const struct cli_opt opts[] = {
		{"help", NULL, "show this help", NULL, &help},
	};

	if (cli_parse("list", argc, argv, opts, 1, pos, &npos, 0, err))
		return PM_EINPUT;
	if (help) {
		fprintf(cli_out(), "usage: perfmodel list\n\nLists the collective algorithms (and which collectives each implements) and the topology kinds, with their\nrestrictions and closed forms.\n\nOptions:\n");
		cli_print_opts(cli_out(), opts, 1);
		return 0;
	}
	const struct pm_algo *const *a = pm_algos(&n);
	fprintf(cli_out(), "Algorithms (a = alpha, b = beta = 1/link bandwidth, g = gamma, d = link latency, w(m) = wire bytes):\n");
	for (int i = 0; i < n; i++)
		print_algo(a[i]);
	const struct pm_topo_kind *const *k = pm_topo_kinds(&n);
	fprintf(cli_out(), "\nTopology kinds:\n");
	for (int i = 0; i < n; i++)
		fprintf(cli_out(), "  %-18s %s\n", k[i]->syntax, k[i]->summary);
	print_machines();
	print_references();
	return 0;
}
