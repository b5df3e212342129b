/* cli.h: the perfmodel command.  Each subcommand is one file with one
 * entry point; main.c holds the table of them.  Only this directory prints
 * or exits: a subcommand returns 0, 1 (internal failure) or 2 (bad input)
 * and main turns an error into "perfmodel: <message>" on stderr. */
#ifndef PM_CLI_H
#define PM_CLI_H

#include "model/coll.h"
#include "model/err.h"

#include <stdio.h>

/* A command: its function, or for the collective commands the one
 * function of them all and the collective the row names. */
struct cli_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv, struct pm_err *err);
	int (*run_coll)(enum pm_coll c, int argc, char **argv, struct pm_err *err);
	enum pm_coll coll;
};

/* The whole command on argv (argv[0] the program name): prints, returns
 * the exit status (0, 1 internal failure, 2 bad usage or input). */
int cli_run(int argc, char **argv);

/* One command in-process (argv[0] the command's name, as "allreduce"),
 * its output to out, nothing to stderr: the status (PM_OK, PM_EINPUT,
 * PM_ENOTAPPLICABLE, PM_EINTERNAL) and err's message.  What a sweep runs
 * each point with; safe from several threads at once once GSL's abort on
 * error is off (gsl_set_error_handler_off, as cli_run does first). */
int cli_run_cmd(int argc, char **argv, FILE *out, struct pm_err *err);

/* The stream the commands write their results to: stdout, or on this
 * thread the one cli_run_cmd was given. */
FILE *cli_out(void);

/* allreduce, reducescatter, allgather, reduce, broadcast, alltoall */
int cmd_collective(enum pm_coll c, int argc, char **argv, struct pm_err *err);
int cmd_best(int argc, char **argv, struct pm_err *err);
int cmd_validate(int argc, char **argv, struct pm_err *err);
int cmd_list(int argc, char **argv, struct pm_err *err);
int cmd_topo(int argc, char **argv, struct pm_err *err);
int cmd_schedule(int argc, char **argv, struct pm_err *err);
int cmd_hier(int argc, char **argv, struct pm_err *err);
int cmd_fit(int argc, char **argv, struct pm_err *err);
int cmd_train(int argc, char **argv, struct pm_err *err);
int cmd_plan(int argc, char **argv, struct pm_err *err);
int cmd_sweep(int argc, char **argv, struct pm_err *err);
int cmd_models(int argc, char **argv, struct pm_err *err);

#endif
