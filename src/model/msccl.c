/* msccl.c: MSCCL algorithm XML read back (msccl.h) with libxml2 (Debian
 * libxml2-dev); msccl_write.c writes it. */
#include "model/msccl.h"
#include "model/csvread.h"

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
	FILE *f = pm_input_open(path, "MSCCL file", err);
	char *text = NULL;
	size_t n = 0, cap = 0;
	xmlDocPtr doc = NULL;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			char *t = realloc(text, cap = cap ? 2 * cap : 65536);
			if (!t) {
				pm_fail(err, PM_EINTERNAL, "out of memory");
				goto out;
			}
			text = t;
		}
		size_t got = fread(text + n, 1, cap - n, f);
		n += got;
		if (!got)
			break;
	}
	doc = xmlReadMemory(text, (int)n, path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc)
		pm_fail(err, PM_EINPUT, "MSCCL file '%s' is not well-formed XML (expected an <algo> document)", path);
out:
	free(text);
	fclose(f);
	return doc;
}

int pm_msccl_read(const char *path, int *ngpus, unsigned *nchunks,
		  struct pm_msccl_xfer **xfers, size_t *n, struct pm_err *err)
{
	xmlDocPtr doc = read_doc(path, err);
	struct half *sends = NULL, *recvs = NULL;
	size_t ns = 0, nr = 0, cap = 0;
	int ok = 1, rc = PM_OK;

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
