/* csvread.h: one way to read the project's CSV files (topologies, machines,
 * measurements, DNN profiles) with libcsv.  Lines starting with '#' are
 * comments and go to on_comment; every other row goes to on_row with its
 * cells, numbered from 0 (the header).  Blank rows are skipped. */
#ifndef PM_CSVREAD_H
#define PM_CSVREAD_H

#include "model/err.h"

#include <stdio.h>

#define PM_CSV_MAX_CELLS 32

/* Return PM_OK to go on, anything else to stop (the reader returns it). */
typedef int (*pm_csv_row_fn)(void *ctx, int row, char *const *cells, int n,
			     struct pm_err *err);
typedef void (*pm_csv_comment_fn)(void *ctx, const char *line);

/* what names the kind of file in messages ("topology file"). */
int pm_csv_read(const char *path, const char *what, pm_csv_row_fn on_row,
		pm_csv_comment_fn on_comment, void *ctx, struct pm_err *err);

/* Input files are at most this large (a guard against /dev/zero and the
 * like: no project file comes near it). */
#define PM_INPUT_MAX_BYTES (256L << 20)

/* Seconds a pipe may stay silent before its reader gives up. */
#define PM_INPUT_WAIT_S 20

/* Open a data file for reading (a path "data/..." that does not exist
 * here is looked up in the data directory, pm_data_dir): a regular file (or a pipe, read whole
 * first: PM_INPUT_WAIT_S of silence ends it with an error) of at most
 * PM_INPUT_MAX_BYTES; anything else (a directory, a device) is refused
 * with a message naming it.  NULL on error. */
FILE *pm_input_open(const char *path, const char *what, struct pm_err *err);

/* The whole of a data file opened as pm_input_open does, NUL-terminated
 * (its length, without the NUL, in *len).  NULL on error, with the
 * message in err. */
char *pm_input_read(const char *path, const char *what, size_t *len, struct pm_err *err);

/* The column named name in a header row, or -1. */
int pm_csv_column(char *const *header, int n, const char *name);

#endif
