/* dispatch.c: the perfmodel command: dispatch to subcommands, top-level
 * help, and the one place errors become exit codes.  main.c calls it; the
 * fuzz harnesses (fuzz/) call it in-process. */
#include "cli/cli.h"
#include "search/pool.h"
#include "cli/common.h"
#include "model/text.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

static const struct cli_cmd commands[] = {
	{.name = "allreduce", .summary = "predict all-reduce time for every algorithm on a network", .run_coll = cmd_collective, .coll = PM_COLL_ALLREDUCE},
	{.name = "reducescatter", .summary = "predict reduce-scatter time (the first phase of the all-reduce algorithms that split)", .run_coll = cmd_collective, .coll = PM_COLL_REDUCESCATTER},
	{.name = "allgather", .summary = "predict all-gather time (their second phase)", .run_coll = cmd_collective, .coll = PM_COLL_ALLGATHER},
	{.name = "reduce", .summary = "predict reduce time (to one root)", .run_coll = cmd_collective, .coll = PM_COLL_REDUCE},
	{.name = "broadcast", .summary = "predict broadcast time (from one root)", .run_coll = cmd_collective, .coll = PM_COLL_BROADCAST},
	{.name = "alltoall", .summary = "predict all-to-all time (each rank a block to every other)", .run_coll = cmd_collective, .coll = PM_COLL_ALLTOALL},
	{.name = "best", .summary = "which algorithm of a collective is fastest at each size, and the crossover sizes", .run = cmd_best},
	{.name = "schedule", .summary = "show an algorithm's steps, transfers, per-node tables or trees (dot)", .run = cmd_schedule},
	{.name = "hier", .summary = "find the best hierarchical ring all-reduce of P processes on a machine", .run = cmd_hier},
	{.name = "fit", .summary = "fit alpha and beta to measured all-reduce or latency times", .run = cmd_fit},
	{.name = "train", .summary = "time a training iteration under gradient-merging policies (MG-WFBP)", .run = cmd_train},
	{.name = "plan", .summary = "the fastest parallel layout (TP, PP, DP, CP, EP) of a transformer on a machine", .run = cmd_plan},
	{.name = "sweep", .summary = "run a study (a grid of command lines) on every core or MPI rank into one table", .run = cmd_sweep},
	{.name = "models", .summary = "list the DNN profiles train can use", .run = cmd_models},
	{.name = "topo", .summary = "describe a network: endpoints, links, degree, diameter, bisection", .run = cmd_topo},
	{.name = "list", .summary = "list the algorithms and topology kinds", .run = cmd_list},
	{.name = "validate", .summary = "check the closed forms, contention evaluator and packet simulator against each other", .run = cmd_validate},
};
#define NCMDS (int)(sizeof commands / sizeof commands[0])

static int run(const struct cli_cmd *c, int argc, char **argv, struct pm_err *err)
{
	return c->run ? c->run(argc, argv, err) : c->run_coll(c->coll, argc, argv, err);
}

static int unknown_command(const char *name)
{
	const char *names[NCMDS];
	char msg[1200];

	for (int i = 0; i < NCMDS; i++)
		names[i] = commands[i].name;
	pm_unknown_text(msg, sizeof msg, "command", name, names, NCMDS, NULL);
	fprintf(stderr, "perfmodel: %s\n", msg);
	return 2;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: perfmodel COMMAND [OPTIONS]\n"
		"\n"
		"Predicts how long collective communication takes on a given network, from\n"
		"closed-form alpha-beta-gamma models and a per-step contention model, and\n"
		"shows the formula, parameters and units behind every number.\n"
		"\n"
		"Commands:\n");
	for (int i = 0; i < NCMDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"Examples:\n"
		"  perfmodel allreduce --topo torus:8x8 --size 64M\n"
		"  perfmodel allreduce --topo fattree:8,2 --size 32K:64M:x2 --format csv\n"
		"  perfmodel schedule --topo torus:3x3 --algo multitree --format dot > trees.dot\n"
		"  perfmodel hier --machine abci --procs 512 --size 128M\n"
		"  perfmodel fit data/measurements/osu_allreduce_8nodes.log --procs 8 --range 256K:1M\n"
		"  perfmodel train --profile resnet50 --topo torus:8x8 --algo ring\n"
		"  perfmodel plan --model llama3-70b --topo machine:dgx-h100:128 --global-batch 1024\n"
		"  perfmodel sweep data/studies/nccl-dgx-h100.yml --out nccl.csv\n"
		"  perfmodel topo --topo bigraph:4x8\n"
		"  perfmodel list\n"
		"\n"
		"%s"
		"\n"
		"Run 'perfmodel COMMAND --help' for a command's options.  Exit status: 0 on\n"
		"success, 2 for bad usage or input, 1 for an internal failure.\n",
		cli_units_help);
}

static _Thread_local FILE *out_stream;

FILE *cli_out(void)
{
	return out_stream ? out_stream : stdout;
}

int cli_run_cmd(int argc, char **argv, FILE *out, struct pm_err *err)
{
	/* GSL's error handler is process-wide: cli_run turned it off before
	 * any thread started (a program calling this directly does so too) */
	for (int i = 0; i < NCMDS; i++) {
		if (strcmp(commands[i].name, argv[0]))
			continue;
		FILE *was = out_stream;
		out_stream = out;
		pm_pool_nested(1);	/* the caller (a sweep) spreads its runs over the cores */
		int rc = run(&commands[i], argc - 1, argv + 1, err);
		pm_pool_nested(0);
		out_stream = was;
		return rc;
	}
	const char *names[NCMDS];
	for (int i = 0; i < NCMDS; i++)
		names[i] = commands[i].name;
	pm_unknown_text(err->msg, sizeof err->msg, "command", argv[0], names, NCMDS, NULL);
	return PM_EINPUT;
}

int cli_run(int argc, char **argv)
{
	struct pm_err err = {""};

	gsl_set_error_handler_off();	/* GSL's default handler aborts */
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc >= 3 && strcmp(argv[1], "help") == 0) {
			char *help[] = {argv[2], "--help"};
			for (int i = 0; i < NCMDS; i++)
				if (strcmp(commands[i].name, argv[2]) == 0)
					return run(&commands[i], 1, help + 1, &err);
			return unknown_command(argv[2]);
		}
		usage(argc < 2 ? stderr : stdout);
		if (argc < 2)
			fprintf(stderr, "perfmodel: missing command (expected one of the commands above, such as allreduce)\n");
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("perfmodel 0.1.0\n");
		return 0;
	}
	for (int i = 0; i < NCMDS; i++) {
		if (strcmp(commands[i].name, argv[1]) == 0) {
			int rc = run(&commands[i], argc - 2, argv + 2, &err);
			if (rc != 0)
				fprintf(stderr, "perfmodel: %s\n", err.msg);
			/* not applicable is the input's doing too: exit 2 */
			return rc == PM_EINPUT || rc == PM_ENOTAPPLICABLE ? 2 : rc ? 1 : 0;
		}
	}
	return unknown_command(argv[1]);
}
