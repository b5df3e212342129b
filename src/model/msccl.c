/* msccl.c: MSCCL algorithm XML read back (msccl.h) with libxml2 (Debian
 * libxml2-dev); msccl_write.c writes it. */
#include "model/msccl.h"
#include "model/csvread.h"
#include "model/grow.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

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

/* The file read whole through pm_input_open (a pipe that never ends, a
 * device, a huge file are refused there), then parsed. */
static xmlDocPtr read_doc(const char *path, struct pm_err *err)
{
	size_t n;
	char *text = pm_input_read(path, "MSCCL file", &n, err);
	xmlDocPtr doc = NULL;

	if (!text)
		return NULL;
	/* n <= PM_INPUT_MAX_BYTES, well inside libxml2's int */
	if (!(doc = xmlReadMemory(text, (int)n, path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)))
		pm_fail(err, PM_EINPUT, "MSCCL file '%s' is not well-formed XML (expected an <algo> document)", path);
	free(text);
	return doc;
}

/* The sends and receives of a file, each half of a transfer. */
struct halves {
	struct half *sends, *recvs;
	size_t ns, nr, cap;
};

static int push_half(struct halves *h, int is_send, struct half x, struct pm_err *err)
{
	if (h->ns == h->cap || h->nr == h->cap) {
		size_t cap = pm_grow_cap(h->cap, h->cap + 1, 64);
		if (pm_resize(&h->sends, cap, sizeof *h->sends) || pm_resize(&h->recvs, cap, sizeof *h->recvs))
			return pm_fail(err, PM_EINTERNAL, "out of memory");
		h->cap = cap;
	}
	x.seq = h->ns + h->nr;
	if (is_send)
		h->sends[h->ns++] = x;
	else
		h->recvs[h->nr++] = x;
	return PM_OK;
}

/* One <tb> of gpu id: its send and receive steps (s, r, rrc) as halves;
 * nop and the steps this reader does not pair are skipped. */
static int read_tb(xmlNodePtr tb, int id, struct halves *h, int *ok, struct pm_err *err)
{
	int sp = (int)attr_long(tb, "send", ok), rp = (int)attr_long(tb, "recv", ok);

	for (xmlNodePtr st = tb->children; *ok && st; st = st->next) {
		if (st->type != XML_ELEMENT_NODE || xmlStrcmp(st->name, BAD_CAST "step"))
			continue;
		xmlChar *type = xmlGetProp(st, BAD_CAST "type");
		int is_send = type && !xmlStrcmp(type, BAD_CAST "s");
		int is_recv = type && (!xmlStrcmp(type, BAD_CAST "r") || !xmlStrcmp(type, BAD_CAST "rrc"));
		int reduce = type && !xmlStrcmp(type, BAD_CAST "rrc");
		xmlFree(type);
		if (!is_send && !is_recv)
			continue;
		struct half x = {is_send ? id : rp, is_send ? sp : id, (unsigned)attr_long(st, "srcoff", ok),
				 (unsigned)attr_long(st, "cnt", ok), reduce, 0};
		if (push_half(h, is_send, x, err))
			return PM_EINTERNAL;
	}
	return PM_OK;
}

/* Every <gpu>'s thread blocks. */
static int read_gpus(xmlNodePtr root, struct halves *h, int *ok, struct pm_err *err)
{
	for (xmlNodePtr g = root->children; *ok && g; g = g->next) {
		if (g->type != XML_ELEMENT_NODE || xmlStrcmp(g->name, BAD_CAST "gpu"))
			continue;
		int id = (int)attr_long(g, "id", ok);
		for (xmlNodePtr tb = g->children; *ok && tb; tb = tb->next)
			if (tb->type == XML_ELEMENT_NODE && !xmlStrcmp(tb->name, BAD_CAST "tb") &&
			    read_tb(tb, id, h, ok, err))
				return PM_EINTERNAL;
	}
	return PM_OK;
}

/* Match every send with its receive (per pair of GPUs, in file order)
 * into transfers. */
static int pair_halves(const char *path, struct halves *h, struct pm_msccl_xfer **xfers, size_t *n,
		       struct pm_err *err)
{
	if (h->ns != h->nr)
		return pm_fail(err, PM_EINPUT, "MSCCL file '%s' has %zu sends and %zu receives (expected one receive for every send)",
			       path, h->ns, h->nr);
	qsort(h->sends, h->ns, sizeof *h->sends, by_pair_then_seq);
	qsort(h->recvs, h->nr, sizeof *h->recvs, by_pair_then_seq);
	struct pm_msccl_xfer *x = malloc(sizeof *x * (h->ns + 1));
	if (!x)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (size_t i = 0; i < h->ns; i++) {
		const struct half *s = &h->sends[i], *r = &h->recvs[i];
		if (by_pair(s, r) || s->off != r->off || s->cnt != r->cnt) {
			free(x);
			return pm_fail(err, PM_EINPUT, "MSCCL file '%s': gpu %d sends [%u,+%u) to %d, but the matching receive is [%u,+%u) at %d from %d",
				       path, s->gpu, s->off, s->cnt, s->peer, r->off, r->cnt, r->peer, r->gpu);
		}
		x[i] = (struct pm_msccl_xfer){s->gpu, s->peer, s->off, s->cnt, r->reduce};
	}
	*xfers = x;
	*n = h->ns;
	return PM_OK;
}

int pm_msccl_read(const char *path, int *ngpus, unsigned *nchunks,
		  struct pm_msccl_xfer **xfers, size_t *n, struct pm_err *err)
{
	xmlDocPtr doc = read_doc(path, err);
	struct halves h = {0};
	int ok = 1, rc;

	*xfers = NULL;
	*n = 0;
	if (!doc)
		return PM_EINPUT;
	xmlNodePtr root = xmlDocGetRootElement(doc);
	if (!root || xmlStrcmp(root->name, BAD_CAST "algo")) {
		xmlFreeDoc(doc);
		return pm_fail(err, PM_EINPUT, "MSCCL file '%s' has no <algo> root (expected msccl-tools' algorithm XML)", path);
	}
	*ngpus = (int)attr_long(root, "ngpus", &ok);
	*nchunks = (unsigned)attr_long(root, "nchunksperloop", &ok);
	rc = read_gpus(root, &h, &ok, err);
	if (!rc && (!ok || *ngpus < 1))
		rc = pm_fail(err, PM_EINPUT, "MSCCL file '%s': a missing or malformed attribute (expected numbers for ngpus, nchunksperloop, id, send, recv, srcoff and cnt)", path);
	if (!rc)
		rc = pair_halves(path, &h, xfers, n, err);
	free(h.sends);
	free(h.recvs);
	xmlFreeDoc(doc);
	return rc;
}
