/* args.h: table-driven command-line options.  Each command declares its
 * options once; parsing, --help text and "did you mean" all read it. */
#ifndef PM_ARGS_H
#define PM_ARGS_H

#include <stdio.h>

#include "model/err.h"

struct cli_opt {
	const char *name;	/* without the leading -- */
	const char *metavar;	/* NULL for a flag */
	const char *help;
	const char **value;	/* where a value goes */
	int *flag;		/* where a flag goes */
};

/* Append a command's rows to its option table (which holds n and has
 * room for nrows more); returns the new count.  Commands write their
 * rows as tables and add the shared ones (network, simulator, --format)
 * by the functions that own them. */
int cli_opt_add(struct cli_opt *opts, int n, const struct cli_opt *rows, int nrows);

/* The --format option row the commands share (the value into *value). */
struct cli_opt cli_format_opt(const char **value);

/* Parse argv[0..argc) against opts (count n).  Non-option words go to
 * pos[] (at most maxpos).  --name value and --name=value both work. */
int cli_parse(const char *cmd, int argc, char **argv, const struct cli_opt *opts,
	      int n, const char **pos, int *npos, int maxpos,
	      struct pm_err *err);

/* An optional integer option's value: *v unchanged when s is NULL (not
 * given), else s as pm_parse_int reads it, in [lo, hi]. */
int cli_opt_long(const char *s, long lo, long hi, const char *what, long *v, struct pm_err *err);

/* Print the options table for --help. */
void cli_print_opts(FILE *f, const struct cli_opt *opts, int n);

/* A command's --help: its text (the usage line, what the command does,
 * examples, ending in "Options:"), then its option table. */
void cli_help(FILE *f, const char *text, const struct cli_opt *opts, int n);

#endif
