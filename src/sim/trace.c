/* trace.c: Chrome trace-event JSON of a simulated run (see trace.h). */
#include "sim/trace.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { PID_SCHED = 1, PID_ENDPOINTS = 2, PID_LINKS = 3 };

struct pm_trace {
	FILE *f;
	char path[1024], tmp[1100];	/* written to tmp, renamed to path when whole */
	int first, failed;
	const struct pm_topo *t;
	const struct pm_sched *s;
	double unit;
	double *start;		/* per transfer */
	uint32_t *xstep;	/* per transfer: its step */
	double *b0, *b1;	/* per link: the busy interval being merged */
	int nlinks;
};

static void emit(struct pm_trace *tr, json_t *ev)
{
	if (!ev) {
		tr->failed = 1;
		return;
	}
	if (!tr->first && fputs(",\n", tr->f) == EOF)
		tr->failed = 1;
	tr->first = 0;
	if (json_dumpf(ev, tr->f, JSON_COMPACT) != 0)
		tr->failed = 1;
	json_decref(ev);
}

static void name_track(struct pm_trace *tr, int pid, int tid, const char *what,
		       const char *name)
{
	emit(tr, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", what, "ph", "M",
			   "pid", pid, "tid", tid, "args", "name", name));
}

int pm_trace_open(const char *path, const char *title, struct pm_trace **out,
		  struct pm_err *err)
{
	struct pm_trace *tr = calloc(1, sizeof *tr);

	*out = NULL;
	if (!tr)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	if (strlen(path) >= sizeof tr->path) {
		free(tr);
		return pm_fail(err, PM_EINPUT, "trace file name too long (expected at most %zu characters)", sizeof tr->path - 1);
	}
	memcpy(tr->path, path, strlen(path) + 1);
	/* a device or a pipe (/dev/stdout) is written as it is, a file through a
	 * temporary name renamed over it when whole */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		tr->tmp[0] = '\0';
	else
		snprintf(tr->tmp, sizeof tr->tmp, "%s.tmp-%ld", path, (long)getpid());
	tr->f = fopen(tr->tmp[0] ? tr->tmp : path, "w");
	if (!tr->f) {
		free(tr);
		return pm_fail(err, PM_EINPUT, "cannot write trace file '%s' (expected a writable path)", path);
	}
	tr->first = 1;
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":", tr->f);
	json_t *meta = json_pack("{s:s, s:s}", "generator", "perfmodel", "run", title);
	if (!meta || json_dumpf(meta, tr->f, JSON_COMPACT) != 0)
		tr->failed = 1;
	json_decref(meta);
	fputs(",\"traceEvents\":[\n", tr->f);
	name_track(tr, PID_SCHED, 0, "process_name", "schedule steps");
	name_track(tr, PID_ENDPOINTS, 0, "process_name", "endpoints (transfers sent)");
	name_track(tr, PID_LINKS, 0, "process_name", "links (busy)");
	*out = tr;
	return PM_OK;
}

int pm_trace_begin(struct pm_trace *tr, const struct pm_topo *t,
		   const struct pm_sched *s, double unit_B)
{
	const struct pm_link *lk = pm_topo_links(t);
	char buf[64];

	tr->t = t;
	tr->s = s;
	tr->unit = unit_B;
	tr->nlinks = pm_topo_nlinks(t);
	free(tr->start);
	free(tr->xstep);
	free(tr->b0);
	free(tr->b1);
	tr->start = calloc(s->nx + 1, sizeof(double));
	tr->xstep = malloc(sizeof(uint32_t) * (s->nx + 1));
	tr->b0 = malloc(sizeof(double) * ((size_t)tr->nlinks + 1));
	tr->b1 = malloc(sizeof(double) * ((size_t)tr->nlinks + 1));
	if (!tr->start || !tr->xstep || !tr->b0 || !tr->b1)
		return PM_EINTERNAL;
	for (int k = 0; k < s->nsteps; k++)
		for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++)
			tr->xstep[i] = (uint32_t)k;
	for (int l = 0; l < tr->nlinks; l++)
		tr->b0[l] = tr->b1[l] = -1;
	for (int e = 0; e < pm_topo_endpoints(t); e++) {
		snprintf(buf, sizeof buf, "endpoint %d", e);
		name_track(tr, PID_ENDPOINTS, e, "thread_name", buf);
	}
	for (int l = 0; l < tr->nlinks; l++) {
		snprintf(buf, sizeof buf, "link %d: %d -> %d", l, lk[l].src, lk[l].dst);
		name_track(tr, PID_LINKS, l, "thread_name", buf);
	}
	return PM_OK;
}

void pm_trace_start(struct pm_trace *tr, uint32_t x, double t)
{
	tr->start[x] = t;
}

void pm_trace_done(struct pm_trace *tr, uint32_t x, double t)
{
	static const char *const ops[] = {"copy", "reduce"};
	const struct pm_xfer *xf = &tr->s->x[x];
	int src = tr->s->map[xf->src], dst = tr->s->map[xf->dst];
	char name[96];

	snprintf(name, sizeof name, "rank %d -> %d", (int)xf->src, (int)xf->dst);
	emit(tr, json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i, s:{s:i, s:i, s:f, s:s, s:i}}",
			   "name", name, "cat", "transfer", "ph", "X",
			   "ts", tr->start[x] * 1e6, "dur", (t - tr->start[x]) * 1e6,
			   "pid", PID_ENDPOINTS, "tid", src,
			   "args", "step", (int)tr->xstep[x], "dst_endpoint", dst,
			   "bytes", tr->unit * xf->cnt, "op", ops[xf->op == PM_REDUCE],
			   "transfer", (int)x));
}

void pm_trace_step(struct pm_trace *tr, int k, double t0, double t1)
{
	char name[32];
	snprintf(name, sizeof name, "step %d", k);
	emit(tr, json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i}", "name", name, "cat", "step",
			   "ph", "X", "ts", t0 * 1e6, "dur", (t1 - t0) * 1e6, "pid", PID_SCHED, "tid", 0));
}

static void flush_link(struct pm_trace *tr, int l)
{
	if (tr->b0[l] < 0)
		return;
	emit(tr, json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i}", "name", "busy", "cat", "link",
			   "ph", "X", "ts", tr->b0[l] * 1e6, "dur", (tr->b1[l] - tr->b0[l]) * 1e6,
			   "pid", PID_LINKS, "tid", l));
	tr->b0[l] = -1;
}

/* Busy intervals of one link arrive in time order; back-to-back ones
 * (a gap under a picosecond) become one event. */
void pm_trace_busy(struct pm_trace *tr, int link, double t0, double t1)
{
	if (link < 0 || link >= tr->nlinks)
		return;
	if (tr->b0[link] >= 0 && t0 <= tr->b1[link] + 1e-12) {
		if (t1 > tr->b1[link])
			tr->b1[link] = t1;
		return;
	}
	flush_link(tr, link);
	tr->b0[link] = t0;
	tr->b1[link] = t1;
}

int pm_trace_close(struct pm_trace *tr, struct pm_err *err)
{
	int failed;

	if (!tr)
		return PM_OK;
	for (int l = 0; tr->b0 && l < tr->nlinks; l++)
		flush_link(tr, l);
	fputs("\n]}\n", tr->f);
	failed = tr->failed | ferror(tr->f);
	failed |= fclose(tr->f) != 0;
	free(tr->start);
	free(tr->xstep);
	free(tr->b0);
	free(tr->b1);
	char path[1024];
	snprintf(path, sizeof path, "%s", tr->path);
	if (tr->tmp[0]) {
		failed |= !failed && rename(tr->tmp, tr->path) != 0;
		if (failed)	/* never a partial trace */
			remove(tr->tmp);
	}
	free(tr);
	if (failed && err)
		return pm_fail(err, PM_EINPUT, "could not write trace file '%s' (expected a writable path with free space)", path);
	return failed ? PM_EINPUT : PM_OK;
}

void pm_trace_discard(struct pm_trace *tr)
{
	if (tr) {
		tr->failed = 1;	/* closed without renaming: no file */
		pm_trace_close(tr, NULL);
	}
}
