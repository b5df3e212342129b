/* sweep_plot.c: a sweep's table drawn (perfmodel sweep --plot): a column
 * against an axis, one curve per value of a second axis, each point the
 * best (least, or with --plot-best most the largest) value over the other axes, through the project's plotting
 * (cli/plot.h, PLplot). */
#include "cli/plot.h"
#include "cli/sweep.h"
#include "model/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_MAX_SERIES 12

/* The axis values as numbers: sizes (1M), counts, or positions when they
 * are neither.  1: sizes (a log axis), 2: counts on a log axis, 0 positions. */
static int x_values(const struct study_axis *a, double *x)
{
	int sizes = 1, nums = 1;
	for (int j = 0; j < a->n; j++) {
		struct pm_err e;
		char *end;
		double v = strtod(a->values[j], &end);
		nums &= end != a->values[j] && !*end && v > 0;
		if (pm_parse_size(a->values[j], &x[j], &e))
			sizes = 0;
	}
	if (!sizes && !nums)
		for (int j = 0; j < a->n; j++)
			x[j] = j + 1;
	else if (nums && !sizes)
		for (int j = 0; j < a->n; j++)
			x[j] = strtod(a->values[j], NULL);
	return sizes ? 1 : nums ? 2 : 0;
}

static int value_index(const struct study_axis *a, const char *v)
{
	for (int j = 0; j < a->n; j++)
		if (!strcmp(a->values[j], v))
			return j;
	return -1;
}

int sweep_plot(const struct study *st, const struct sweep_table *t, const char *path, const char *xname,
	       const char *yname, const char *sname, int most, struct pm_err *err)
{
	int xa = study_axis_find(st, xname), sa = sname ? study_axis_find(st, sname) : -1;
	int yc = sweep_table_col(t, yname), xc = sweep_table_col(t, xname), sc = sname ? sweep_table_col(t, sname) : -1;

	if (xa < 0 || xc < 0)
		return pm_fail(err, PM_EINPUT, "--plot-x '%s' is not an axis of the study", xname);
	if (yc < 0)
		return pm_fail(err, PM_EINPUT, "--plot-y '%s' is not a column of the table", yname);
	if (sname && (sa < 0 || sc < 0 || sa == xa))
		return pm_fail(err, PM_EINPUT, "--plot-series '%s' is not another axis of the study", sname);
	const struct study_axis *ax = &st->axis[xa];
	int ns = sa >= 0 ? st->axis[sa].n : 1, np = ax->n;
	if (ns > PLOT_MAX_SERIES)
		return pm_fail(err, PM_EINPUT, "--plot-series '%s' has %d values (at most %d curves)", sname, ns, PLOT_MAX_SERIES);
	double *x = malloc(sizeof *x * (size_t)np), *y = malloc(sizeof *y * (size_t)(np * ns));
	const char **names = calloc((size_t)ns, sizeof *names);
	int rc;
	if (!x || !y || !names) {
		free(x), free(y), free(names);
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	int logx = x_values(ax, x);
	for (int k = 0; k < np * ns; k++)
		y[k] = NAN;
	for (long r = 0; r < t->nrows; r++) {
		int j = value_index(ax, t->rows[r][xc]), s = sa >= 0 ? value_index(&st->axis[sa], t->rows[r][sc]) : 0;
		char *end;
		double v = strtod(t->rows[r][yc], &end);
		if (j < 0 || s < 0 || end == t->rows[r][yc] || !isfinite(v))
			continue;
		if (isnan(y[s * np + j]) || (most ? v > y[s * np + j] : v < y[s * np + j]))	/* the best over the other axes */
			y[s * np + j] = v;
	}
	for (int s = 0; s < ns; s++)
		names[s] = sa >= 0 ? st->axis[sa].values[s] : yname;
	char title[256];
	snprintf(title, sizeof title, "%s: %s against %s (the %s over the other axes)", st->command, yname, xname,
		 most ? "most" : "least");
	struct cli_plot pl = {path, title, xname, yname, logx, ns, np, names, x, y, NULL, NULL, NULL};
	rc = cli_plot_write(&pl, err);
	free(x), free(y), free(names);
	return rc;
}
