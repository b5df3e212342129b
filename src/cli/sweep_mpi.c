/* sweep_mpi.c: a sweep over MPI ranks (sweep.h).  Rank 0 reads what the
 * output already holds and says which points are owed; every rank takes
 * the next point from a counter held in rank 0's memory (MPI one-sided
 * fetch-and-add), so a rank whose points were cheap takes more and one
 * that finishes early simply stops asking; the command's outputs are
 * gathered at rank 0, which writes the table in point order. */
#include "cli/sweep.h"
#include "cli/cli.h"

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

static int grow(struct blob *b, size_t more)
{
	if (b->n + more <= b->cap)
		return 0;
	size_t cap = 2 * b->cap + more + 4096;
	char *q = realloc(b->p, cap);
	if (!q)
		return -1;
	b->p = q, b->cap = cap;
	return 0;
}

static int add(struct blob *b, const void *data, size_t n)
{
	if (grow(b, n))
		return -1;
	memcpy(b->p + b->n, data, n);
	b->n += n;
	return 0;
}

/* Run point i as sweep_point does, keeping the command's text. */
static int run_one(const struct study *st, long i, struct blob *b)
{
	char *argv[STUDY_MAX_ARGV], *text = NULL;
	size_t len = 0;
	struct pm_err err = {""};
	int argc = study_argv(st, i, argv);
	FILE *f = open_memstream(&text, &len);
	int status = f ? cli_run_cmd(argc, argv, f, &err) : PM_EINTERNAL;
	if (f)
		fclose(f);
	long elen = status ? (long)strlen(err.msg) : 0, tlen = status ? 0 : (long)len;
	int bad = add(b, &i, sizeof i) || add(b, &status, sizeof status) || add(b, &elen, sizeof elen) ||
		  add(b, err.msg, (size_t)elen) || add(b, &tlen, sizeof tlen) || add(b, text ? text : "", (size_t)tlen);
	free(text);
	return bad;
}

/* Rank 0: the gathered blobs back into results. */
static int unpack(struct sweep *w, const char *p, size_t n, struct pm_err *err)
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
	}
	return PM_OK;
}

static int gather(struct sweep *w, const struct blob *b, int rank, int size, struct pm_err *err)
{
	long mine = (long)b->n, *sizes = rank ? NULL : calloc((size_t)size, sizeof *sizes);
	int *counts = rank ? NULL : calloc((size_t)size, sizeof *counts), *displs = rank ? NULL : calloc((size_t)size, sizeof *displs);
	char *all = NULL;
	int rc = PM_OK;

	if (!rank && (!sizes || !counts || !displs))
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	MPI_Gather(&mine, 1, MPI_LONG, sizes, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	long total = 0;
	for (int r = 0; !rank && !rc && r < size; r++) {
		if (total + sizes[r] > 0x7fffffffL)
			rc = pm_fail(err, PM_EINPUT, "the sweep's results pass 2 GiB: split the study or use --shard");
		displs[r] = (int)total, counts[r] = (int)sizes[r], total += sizes[r];
	}
	if (!rank && !rc && !(all = malloc((size_t)total + 1)))
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!rc) {
		MPI_Gatherv(b->p, (int)b->n, MPI_CHAR, all, counts, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
		if (!rank)
			rc = unpack(w, all, (size_t)total, err);
	}
	free(all), free(sizes), free(counts), free(displs);
	return rc;
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

int sweep_mpi(struct sweep *w, struct sweep_opts *o, struct pm_err *err)
{
	int rank, size, rc = PM_OK, had = 0;
	long norder = 0, *order = NULL, *counter = NULL, one = 1, k;
	struct blob b = {0};
	MPI_Win win;

	if (!under_mpirun())
		return -1;
	MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	o->rank = rank;
	if (rank == 0) {
		had = sweep_resume(w, o->out, err);
		if (had < 0)
			rc = -had, had = 0;
		else if (!(order = sweep_order(w, o, &norder)))
			rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Bcast(&norder, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	if (!rc && rank && !(order = malloc(sizeof *order * (size_t)(norder + 1))))
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	long *dispatch = NULL;
	if (!rc)
		MPI_Bcast(order, (int)norder, MPI_LONG, 0, MPI_COMM_WORLD);
	if (!rc && (dispatch = malloc(sizeof *dispatch * (size_t)(norder + 1)))) {
		memcpy(dispatch, order, sizeof *order * (size_t)norder);
		dearest_first(w, dispatch, norder);
	} else if (!rc) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	/* the shared counter of points handed out */
	MPI_Win_allocate(rank == 0 ? (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win);
	if (rank == 0)
		*counter = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, win);
	for (; !rc;) {
		MPI_Fetch_and_op(&one, &k, MPI_LONG, 0, 0, MPI_SUM, win);
		MPI_Win_flush(0, win);
		if (k >= norder)
			break;
		if (run_one(w->st, dispatch[k], &b))
			rc = pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	MPI_Win_unlock_all(win);
	MPI_Win_free(&win);
	int any;
	MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (!any)
		rc = gather(w, &b, rank, size, err);
	else if (!rc)
		rc = pm_fail(err, PM_EINTERNAL, "another rank failed");
	if (!rc && rank == 0) {
		w->todo = w->done = norder;
		rc = sweep_write_all(w, o, order, norder, had, err);
	}
	free(b.p);
	free(order);
	free(dispatch);
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	if (rank != 0 && !rc)
		rc = PM_OK;
	return rc;
}
