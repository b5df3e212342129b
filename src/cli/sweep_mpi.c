/* sweep_mpi.c: a sweep over MPI ranks (sweep.h).  Rank 0 reads what the
 * output already holds, says which points are owed and finds the table's
 * columns; every rank takes the next point from a counter held in rank 0's
 * memory (MPI one-sided fetch-and-add), the largest networks first, so a
 * rank whose points were cheap takes more and one that finishes early
 * simply stops asking.  Each finished point goes to rank 0 at once, which
 * appends it to the file between its own points (so a killed run loses
 * only what was in flight) and puts the file in point order at the end. */
#include "cli/sweep.h"
#include "model/grow.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static int under_mpirun(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

/* One finished point, serialised: index, status, error, the command's CSV. */
struct blob {
	char *p;
	size_t n, cap;
};

static int add(struct blob *b, const void *data, size_t n)
{
	if (pm_grow(&b->p, &b->cap, b->n + n, 1, 4096))
		return -1;
	memcpy(b->p + b->n, data, n);
	b->n += n;
	return 0;
}

/* Run point i (sweep_point) and append it to b: index, status, error,
 * the command's CSV. */
static int run_one(const struct study *st, long i, struct blob *b)
{
	struct sweep_result r = {0};
	sweep_point(st, i, &r);
	long elen = r.error ? (long)strlen(r.error) : 0, tlen = r.raw ? (long)r.rawlen : 0;
	int bad = add(b, &i, sizeof i) || add(b, &r.status, sizeof r.status) || add(b, &elen, sizeof elen) ||
		  add(b, r.error ? r.error : "", (size_t)elen) || add(b, &tlen, sizeof tlen) ||
		  add(b, r.raw ? r.raw : "", (size_t)tlen);
	free(r.error);
	free(r.raw);
	return bad;
}

/* Rank 0: a received blob back into results, each appended to f. */
static int unpack(struct sweep *w, const char *p, size_t n, FILE *f, struct pm_err *err)
{
	size_t at = 0;
	while (at < n) {
		long i, elen, tlen;
		int status;
		memcpy(&i, p + at, sizeof i), at += sizeof i;
		memcpy(&status, p + at, sizeof status), at += sizeof status;
		memcpy(&elen, p + at, sizeof elen), at += sizeof elen;
		struct sweep_result *r = &w->res[i];
		r->status = status;
		if (status && !(r->error = strndup(p + at, (size_t)elen)))
			return pm_fail(err, PM_EINTERNAL, "out of memory");
		at += (size_t)elen;
		memcpy(&tlen, p + at, sizeof tlen), at += sizeof tlen;
		if (!status && !(r->raw = strndup(p + at, (size_t)tlen)))
			return pm_fail(err, PM_EINTERNAL, "out of memory");
		r->rawlen = (size_t)tlen;
		at += (size_t)tlen;
		r->done = 1;
		w->done++;
		int rc = sweep_write_point(w, i, f, err);
		if (rc)
			return rc;
	}
	return PM_OK;
}

/* Dispatch order: the largest networks first (a proxy for the dearest
 * points; the longest first keeps the last rank from finishing alone),
 * by point within one size.  The table is written in point order anyway. */
struct by_size {
	double gpus;
	long i;
};

static int cmp_size(const void *a, const void *b)
{
	const struct by_size *x = a, *y = b;
	if (x->gpus != y->gpus)
		return x->gpus < y->gpus ? 1 : -1;
	return (x->i > y->i) - (x->i < y->i);
}

static void dearest_first(const struct sweep *w, long *order, long n)
{
	struct by_size *s;
	int idx[STUDY_MAX_AXES];
	if (!w->gpus || !(s = malloc(sizeof *s * (size_t)(n + 1))))
		return;
	for (long k = 0; k < n; k++) {
		study_point(w->st, order[k], idx);
		s[k] = (struct by_size){w->gpus[idx[w->topo_axis]], order[k]};
	}
	qsort(s, (size_t)n, sizeof *s, cmp_size);
	for (long k = 0; k < n; k++)
		order[k] = s[k].i;
	free(s);
}

#define TAG_POINT 7

/* A rank other than 0 sends its finished points in batches, at most every
 * 50 ms, without waiting for rank 0 to take them: rank 0 reads between
 * its own points, and a blocking send would stall behind a dear one. */
struct outbox {
	MPI_Request *req;
	char **buf;
	int n, cap;
	double last;
};

static int post(struct outbox *ob, struct blob *b)
{
	if (ob->n == ob->cap) {
		size_t cap = pm_grow_cap((size_t)ob->cap, (size_t)ob->n + 1, 16);
		if (pm_resize(&ob->req, cap, sizeof *ob->req) || pm_resize(&ob->buf, cap, sizeof *ob->buf))
			return -1;
		ob->cap = (int)cap;
	}
	MPI_Isend(b->p, (int)b->n, MPI_CHAR, 0, TAG_POINT, MPI_COMM_WORLD, &ob->req[ob->n]);
	ob->buf[ob->n++] = b->p;	/* freed once sent */
	*b = (struct blob){0};
	ob->last = MPI_Wtime();
	return 0;
}

static void outbox_wait(struct outbox *ob)
{
	MPI_Waitall(ob->n, ob->req, MPI_STATUSES_IGNORE);
	for (int i = 0; i < ob->n; i++)
		free(ob->buf[i]);
	free(ob->req), free(ob->buf);
}

/* Rank 0: take what the other ranks sent (block: wait for one message);
 * an empty message is a rank saying it is done. */
static int receive(struct sweep *w, FILE *f, int block, int *finished, double *flushed, struct pm_err *err)
{
	for (;;) {
		MPI_Status st;
		int flag = 1, n, rc = PM_OK;
		if (block)
			MPI_Probe(MPI_ANY_SOURCE, TAG_POINT, MPI_COMM_WORLD, &st);
		else
			MPI_Iprobe(MPI_ANY_SOURCE, TAG_POINT, MPI_COMM_WORLD, &flag, &st);
		if (!flag)
			return PM_OK;
		MPI_Get_count(&st, MPI_CHAR, &n);
		char *buf = malloc((size_t)n + 1);
		MPI_Recv(buf, n, MPI_CHAR, st.MPI_SOURCE, TAG_POINT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (!buf)
			rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		else if (n == 0)
			(*finished)++;
		else
			rc = unpack(w, buf, (size_t)n, f, err);
		free(buf);
		double t = MPI_Wtime();
		if (!rc && t - *flushed >= 0.05) {	/* as the threads do: at least every 50 ms */
			if (fflush(f))
				rc = pm_fail(err, PM_EINTERNAL, "could not write the sweep's output");
			*flushed = t;
		}
		if (rc || block)
			return rc;
	}
}

/* Rank 0, before the others start: resume, the points owed, and (for a new
 * table) the cheapest points one by one (the last in dispatch order) until
 * one succeeds, for its columns; the header written.  Returns the points
 * taken that way, off the end of *order. */
static long prepare(struct sweep *w, const struct sweep_opts *o, long **order, long *norder, FILE **f, struct pm_err *err,
		    int *rc)
{
	int had = sweep_resume(w, o->out, err);
	long probed = 0;
	if (had < 0) {
		*rc = -had;
		return 0;
	}
	if (!(*order = sweep_order(w, o, norder))) {
		*rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		return 0;
	}
	dearest_first(w, *order, *norder);
	while (!had && probed < *norder) {
		long i = (*order)[*norder - 1 - probed++];
		sweep_point(w->st, i, &w->res[i]);
		if (!w->res[i].status)
			break;
	}
	if (!(*f = fopen(o->out, "a"))) {
		*rc = pm_fail(err, PM_EINPUT, "cannot write '%s' (expected a writable path for --out)", o->out);
		return 0;
	}
	*rc = sweep_write_all_to(w, *f, *order + *norder - probed, probed, had, err);
	return probed;
}

/* One rank's part of the run. */
struct mpi_run {
	struct sweep *w;
	int rank, size, finished;
	long *order, norder;
	double flushed;
	FILE *f;		/* rank 0: the output */
	struct blob b;		/* the others: points not sent yet */
	struct outbox ob;
};

/* Take points from the shared counter until none is left: rank 0 writes
 * its own and reads the others' between them; the others send theirs. */
static int take_points(struct mpi_run *m, MPI_Win win, struct pm_err *err)
{
	long one = 1, k;
	int rc = PM_OK;
	for (; !rc;) {
		MPI_Fetch_and_op(&one, &k, MPI_LONG, 0, 0, MPI_SUM, win);
		MPI_Win_flush(0, win);
		if (k >= m->norder)
			break;
		long i = m->order[k];
		if (m->rank == 0) {
			sweep_point(m->w->st, i, &m->w->res[i]);
			m->w->done++;
			if (!(rc = sweep_write_point(m->w, i, m->f, err)))
				rc = receive(m->w, m->f, 0, &m->finished, &m->flushed, err);
		} else if (run_one(m->w->st, i, &m->b) || (MPI_Wtime() - m->ob.last >= 0.05 && post(&m->ob, &m->b))) {
			rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		}
	}
	return rc;
}

/* The end: the others send what is left and say they are done; rank 0
 * takes everything, closes the file and puts it in point order. */
static int finish(struct mpi_run *m, const struct sweep_opts *o, int rc, struct pm_err *err)
{
	if (m->rank) {
		if (m->b.n && post(&m->ob, &m->b))
			rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		MPI_Send(NULL, 0, MPI_CHAR, 0, TAG_POINT, MPI_COMM_WORLD);
		outbox_wait(&m->ob);
		return rc;
	}
	while (m->finished < m->size - 1) {
		int r = receive(m->w, m->f, 1, &m->finished, &m->flushed, err);
		if (r && !rc)
			rc = r;
	}
	if (m->f && fclose(m->f) && !rc)
		rc = pm_fail(err, PM_EINTERNAL, "could not write '%s'", o->out);
	return rc ? rc : sweep_sort_file(o->out, err);
}

int sweep_mpi(struct sweep *w, struct sweep_opts *o, struct pm_err *err)
{
	struct mpi_run m = {w, 0, 0, 0, NULL, 0, 0, NULL, {0}, {0}};
	long probed = 0, *counter = NULL;
	int rc = PM_OK, any;
	MPI_Win win;

	if (!under_mpirun())
		return -1;
	MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &m.size);
	o->rank = m.rank;
	if (m.rank == 0)
		probed = prepare(w, o, &m.order, &m.norder, &m.f, err, &rc);
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Bcast(&m.norder, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	if (!rc && m.rank && !(m.order = malloc(sizeof *m.order * (size_t)(m.norder + 1))))
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	if (!rc)
		MPI_Bcast(m.order, (int)m.norder, MPI_LONG, 0, MPI_COMM_WORLD);
	/* the shared counter of points handed out; rank 0 ran the last probed */
	MPI_Bcast(&probed, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	m.norder -= probed;
	MPI_Win_allocate(m.rank == 0 ? (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &counter,
			 &win);
	if (m.rank == 0)
		*counter = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, win);
	if (!rc)
		rc = take_points(&m, win, err);
	MPI_Win_unlock_all(win);
	rc = finish(&m, o, rc, err);
	MPI_Win_free(&win);
	MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	free(m.b.p);
	free(m.order);
	MPI_Finalize();
	return m.rank == 0 ? rc : PM_OK;
}
