/* out.c: writing tables as text, CSV and JSON (through jansson). */
#include "model/err.h"
#include "cli/out.h"
#include "model/grow.h"
#include "model/text.h"
#include "model/units.h"

#include <errno.h>
#include <jansson.h>

#include <csv.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cli_table_init(struct cli_table *t, int ncols, const char *const *names,
		    const unsigned *flags)
{
	memset(t, 0, sizeof *t);
	t->ncols = ncols;
	t->names = names;
	t->flags = flags;
}

void cli_table_release(struct cli_table *t)
{
	for (int i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->user);
	for (int i = 0; i < t->nmeta; i++)
		free(t->meta[i]);
	memset(t, 0, sizeof *t);
}

int cli_table_row(struct cli_table *t)
{
	if ((size_t)t->nrows == t->caprows) {
		size_t cap = pm_grow_cap(t->caprows, t->caprows + 1, 16);
		if (pm_resize(&t->cells, cap * (size_t)t->ncols, sizeof *t->cells) || pm_resize(&t->user, cap, 1))
			return -1;
		t->caprows = cap;
	}
	t->user[t->nrows] = 0;
	memset(t->cells + (size_t)t->nrows++ * (size_t)t->ncols, 0, sizeof *t->cells * (size_t)t->ncols);
	return 0;
}

int cli_table_move_rows(struct cli_table *dst, struct cli_table *src,
			int first, int n, struct pm_err *err)
{
	for (int r = first; r < first + n; r++) {
		if (cli_table_row(dst))
			return pm_fail(err, PM_EINTERNAL, "out of memory");
		char **from = src->cells + (size_t)r * (size_t)src->ncols;
		memcpy(dst->cells + (size_t)(dst->nrows - 1) * (size_t)dst->ncols, from, sizeof *from * (size_t)dst->ncols);
		memset(from, 0, sizeof *from * (size_t)dst->ncols);
		dst->user[dst->nrows - 1] = src->user[r];
	}
	return PM_OK;
}

static char *vformat(const char *fmt, va_list ap)
{
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s)
		vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

void cli_table_set(struct cli_table *t, int col, const char *fmt, ...)
{
	va_list ap;
	char **slot = &t->cells[(t->nrows - 1) * t->ncols + col];

	free(*slot);
	va_start(ap, fmt);
	*slot = vformat(fmt, ap);
	va_end(ap);
}

void cli_table_nums(struct cli_table *t, int c0, const double *v, int n, const char *fmt)
{
	for (int i = 0; i < n; i++)
		cli_table_set(t, c0 + i, fmt, v[i]);
}

void cli_table_bytes(struct cli_table *t, int col_text, int col_bytes, double n)
{
	char buf[32];

	pm_fmt_size(n, buf, sizeof buf);
	cli_table_set(t, col_text, "%s", buf);
	cli_table_set(t, col_bytes, "%.0f", n);
}

void cli_table_kv(struct cli_table *t, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (cli_table_row(t))
		return;
	cli_table_set(t, 0, "%s", key);
	va_start(ap, fmt);
	t->cells[(t->nrows - 1) * t->ncols + 1] = vformat(fmt, ap);
	va_end(ap);
}

void cli_table_kv_user(struct cli_table *t, const char *key, const char *text)
{
	cli_table_kv(t, key, "%s", text);
	if (t->nrows > 0 && t->user)
		t->user[t->nrows - 1] = 1;
}

void cli_table_meta(struct cli_table *t, const char *fmt, ...)
{
	va_list ap;

	if (t->nmeta >= 32)
		return;
	va_start(ap, fmt);
	t->meta[t->nmeta++] = vformat(fmt, ap);
	va_end(ap);
}

void cli_table_meta_to_front(struct cli_table *t, int first)
{
	char *tmp[32];
	int k = t->nmeta - first;

	if (first <= 0 || k <= 0)
		return;
	memcpy(tmp, t->meta + first, sizeof(char *) * (size_t)k);
	memmove(t->meta + k, t->meta, sizeof(char *) * (size_t)first);
	memcpy(t->meta, tmp, sizeof(char *) * (size_t)k);
}

static const char *cell(const struct cli_table *t, int r, int c)
{
	const char *s = t->cells[r * t->ncols + c];
	return s ? s : "";
}

static int shown(const struct cli_table *t, int c, enum cli_format fmt)
{
	unsigned f = t->flags ? t->flags[c] : 0;
	if (fmt == FMT_TABLE)
		return !(f & COL_DATA);
	return !(f & COL_TABLE);
}

/* Column widths: the longest of the name and every cell. */
static void widths(const struct cli_table *t, int *w)
{
	for (int c = 0; c < t->ncols && c < 64; c++) {
		w[c] = (int)strlen(t->names[c]);
		for (int r = 0; r < t->nrows; r++) {
			int l = (int)strlen(cell(t, r, c));
			w[c] = l > w[c] ? l : w[c];
		}
	}
}

/* The last column the text table shows. */
static int last_shown(const struct cli_table *t)
{
	int last = 0;

	for (int c = 0; c < t->ncols && c < 64; c++)
		if (shown(t, c, FMT_TABLE))
			last = c;
	return last;
}

/* Row r of the text table (-1: the names): numbers right-aligned, text
 * left-aligned, an empty cell "-", no trailing blanks. */
static void text_line(FILE *f, const struct cli_table *t, const int *w, int last, int r)
{
	for (int c = 0, first = 1; c < t->ncols && c < 64; c++) {
		if (!shown(t, c, FMT_TABLE))
			continue;
		const char *s = r < 0 ? t->names[c] : cell(t, r, c);
		int num = t->flags && (t->flags[c] & COL_NUM);
		fprintf(f, "%s%*s", first ? "" : "  ", num ? w[c] : c == last ? 0 : -w[c], *s ? s : "-");
		first = 0;
	}
	fputc('\n', f);
}

static void write_text(FILE *f, const struct cli_table *t)
{
	int w[64], last = last_shown(t);

	for (int i = 0; i < t->nmeta; i++)
		fprintf(f, "# %s\n", t->meta[i]);
	widths(t, w);
	for (int r = -1; r < t->nrows; r++)
		text_line(f, t, w, last, r);
}

static void csv_cell(FILE *f, const char *s)
{
	if (strpbrk(s, ",\"\n\r"))
		csv_fwrite(f, s, strlen(s));
	else
		fputs(s, f);
}

/* Row r of the CSV (-1: the names). */
static void csv_line(FILE *f, const struct cli_table *t, int r)
{
	for (int c = 0, first = 1; c < t->ncols; c++)
		if (shown(t, c, FMT_CSV)) {
			fputs(first ? "" : ",", f);
			csv_cell(f, r < 0 ? t->names[c] : cell(t, r, c));
			first = 0;
		}
	fputc('\n', f);
}

static void write_csv(FILE *f, const struct cli_table *t)
{
	for (int r = -1; r < t->nrows; r++)
		csv_line(f, t, r);
}

/* A cell as a JSON number: an integer when the text is one (so 25 stays
 * 25, not 25.0), else a real printed back with 15 significant digits,
 * which gives the table's own %.6g text again. */
static json_t *json_number_of(const char *s)
{
	char *end;
	if (!strpbrk(s, ".eE")) {
		long long v = strtoll(s, &end, 10);
		if (*end == '\0' && errno != ERANGE)
			return json_integer(v);
	}
	return json_real(strtod(s, NULL));
}

/* A finite number in JSON's grammar: no leading '+', '.', "0x", "inf". */
static int is_number(const char *s)
{
	char *end;
	const char *d = *s == '-' ? s + 1 : s;
	if (!isdigit((unsigned char)*d) || (d[0] == '0' && isdigit((unsigned char)d[1])))
		return 0;
	double v = strtod(s, &end);
	return *end == '\0' && isfinite(v) && !strpbrk(s, "xX");
}

/* A JSON string of s; bytes that are not UTF-8 (a file name in another
 * encoding) become '?', as JSON text must be UTF-8. */
static json_t *jstr(const char *s)
{
	json_t *v = json_string(s);
	if (v)
		return v;
	char *c = strdup(s);
	if (!c)
		return json_null();
	for (char *p = c; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	v = json_string(c);
	free(c);
	return v ? v : json_null();
}

/* Through jansson, which quotes every string and prints every number in
 * JSON's grammar; one row object at a time, so a table of millions of
 * rows needs no more memory than one. */
static void dump(FILE *f, json_t *v)
{
	json_dumpf(v, f, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY);
	json_decref(v);
}

/* Cell (r, c) as JSON: a number column's number (null when empty), an
 * automatic column's number where its text is one, else a string. */
static json_t *json_cell(const struct cli_table *t, int r, int c)
{
	const char *s = cell(t, r, c);
	unsigned f = t->flags ? t->flags[c] : 0;

	errno = 0;
	if (f & COL_NUM)
		return *s ? json_number_of(s) : json_null();
	if ((f & COL_AUTO) && is_number(s))
		return json_number_of(s);
	return jstr(s);
}

static void write_json(FILE *f, const struct cli_table *t)
{
	fputs("{\n  \"meta\": [", f);
	for (int i = 0; i < t->nmeta; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		dump(f, jstr(t->meta[i]));
	}
	fputs(t->nmeta ? "\n  ],\n  \"rows\": [" : "],\n  \"rows\": [", f);
	for (int r = 0; r < t->nrows; r++) {
		json_t *row = json_object();
		fputs(r ? ",\n    " : "\n    ", f);
		for (int c = 0; c < t->ncols; c++)
			if (shown(t, c, FMT_JSON))
				json_object_set_new(row, t->names[c], json_cell(t, r, c));
		dump(f, row);
	}
	fputs(t->nrows ? "\n  ]\n}\n" : "]\n}\n", f);
}

/* Is s what printf makes of an infinity or a NaN ("inf", "-nan", "inf
 * us"), alone or before a unit?  Text from the user ("per rack;inf") is
 * left alone: only a whole leading word counts. */
static int non_finite_text(const char *s)
{
	static const char *const words[] = {"inf", "-inf", "nan", "-nan"};
	for (int i = 0; i < 4; i++) {
		size_t n = strlen(words[i]);
		if (strncmp(s, words[i], n) == 0 && (s[n] == '\0' || s[n] == ' '))
			return 1;
	}
	return 0;
}

/* A number cell is empty or a finite number and nothing else, and no text
 * cell is a printed infinity or NaN.  Such a value is a bug upstream
 * (input is range-checked), so it is an internal error.  Does cell (r, c)
 * break that? */
static int bad_cell(const struct cli_table *t, int r, int c)
{
	const char *s = cell(t, r, c);
	char *end;
	/* table-only number columns hold readable sizes (1.5M) */
	int num = t->flags && (t->flags[c] & COL_NUM) && !(t->flags[c] & COL_TABLE);
	double v = *s && num ? strtod(s, &end) : 0;
	int user = (t->flags && (t->flags[c] & COL_USER)) || (t->user && t->user[r]);

	return (num && *s && (*end || !isfinite(v))) || (!user && non_finite_text(s));
}

/* Every cell checked before anything is written. */
static int check_cells(const struct cli_table *t, struct pm_err *err)
{
	for (int r = 0; r < t->nrows; r++)
		for (int c = 0; c < t->ncols; c++)
			if (bad_cell(t, r, c))
				return pm_fail(err, PM_EINTERNAL,
					       "internal error: column '%s' of row %d holds '%s' (expected a finite number); nothing was written",
					       t->names[c], r + 1, cell(t, r, c));
	return PM_OK;
}

int cli_table_write(FILE *f, const struct cli_table *t, enum cli_format fmt,
		    struct pm_err *err)
{
	static void (*const writers[])(FILE *, const struct cli_table *) = {
		[FMT_TABLE] = write_text, [FMT_CSV] = write_csv, [FMT_JSON] = write_json,
	};

	if (check_cells(t, err))
		return PM_EINTERNAL;
	writers[fmt](f, t);
	return PM_OK;
}

int cli_parse_format(const char *s, enum cli_format *fmt, struct pm_err *err)
{
	static const char *const names[] = {"table", "csv", "json", NULL};	/* enum cli_format */
	int k = pm_pick_word("format", s, names, err);

	if (k < 0)
		return PM_EINPUT;
	*fmt = (enum cli_format)k;
	return PM_OK;
}
