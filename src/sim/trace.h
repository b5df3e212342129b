/* trace.h: a simulated run as a Chrome trace-event JSON file (the format
 * Perfetto and chrome://tracing open).
 *
 * Three processes: "schedule" (one event per lockstep step), "endpoints"
 * (one track per endpoint; one event per transfer it sends, from its
 * start to its arrival, with step, destination, bytes and operation) and
 * "links" (one track per network link that carries data; one event per
 * interval it is busy, back-to-back packets merged).  Times are in
 * microseconds, as the format wants.  Written with jansson, one event
 * at a time, so a trace of millions of events needs no more memory than
 * one event.
 */
#ifndef PM_TRACE_H
#define PM_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "model/err.h"
#include "model/sched.h"
#include "model/topo.h"

struct pm_trace;

/* Open path for writing; the run's title goes into the metadata. */
int pm_trace_open(const char *path, const char *title, struct pm_trace **out,
		  struct pm_err *err);
/* Size the per-link and per-transfer state for one run and name the
 * tracks; call once before the run. */
int pm_trace_begin(struct pm_trace *tr, const struct pm_topo *t,
		   const struct pm_sched *s, double unit_B);
void pm_trace_start(struct pm_trace *tr, uint32_t x, double t);
void pm_trace_done(struct pm_trace *tr, uint32_t x, double t);
void pm_trace_step(struct pm_trace *tr, int k, double t0, double t1);
void pm_trace_busy(struct pm_trace *tr, int link, double t0, double t1);
/* Flush, close; PM_EINPUT when the file could not be written.  The trace
 * is written under a temporary name and renamed to the path given only
 * when whole: a failed write leaves no file. */
int pm_trace_close(struct pm_trace *tr, struct pm_err *err);
/* Close and leave no file (the run it records failed). */
void pm_trace_discard(struct pm_trace *tr);

#endif
