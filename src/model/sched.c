/* sched.c: building, sorting and checking schedules. */
#include "model/sched.h"
#include "model/grow.h"

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
	free(s->runs);
	free(s->rot);
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

int pm_sched_keep(struct pm_sched *s, int from, int to, struct pm_err *err)
{
	int L = 0, ra = -1, rb = -1, rc;

	for (int r = 0; r < s->nruns; r++) {
		int len = s->runs[r].span * s->runs[r].rep;
		if (L == from)
			ra = r;
		if (L + len == to)
			rb = r;
		L += len;
	}
	if (from < 0 || from >= to || to > s->nsteps)
		return pm_fail(err, PM_EINTERNAL, "internal error: cannot keep steps [%d,%d) of a %d-step schedule",
			       from, to, s->nsteps);
	if (ra < 0 || rb < ra) {	/* inside a repeated run: play it out first */
		struct pm_sched e;
		if ((rc = pm_sched_expand(s, &e, s->limit ? s->limit : PM_SCHED_MAX_XFERS, err)))
			return rc;
		pm_sched_release(s);
		*s = e;
		return pm_sched_keep(s, from, to, err);
	}
	int sa = s->runs[ra].first, sb = s->runs[rb].first + s->runs[rb].span;
	size_t xa = s->step_off[sa], xb = s->step_off[sb];
	memmove(s->x, s->x + xa, (xb - xa) * sizeof *s->x);
	if (s->rot)
		memmove(s->rot, s->rot + xa, (xb - xa) * sizeof *s->rot);
	if (s->route_off) {
		uint32_t r0 = s->route_off[xa];
		size_t nr = s->route_off[xb] - r0;
		memmove(s->route, s->route + r0, nr * sizeof *s->route);
		for (size_t i = 0; i <= xb - xa; i++)
			s->route_off[i] = s->route_off[xa + i] - r0;
		s->nroute = nr;
	}
	for (int k = 0; k <= sb - sa; k++)
		s->step_off[k] = s->step_off[sa + k] - xa;
	s->nx = xb - xa;
	s->nstored = sb - sa;
	s->nx_played = 0;
	for (int r = ra; r <= rb; r++) {
		struct pm_run run = s->runs[r];
		run.first -= sa;
		s->runs[r - ra] = run;
		s->nx_played += (double)(s->step_off[run.first + run.span] - s->step_off[run.first]) * run.rep;
	}
	s->nruns = rb - ra + 1;
	s->nsteps = to - from;
	s->second_phase = -1;
	return PM_OK;
}

/* Open stored steps up to logical step `step`, each a run of its own;
 * step_off[k+1] is where stored step k+1 starts. */
static int open_step(struct pm_sched *s, int step)
{
	while (s->nsteps <= step) {
		if ((size_t)s->nstored + 1 > s->capsteps) {
			if (pm_resize(&s->step_off, 2 * s->capsteps + 1, sizeof(size_t)))
				return -1;
			s->capsteps *= 2;
		}
		if (pm_grow(&s->runs, &s->capruns, (size_t)s->nruns + 1, sizeof *s->runs, 1024))
			return -1;
		s->runs[s->nruns++] = (struct pm_run){s->nstored, 1, 1};
		s->step_off[++s->nstored] = s->nx;
		s->nsteps++;
	}
	return 0;
}

/* May a transfer go to logical step `step`?  Only to the last step if it
 * is not part of a repeated run, or to a later one. */
static int in_order(const struct pm_sched *s, int step)
{
	if (step < 0 || step < s->nsteps - 1)
		return 0;
	if (step == s->nsteps - 1) {
		const struct pm_run *r = &s->runs[s->nruns - 1];
		return r->rep == 1 && r->span == 1;
	}
	return 1;
}

/* Room for one more transfer (the rotations, where kept, alongside):
 * doubled from 1024, never past the stored-transfer limit. */
static int make_room(struct pm_sched *s)
{
	size_t cap = pm_grow_cap(s->cap, s->nx + 1, 1024);

	if (cap > s->limit)
		cap = s->limit;
	if (pm_resize(&s->x, cap, sizeof *s->x) || (s->rot && pm_resize(&s->rot, cap, sizeof *s->rot)))
		return -1;
	s->cap = cap;
	return 0;
}

void pm_sched_add(struct pm_sched *s, int step, int src, int dst,
		  uint32_t lo, uint32_t cnt, enum pm_op op, int flow)
{
	if (s->failed)
		return;
	if (!in_order(s, step)) {
		s->failed = PM_EINTERNAL + 100;	/* out of order: a builder bug */
		return;
	}
	if (s->nx == s->cap && s->nx >= s->limit) {
		s->failed = PM_EINPUT;
		return;
	}
	if ((s->nx == s->cap && make_room(s)) || open_step(s, step)) {
		s->failed = PM_EINTERNAL;
		return;
	}
	if (s->rot)	/* the rotation array has x's capacity */
		s->rot[s->nx] = (struct pm_rot){0, 0, 0};
	s->x[s->nx++] = (struct pm_xfer){src, dst, lo, cnt, (uint8_t)op, 0,
					 (uint16_t)flow};
	s->step_off[s->nstored] = s->nx;
	s->nx_played += 1;
}

void pm_sched_at_switch(struct pm_sched *s)
{
	if (!s->failed && s->nx > 0)
		s->x[s->nx - 1].at_switch = 1;
}

size_t pm_sched_switch_xfers(const struct pm_sched *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nx; i++)
		n += s->x[i].at_switch;
	return n;
}

void pm_sched_add_rot(struct pm_sched *s, int step, int src, int dst,
		      uint32_t lo, uint32_t cnt, enum pm_op op, int flow,
		      uint32_t wlo, uint32_t wlen, int32_t by)
{
	size_t before = s->nx;

	pm_sched_add(s, step, src, dst, lo, cnt, op, flow);
	if (s->failed || s->nx == before)
		return;
	if (!s->rot) {
		s->rot = calloc(s->cap, sizeof *s->rot);
		if (!s->rot) {
			s->failed = PM_EINTERNAL;
			return;
		}
	}
	s->rot[before] = (struct pm_rot){wlo, wlen, by};
}

void pm_sched_repeat(struct pm_sched *s, int span, int rep)
{
	if (s->failed || rep == 1)
		return;
	if (span < 1 || rep < 1 || span > s->nruns) {
		s->failed = PM_EINTERNAL + 100;
		return;
	}
	for (int i = s->nruns - span; i < s->nruns; i++)
		if (s->runs[i].rep != 1 || s->runs[i].span != 1) {
			s->failed = PM_EINTERNAL + 100;
			return;
		}
	int first = s->runs[s->nruns - span].first;
	size_t nx = s->nx - s->step_off[first];
	s->nruns -= span - 1;
	s->runs[s->nruns - 1] = (struct pm_run){first, span, rep};
	s->nsteps += span * (rep - 1);
	s->nx_played += (double)nx * (rep - 1);
}

int pm_sched_is_compact(const struct pm_sched *s)
{
	return s->nstored != s->nsteps;
}

uint32_t pm_sched_lo(const struct pm_sched *s, size_t i, long j)
{
	const struct pm_xfer *x = &s->x[i];

	if (!s->rot || j == 0 || s->rot[i].wlen == 0)
		return x->lo;
	const struct pm_rot *r = &s->rot[i];
	long long w = r->wlen, off = (long long)x->lo - r->wlo + (long long)j * r->by;
	off %= w;
	if (off < 0)
		off += w;
	return r->wlo + (uint32_t)off;
}

/* Append stored step k of s, pass j, as logical step `step` of out. */
static void expand_step(const struct pm_sched *s, int k, long j,
			struct pm_sched *out, int step)
{
	for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
		const struct pm_xfer *x = &s->x[i];
		uint32_t lo = pm_sched_lo(s, i, j);
		if (s->route_off)
			pm_sched_add_routed(out, step, x->src, x->dst, lo, x->cnt,
					    (enum pm_op)x->op, x->flow,
					    s->route + s->route_off[i],
					    (int)(s->route_off[i + 1] - s->route_off[i]));
		else
			pm_sched_add(out, step, x->src, x->dst, lo, x->cnt,
				     (enum pm_op)x->op, x->flow);
		if (x->at_switch)
			pm_sched_at_switch(out);
	}
	if (s->step_off[k] == s->step_off[k + 1] && !out->failed &&
	    open_step(out, step))
		out->failed = PM_EINTERNAL;	/* keep empty steps */
}

int pm_sched_expand(const struct pm_sched *s, struct pm_sched *out,
		    size_t limit, struct pm_err *err)
{
	int rc, step = 0;

	if (s->nx_played > (double)limit)
		return pm_fail(err, PM_EINPUT,
			       "schedule too large to play out: %.0f transfers on %d ranks (expected at most %zu)",
			       s->nx_played, s->nranks, limit);
	rc = pm_sched_init(out, s->nranks, s->nchunks, err);
	if (rc)
		return rc;
	out->limit = limit;
	memcpy(out->map, s->map, sizeof(int) * (size_t)(s->nranks > 0 ? s->nranks : 1));
	memcpy(out->mapping, s->mapping, sizeof out->mapping);
	out->second_phase = s->second_phase;
	pm_sched_reserve(out, (size_t)s->nx_played);
	for (int r = 0; r < s->nruns; r++) {
		const struct pm_run *run = &s->runs[r];
		for (long j = 0; j < run->rep; j++)
			for (int k = run->first; k < run->first + run->span; k++)
				expand_step(s, k, j, out, step++);
	}
	rc = pm_sched_finish(out, err);
	if (rc)
		pm_sched_release(out);
	return rc;
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
	if (pm_grow(&s->route_off, &s->capoff, s->nx + 1, sizeof(uint32_t), 1024) ||
	    pm_grow(&s->route, &s->caproute, s->nroute + (size_t)nlinks + 1, sizeof(int32_t), 1024)) {
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

/* Play stored steps [from, to) of an expanded schedule on cur (nxt is
 * scratch of the same size). */
static int replay(const struct pm_sched *s, int from, int to, struct sets *cur,
		  struct sets *nxt, struct pm_err *err)
{
	int P = s->nranks, W = cur->words;
	size_t total = (size_t)P * s->nchunks * (size_t)W;

	for (int k = from; k < to; k++) {
		memcpy(nxt->bits, cur->bits, total * sizeof(uint64_t));
		for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
			const struct pm_xfer *x = &s->x[i];
			if (x->src < 0 || x->src >= P || x->dst < 0 || x->dst >= P ||
			    x->src == x->dst || (uint64_t)x->lo + x->cnt > s->nchunks)
				return pm_fail(err, PM_EINPUT,
					       "step %d: malformed transfer %d -> %d of chunks [%u,%u)",
					       k, x->src, x->dst, x->lo, x->lo + x->cnt);
			for (uint32_t c = x->lo; c < x->lo + x->cnt; c++) {
				uint64_t *from_set = set_of(cur, s, x->src, c);
				uint64_t *to_set = set_of(nxt, s, x->dst, c);
				for (int w = 0; w < W; w++) {
					if (x->op == PM_REDUCE && (to_set[w] & from_set[w]))
						return pm_fail(err, PM_EINPUT,
							       "step %d: rank %d reduces chunk %u from rank %d twice over (a contribution counted twice)",
							       k, x->dst, c, x->src);
					to_set[w] = x->op == PM_REDUCE ? to_set[w] | from_set[w] : from_set[w];
				}
			}
		}
		struct sets t = *cur;
		*cur = *nxt;
		*nxt = t;
	}
	return PM_OK;
}

/* Ranks whose data set(rank, chunk) holds. */
static int count(const struct sets *z, const struct pm_sched *s, int r, uint32_t c)
{
	const uint64_t *b = z->bits + ((size_t)r * s->nchunks + c) * (size_t)z->words;
	int have = 0;
	for (int w = 0; w < z->words; w++)
		have += __builtin_popcountll(b[w]);
	return have;
}

/* The end state the collective promises (see pm_sched_check). */
static int check_end(const struct pm_sched *s, const struct sets *z, enum pm_coll_end end,
		     struct pm_err *err)
{
	int P = s->nranks;

	if (end == PM_END_ALL_EVERYWHERE) {
		for (int r = 0; r < P; r++)
			for (uint32_t c = 0; c < s->nchunks; c++)
				if (count(z, s, r, c) != P)
					return pm_fail(err, PM_EINPUT,
						       "rank %d ends with chunk %u reduced over %d of %d ranks",
						       r, c, count(z, s, r, c), P);
		return PM_OK;
	}
	if (end == PM_END_EACH_SOMEWHERE) {
		for (uint32_t c = 0; c < s->nchunks; c++) {
			int found = 0;
			for (int r = 0; r < P && !found; r++)
				found = count(z, s, r, c) == P;
			if (!found)
				return pm_fail(err, PM_EINPUT,
					       "no rank ends with chunk %u reduced over all %d ranks",
					       c, P);
		}
		return PM_OK;
	}
	for (int r = 0; r < P; r++) {	/* PM_END_ONE_HAS_ALL */
		uint32_t c = 0;
		while (c < s->nchunks && count(z, s, r, c) == P)
			c++;
		if (c == s->nchunks)
			return PM_OK;
	}
	return pm_fail(err, PM_EINPUT, "no rank ends with every chunk reduced over all %d ranks", P);
}

static int check_stored(const struct pm_sched *s, int split, enum pm_coll_end first_end,
			enum pm_coll_end end, struct pm_err *err)
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
	if (split >= 0) {
		/* the first part must reach first_end; then only what it left
		 * complete counts, and the rest must spread it */
		if ((rc = replay(s, 0, split, &cur, &nxt, err)) ||
		    (rc = check_end(s, &cur, first_end, err)))
			goto out;
		for (int r = 0; r < P; r++)
			for (uint32_t c = 0; c < s->nchunks; c++)
				if (count(&cur, s, r, c) != P)
					memset(set_of(&cur, s, r, c), 0, sizeof(uint64_t) * (size_t)W);
	}
	if ((rc = replay(s, split >= 0 ? split : 0, s->nsteps, &cur, &nxt, err)))
		goto out;
	rc = check_end(s, &cur, end, err);
out:
	free(cur.bits);
	free(nxt.bits);
	return rc;
}

int pm_sched_check(const struct pm_sched *s, int split, enum pm_coll_end first_end,
		   enum pm_coll_end end, struct pm_err *err)
{
	struct pm_sched e;
	int rc;

	if (!pm_sched_is_compact(s))
		return check_stored(s, split, first_end, end, err);
	if (s->nranks > 512 || s->nchunks > 4096)
		return check_stored(s, split, first_end, end, err);	/* refuses with the limits */
	rc = pm_sched_expand(s, &e, PM_SCHED_MAX_XFERS, err);
	if (rc)
		return rc;
	rc = check_stored(&e, split, first_end, end, err);
	pm_sched_release(&e);
	return rc;
}

int pm_sched_check_allreduce(const struct pm_sched *s, struct pm_err *err)
{
	return pm_sched_check(s, -1, PM_END_ALL_EVERYWHERE, PM_END_ALL_EVERYWHERE, err);
}
