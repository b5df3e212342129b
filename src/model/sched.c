/* sched.c: building, sorting and checking schedules. */
#include "model/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Large transfer arrays are page-aligned and offered huge pages: on
 * virtual machines where a page fault costs microseconds, first touching
 * hundreds of megabytes otherwise dominates the evaluation time. */
#define HUGE_BYTES (4u << 20)
#define HUGE_ALIGN (2u << 20)

static void *alloc_xfers(size_t n, int *huge)
{
	size_t bytes = n * sizeof(struct pm_xfer);
	void *p = NULL;

	*huge = 0;
	if (bytes >= HUGE_BYTES && posix_memalign(&p, HUGE_ALIGN, bytes) == 0) {
#ifdef MADV_HUGEPAGE
		madvise(p, bytes, MADV_HUGEPAGE);
#endif
		*huge = 1;
		return p;
	}
	return malloc(bytes);
}

int pm_sched_init(struct pm_sched *s, int nranks, uint32_t nchunks,
		  struct pm_err *err)
{
	memset(s, 0, sizeof *s);
	s->nranks = nranks;
	s->nchunks = nchunks ? nchunks : 1;
	s->second_phase = -1;
	s->limit = PM_SCHED_MAX_XFERS;
	s->map = malloc(sizeof(int) * (size_t)(nranks > 0 ? nranks : 1));
	s->capsteps = 64;
	s->step_off = calloc((size_t)s->capsteps + 1, sizeof(size_t));
	if (!s->map || !s->step_off)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int i = 0; i < nranks; i++)
		s->map[i] = i;
	strcpy(s->mapping, "identity: rank i on endpoint i");
	return PM_OK;
}

void pm_sched_release(struct pm_sched *s)
{
	free(s->map);
	free(s->step_off);
	free(s->x);
	free(s->route_off);
	free(s->route);
	memset(s, 0, sizeof *s);
}

void pm_sched_reserve(struct pm_sched *s, size_t n)
{
	int huge;

	if (n <= s->cap || n > s->limit || s->nx)
		return;
	struct pm_xfer *x = alloc_xfers(n, &huge);
	if (x) {
		free(s->x);
		s->x = x;
		s->cap = n;
		s->huge = huge;
	}
}

/* Open steps up to `step`: step_off[k+1] is where step k+1 starts. */
static int open_step(struct pm_sched *s, int step)
{
	if (step + 1 > s->capsteps) {
		int cap = s->capsteps;
		while (cap < step + 1)
			cap *= 2;
		size_t *o = realloc(s->step_off, sizeof(size_t) * ((size_t)cap + 1));
		if (!o)
			return -1;
		s->step_off = o;
		s->capsteps = cap;
	}
	while (s->nsteps <= step)	/* steps in between stay empty */
		s->step_off[++s->nsteps] = s->nx;
	return 0;
}

void pm_sched_add(struct pm_sched *s, int step, int src, int dst,
		  uint32_t lo, uint32_t cnt, enum pm_op op, int flow)
{
	if (s->failed)
		return;
	if (step < s->nsteps - 1 || step < 0) {
		s->failed = PM_EINTERNAL + 100;	/* out of order: a builder bug */
		return;
	}
	if (s->nx == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		if (s->nx >= s->limit) {
			s->failed = PM_EINPUT;
			return;
		}
		if (cap > s->limit)
			cap = s->limit;
		struct pm_xfer *x = realloc(s->x, sizeof *x * cap);
		if (!x) {
			s->failed = PM_EINTERNAL;
			return;
		}
		s->x = x;
		s->cap = cap;
	}
	if (open_step(s, step)) {
		s->failed = PM_EINTERNAL;
		return;
	}
	s->x[s->nx++] = (struct pm_xfer){src, dst, lo, cnt, (uint16_t)op,
					 (uint16_t)flow};
	s->step_off[s->nsteps] = s->nx;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t cap2 = *cap ? *cap : 1024;
	while (cap2 < need)
		cap2 *= 2;
	if (cap2 == *cap && *p)
		return 0;
	void *q = realloc(*p, cap2 * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = cap2;
	return 0;
}

void pm_sched_add_routed(struct pm_sched *s, int step, int src, int dst,
			 uint32_t lo, uint32_t cnt, enum pm_op op, int flow,
			 const int *links, int nlinks)
{
	size_t before = s->nx;

	if (s->failed)
		return;
	if (!s->route_off && s->nx > 0) {
		s->failed = PM_EINTERNAL + 100;	/* mixed routed and unrouted */
		return;
	}
	pm_sched_add(s, step, src, dst, lo, cnt, op, flow);
	if (s->failed || s->nx == before)
		return;
	int first = !s->route_off;
	if (grow((void **)&s->route_off, &s->capoff, s->nx + 1, sizeof(uint32_t)) ||
	    grow((void **)&s->route, &s->caproute, s->nroute + (size_t)nlinks + 1,
		 sizeof(int32_t))) {
		s->failed = PM_EINTERNAL;
		return;
	}
	if (first)
		s->route_off[0] = 0;
	for (int i = 0; i < nlinks; i++)
		s->route[s->nroute++] = links[i];
	s->route_off[s->nx] = (uint32_t)s->nroute;
}

int pm_sched_finish(struct pm_sched *s, struct pm_err *err)
{
	if (s->failed == PM_EINPUT)
		return pm_fail(err, PM_EINPUT,
			       "schedule too large: more than %zu transfers on %d ranks (expected a smaller network or fewer pipeline chunks; the closed form, --model closed, has no such limit)",
			       s->limit, s->nranks);
	if (s->failed == PM_EINTERNAL + 100)
		return pm_fail(err, PM_EINTERNAL,
			       "internal error: a schedule builder added steps out of order or mixed routed and unrouted transfers");
	if (s->failed)
		return pm_fail(err, PM_EINTERNAL, "out of memory building a schedule");
	return PM_OK;
}

/* Contribution sets: bit r of set(rank, chunk) says rank r's data is in. */
struct sets {
	int words;
	uint64_t *bits;
};

static uint64_t *set_of(struct sets *z, const struct pm_sched *s, int rank,
			uint32_t chunk)
{
	return z->bits + ((size_t)rank * s->nchunks + chunk) * (size_t)z->words;
}

int pm_sched_check_allreduce(const struct pm_sched *s, struct pm_err *err)
{
	int P = s->nranks, W = (P + 63) / 64, rc = PM_OK;
	size_t total;
	struct sets cur, nxt;

	if (P > 512 || s->nchunks > 4096)
		return pm_fail(err, PM_EINPUT,
			       "schedule too large to check: %d ranks, %u chunks (expected at most 512 and 4096)",
			       P, s->nchunks);
	total = (size_t)P * s->nchunks * (size_t)W;
	cur = (struct sets){W, calloc(total, sizeof(uint64_t))};
	nxt = (struct sets){W, calloc(total, sizeof(uint64_t))};
	if (!cur.bits || !nxt.bits) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		goto out;
	}
	for (int r = 0; r < P; r++)
		for (uint32_t c = 0; c < s->nchunks; c++)
			set_of(&cur, s, r, c)[r / 64] |= 1ull << (r % 64);
	for (int k = 0; k < s->nsteps; k++) {
		memcpy(nxt.bits, cur.bits, total * sizeof(uint64_t));
		for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
			const struct pm_xfer *x = &s->x[i];
			if (x->src < 0 || x->src >= P || x->dst < 0 || x->dst >= P ||
			    x->src == x->dst || x->lo + x->cnt > s->nchunks) {
				rc = pm_fail(err, PM_EINPUT,
					     "step %d: malformed transfer %d -> %d of chunks [%u,%u)",
					     k, x->src, x->dst, x->lo, x->lo + x->cnt);
				goto out;
			}
			for (uint32_t c = x->lo; c < x->lo + x->cnt; c++) {
				uint64_t *from = set_of(&cur, s, x->src, c);
				uint64_t *to = set_of(&nxt, s, x->dst, c);
				for (int w = 0; w < W; w++) {
					if (x->op == PM_REDUCE && (to[w] & from[w])) {
						rc = pm_fail(err, PM_EINPUT,
							     "step %d: rank %d reduces chunk %u from rank %d twice over (a contribution counted twice)",
							     k, x->dst, c, x->src);
						goto out;
					}
					to[w] = x->op == PM_REDUCE ? to[w] | from[w] : from[w];
				}
			}
		}
		struct sets t = cur;
		cur = nxt;
		nxt = t;
	}
	for (int r = 0; r < P; r++)
		for (uint32_t c = 0; c < s->nchunks; c++) {
			uint64_t *b = set_of(&cur, s, r, c);
			int have = 0;
			for (int w = 0; w < W; w++)
				have += __builtin_popcountll(b[w]);
			if (have != P) {
				rc = pm_fail(err, PM_EINPUT,
					     "rank %d ends with chunk %u reduced over %d of %d ranks",
					     r, c, have, P);
				goto out;
			}
		}
out:
	free(cur.bits);
	free(nxt.bits);
	return rc;
}
