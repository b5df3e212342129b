/* study.h: a study file (perfmodel sweep): a grid of command lines.
 *
 * YAML, read with libyaml: the command every point runs, options every
 * point gets, the axes (an option and its values; every combination is a
 * point, the last axis varying fastest), the columns to keep, and the
 * summaries wanted.  docs/cli.md, "perfmodel sweep", gives the format.
 */
#ifndef PM_STUDY_H
#define PM_STUDY_H

#include "model/err.h"

#include <stddef.h>

#define STUDY_MAX_AXES 16
#define STUDY_MAX_FIXED 32
#define STUDY_MAX_COLS 64
/* Grids past this many points are refused before any work. */
#define STUDY_MAX_POINTS 1e7

struct study_axis {
	char *name;		/* the option, without -- */
	char *opt;		/* with it */
	int n;
	char **values;
	int line;		/* where the study gives it */
};

struct study {
	char path[512];
	char *command;
	int nfixed;
	char *fixed_opt[STUDY_MAX_FIXED], *fixed_value[STUDY_MAX_FIXED];	/* --name; value NULL: a flag */
	int naxes;
	struct study_axis axis[STUDY_MAX_AXES];
	int noutputs;
	char *outputs[STUDY_MAX_COLS];	/* columns to keep; none: all */
	int nby;
	char *best_by[STUDY_MAX_AXES];	/* best: one row per group of these axes */
	char *minimize;			/* ... with the least of this column */
	char *pareto;			/* the time column of the Pareto table; NULL none */
	double cost_per_gpu_hour;	/* 0: no cost column */
	double npoints;
};

int study_load(const char *path, struct study *s, struct pm_err *err);
void study_release(struct study *s);

/* The value index of every axis at point i (the last axis fastest). */
void study_point(const struct study *s, long i, int *idx);
/* "topo=torus:4x4;size=1M": the point's key, into buf. */
void study_key(const struct study *s, long i, char *buf, size_t size);
/* The point's command line: argv[0] the command, then the fixed options,
 * the axes' options, --format csv; argv[argc] = NULL.  Pointers into s;
 * argv holds at least STUDY_MAX_ARGV entries. */
#define STUDY_MAX_ARGV (4 + 2 * (STUDY_MAX_FIXED + STUDY_MAX_AXES))
int study_argv(const struct study *s, long i, char **argv);

/* The axis of that name, or -1. */
int study_axis_find(const struct study *s, const char *name);

#endif
