/* sweep_table.c: CSV tables in memory for sweeps (sweep.h), read with
 * libcsv from text or a file. */
#include "cli/sweep.h"
#include "model/csvread.h"
#include "model/grow.h"
#include "model/text.h"

#include <csv.h>
#include <stdlib.h>
#include <string.h>

struct parse {
	struct sweep_table *t;
	char **cell;
	int ncell;
	size_t capcell, caprows;
	int header_done, oom;
};

static void on_field(void *s, size_t len, void *data)
{
	struct parse *p = data;
	char *v = strndup(s, len);

	if (!v || pm_grow(&p->cell, &p->capcell, (size_t)p->ncell + 1, sizeof *p->cell, 16)) {
		free(v);
		p->oom = 1;
		return;
	}
	p->cell[p->ncell++] = v;
}

static void drop_cells(struct parse *p, int from)
{
	for (int i = from; i < p->ncell; i++)
		free(p->cell[i]);
	p->ncell = 0;
}

/* The parsed cells as a row of the table's width ("" for a missing cell). */
static void keep_row(struct parse *p)
{
	struct sweep_table *t = p->t;
	char **row = calloc((size_t)t->ncols + 1, sizeof *row);

	if (!row || pm_grow(&t->rows, &p->caprows, (size_t)t->nrows + 1, sizeof *t->rows, 64)) {
		free(row);
		p->oom = 1;
		drop_cells(p, 0);
		return;
	}
	for (int i = 0; i < t->ncols; i++)
		row[i] = i < p->ncell ? p->cell[i] : strdup("");
	drop_cells(p, t->ncols);
	t->rows[t->nrows++] = row;
}

static void on_row(int c, void *data)
{
	struct parse *p = data;
	(void)c;
	if (p->oom || (p->ncell == 1 && (!p->cell[0][0] || p->cell[0][0] == '#')))
		drop_cells(p, 0);	/* a blank line, a comment */
	else if (!p->header_done) {
		p->t->cols = p->cell, p->t->ncols = p->ncell;
		p->cell = NULL, p->ncell = 0, p->capcell = 0;
		p->header_done = 1;
	} else if (p->cell[0][0] == '#')
		drop_cells(p, 0);	/* a comment line that held a comma */
	else
		keep_row(p);
}

int sweep_table_parse(const char *text, size_t len, struct sweep_table *t, struct pm_err *err)
{
	struct csv_parser cp;
	struct parse p = {.t = t};

	memset(t, 0, sizeof *t);
	if (csv_init(&cp, 0))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	if (csv_parse(&cp, text, len, on_field, on_row, &p) != len) {
		csv_free(&cp);
		free(p.cell);
		return pm_fail(err, PM_EINPUT, "malformed CSV (%s)", csv_strerror(csv_error(&cp)));
	}
	csv_fini(&cp, on_field, on_row, &p);
	csv_free(&cp);
	for (int i = 0; i < p.ncell; i++)
		free(p.cell[i]);
	free(p.cell);
	if (p.oom)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	return PM_OK;
}

int sweep_table_read(const char *path, struct sweep_table *t, struct pm_err *err)
{
	size_t len;
	char *buf;
	int rc;

	memset(t, 0, sizeof *t);
	if (!(buf = pm_input_read(path, "sweep table", &len, err)))
		return PM_EINPUT;
	rc = sweep_table_parse(buf, len, t, err);
	free(buf);
	if (rc == PM_EINPUT)
		return pm_fail(err, PM_EINPUT, "sweep table '%s': %s", path, err->msg);
	return rc;
}

int sweep_table_col(const struct sweep_table *t, const char *name)
{
	for (int i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i], name) == 0)
			return i;
	return -1;
}

void sweep_table_release(struct sweep_table *t)
{
	for (long r = 0; r < t->nrows; r++)
		pm_free_strings(t->rows[r], t->ncols);
	free(t->rows);
	pm_free_strings(t->cols, t->ncols);
	memset(t, 0, sizeof *t);
}
