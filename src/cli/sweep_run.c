/* sweep_run.c: running a sweep's points on threads, in order on disk,
 * resumable (sweep.h). */
#include "cli/sweep.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A killed run may leave a last line cut short: drop it. */
static int drop_partial_line(const char *path, struct pm_err *err)
{
	FILE *f = fopen(path, "r+");
	long size, keep;
	int c;

	if (!f)
		return PM_OK;	/* nothing yet */
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) <= 0) {
		fclose(f);
		return PM_OK;
	}
	for (keep = size; keep > 0; keep--) {
		fseek(f, keep - 1, SEEK_SET);
		if ((c = fgetc(f)) == '\n')
			break;
	}
	fclose(f);
	if (keep < size && truncate(path, keep))
		return pm_fail(err, PM_EINPUT, "cannot cut the unfinished last line of '%s'", path);
	return PM_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Resume: the points whose key the output already holds are skipped, and
 * its columns are the run's.  1 when the file holds a table. */
int sweep_resume(struct sweep *w, const char *path, struct pm_err *err)
{
	struct sweep_table t;
	struct stat sb;
	int rc, kc;

	if (stat(path, &sb) || sb.st_size == 0)
		return 0;
	if ((rc = drop_partial_line(path, err)) || (rc = sweep_table_read(path, &t, err)))
		return -rc;
	if ((kc = sweep_table_col(&t, "key")) < 0 || sweep_table_col(&t, "error") != t.ncols - 1) {
		sweep_table_release(&t);
		return -pm_fail(err, PM_EINPUT, "'%s' is not a sweep's output (expected the columns point, key, ..., error): give another --out", path);
	}
	/* the command's columns: after the axes (and gpus), before cost and error */
	int first = 2 + w->st->naxes + (w->gpus != NULL), last = t.ncols - 1 - (w->st->cost_per_gpu_hour > 0 && w->st->pareto && w->gpus);
	for (int k = 0; k < w->st->naxes; k++)
		if (2 + k >= t.ncols || strcmp(t.cols[2 + k], w->st->axis[k].name)) {
			sweep_table_release(&t);
			return -pm_fail(err, PM_EINPUT, "'%s' was written by another study (its axes differ): give another --out", path);
		}
	w->ncmd = last > first ? last - first : 0;
	if (w->ncmd && !(w->cmd_cols = calloc((size_t)w->ncmd, sizeof *w->cmd_cols))) {
		sweep_table_release(&t);
		return -pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	for (int k = 0; k < w->ncmd; k++) {
		const char *name = t.cols[first + k];
		size_t cl = strlen(w->st->command);
		/* COMMAND_NAME is the command's NAME renamed where it clashed */
		if (!strncmp(name, w->st->command, cl) && name[cl] == '_' && sweep_table_col(&t, name + cl + 1) >= 0 &&
		    sweep_table_col(&t, name + cl + 1) < first)
			name += cl + 1;
		w->cmd_cols[k] = strdup(name);
	}
	char **keys = malloc(sizeof *keys * (size_t)(t.nrows + 1));
	for (long r = 0; keys && r < t.nrows; r++)
		keys[r] = t.rows[r][kc];
	if (keys) {
		qsort(keys, (size_t)t.nrows, sizeof *keys, cmp_str);
		for (long i = 0; i < w->n; i++) {
			char key[2048], *kp = key;
			study_key(w->st, i, key, sizeof key);
			if (bsearch(&kp, keys, (size_t)t.nrows, sizeof *keys, cmp_str))
				w->skip[i] = 1;
		}
	}
	free(keys);
	sweep_table_release(&t);
	return keys ? 1 : -pm_fail(err, PM_EINTERNAL, "out of memory");
}

/* The threads take the next point as they free up; whichever finishes
 * the point the table is waiting for writes it and every finished one
 * after it, in order, under the lock (no hand-off to another thread). */
struct pool {
	struct sweep *w;
	const long *order;
	long norder;
	atomic_long next;
	pthread_mutex_t mu;
	long next_write;
	FILE *f;
	int rc, progress;
	double t0, last, flushed;
	struct pm_err err;
};

/* Finished rows reach the file at least every 50 ms (and a slow point's at
 * once): a killed run loses at most that much finished work, without a
 * write to the system for every cheap point. */
#define SWEEP_FLUSH_S 0.05

static void progress(const struct sweep *w, double t0, double *last, int force);

/* A thread takes points in chunks sized to about 2 ms of its recent work
 * (one at a time for dear points, up to 64 cheap ones), so cheap points
 * do not queue on the counter and the lock, and dear ones still spread. */
#define SWEEP_CHUNK_S 2e-3
#define SWEEP_CHUNK_MAX 64

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct sweep_result r[SWEEP_CHUNK_MAX];
	long chunk = 1;

	for (;;) {
		long k0 = atomic_fetch_add(&p->next, chunk);
		if (k0 >= p->norder)
			break;
		long n = k0 + chunk <= p->norder ? chunk : p->norder - k0;
		double t = now();
		for (long j = 0; j < n; j++) {
			r[j] = (struct sweep_result){0};
			sweep_point(p->w->st, p->order[k0 + j], &r[j]);
			sweep_format(p->w, p->order[k0 + j], &r[j]);	/* outside the lock; a failure is met when written */
		}
		double per = (now() - t) / (double)n;
		chunk = per > 0 ? (long)(SWEEP_CHUNK_S / per) : SWEEP_CHUNK_MAX;
		chunk = chunk < 1 ? 1 : chunk > SWEEP_CHUNK_MAX ? SWEEP_CHUNK_MAX : chunk;
		pthread_mutex_lock(&p->mu);
		for (long j = 0; j < n; j++)
			p->w->res[p->order[k0 + j]] = r[j];
		while (!p->rc && p->next_write < p->norder && p->w->res[p->order[p->next_write]].done) {
			p->w->done++;
			p->rc = sweep_write_point(p->w, p->order[p->next_write++], p->f, &p->err);
			if (p->progress)
				progress(p->w, p->t0, &p->last, 0);
		}
		t = now();
		if (!p->rc && t - p->flushed >= SWEEP_FLUSH_S) {
			if (fflush(p->f))
				p->rc = pm_fail(&p->err, PM_EINTERNAL, "could not write the sweep's output");
			p->flushed = t;
		}
		if (p->rc)	/* stop handing out points */
			atomic_store(&p->next, p->norder);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

static void progress(const struct sweep *w, double t0, double *last, int force)
{
	double t = now();
	if (!force && t - *last < 0.5)
		return;
	*last = t;
	double rate = w->done / (t - t0 > 1e-9 ? t - t0 : 1e-9);
	double left = rate > 0 ? (double)(w->todo - w->done) / rate : 0;
	fprintf(stderr, "\rperfmodel: sweep %ld/%ld points, %.0f/s, %.0f s left   ", w->done, w->todo, rate, left);
	if (force)
		fputc('\n', stderr);
}

/* The table's header line (a new output only). */
static int write_header(const struct sweep *w, FILE *f, struct pm_err *err)
{
	size_t len;
	char *h = sweep_header_text(w, &len);
	int bad = !h || fwrite(h, 1, len, f) != len;
	free(h);
	return bad ? pm_fail(err, PM_EINTERNAL, "could not write the sweep's output") : PM_OK;
}

int sweep_write_point(struct sweep *w, long i, FILE *f, struct pm_err *err)
{
	struct sweep_result *r = &w->res[i];
	int bad = sweep_format(w, i, r) || (r->len && fwrite(r->text, 1, r->len, f) != r->len);
	free(r->text);
	r->text = NULL;
	return bad ? pm_fail(err, PM_EINTERNAL, "could not write the sweep's output") : PM_OK;
}

/* The points this run owes, in order; the first ones run here one by one
 * until one succeeds (its columns become the table's). */
long *sweep_order(const struct sweep *w, const struct sweep_opts *o, long *n)
{
	long *order = malloc(sizeof *order * (size_t)(w->n + 1));
	*n = 0;
	for (long i = 0; order && i < w->n; i++)
		if (!w->skip[i] && (o->nshards <= 1 || i % o->nshards == o->shard))
			order[(*n)++] = i;
	return order;
}

int sweep_run(struct sweep *w, const struct sweep_opts *o, struct pm_err *err)
{
	FILE *f = stdout;
	long norder, probed = 0;
	int had = 0, rc = PM_OK, jobs = o->jobs > 0 ? o->jobs : 1;
	double t0 = now(), last = t0;

	if (o->out && (had = sweep_resume(w, o->out, err)) < 0)
		return -had;
	long *order = sweep_order(w, o, &norder);
	if (!order)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	w->todo = norder;
	/* the first points one by one until the command's columns are known */
	while (!had && probed < norder) {
		long i = order[probed++];
		sweep_point(w->st, i, &w->res[i]);
		w->done++;
		if (!w->res[i].status)
			break;
	}
	if (!had && (rc = sweep_set_columns(w, err))) {
		free(order);
		return rc;
	}
	if (o->out && !(f = fopen(o->out, "a"))) {
		free(order);
		return pm_fail(err, PM_EINPUT, "cannot write '%s' (expected a writable path for --out)", o->out);
	}
	if (!had)
		rc = write_header(w, f, err);
	long written = 0;
	for (; !rc && written < probed; written++)
		rc = sweep_write_point(w, order[written], f, err);
	if (!rc && fflush(f))
		rc = pm_fail(err, PM_EINTERNAL, "could not write the sweep's output");
	struct pool p = {w, order + probed, norder - probed, 0, PTHREAD_MUTEX_INITIALIZER, 0, f, rc, o->progress,
			 t0, last, 0, {""}};
	pthread_t th[256];
	int nth = 0;
	if (jobs > 256)
		jobs = 256;
	for (int t = 0; !rc && t < jobs && p.norder > 0; t++)
		if (pthread_create(&th[nth], NULL, worker, &p) == 0)
			nth++;
	if (!rc && p.norder > 0 && nth == 0)
		rc = pm_fail(err, PM_EINTERNAL, "could not start a thread");
	for (int t = 0; t < nth; t++)
		pthread_join(th[t], NULL);
	if (!rc && p.rc)
		rc = p.rc, *err = p.err;
	last = p.last;
	if (o->progress && w->todo > 0)
		progress(w, t0, &last, 1);
	if (f != stdout && fclose(f) && !rc)
		rc = pm_fail(err, PM_EINTERNAL, "could not write '%s'", o->out);
	free(order);
	return rc;
}

int sweep_write_all_to(struct sweep *w, FILE *f, const long *order, long norder, int had, struct pm_err *err)
{
	int rc = PM_OK;

	if (!had && (rc = sweep_set_columns(w, err)))
		return rc;
	if (!had)
		rc = write_header(w, f, err);
	for (long k = 0; !rc && k < norder; k++)
		rc = sweep_write_point(w, order[k], f, err);
	if (!rc && fflush(f))
		rc = pm_fail(err, PM_EINTERNAL, "could not write the sweep's output");
	return rc;
}
