/* sweep_summary.c: joining shards and summarising a sweep's table
 * (sweep.h). */
#include "cli/sweep.h"
#include "cli/file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct merged {
	const struct sweep_table *t;
	char ***rows;
	long n;
};

/* Stable order by point: sort (point, arrival) pairs. */
struct keyed {
	long point, at;
	char **row;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->point != y->point)
		return (x->point > y->point) - (x->point < y->point);
	return (x->at > y->at) - (x->at < y->at);
}

static int write_merged(FILE *f, const void *ctx)
{
	const struct merged *m = ctx;
	sweep_write_row(f, m->t->cols, m->t->ncols, NULL);
	for (long r = 0; r < m->n; r++)
		sweep_write_row(f, m->rows[r], m->t->ncols, NULL);
	return ferror(f) ? -1 : 0;
}

static int merge(const char *out, char *const *paths, int n, int ninputs, struct pm_err *err);

int sweep_merge(const char *out, char *const *paths, int n, struct pm_err *err)
{
	return merge(out, paths, n, n, err);
}

int sweep_sort_file(const char *path, struct pm_err *err)
{
	char *paths[1] = {(char *)path};
	return merge(path, paths, 1, 0, err);	/* rewritten over itself */
}

/* Read n tables, check them alike, write their rows in point order to out
 * (refusing an out that is one of the first ninputs paths). */
static int merge(const char *out, char *const *paths, int n, int ninputs, struct pm_err *err)
{
	struct sweep_table *t = calloc((size_t)n + 1, sizeof *t);
	struct keyed *all = NULL;
	long total = 0, k = 0;
	int rc = PM_OK;

	if (!t)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int i = 0; i < n && !rc; i++) {
		if ((rc = sweep_table_read(paths[i], &t[i], err)))
			break;
		if (sweep_table_col(&t[i], "point") != 0 || sweep_table_col(&t[i], "error") != t[i].ncols - 1)
			rc = pm_fail(err, PM_EINPUT, "'%s' is not a sweep's output (expected the columns point, key, ..., error)", paths[i]);
		else if (i && t[i].ncols != t[0].ncols)
			rc = pm_fail(err, PM_EINPUT, "'%s' has %d columns where '%s' has %d (expected shards of one study)", paths[i],
				     t[i].ncols, paths[0], t[0].ncols);
		for (int c = 0; !rc && i && c < t[i].ncols; c++)
			if (strcmp(t[i].cols[c], t[0].cols[c]))
				rc = pm_fail(err, PM_EINPUT, "'%s' column %d is '%s' where '%s' has '%s' (expected shards of one study)",
					     paths[i], c + 1, t[i].cols[c], paths[0], t[0].cols[c]);
		total += t[i].nrows;
	}
	if (!rc && !(all = malloc(sizeof *all * (size_t)(total + 1))))
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int i = 0; !rc && i < n; i++)
		for (long r = 0; r < t[i].nrows; r++, k++)
			all[k] = (struct keyed){atol(t[i].rows[r][0]), k, t[i].rows[r]};
	if (!rc) {
		qsort(all, (size_t)total, sizeof *all, cmp_keyed);
		char ***rows = malloc(sizeof *rows * (size_t)(total + 1));
		if (!rows)
			rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		for (long r = 0; rows && r < total; r++)
			rows[r] = all[r].row;
		struct merged m = {&t[0], rows, total};
		if (rows)
			rc = cli_write_file(out, "merged sweep", (const char *const *)paths, ninputs,
					    write_merged, &m, err);
		free(rows);
	}
	free(all);
	for (int i = 0; i < n; i++)
		sweep_table_release(&t[i]);
	free(t);
	return rc;
}

/* ---- summaries ---- */

static double num(const char *s)
{
	char *end;
	double x = strtod(s, &end);
	return end != s && isfinite(x) ? x : NAN;
}

/* The best row of each group of the by-axes: least minimize. */
static int best_rows(const struct study *st, const struct sweep_table *t, FILE *f, struct pm_err *err)
{
	int mc = sweep_table_col(t, st->minimize), bc[STUDY_MAX_AXES];
	long *best = NULL;
	char **group = NULL;
	long ng = 0;

	if (mc < 0)
		return pm_fail(err, PM_EINPUT, "study '%s': best.minimize '%s' is not a column of the table", st->path, st->minimize);
	for (int k = 0; k < st->nby; k++)
		bc[k] = sweep_table_col(t, st->best_by[k]);
	best = malloc(sizeof *best * (size_t)(t->nrows + 1));
	group = malloc(sizeof *group * (size_t)(t->nrows + 1));
	if (!best || !group) {
		free(best), free(group);
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	for (long r = 0; r < t->nrows; r++) {
		char g[2048];
		size_t len = 0;
		g[0] = '\0';
		for (int k = 0; k < st->nby; k++)
			len += (size_t)snprintf(g + len, len < sizeof g ? sizeof g - len : 0, "%s%s", k ? ";" : "", t->rows[r][bc[k]]);
		double v = num(t->rows[r][mc]);
		if (!isfinite(v))
			continue;
		long j = 0;
		while (j < ng && strcmp(group[j], g))
			j++;
		if (j == ng) {
			group[ng] = strdup(g);
			best[ng++] = r;
		} else if (v < num(t->rows[best[j]][mc])) {
			best[j] = r;
		}
	}
	for (long j = 0; j < ng; j++) {
		sweep_write_row(f, t->rows[best[j]], t->ncols, "best");
		free(group[j]);
	}
	free(best), free(group);
	return PM_OK;
}

/* Do rows r and q have the same values of the by-axes? */
static int same_group(const struct sweep_table *t, const int *bc, int nby, long r, long q)
{
	for (int k = 0; k < nby; k++)
		if (strcmp(t->rows[r][bc[k]], t->rows[q][bc[k]]))
			return 0;
	return 1;
}

/* Rows no other row of their group (the by-axes) beats on both y (the
 * time) and x (GPUs, or cost). */
static void pareto_rows(const struct sweep_table *t, const int *bc, int nby, int yc, int xc, const char *label, FILE *f)
{
	for (long r = 0; r < t->nrows; r++) {
		double x = num(t->rows[r][xc]), y = num(t->rows[r][yc]);
		int dominated = !isfinite(x) || !isfinite(y);
		for (long q = 0; q < t->nrows && !dominated; q++) {
			double qx = num(t->rows[q][xc]), qy = num(t->rows[q][yc]);
			dominated = same_group(t, bc, nby, r, q) && qx <= x && qy <= y && (qx < x || qy < y);
		}
		if (!dominated)
			sweep_write_row(f, t->rows[r], t->ncols, label);
	}
}

int sweep_summaries(const struct study *st, const struct sweep_table *t, FILE *f, struct pm_err *err)
{
	int rc;

	if (!st->nby && !st->pareto)
		return PM_OK;
	sweep_write_row(f, t->cols, t->ncols, "summary");
	if (st->nby && (rc = best_rows(st, t, f, err)))
		return rc;
	if (st->pareto) {
		int yc = sweep_table_col(t, st->pareto), gc = sweep_table_col(t, "gpus"), cc = sweep_table_col(t, "cost");
		if (yc < 0)
			return pm_fail(err, PM_EINPUT, "study '%s': pareto '%s' is not a column of the table", st->path, st->pareto);
		if (gc < 0)
			return pm_fail(err, PM_EINPUT, "study '%s': a Pareto table needs a topo axis (its GPU count)", st->path);
		int bc[STUDY_MAX_AXES];
		for (int k = 0; k < st->nby; k++)
			bc[k] = sweep_table_col(t, st->best_by[k]);
		pareto_rows(t, bc, st->nby, yc, gc, "pareto_gpus", f);
		if (cc >= 0)
			pareto_rows(t, bc, st->nby, yc, cc, "pareto_cost", f);
	}
	return ferror(f) ? pm_fail(err, PM_EINTERNAL, "could not write the summaries") : PM_OK;
}
