/* progress.h: how far a long computation got, for whoever shows it.
 *
 * The model and the simulator call pm_progress from their long loops
 * (simulator events, tree construction); a command that wants a progress
 * line installs a reporter with pm_progress_set (the CLI shows one on a
 * terminal after a second).  Nothing is shown or computed when none is
 * installed.  The reporter is per thread (C11 _Thread_local): threads that
 * price points in parallel do not share it. */
#ifndef PM_PROGRESS_H
#define PM_PROGRESS_H

/* done of total units of what (total 0: unknown). */
typedef void (*pm_progress_fn)(void *ctx, const char *what, double done, double total);

void pm_progress_set(pm_progress_fn fn, void *ctx);
void pm_progress(const char *what, double done, double total);

#endif
