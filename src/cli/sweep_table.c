/* sweep_table.c: CSV tables in memory for sweeps (sweep.h), read with
 * libcsv from text or a file. */
#include "cli/sweep.h"
#include "model/csvread.h"

#include <csv.h>
#include <stdlib.h>
#include <string.h>

struct parse {
	struct sweep_table *t;
	char **cell;
	int ncell, capcell;
	long caprows;
	int header_done, oom;
};

static void on_field(void *s, size_t len, void *data)
{
	struct parse *p = data;
	if (p->ncell == p->capcell) {
		int cap = p->capcell ? 2 * p->capcell : 16;
		char **c = realloc(p->cell, sizeof *c * (size_t)cap);
		if (!c) {
			p->oom = 1;
			return;
		}
		p->cell = c, p->capcell = cap;
	}
	char *v = malloc(len + 1);
	if (!v) {
		p->oom = 1;
		return;
	}
	memcpy(v, s, len);
	v[len] = '\0';
	p->cell[p->ncell++] = v;
}

static void on_row(int c, void *data)
{
	struct parse *p = data;
	struct sweep_table *t = p->t;
	(void)c;
	if (p->oom || (p->ncell == 1 && (!p->cell[0][0] || p->cell[0][0] == '#'))) {
		for (int i = 0; i < p->ncell; i++)
			free(p->cell[i]);
		p->ncell = 0;
		return;
	}
	if (!p->header_done) {
		t->cols = p->cell, t->ncols = p->ncell;
		p->cell = NULL, p->ncell = p->capcell = 0;
		p->header_done = 1;
		return;
	}
	if (p->cell[0][0] == '#') {	/* a comment line that held a comma */
		for (int i = 0; i < p->ncell; i++)
			free(p->cell[i]);
		p->ncell = 0;
		return;
	}
	if (t->nrows == p->caprows) {
		long cap = p->caprows ? 2 * p->caprows : 64;
		char ***r = realloc(t->rows, sizeof *r * (size_t)cap);
		if (!r) {
			p->oom = 1;
			return;
		}
		t->rows = r, p->caprows = cap;
	}
	char **row = calloc((size_t)t->ncols + 1, sizeof *row);
	if (!row) {
		p->oom = 1;
		return;
	}
	for (int i = 0; i < t->ncols; i++)
		row[i] = i < p->ncell ? p->cell[i] : strdup("");
	for (int i = t->ncols; i < p->ncell; i++)
		free(p->cell[i]);
	p->ncell = 0;
	t->rows[t->nrows++] = row;
}

int sweep_table_parse(const char *text, size_t len, struct sweep_table *t, struct pm_err *err)
{
	struct csv_parser cp;
	struct parse p = {t, NULL, 0, 0, 0, 0, 0};

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
	FILE *f = pm_input_open(path, "sweep table", err);
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	int rc;

	memset(t, 0, sizeof *t);
	if (!f)
		return PM_EINPUT;
	do {
		if (len + 65536 > cap) {
			char *b = realloc(buf, cap = 2 * cap + 65536);
			if (!b) {
				free(buf);
				fclose(f);
				return pm_fail(err, PM_EINTERNAL, "out of memory");
			}
			buf = b;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	fclose(f);
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
	for (long r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++)
			free(t->rows[r][c]);
		free(t->rows[r]);
	}
	for (int c = 0; c < t->ncols; c++)
		free(t->cols[c]);
	free(t->rows);
	free(t->cols);
	memset(t, 0, sizeof *t);
}
