/* cmd_validate.c: perfmodel validate, the evaluators checked against each
 * other over a matrix of networks, algorithms and sizes. */
#include "cli/cli.h"
#include "cli/common.h"
#include "model/units.h"
#include "search/pool.h"
#include "search/validate.h"

#include <stdio.h>
#include <string.h>

enum { V_TOPO, V_ALGO, V_SIZE, V_SIZE_B, V_CLOSED, V_CONT, V_SIM, V_DATAFLOW, V_SIM_CONT,
       V_CHECK, V_REF, V_VERDICT, V_NOTE, NV };
static const char *const cols[NV] = {"topology", "algo", "size", "size_B", "closed_us",
				     "contention_us", "sim_us", "dataflow_us", "sim_over_contention",
				     "check", "check_us", "verdict", "note"};
static const unsigned flags[NV] = {0, 0, COL_TABLE, COL_DATA | COL_NUM, COL_NUM, COL_NUM, COL_NUM,
				   COL_NUM, COL_NUM, 0, COL_NUM, 0, 0};

/* --help: usage, what the command does, examples (cli_help adds the options) */
static const char help_text[] =
	"usage: perfmodel validate [--quick] [--list] [--format F]\n\n"
	"The evaluators checked against each other: every network x algorithm x size\n"
	"of a fixed matrix priced by the closed form, the contention evaluator and the\n"
	"router-level packet simulator (barrier lockstep 'sim' and 'dataflow'; the link\n"
	"simulator where a switch reduces or multicasts, which routers do not), with\n"
	"Huang et al. (ISCA 2021) Table III parameters, and one check per row:\n"
	"  exact  every step's transfers cross one link each, no link carries two and\n"
	"         no rank receives more than its ports: sim = contention + per step the\n"
	"         router's fixed cost (injection, ejection, two router pipelines: 6 ns);\n"
	"  bound  otherwise sim >= sum over steps of (the step's slowest link: its bytes\n"
	"         at its rate, + the shortest link latency), and dataflow >= the busiest\n"
	"         link's bytes in the run at the fastest link's rate.\n"
	"docs/validation/09-validate.md derives both.  Exit status 1 when a check fails\n"
	"(the evaluators disagree where they must not: a bug).\n"
	"--quick: 2 networks x 4 algorithms x 2 sizes (seconds; the test suite runs it);\n"
	"the full matrix is 8 networks (one and two DGX H100 nodes among them) x every\n"
	"all-reduce algorithm of perfmodel list but NCCL's model, which prices a\n"
	"machine's NCCL (--list names them) x 3 sizes (minutes).\n\n"
	"Examples:\n"
	"  perfmodel validate --quick\n"
	"  perfmodel validate --list\n"
	"  perfmodel validate --format csv > validation.csv\n\n"
	"Options:\n";

/* --list: the matrix, without running it. */
static void print_matrix(int quick)
{
	const char *const *topos;
	const char *algos[PM_VALIDATE_MAX_ALGOS + 1];
	const double *sizes;
	char buf[32];

	pm_validate_matrix(quick, &topos, algos, &sizes);
	fprintf(cli_out(), "networks:");
	for (int i = 0; topos[i]; i++)
		fprintf(cli_out(), "%s %s", i ? "," : "", topos[i]);
	fprintf(cli_out(), "\nalgorithms:");
	for (int i = 0; algos[i]; i++)
		fprintf(cli_out(), "%s %s", i ? "," : "", algos[i]);
	fprintf(cli_out(), "\nsizes:");
	for (int i = 0; sizes[i] > 0; i++) {
		pm_fmt_size(sizes[i], buf, sizeof buf);
		fprintf(cli_out(), "%s %s", i ? "," : "", buf);
	}
	fprintf(cli_out(), "\n");
}

/* A priced row: the four evaluators' times and the check. */
static void put_check(struct cli_table *tab, const struct pm_validate_row *r)
{
	const double us[] = {r->closed_s * 1e6, r->contention_s * 1e6, r->sim_s * 1e6, r->dataflow_s * 1e6};

	cli_table_nums(tab, V_CLOSED, us, 4, "%.6g");
	cli_table_set(tab, V_SIM_CONT, "%.4f", r->sim_s / r->contention_s);
	cli_table_set(tab, V_CHECK, "%s", r->exact ? "exact" : r->links_sim ? "bound (link sim)" : "bound");
	cli_table_set(tab, V_REF, "%.6g", r->bound_s * 1e6);
	cli_table_set(tab, V_VERDICT, "%s", r->ok ? "ok" : "FAIL");
}

static void put_row(struct cli_table *tab, const struct pm_validate_row *r)
{
	cli_table_row(tab);
	cli_table_set(tab, V_TOPO, "%s", r->topo);
	cli_table_set(tab, V_ALGO, "%s", r->algo);
	cli_table_bytes(tab, V_SIZE, V_SIZE_B, r->size_B);
	if (r->note[0])
		cli_table_set(tab, V_NOTE, "%s", r->note);
	else
		put_check(tab, r);
}

int cmd_validate(int argc, char **argv, struct pm_err *err)
{
	const char *format = "table", *jobs = NULL;
	const char *pos[1];
	long nj = 0;
	int help = 0, quick = 0, list = 0, npos, n = 0, rc;
	enum cli_format fmt;
	struct pm_params p;
	struct pm_validate v = {0};
	struct cli_table tab = {0};

	const struct cli_opt opts[] = {
		{"quick", NULL, "the small matrix (2 networks x 4 algorithms x 2 sizes)", NULL, &quick},
		{"list", NULL, "name the matrix's networks, algorithms and sizes without running it", NULL, &list},
		cli_format_opt(&format),
		{"jobs", "N", "price the matrix's (network, algorithm) pairs on N threads, 1-16 (default: the cores online); the output is the same", &jobs, NULL},
		{"help", NULL, "show this help", NULL, &help},
	};
	n = (int)(sizeof opts / sizeof opts[0]);
	if (cli_parse("validate", argc, argv, opts, n, pos, &npos, 0, err))
		return PM_EINPUT;
	if (help) {
		cli_help(cli_out(), help_text, opts, n);
		return 0;
	}
	if (list) {
		print_matrix(quick);
		return 0;
	}
	if (cli_parse_format(format, &fmt, err) || (jobs && pm_parse_int(jobs, 1, 16, "--jobs", &nj, err)))
		return PM_EINPUT;
	pm_params_default(&p);
	p.flow = PM_FLOW_PACKET;
	struct cli_progress pr;
	cli_progress_start(&pr);
	cli_progress_step(&pr, "validate", 0, 1);
	rc = pm_validate_run(quick, &p, nj ? (int)nj : pm_pool_threads(), &v, err);
	cli_progress_end(&pr);
	if (rc)
		goto out;
	cli_table_init(&tab, NV, cols, flags);
	cli_table_meta(&tab, "perfmodel validate%s: closed form, contention evaluator and router simulator on one matrix; links 16 GB/s, 150 ns, packet:256/16, alpha = gamma = 0",
		       quick ? " --quick" : "");
	for (int i = 0; i < v.nrows; i++)
		put_row(&tab, &v.rows[i]);
	cli_table_meta(&tab, "%d checks failed", v.failed);
	if ((rc = cli_table_write(cli_out(), &tab, fmt, err)))
		goto out;
	if (v.failed)
		rc = pm_fail(err, PM_EINTERNAL, "%d of %d checks failed: the evaluators disagree where they must agree (see the FAIL rows)",
			     v.failed, v.nrows);
out:
	cli_table_release(&tab);
	pm_validate_release(&v);
	return rc;
}
