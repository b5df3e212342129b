/* out.h: result tables and their three renderings.
 *
 * A command fills one table: named columns (units in the names, as CSV
 * users expect: time_us, busbw_GBps) and rows of text cells, plus "meta"
 * lines that say which parameters produced the numbers.  The same table is
 * then written as an aligned text table (meta as # comments), CSV (the
 * columns only, quoted by libcsv where needed) or JSON.
 */
#ifndef PM_OUT_H
#define PM_OUT_H

#include <stdio.h>

enum cli_col_flags {
	COL_NUM = 1 << 0,	/* JSON number (empty cell -> null) */
	COL_TABLE = 1 << 1,	/* shown in the text table only */
	COL_DATA = 1 << 2,	/* shown in CSV/JSON only */
	COL_AUTO = 1 << 3,	/* key-value tables: a JSON number when the cell is
				 * one ("16", "1.5e-3"), else a string */
	COL_USER = 1 << 4,	/* text from the user's files (layer names): never
				 * taken for a printed infinity or NaN */
};

enum cli_format {
	FMT_TABLE,
	FMT_CSV,
	FMT_JSON,
};

struct cli_table {
	int ncols;
	const char *const *names;
	const unsigned *flags;
	int nrows;
	size_t caprows;
	char **cells;		/* nrows * ncols, owned */
	unsigned char *user;	/* per row: its cells hold the user's text */
	int nmeta;
	char *meta[32];		/* "key: value" lines, owned */
};

void cli_table_init(struct cli_table *t, int ncols, const char *const *names,
		    const unsigned *flags);
void cli_table_release(struct cli_table *t);
/* A key-value row whose value is the user's text (a file name, a header
 * line): never taken for a printed infinity or NaN. */
void cli_table_kv_user(struct cli_table *t, const char *key, const char *text);
/* Start a row; cells default to empty.  Returns 0, or -1 out of memory. */
int cli_table_row(struct cli_table *t);
/* Append rows [first, first + n) of src (same columns) to dst; src keeps
 * empty rows. */
int cli_table_move_rows(struct cli_table *dst, struct cli_table *src,
			int first, int n, struct pm_err *err);
/* Set a cell of the last row, printf style. */
void cli_table_set(struct cli_table *t, int col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Cells c0 .. c0 + n - 1 of the last row: v[i] printed with fmt (one
 * number, such as "%.6g"). */
void cli_table_nums(struct cli_table *t, int c0, const double *v, int n, const char *fmt);
/* A byte count in two cells of the last row: as a size (64M, pm_fmt_size)
 * in col_text and as a number in col_bytes. */
void cli_table_bytes(struct cli_table *t, int col_text, int col_bytes, double n);
/* Append a two-column (key, value) row. */
void cli_table_kv(struct cli_table *t, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cli_table_meta(struct cli_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Move the meta lines from index first on in front of the others (a
 * command's heading before what its view added). */
void cli_table_meta_to_front(struct cli_table *t, int first);

/* Write the table; refuses (PM_EINTERNAL, nothing written) when a number
 * cell is not a finite number or any cell or heading says inf or nan. */
int cli_table_write(FILE *f, const struct cli_table *t, enum cli_format fmt,
		    struct pm_err *err);

/* "table", "csv" or "json". */
int cli_parse_format(const char *s, enum cli_format *fmt, struct pm_err *err);

#endif
