/* msccl.c: schedules as MSCCL algorithm XML (see msccl.h), written and
 * read with libxml2 (Debian libxml2-dev), which escapes and parses. */
#include "model/msccl.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlwriter.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define MAX_CELLS (1u << 24)

struct mstep {
	const char *type;
	unsigned off, cnt;
	int depid, deps, hasdep;
};

struct tb {
	int send, recv;		/* peers, -1 */
	struct mstep *st;
	int n, cap;
};

struct gpu {
	struct tb *tb;
	int n, cap;
};

struct writer {
	const struct pm_sched *s;
	struct gpu *g;
	int *s_tb, *s_st, *r_tb, *r_st;	/* per transfer: its send and receive steps */
	uint32_t *lastw, *lastr;	/* per (rank, unit): last receive into it, last send of it */
	int failed;
};

static int tb_of(struct writer *w, int r, int send, int peer)
{
	struct gpu *g = &w->g[r];
	for (int k = 0; k < g->n; k++)
		if ((send ? g->tb[k].send : g->tb[k].recv) == peer)
			return k;
	if (g->n == g->cap) {
		int cap = g->cap ? 2 * g->cap : 4;
		struct tb *a = realloc(g->tb, sizeof *a * (size_t)cap);
		if (!a) {
			w->failed = 1;
			return 0;
		}
		g->tb = a;
		g->cap = cap;
	}
	g->tb[g->n] = (struct tb){send ? peer : -1, send ? -1 : peer, NULL, 0, 0};
	return g->n++;
}

static int add_step(struct writer *w, int r, int tb, struct mstep st)
{
	struct tb *b = &w->g[r].tb[tb];
	if (b->n == b->cap) {
		int cap = b->cap ? 2 * b->cap : 8;
		struct mstep *a = realloc(b->st, sizeof *a * (size_t)cap);
		if (!a) {
			w->failed = 1;
			return 0;
		}
		b->st = a;
		b->cap = cap;
	}
	b->st[b->n] = st;
	return b->n++;
}

/* A step of transfer-side (rank r, thread block tb) that must wait for the
 * steps of the transfers in deps (their step on rank r): the first wait
 * rides on the step itself, the others on nop steps in front of it. */
static int add_with_deps(struct writer *w, int r, int tb, struct mstep st,
			 const uint32_t *deps, int nd, int use_recv)
{
	for (int k = 0; k < nd; k++) {
		int dt = use_recv ? w->r_tb[deps[k]] : w->s_tb[deps[k]];
		int ds = use_recv ? w->r_st[deps[k]] : w->s_st[deps[k]];
		w->g[r].tb[dt].st[ds].hasdep = 1;
		if (k + 1 < nd)
			add_step(w, r, tb, (struct mstep){"nop", 0, 0, dt, ds, 0});
		else {
			st.depid = dt;
			st.deps = ds;
		}
	}
	return add_step(w, r, tb, st);
}

/* The distinct transfers table[r][lo .. lo+cnt) names (NONE skipped). */
static int distinct(const uint32_t *row, unsigned lo, unsigned cnt, uint32_t *out)
{
	int n = 0;
	for (unsigned c = lo; c < lo + cnt; c++) {
		uint32_t x = row[c];
		int seen = x == NONE;
		for (int k = 0; k < n && !seen; k++)
			seen = out[k] == x;
		if (!seen)
			out[n++] = x;
	}
	return n;
}

static void plan(struct writer *w, uint32_t *deps)
{
	const struct pm_sched *s = w->s;
	size_t U = s->nchunks;

	for (int k = 0; k < s->nsteps && !w->failed; k++) {
		size_t a = s->step_off[k], b = s->step_off[k + 1];
		for (size_t i = a; i < b; i++) {	/* sends read what earlier steps wrote */
			const struct pm_xfer *x = &s->x[i];
			int tb = tb_of(w, x->src, 1, x->dst);
			int nd = distinct(w->lastw + (size_t)x->src * U, x->lo, x->cnt, deps);
			w->s_tb[i] = tb;
			w->s_st[i] = add_with_deps(w, x->src, tb, (struct mstep){"s", x->lo, x->cnt, -1, -1, 0},
						   deps, nd, 1);
			for (unsigned c = x->lo; c < x->lo + x->cnt; c++)
				w->lastr[(size_t)x->src * U + c] = (uint32_t)i;
		}
		for (size_t i = a; i < b; i++) {	/* receives overwrite after the sends that read */
			const struct pm_xfer *x = &s->x[i];
			int tb = tb_of(w, x->dst, 0, x->src);
			int nd = distinct(w->lastr + (size_t)x->dst * U, x->lo, x->cnt, deps);
			w->r_tb[i] = tb;
			w->r_st[i] = add_with_deps(w, x->dst, tb,
						   (struct mstep){x->op == PM_REDUCE ? "rrc" : "r", x->lo, x->cnt, -1, -1, 0},
						   deps, nd, 0);
		}
		for (size_t i = a; i < b; i++) {
			const struct pm_xfer *x = &s->x[i];
			for (unsigned c = x->lo; c < x->lo + x->cnt; c++)
				w->lastw[(size_t)x->dst * U + c] = (uint32_t)i;
		}
	}
}

static int emit(xmlTextWriterPtr xw, const struct writer *w, const char *name, const char *coll)
{
	const struct pm_sched *s = w->s;
	int rc = 0;

	rc |= xmlTextWriterStartDocument(xw, NULL, "UTF-8", NULL) < 0;
	rc |= xmlTextWriterStartElement(xw, BAD_CAST "algo") < 0;
	rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "name", BAD_CAST name) < 0;
	rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "proto", BAD_CAST "Simple") < 0;
	rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "nchannels", BAD_CAST "1") < 0;
	rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "nchunksperloop", "%u", s->nchunks) < 0;
	rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "ngpus", "%d", s->nranks) < 0;
	rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "coll", BAD_CAST coll) < 0;
	rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "inplace", BAD_CAST "1") < 0;
	rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "outofplace", BAD_CAST "0") < 0;
	for (int r = 0; r < s->nranks && !rc; r++) {
		const struct gpu *g = &w->g[r];
		rc |= xmlTextWriterStartElement(xw, BAD_CAST "gpu") < 0;
		rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "id", "%d", r) < 0;
		rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "i_chunks", "%u", s->nchunks) < 0;
		rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "o_chunks", BAD_CAST "0") < 0;
		rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "s_chunks", BAD_CAST "0") < 0;
		for (int k = 0; k < g->n; k++) {
			const struct tb *b = &g->tb[k];
			rc |= xmlTextWriterStartElement(xw, BAD_CAST "tb") < 0;
			rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "id", "%d", k) < 0;
			rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "send", "%d", b->send) < 0;
			rc |= xmlTextWriterWriteFormatAttribute(xw, BAD_CAST "recv", "%d", b->recv) < 0;
			rc |= xmlTextWriterWriteAttribute(xw, BAD_CAST "chan", BAD_CAST "0") < 0;
			for (int j = 0; j < b->n; j++) {
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
		}
		rc |= xmlTextWriterEndElement(xw) < 0;
	}
	rc |= xmlTextWriterEndDocument(xw) < 0;
	return rc;
}

int pm_msccl_write(FILE *f, const struct pm_sched *s, const char *name, const char *coll,
		   struct pm_err *err)
{
	struct writer w = {.s = s};
	size_t cells = (size_t)s->nranks * s->nchunks;
	uint32_t *deps = malloc(sizeof(uint32_t) * ((size_t)s->nchunks + 1));
	int rc = PM_OK;

	if (pm_sched_is_compact(s))
		return pm_fail(err, PM_EINTERNAL, "internal error: MSCCL export needs a played-out schedule");
	if (cells > MAX_CELLS) {
		free(deps);
		return pm_fail(err, PM_EINPUT, "schedule too large for MSCCL export: %d ranks x %u chunks (expected at most %u)",
			       s->nranks, s->nchunks, MAX_CELLS);
	}
	w.g = calloc((size_t)s->nranks, sizeof *w.g);
	w.s_tb = malloc(sizeof(int) * (s->nx + 1));
	w.s_st = malloc(sizeof(int) * (s->nx + 1));
	w.r_tb = malloc(sizeof(int) * (s->nx + 1));
	w.r_st = malloc(sizeof(int) * (s->nx + 1));
	w.lastw = malloc(sizeof(uint32_t) * (cells + 1));
	w.lastr = malloc(sizeof(uint32_t) * (cells + 1));
	xmlBufferPtr buf = xmlBufferCreate();
	xmlTextWriterPtr xw = buf ? xmlNewTextWriterMemory(buf, 0) : NULL;
	if (!deps || !w.g || !w.s_tb || !w.s_st || !w.r_tb || !w.r_st || !w.lastw || !w.lastr || !xw) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		goto out;
	}
	for (size_t c = 0; c < cells; c++)
		w.lastw[c] = w.lastr[c] = NONE;
	plan(&w, deps);
	xmlTextWriterSetIndent(xw, 1);
	if (w.failed || emit(xw, &w, name, coll)) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory writing MSCCL XML");
		goto out;
	}
	xmlFreeTextWriter(xw);
	xw = NULL;
	if (fwrite(xmlBufferContent(buf), 1, (size_t)xmlBufferLength(buf), f) != (size_t)xmlBufferLength(buf))
		rc = pm_fail(err, PM_EINPUT, "could not write the MSCCL XML (expected a writable output)");
out:
	if (xw)
		xmlFreeTextWriter(xw);
	if (buf)
		xmlBufferFree(buf);
	for (int r = 0; w.g && r < s->nranks; r++) {
		for (int k = 0; k < w.g[r].n; k++)
			free(w.g[r].tb[k].st);
		free(w.g[r].tb);
	}
	free(w.g);
	free(w.s_tb);
	free(w.s_st);
	free(w.r_tb);
	free(w.r_st);
	free(w.lastw);
	free(w.lastr);
	free(deps);
	return rc;
}

/* ---- reading back ---- */

static long attr_long(xmlNodePtr n, const char *name, int *ok)
{
	xmlChar *v = xmlGetProp(n, BAD_CAST name);
	char *end;
	long x = 0;
	if (!v) {
		*ok = 0;
		return 0;
	}
	x = strtol((const char *)v, &end, 10);
	if (*end || end == (char *)v)
		*ok = 0;
	xmlFree(v);
	return x;
}

struct half {
	int gpu, peer;
	unsigned off, cnt;
	int reduce;
	size_t seq;		/* file order, so each pair keeps its order */
};

static int by_pair(const void *a, const void *b)
{
	const struct half *x = a, *y = b;
	/* sends are keyed (gpu, peer), receives (peer, gpu): both (src, dst) */
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return x->peer < y->peer ? -1 : x->peer > y->peer;
}

static int by_pair_then_seq(const void *a, const void *b)
{
	const struct half *x = a, *y = b;
	int c = by_pair(a, b);
	return c ? c : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

int pm_msccl_read(const char *path, int *ngpus, unsigned *nchunks,
		  struct pm_msccl_xfer **xfers, size_t *n, struct pm_err *err)
{
	xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	struct half *sends = NULL, *recvs = NULL;
	size_t ns = 0, nr = 0, cap = 0;
	int ok = 1, rc = PM_OK;

	*xfers = NULL;
	*n = 0;
	if (!doc)
		return pm_fail(err, PM_EINPUT, "MSCCL file '%s' is not well-formed XML (expected an <algo> document)", path);
	xmlNodePtr root = xmlDocGetRootElement(doc);
	if (!root || xmlStrcmp(root->name, BAD_CAST "algo")) {
		xmlFreeDoc(doc);
		return pm_fail(err, PM_EINPUT, "MSCCL file '%s' has no <algo> root (expected msccl-tools' algorithm XML)", path);
	}
	*ngpus = (int)attr_long(root, "ngpus", &ok);
	*nchunks = (unsigned)attr_long(root, "nchunksperloop", &ok);
	cap = 64;
	sends = malloc(sizeof *sends * cap);
	recvs = malloc(sizeof *recvs * cap);
	for (xmlNodePtr g = root->children; ok && g; g = g->next) {
		if (g->type != XML_ELEMENT_NODE || xmlStrcmp(g->name, BAD_CAST "gpu"))
			continue;
		int id = (int)attr_long(g, "id", &ok);
		for (xmlNodePtr tb = g->children; ok && tb; tb = tb->next) {
			if (tb->type != XML_ELEMENT_NODE || xmlStrcmp(tb->name, BAD_CAST "tb"))
				continue;
			int sp = (int)attr_long(tb, "send", &ok), rp = (int)attr_long(tb, "recv", &ok);
			for (xmlNodePtr st = tb->children; ok && st; st = st->next) {
				if (st->type != XML_ELEMENT_NODE || xmlStrcmp(st->name, BAD_CAST "step"))
					continue;
				xmlChar *type = xmlGetProp(st, BAD_CAST "type");
				int is_send = type && !xmlStrcmp(type, BAD_CAST "s");
				int is_recv = type && (!xmlStrcmp(type, BAD_CAST "r") || !xmlStrcmp(type, BAD_CAST "rrc"));
				int reduce = type && !xmlStrcmp(type, BAD_CAST "rrc");
				xmlFree(type);
				if (!is_send && !is_recv)
					continue;	/* nop and steps this reader does not pair */
				if (ns == cap || nr == cap) {
					cap *= 2;
					struct half *a = realloc(sends, sizeof *a * cap), *b = a ? realloc(recvs, sizeof *b * cap) : NULL;
					sends = a ? a : sends;
					recvs = b ? b : recvs;
					if (!a || !b) {
						rc = pm_fail(err, PM_EINTERNAL, "out of memory");
						goto out;
					}
				}
				struct half h = {is_send ? id : rp, is_send ? sp : id,
						 (unsigned)attr_long(st, "srcoff", &ok),
						 (unsigned)attr_long(st, "cnt", &ok), reduce, ns + nr};
				if (is_send)
					sends[ns++] = h;
				else
					recvs[nr++] = h;
			}
		}
	}
	if (!ok || *ngpus < 1) {
		rc = pm_fail(err, PM_EINPUT, "MSCCL file '%s': a missing or malformed attribute (expected numbers for ngpus, nchunksperloop, id, send, recv, srcoff and cnt)", path);
		goto out;
	}
	if (ns != nr) {
		rc = pm_fail(err, PM_EINPUT, "MSCCL file '%s' has %zu sends and %zu receives (expected one receive for every send)", path, ns, nr);
		goto out;
	}
	qsort(sends, ns, sizeof *sends, by_pair_then_seq);
	qsort(recvs, nr, sizeof *recvs, by_pair_then_seq);
	*xfers = malloc(sizeof **xfers * (ns + 1));
	if (!*xfers) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ns; i++) {
		if (by_pair(&sends[i], &recvs[i]) || sends[i].off != recvs[i].off || sends[i].cnt != recvs[i].cnt) {
			rc = pm_fail(err, PM_EINPUT, "MSCCL file '%s': gpu %d sends [%u,+%u) to %d, but the matching receive is [%u,+%u) at %d from %d",
				     path, sends[i].gpu, sends[i].off, sends[i].cnt, sends[i].peer,
				     recvs[i].off, recvs[i].cnt, recvs[i].peer, recvs[i].gpu);
			free(*xfers);
			*xfers = NULL;
			goto out;
		}
		(*xfers)[i] = (struct pm_msccl_xfer){sends[i].gpu, sends[i].peer, sends[i].off, sends[i].cnt, recvs[i].reduce};
	}
	*n = ns;
out:
	free(sends);
	free(recvs);
	xmlFreeDoc(doc);
	return rc;
}
