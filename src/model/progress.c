/* progress.c: the per-thread progress reporter (progress.h). */
#include "model/progress.h"

#include <stddef.h>

static _Thread_local pm_progress_fn reporter;
static _Thread_local void *reporter_ctx;

void pm_progress_set(pm_progress_fn fn, void *ctx)
{
	reporter = fn;
	reporter_ctx = ctx;
}

void pm_progress(const char *what, double done, double total)
{
	if (reporter)
		reporter(reporter_ctx, what, done, total);
}
