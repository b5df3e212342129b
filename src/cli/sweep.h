/* sweep.h: running a study (study.h): every point through the command's
 * own code path (cli_run_cmd), on threads or MPI ranks or a shard of them,
 * one CSV row per result row keyed by its point, resumable, with
 * summaries.  It lives in cli/ because a point is a command line: the
 * sweep adds no way of pricing of its own. */
#ifndef PM_SWEEP_H
#define PM_SWEEP_H

#include "cli/study.h"
#include "model/err.h"

#include <stdio.h>

/* A CSV table in memory. */
struct sweep_table {
	int ncols;
	char **cols;
	long nrows;
	char ***rows;		/* nrows x ncols cells ("" where a row had none) */
};
void sweep_table_release(struct sweep_table *t);
/* Parse CSV text (header first); comment lines (#) are skipped. */
int sweep_table_parse(const char *text, size_t len, struct sweep_table *t, struct pm_err *err);
int sweep_table_read(const char *path, struct sweep_table *t, struct pm_err *err);
int sweep_table_col(const struct sweep_table *t, const char *name);

/* One point's outcome. */
struct sweep_result {
	int done, status;
	char *error;			/* the command's message when status != 0 */
	struct sweep_table out;		/* the command's CSV */
	char *raw;			/* the command's CSV as printed, until parsed or formatted */
	size_t rawlen;
	char *text;			/* or, once formatted, the point's rows as written */
	size_t len;
};

struct sweep {
	const struct study *st;
	long n;				/* points */
	unsigned char *skip;		/* 1: not run here (another shard, already in the output) */
	struct sweep_result *res;
	double *gpus;			/* per value of the topo axis (NaN unknown), or NULL */
	int topo_axis;
	/* the columns written: point, key, the axes, [gpus], the command's (or
	 * the study's outputs), [cost], error */
	int ncmd;
	char **cmd_cols;
	char *raw_header;		/* the first success's header line as printed */
	int fast;			/* rows are the command's lines behind the key (no
					 * outputs filter, no cost): no parsing */
	long done, todo;
};

/* Check the study before any work: the command takes tables, every axis
 * and fixed option is one of its options, the values of the axes whose
 * kind is known parse (networks, sizes, counts, models).  Fills the GPU
 * count of every network value. */
int sweep_check(const struct study *st, struct sweep *w, struct pm_err *err);

struct sweep_opts {
	int jobs;			/* threads */
	int shard, nshards;		/* run points with index % nshards == shard */
	const char *out;		/* NULL: stdout, no resume */
	int progress;			/* a progress line on stderr */
	int rank;			/* set by sweep_mpi: this process's MPI rank (0 writes) */
};

/* Run the points not skipped and write the table to o->out (appending
 * after what is there, resuming) or stdout. */
int sweep_run(struct sweep *w, const struct sweep_opts *o, struct pm_err *err);
void sweep_release(struct sweep *w);

/* Run one point (index i) into r (its CSV text in r->raw): what every
 * runner calls; sweep_parse turns the text into r->out. */
void sweep_point(const struct study *st, long i, struct sweep_result *r);
int sweep_parse(struct sweep_result *r);

/* Format result r of point i as the rows written (r->text, r->len) and
 * free what it was made from; columns must be set.  0, or -1 out of
 * memory. */
int sweep_format(const struct sweep *w, long i, struct sweep_result *r);
char *sweep_header_text(const struct sweep *w, size_t *len);
/* The columns of the written table from the first successful result. */
int sweep_set_columns(struct sweep *w, struct pm_err *err);

/* One CSV row to f (lead, when not NULL, as a first cell), quoted where a
 * cell holds a comma, a quote, a line break or a space at either end: the
 * one rule of every table a sweep writes. */
void sweep_write_row(FILE *f, char *const *cells, int n, const char *lead);

/* Put a sweep's output file in point order (rows of one point kept in
 * their order), rewritten whole: what MPI ranks wrote as they finished. */
int sweep_sort_file(const char *path, struct pm_err *err);

/* Join shard files (each with the same header) into one table ordered by
 * point, to out. */
int sweep_merge(const char *out, char *const *paths, int n, struct pm_err *err);

/* The summaries of a written table: the best row per group (study best:)
 * and the Pareto table (study pareto:), to f as CSV. */
int sweep_summaries(const struct study *st, const struct sweep_table *t, FILE *f, struct pm_err *err);

/* The pieces of sweep_run the MPI runner shares: resume from o->out
 * (1 when it held a table, 0 when new, -status on error), the points this
 * run owes in order, one point's rows appended to f (its result freed),
 * and the header (when new: columns from the first success) and the rows
 * of points order[0..norder) appended to f. */
int sweep_resume(struct sweep *w, const char *path, struct pm_err *err);
long *sweep_order(const struct sweep *w, const struct sweep_opts *o, long *n);
int sweep_write_point(struct sweep *w, long i, FILE *f, struct pm_err *err);
int sweep_write_all_to(struct sweep *w, FILE *f, const long *order, long norder, int had, struct pm_err *err);

/* Draw column y against axis x, one curve per value of axis series (NULL:
 * one curve), each point the least y over the other axes (most: the
 * largest) (sweep_plot.c). */
int sweep_plot(const struct study *st, const struct sweep_table *t, const char *path, const char *x, const char *y,
	       const char *series, int most, struct pm_err *err);

/* MPI (sweep_mpi.c when built with it): the points over the ranks with a
 * shared counter, gathered in order at rank 0, which writes.  Returns -1
 * when not started under mpirun (then the caller runs alone). */
int sweep_mpi(struct sweep *w, struct sweep_opts *o, struct pm_err *err);

#endif
