/* msccl_write.c: a schedule as MSCCL algorithm XML that the MSCCL
 * executor (Azure/msccl-executor-nccl, src/misc/msccl/msccl_parser.cc)
 * loads and runs as the schedule means (msccl.h).
 *
 * The executor runs each thread block's steps in order; a step waits for
 * the one step its depid/deps names (on the same GPU), and the sends and
 * receives of a connection (peer, channel) pair up first in, first out.
 * So every hazard on a (rank, unit) cell becomes a wait:
 *   a send waits for the last receive into each of its cells;
 *   a receive waits for the last receive into each of its cells (two
 *   receive-reduce-copies into one chunk would race: they are chained)
 *   and for every send that read the cell since (it must not be
 *   overwritten while read).
 * A step with several waits gets one "nop" step in front per extra wait.
 * Counts the executor cannot carry in one step (MSCCL_MAX_COUNT) are cut
 * into pieces, each its own send and receive.  A connection's steps that
 * do not fit one thread block (MSCCL_MAX_NUM_STEPS, 64 in the executor's
 * default build) continue on the next channel, cut at the same piece on
 * both sides so that the pairing holds.  The executor's other limits
 * (channels, thread blocks per channel, elements per GPU) are checked and
 * a schedule past them refused, naming the limit.
 */
#include "model/grow.h"
#include "model/msccl.h"

#include <libxml/xmlwriter.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define MAX_CELLS (1u << 24)
#define MAX_PIECES (1u << 24)
/* the executor's build constants (msccl_struct.h, msccl_parser.h, device.h) */
#define EXEC_MAX_COUNT 72	/* a step's count must be below it */
#define EXEC_TB_PER_CHANNEL 32
#define EXEC_MAX_CHANNELS 32
#define EXEC_MAX_NODES 4096	/* elements the parser keeps for one GPU */

struct piece {
	uint32_t x;		/* the schedule transfer */
	uint32_t lo, cnt;
	int ch;			/* channel */
};

struct mstep {
	const char *type;
	unsigned off, cnt;
	int depid, deps, hasdep;
};

struct tb {
	int send, recv, ch;	/* peers (-1 none), channel */
	struct mstep *st;
	int n;
	size_t cap;
};

struct gpu {
	struct tb *tb;
	int n;
	size_t cap;
};

struct link {
	uint32_t piece, next;
};

struct w {
	const struct pm_sched *s;
	int max_steps;
	struct piece *p;
	size_t np, capp;
	size_t *doff;			/* per (piece, side): its waits, dep[doff..doff+dn) */
	uint32_t *dn, *dep, *stamp;	/* a wait is piece*2+side, side 0 send, 1 receive */
	size_t ndep, capdep;
	uint32_t *lastw, *reads;	/* per cell: last receive into it; sends since (list) */
	struct link *pool;
	size_t npool, cappool;
	int *at_tb, *at_st;		/* per (piece, side): its step once laid out */
	struct gpu *g;
	int nchannels;
};

/* The schedule's transfers cut into pieces the executor can carry, in
 * schedule order. */
static int cut(struct w *w)
{
	const struct pm_sched *s = w->s;
	const uint32_t most = EXEC_MAX_COUNT - 1;

	for (size_t i = 0; i < s->nx; i++) {
		uint32_t end = s->x[i].lo + s->x[i].cnt;
		for (uint32_t lo = s->x[i].lo; lo < end; lo += most) {
			if (w->np >= MAX_PIECES || pm_grow(&w->p, &w->capp, w->np + 1, sizeof *w->p, 64))
				return -1;
			w->p[w->np++] = (struct piece){(uint32_t)i, lo, end - lo < most ? end - lo : most, 0};
		}
	}
	return 0;
}

static int wait_on(struct w *w, uint32_t self, uint32_t d)
{
	if (w->stamp[d] == self + 1)
		return 0;	/* already waited for */
	w->stamp[d] = self + 1;
	if (pm_grow(&w->dep, &w->capdep, w->ndep + 1, sizeof *w->dep, 64))
		return -1;
	w->dep[w->ndep++] = d;
	w->dn[self]++;
	return 0;
}

/* The waits of piece q's side: a send (side 0) on the source rank, a
 * receive (side 1) on the destination. */
static int waits(struct w *w, uint32_t q, int side)
{
	const struct pm_xfer *x = &w->s->x[w->p[q].x];
	size_t U = w->s->nchunks, base = (size_t)(side ? x->dst : x->src) * U;
	uint32_t self = 2 * q + (uint32_t)side;

	w->doff[self] = w->ndep;
	for (uint32_t c = w->p[q].lo; c < w->p[q].lo + w->p[q].cnt; c++) {
		uint32_t *rd = &w->reads[base + c];
		if (w->lastw[base + c] != NONE && wait_on(w, self, 2 * w->lastw[base + c] + 1))
			return -1;
		if (!side) {	/* remember the read until the next write */
			if (pm_grow(&w->pool, &w->cappool, w->npool + 1, sizeof *w->pool, 64))
				return -1;
			w->pool[w->npool] = (struct link){q, *rd};
			*rd = (uint32_t)w->npool++;
			continue;
		}
		for (uint32_t k = *rd; k != NONE; k = w->pool[k].next)
			if (wait_on(w, self, 2 * w->pool[k].piece))
				return -1;
		*rd = NONE;
		w->lastw[base + c] = q;
	}
	return 0;
}

/* fn for every piece's send side then receive side, step by step (a
 * step's sends read what the earlier steps wrote, then its receives
 * write): the order the waits are found in and the steps laid out in. */
static int each_side(struct w *w, int (*fn)(struct w *, uint32_t, int))
{
	const struct pm_sched *s = w->s;
	size_t q0 = 0;

	for (int k = 0; k < s->nsteps; k++) {
		size_t q1 = q0;
		while (q1 < w->np && w->p[q1].x < s->step_off[k + 1])
			q1++;
		for (int side = 0; side < 2; side++)
			for (size_t q = q0; q < q1; q++)
				if (fn(w, (uint32_t)q, side))
					return -1;
		q0 = q1;
	}
	return 0;
}

/* A piece keyed by its connection, then its schedule order. */
struct keyed {
	int32_t src, dst;
	uint32_t q;
};

static int by_pair(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->q < y->q ? -1 : x->q > y->q;
}

/* Each connection's pieces in order, a new channel where the thread block
 * of either side would pass max_steps (a step and one nop per extra wait). */
static int channels(struct w *w, struct pm_err *err)
{
	struct keyed *o = malloc(sizeof *o * (w->np + 1));
	int used_s = 0, used_r = 0, ch = 0;

	if (!o)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (size_t q = 0; q < w->np; q++)
		o[q] = (struct keyed){w->s->x[w->p[q].x].src, w->s->x[w->p[q].x].dst, (uint32_t)q};
	qsort(o, w->np, sizeof *o, by_pair);
	w->nchannels = w->np ? 1 : 0;
	for (size_t i = 0; i < w->np; i++) {
		uint32_t q = o[i].q;
		int ns = w->dn[2 * q] > 1 ? (int)w->dn[2 * q] : 1;
		int nr = w->dn[2 * q + 1] > 1 ? (int)w->dn[2 * q + 1] : 1;
		if (!i || o[i - 1].src != o[i].src || o[i - 1].dst != o[i].dst)	/* a new connection */
			ch = 0, used_s = used_r = 0;
		if (ns > w->max_steps || nr > w->max_steps) {
			const struct pm_xfer *x = &w->s->x[w->p[q].x];
			free(o);
			return pm_fail(err, PM_EINPUT,
				       "MSCCL export: a step of %d -> %d waits for %d earlier steps, more than a thread block holds (%d; expected --msccl-max-steps as large as the executor's MSCCL_MAX_NUM_STEPS allows)",
				       x->src, x->dst, ns > nr ? ns : nr, w->max_steps);
		}
		if (used_s + ns > w->max_steps || used_r + nr > w->max_steps)
			ch++, used_s = used_r = 0;
		used_s += ns;
		used_r += nr;
		w->p[q].ch = ch;
		if (ch + 1 > w->nchannels)
			w->nchannels = ch + 1;
	}
	free(o);
	return PM_OK;
}

static int tb_of(struct w *w, int r, int send, int peer, int ch)
{
	struct gpu *g = &w->g[r];
	for (int k = 0; k < g->n; k++)
		if ((send ? g->tb[k].send : g->tb[k].recv) == peer && g->tb[k].ch == ch)
			return k;
	if (pm_grow(&g->tb, &g->cap, (size_t)g->n + 1, sizeof *g->tb, 64))
		return -1;
	g->tb[g->n] = (struct tb){send ? peer : -1, send ? -1 : peer, ch, NULL, 0, 0};
	return g->n++;
}

static int add_step(struct tb *b, struct mstep st)
{
	if (pm_grow(&b->st, &b->cap, (size_t)b->n + 1, sizeof *b->st, 64))
		return -1;
	b->st[b->n] = st;
	return b->n++;
}

/* Piece q's side as steps of its thread block: a nop per extra wait, the
 * last wait on the step itself; waits on the same thread block are kept
 * by its order. */
static int lay(struct w *w, uint32_t q, int side)
{
	const struct pm_xfer *x = &w->s->x[w->p[q].x];
	uint32_t self = 2 * q + (uint32_t)side;
	int r = side ? x->dst : x->src, peer = side ? x->src : x->dst;
	int tb = tb_of(w, r, !side, peer, w->p[q].ch), last = -1;

	if (tb < 0)
		return -1;
	for (uint32_t k = 0; k < w->dn[self]; k++) {
		uint32_t d = w->dep[w->doff[self] + k];
		int dt = w->at_tb[d], ds = w->at_st[d];
		if (dt == tb)
			continue;
		w->g[r].tb[dt].st[ds].hasdep = 1;
		if (last >= 0 && add_step(&w->g[r].tb[tb], (struct mstep){"nop", 0, 0, w->at_tb[last], w->at_st[last], 0}) < 0)
			return -1;
		last = (int)d;
	}
	const char *type = side ? (x->op == PM_REDUCE ? "rrc" : "r") : "s";
	int st = add_step(&w->g[r].tb[tb], (struct mstep){type, w->p[q].lo, w->p[q].cnt,
							  last >= 0 ? w->at_tb[last] : -1, last >= 0 ? w->at_st[last] : -1, 0});
	if (st < 0)
		return -1;
	w->at_tb[self] = tb;
	w->at_st[self] = st;
	return 0;
}

/* The executor's limits on what one GPU's part of the file may hold. */
static int check_limits(const struct w *w, struct pm_err *err)
{
	if (w->nchannels > EXEC_MAX_CHANNELS)
		return pm_fail(err, PM_EINPUT,
			       "MSCCL export: %d channels needed to keep every thread block within %d steps (expected at most %d, the executor's MAXCHANNELS; a larger --msccl-max-steps, if the executor was built with it, needs fewer)",
			       w->nchannels, w->max_steps, EXEC_MAX_CHANNELS);
	for (int r = 0; r < w->s->nranks; r++) {
		const struct gpu *g = &w->g[r];
		long elems = 2 + g->n;
		for (int c = 0; c < w->nchannels; c++) {
			int sends = 0, recvs = 0;
			for (int k = 0; k < g->n; k++) {
				sends += g->tb[k].ch == c && g->tb[k].send >= 0;
				recvs += g->tb[k].ch == c && g->tb[k].recv >= 0;
			}
			if (sends > EXEC_TB_PER_CHANNEL || recvs > EXEC_TB_PER_CHANNEL)
				return pm_fail(err, PM_EINPUT,
					       "MSCCL export: rank %d talks to %d peers on channel %d (expected at most %d thread blocks that %s a channel, the executor's MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL)",
					       r, sends > recvs ? sends : recvs, c, EXEC_TB_PER_CHANNEL, sends > recvs ? "send on" : "receive on");
		}
		for (int k = 0; k < g->n; k++)
			elems += g->tb[k].n;
		if (elems > EXEC_MAX_NODES)
			return pm_fail(err, PM_EINPUT,
				       "MSCCL export: rank %d has %ld XML elements (thread blocks and steps; expected at most %d, what the executor's parser keeps for one GPU)",
				       r, elems, EXEC_MAX_NODES);
	}
	return PM_OK;
}

static int emit_tb(xmlTextWriterPtr xw, const struct tb *b, int id)
{
	int rc = 0;

	rc |= xmlTextWriterStartElement(xw, BAD_CAST "tb") < 0;
	rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "id", "%d", id) < 0;
	rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "send", "%d", b->send) < 0;
	rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "recv", "%d", b->recv) < 0;
	rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "chan", "%d", b->ch) < 0;
	for (int j = 0; j < b->n && !rc; j++) {
		const struct mstep *m = &b->st[j];
		rc |= xmlTextWriterStartElement(xw, BAD_CAST "step") < 0;
		rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "s", "%d", j) < 0;
		rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "type", BAD_CAST m->type) < 0;
		rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "srcbuf", BAD_CAST "i") < 0;
		rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "srcoff", "%u", m->off) < 0;
		rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "dstbuf", BAD_CAST "i") < 0;
		rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "dstoff", "%u", m->off) < 0;
		rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "cnt", "%u", m->cnt) < 0;
		rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "depid", "%d", m->depid) < 0;
		rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "deps", "%d", m->deps) < 0;
		rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "hasdep", "%d", m->hasdep) < 0;
		rc |= xmlTextWriterEndElement(xw) < 0;
	}
	rc |= xmlTextWriterEndElement(xw) < 0;
	return rc;
}

/* No XML declaration: the executor's parser expects '<' and a name first. */
static int emit(xmlTextWriterPtr xw, const struct w *w, const char *name, const char *coll,
		const struct pm_msccl_opts *o)
{
	const struct pm_sched *s = w->s;
	int rc = 0;

	rc |= xmlTextWriterStartElement(xw, BAD_CAST "algo") < 0;
	rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "name", BAD_CAST name) < 0;
	rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "proto", BAD_CAST o->proto) < 0;
	rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "nchannels", "%d", w->nchannels) < 0;
	rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "nchunksperloop", "%u", s->nchunks) < 0;
	rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "ngpus", "%d", s->nranks) < 0;
	rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "coll", BAD_CAST coll) < 0;
	rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "inplace", BAD_CAST "1") < 0;
	rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "outofplace", BAD_CAST "0") < 0;
	rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "minBytes", "%.0f", o->min_B) < 0;
	rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "maxBytes", "%.0f", o->max_B) < 0;
	for (int r = 0; r < s->nranks && !rc; r++) {
		const struct gpu *g = &w->g[r];
		rc |= xmlTextWriterStartElement(xw, BAD_CAST "gpu") < 0;
		rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "id", "%d", r) < 0;
		rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "i_chunks", "%u", s->nchunks) < 0;
		rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "o_chunks", BAD_CAST "0") < 0;
		rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "s_chunks", BAD_CAST "0") < 0;
		for (int k = 0; k < g->n && !rc; k++)
			rc |= emit_tb(xw, &g->tb[k], k);
		rc |= xmlTextWriterEndElement(xw) < 0;
	}
	rc |= xmlTextWriterEndElement(xw) < 0;
	rc |= xmlTextWriterFlush(xw) < 0;
	return rc;
}

static void release(struct w *w)
{
	for (int r = 0; w->g && r < w->s->nranks; r++) {
		for (int k = 0; k < w->g[r].n; k++)
			free(w->g[r].tb[k].st);
		free(w->g[r].tb);
	}
	void *own[] = {&w->g, &w->p, &w->doff, &w->dn, &w->dep, &w->stamp, &w->lastw, &w->reads,
		&w->pool, &w->at_tb, &w->at_st};
	pm_free_each(own, sizeof own / sizeof *own);
}

static int prepare(struct w *w, struct pm_err *err)
{
	size_t cells = (size_t)w->s->nranks * w->s->nchunks;

	if (cut(w))
		return pm_fail(err, PM_EINPUT, "schedule too large for MSCCL export: more than %u steps of at most %d units",
			       MAX_PIECES, EXEC_MAX_COUNT - 1);
	w->doff = malloc(sizeof *w->doff * (2 * w->np + 1));
	w->dn = calloc(2 * w->np + 1, sizeof *w->dn);
	w->stamp = calloc(2 * w->np + 1, sizeof *w->stamp);
	w->at_tb = malloc(sizeof *w->at_tb * (2 * w->np + 1));
	w->at_st = malloc(sizeof *w->at_st * (2 * w->np + 1));
	w->lastw = malloc(sizeof *w->lastw * (cells + 1));
	w->reads = malloc(sizeof *w->reads * (cells + 1));
	w->g = calloc((size_t)w->s->nranks, sizeof *w->g);
	if (!w->doff || !w->dn || !w->stamp || !w->at_tb || !w->at_st || !w->lastw || !w->reads || !w->g)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (size_t c = 0; c < cells; c++)
		w->lastw[c] = w->reads[c] = NONE;
	return PM_OK;
}

int pm_msccl_write(FILE *f, const struct pm_sched *s, const char *name, const char *coll,
		   const struct pm_msccl_opts *o, struct pm_err *err)
{
	struct w w = {.s = s, .max_steps = o->max_steps};
	xmlBufferPtr buf = NULL;
	xmlTextWriterPtr xw = NULL;
	int rc;

	if (pm_sched_is_compact(s))
		return pm_fail(err, PM_EINTERNAL, "internal error: MSCCL export needs a played-out schedule");
	if ((size_t)s->nranks * s->nchunks > MAX_CELLS)
		return pm_fail(err, PM_EINPUT, "schedule too large for MSCCL export: %d ranks x %u chunks (expected at most %u)",
			       s->nranks, s->nchunks, MAX_CELLS);
	/* each transfer is a step at its sender and one at its receiver: the
	 * busiest rank's share bounds its elements from below */
	if (s->nranks > 0 && 2.0 * s->nx / s->nranks > EXEC_MAX_NODES)
		return pm_fail(err, PM_EINPUT,
			       "MSCCL export: %zu transfers on %d ranks need %.0f steps a rank on average (expected at most %d XML elements a GPU, what the executor's parser keeps)",
			       s->nx, s->nranks, 2.0 * s->nx / s->nranks, EXEC_MAX_NODES);
	if ((rc = prepare(&w, err)))
		goto out;
	if (each_side(&w, waits)) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		goto out;
	}
	if ((rc = channels(&w, err)))
		goto out;
	if (each_side(&w, lay)) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		goto out;
	}
	if ((rc = check_limits(&w, err)))
		goto out;
	buf = xmlBufferCreate();
	xw = buf ? xmlNewTextWriterMemory(buf, 0) : NULL;
	if (!xw || xmlTextWriterSetIndent(xw, 1) < 0 || emit(xw, &w, name, coll, o)) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory writing MSCCL XML");
		goto out;
	}
	xmlFreeTextWriter(xw);
	xw = NULL;
	if (fwrite(xmlBufferContent(buf), 1, (size_t)xmlBufferLength(buf), f) != (size_t)xmlBufferLength(buf) ||
	    fputc('\n', f) == EOF)
		rc = pm_fail(err, PM_EINPUT, "could not write the MSCCL XML (expected a writable output)");
out:
	if (xw)
		xmlFreeTextWriter(xw);
	if (buf)
		xmlBufferFree(buf);
	release(&w);
	return rc;
}
