/* file.h: output files a command writes besides stdout (a fitted machine,
 * later traces and plots): written whole or not at all. */
#ifndef PM_FILE_H
#define PM_FILE_H

#include "model/err.h"

#include <stdio.h>

/* Does path name the same file as other (both exist, same device and
 * inode)? */
int cli_same_file(const char *path, const char *other);

/* The file a --topo spec reads (file:PATH, astrasim:PATH, machine:PATH
 * or machine:PATH:N with a path), or NULL; a static buffer. */
const char *cli_topo_file(const char *spec);

/* Write path through write(f, ctx) into a temporary file beside it,
 * renamed over path once complete and flushed: a reader never sees half a
 * file.  Refuses (PM_EINPUT) a path that is one of inputs[0..ninputs) (the
 * command's own input files), and reports any write error (PM_EINPUT,
 * naming the path and the system's reason) leaving no file behind. */
int cli_write_file(const char *path, const char *what, const char *const *inputs, int ninputs,
		   int (*write)(FILE *f, const void *ctx), const void *ctx, struct pm_err *err);

#endif
