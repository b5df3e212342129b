/* mid.c: the links between switches that the fabric
 * construction of MULTITREE (fabric.c) counts.
 *
 * The fabric construction checks room on a tree edge's two end links.
 * Where the schedule then takes the network's own routes (every switch
 * network but the fat trees, whose steps are routed apart afterwards:
 * pm_topo_route_set), the links between them are counted too, as
 * Algorithm 1 of Huang et al. (MULTITREE, ISCA 2021) counts every link of
 * an edge's path: a child is taken only where its route has room on every
 * such link that can fill.  A link cannot fill when its slots (a link k
 * times the slowest carries k edges a step) are at least what the
 * endpoints sending into it, or those it leads to, can send or receive in
 * a step (ports, and their own links' slots): the up links of a
 * non-blocking fat tree of GPUs, for instance.  The others are tracked.
 *
 * Routes between switches are taken as destination-based: the links an
 * edge p -> c crosses after its first link depend only on that link's
 * head h and on c (true of every kind here: up to the lowest common
 * switch and down, D-mod-K, BiGraph's detours, the routing tables of
 * file networks).  Each tracked link keeps the pairs (h, endpoints c in
 * [lo, hi)) whose routes cross it.  When it fills in a step, those
 * endpoints leave reach[h], the endpoints a sender behind h can still
 * reach; a link crossed by every route into its endpoints that crosses
 * any link between switches (an HCA's down link, shared by its GPUs)
 * clears them once, from dreach, instead of from every h.
 * docs/model.md ("The fabric construction"); docs/validation/06-scale.md
 * measures what it changes. */
#include "model/grow.h"
#include "model/multitree/mt.h"

#include <stdlib.h>
#include <string.h>

/* The counted links' own state (m->mids): link l is tracked as
 * mid_of_link[l] = i (-1: not), its entries mid_rng[mid_off[i] ..
 * mid_off[i + 1]): endpoints [lo, hi) leave reach row h (h < 0: dreach)
 * when it fills; hop_row[p dout + j]: the reach row of the head of p's
 * j-th link out (-1: none). */
struct mt_mid {
	int nmid, mid_len, nreach;
	size_t mid_cap;
	struct mt_mid_rng {
		int h, lo, hi;
	} *mid_rng;
	int *mid_of_link, *mid_off, *hop_row;
	uint64_t *reach, *dreach;
	uint64_t *reach0;	/* the rows a step starts from: the endpoints h leads to */
	int *reach_vert;	/* per row: h's vertex */
	uint64_t *two_hop;	/* per endpoint, by link in (first 64): some route through one switch enters by it */
	uint64_t *reachw;	/* word masks (sw each) of the reach rows, dreach, then all ones */
	uint64_t *reachw0;	/* the same as a step starts */
	int dglobal;		/* some link clears dreach: every first hop has a row, and */
	uint64_t *adj, *adjw;	/* per row, the endpoints its vertex leads to over one link (dreach spares them), and its word mask */
	void *midb;		/* while the tables are built */
};

/* An entry: routes from first hop h (an index) to endpoints [lo, hi). */
struct mid_rng {
	int h, lo, hi;
};

/* Per link while the tables are built: its entries. */
struct mid_list {
	struct mid_rng *e;
	int n;
	size_t cap;
};

struct mid_build {
	struct mid_list *lists;	/* per link */
	int *hidx;		/* per vertex: its first-hop index, -1 none */
	int nh;
	size_t caph;
	int *hvert;		/* first-hop index -> vertex */
	uint64_t *seen;		/* [h W ..]: (h, c) recorded */
	uint64_t *adj;		/* [h W ..]: endpoints h leads to over one link */
	int *nmid_to;		/* per endpoint c: first hops with a route to c crossing a link between switches */
	int *last_slots;	/* per endpoint c: slots of the links in such routes enter c by */
	uint64_t *last_seen;	/* per endpoint c: those links, by index among c's links in (first 64) */
};

/* The first-hop index of vertex v, made on first use.  -1 out of memory. */
static int hop_index(struct mid_build *b, size_t W, int v)
{
	if (b->hidx[v] >= 0)
		return b->hidx[v];
	size_t old = b->caph;
	if (pm_grow(&b->hvert, &b->caph, (size_t)b->nh + 1, sizeof(int), 16))
		return -1;
	if (b->caph != old) {
		if (pm_resize(&b->seen, W * b->caph, sizeof(uint64_t)) ||
		    pm_resize(&b->adj, W * b->caph, sizeof(uint64_t)))
			return -1;
		memset(b->seen + W * old, 0, sizeof(uint64_t) * W * (b->caph - old));
		memset(b->adj + W * old, 0, sizeof(uint64_t) * W * (b->caph - old));
	}
	b->hvert[b->nh] = v;
	return b->hidx[v] = b->nh++;
}

int pm_mt_mid_begin(struct mt *m)
{
	struct mid_build *b = calloc(1, sizeof *b);
	int V = pm_topo_vertices(m->t), L = pm_topo_nlinks(m->t);

	if (!(m->mids = calloc(1, sizeof *m->mids))) {
		free(b);
		return -1;
	}
	m->mids->midb = b;
	m->mids->two_hop = calloc((size_t)m->P, sizeof(uint64_t));
	if (!b || !m->mids->two_hop || !(b->lists = calloc((size_t)L, sizeof *b->lists)) ||
	    !(b->hidx = malloc(sizeof(int) * (size_t)V)) || !(b->nmid_to = calloc((size_t)m->P, sizeof(int))) ||
	    !(b->last_slots = calloc((size_t)m->P, sizeof(int))) ||
	    !(b->last_seen = calloc((size_t)m->P, sizeof(uint64_t))))
		return -1;
	for (int v = 0; v < V; v++)
		b->hidx[v] = -1;
	return 0;
}

/* Record route p -> c (links[0 .. n)). */
int pm_mt_mid_add(struct mt *m, int c, const int *links, int n)
{
	struct mid_build *b = m->mids->midb;
	size_t W = m->words;

	int h = hop_index(b, W, pm_topo_link(m->t, links[0])->dst);
	if (h < 0)
		return -1;
	uint64_t *seen = b->seen + (size_t)h * W;
	if (seen[c / 64] >> (c % 64) & 1)
		return 0;
	seen[c / 64] |= (uint64_t)1 << (c % 64);	/* the endpoints h leads to */
	if (n < 3) {	/* one switch between: no link between switches */
		b->adj[(size_t)h * W + (size_t)c / 64] |= (uint64_t)1 << (c % 64);
		for (int j = m->in_off[c], k = 0; n == 2 && j < m->in_off[c + 1] && k < 64; j++, k++)
			if (m->in[j] == links[1])
				m->mids->two_hop[c] |= (uint64_t)1 << k;
		return 0;
	}
	b->nmid_to[c]++;
	for (int j = m->in_off[c], k = 0; j < m->in_off[c + 1]; j++, k++)
		if (m->in[j] == links[n - 1] && !(k < 64 && b->last_seen[c] >> k & 1)) {
			if (k < 64)
				b->last_seen[c] |= (uint64_t)1 << k;
			b->last_slots[c] += m->link_slots[links[n - 1]];
		}
	for (int i = 1; i < n - 1; i++) {
		struct mid_list *l = &b->lists[links[i]];
		if (l->n && l->e[l->n - 1].h == h && l->e[l->n - 1].hi == c) {
			l->e[l->n - 1].hi = c + 1;
			continue;
		}
		if (pm_grow(&l->e, &l->cap, (size_t)l->n + 1, sizeof(struct mid_rng), 16))
			return -1;
		l->e[l->n++] = (struct mid_rng){h, c, c + 1};
	}
	return 0;
}

/* Edges a step can send into link l at most: what the senders behind its
 * entries' first hops can send (ports, their links' slots), or what the
 * endpoints it leads to can receive (ports, the slots of the links such
 * routes enter them by), whichever is less. */
static long cap_bound(const struct mt *m, const struct mid_build *b, const struct mid_list *l,
		      uint8_t *hmark, uint8_t *cmark)
{
	long send = 0, recv = 0;

	for (int i = 0; i < l->n; i++) {
		const struct mid_rng *e = &l->e[i];
		if (!hmark[e->h]) {
			hmark[e->h] = 1;
			int v = b->hvert[e->h];
			for (int j = m->in_off[v]; j < m->in_off[v + 1]; j++) {
				int from = m->links[m->in[j]].src;
				if (from < m->P)
					send += m->link_slots[m->in[j]] < m->ports ? m->link_slots[m->in[j]] : m->ports;
			}
		}
		for (int c = e->lo; c < e->hi; c++)
			if (!cmark[c]) {
				cmark[c] = 1;
				recv += b->last_slots[c] < m->ports ? b->last_slots[c] : m->ports;
			}
	}
	for (int i = 0; i < l->n; i++) {	/* clear the marks */
		hmark[l->e[i].h] = 0;
		for (int c = l->e[i].lo; c < l->e[i].hi; c++)
			cmark[c] = 0;
	}
	return send < recv ? send : recv;
}

/* Does every first hop with a route into l's endpoints that crosses a link
 * between switches cross l?  Then l's endpoints can be cleared once for
 * all senders.  cover: scratch of P zeros, left zero. */
static int crossed_by_all(const struct mid_build *b, const struct mid_list *l, int *cover)
{
	int all = 1;

	for (int i = 0; i < l->n; i++)
		for (int c = l->e[i].lo; c < l->e[i].hi; c++)
			cover[c]++;
	for (int i = 0; i < l->n; i++)
		for (int c = l->e[i].lo; c < l->e[i].hi; c++) {
			if (cover[c] && cover[c] != b->nmid_to[c])
				all = 0;
		}
	for (int i = 0; i < l->n; i++)
		for (int c = l->e[i].lo; c < l->e[i].hi; c++)
			cover[c] = 0;
	return all;
}

/* Keep link l: its entries, or for a link crossed by all, its endpoints
 * as ranges with h = -1.  -1 out of memory. */
static int keep(struct mt *m, struct mid_list *l, int all, int *cover, int link)
{
	int n = 0;

	if (all) {	/* its endpoints, in order, as ranges */
		for (int i = 0; i < l->n; i++)
			for (int c = l->e[i].lo; c < l->e[i].hi; c++)
				cover[c] = 1;
		int lo = -1;
		struct mid_rng *e = l->e;	/* ranges are no more than entries */
		for (int c = 0; c <= m->P; c++) {
			int in = c < m->P && cover[c];
			if (in && lo < 0)
				lo = c;
			if (!in && lo >= 0) {
				e[n++] = (struct mid_rng){-1, lo, c};
				lo = -1;
			}
		}
		for (int c = 0; c < m->P; c++)
			cover[c] = 0;
	} else
		n = l->n;
	if (pm_grow(&m->mids->mid_rng, &m->mids->mid_cap, (size_t)(m->mids->mid_len + n), sizeof(struct mt_mid_rng), 16))
		return -1;
	for (int i = 0; i < n; i++)
		m->mids->mid_rng[m->mids->mid_len + i] = (struct mt_mid_rng){l->e[i].h, l->e[i].lo, l->e[i].hi};
	m->mids->mid_of_link[link] = m->mids->nmid;
	m->mids->mid_off[m->mids->nmid] = m->mids->mid_len;
	m->mids->mid_len += n;
	m->mids->mid_off[++m->mids->nmid] = m->mids->mid_len;
	return 0;
}

/* Which links to track, and the rows a step starts from.  -1 out of
 * memory. */
static int choose(struct mt *m, struct mid_build *b)
{
	int L = pm_topo_nlinks(m->t), P = m->P, rc = -1;
	uint8_t *hmark = calloc((size_t)b->nh + 1, 1), *cmark = calloc((size_t)P, 1);
	int *cover = calloc((size_t)P, sizeof(int));

	m->mids->mid_of_link = malloc(sizeof(int) * (size_t)L);
	m->mids->mid_off = malloc(sizeof(int) * ((size_t)L + 1));
	if (!hmark || !cmark || !cover || !m->mids->mid_of_link || !m->mids->mid_off)
		goto out;
	m->mids->nmid = m->mids->mid_len = 0;
	m->mids->mid_off[0] = 0;
	for (int l = 0; l < L; l++) {
		struct mid_list *li = &b->lists[l];
		m->mids->mid_of_link[l] = -1;
		if (li->n && cap_bound(m, b, li, hmark, cmark) > m->link_slots[l] &&
		    keep(m, li, crossed_by_all(b, li, cover), cover, l))
			goto out;
	}
	rc = 0;
out:
	free(hmark);
	free(cmark);
	free(cover);
	return rc;
}

/* The rows: a reach row per first hop some kept entry names, dreach, and
 * per endpoint link out the row of its head. */
static int rows(struct mt *m, struct mid_build *b)
{
	size_t W = m->words, P = (size_t)m->P;
	int *row_of = malloc(sizeof(int) * ((size_t)b->nh + 1));

	if (!row_of)
		return -1;
	m->mids->dglobal = 0;
	for (int i = 0; i < m->mids->mid_len; i++)
		m->mids->dglobal |= m->mids->mid_rng[i].h < 0;
	for (int h = 0; h < b->nh; h++)	/* with dreach every first hop has a row */
		row_of[h] = m->mids->dglobal ? h : -1;
	m->mids->nreach = m->mids->dglobal ? b->nh : 0;
	for (int i = 0; i < m->mids->mid_len; i++) {
		int h = m->mids->mid_rng[i].h;
		if (h >= 0 && row_of[h] < 0)
			row_of[h] = m->mids->nreach++;
		if (h >= 0)
			m->mids->mid_rng[i].h = row_of[h];
	}
	m->mids->reach = malloc(sizeof(uint64_t) * W * ((size_t)m->mids->nreach + 1));
	m->mids->reach0 = malloc(sizeof(uint64_t) * W * ((size_t)m->mids->nreach + 1));
	m->mids->reach_vert = malloc(sizeof(int) * ((size_t)m->mids->nreach + 1));
	m->mids->dreach = malloc(sizeof(uint64_t) * W);
	m->mids->hop_row = malloc(sizeof(int) * P * (size_t)m->dout);
	m->mids->reachw = malloc(sizeof(uint64_t) * m->sw * ((size_t)m->mids->nreach + 2));
	m->mids->reachw0 = calloc(m->sw * ((size_t)m->mids->nreach + 2), sizeof(uint64_t));
	m->mids->adj = calloc(W * ((size_t)m->mids->nreach + 1), sizeof(uint64_t));
	m->mids->adjw = calloc(m->sw * ((size_t)m->mids->nreach + 1), sizeof(uint64_t));
	int rc = m->mids->reach && m->mids->reach0 && m->mids->reach_vert && m->mids->dreach && m->mids->hop_row && m->mids->reachw && m->mids->reachw0 &&
			 m->mids->adj && m->mids->adjw ? 0 : -1;
	for (int h = 0; !rc && h < b->nh; h++)
		if (row_of[h] >= 0) {	/* a row starts as the endpoints h leads to */
			size_t r = (size_t)row_of[h];
			memcpy(m->mids->reach0 + r * W, b->seen + (size_t)h * W, sizeof(uint64_t) * W);
			memcpy(m->mids->adj + r * W, b->adj + (size_t)h * W, sizeof(uint64_t) * W);
			for (size_t w = 0; w < W; w++)
				if (m->mids->adj[r * W + w])
					m->mids->adjw[r * m->sw + w / 64] |= (uint64_t)1 << (w % 64);
			m->mids->reach_vert[r] = b->hvert[h];
		}
	for (int h = 0; !rc && h <= m->mids->nreach + 1; h++)	/* word masks: rows, dreach (full), all ones */
		for (size_t w = 0; w < W; w++)
			if (h >= m->mids->nreach || m->mids->reach0[(size_t)h * W + w])
				m->mids->reachw0[(size_t)h * m->sw + w / 64] |= (uint64_t)1 << (w % 64);
	for (size_t p = 0; !rc && p < P; p++) {
		int n;
		const int *out = pm_topo_out(m->t, (int)p, &n);
		for (int j = 0; j < m->dout; j++) {
			int h = j < n ? b->hidx[m->links[out[j]].dst] : -1;
			m->mids->hop_row[p * (size_t)m->dout + (size_t)j] = h >= 0 ? row_of[h] : -1;
		}
	}
	free(row_of);
	return rc;
}

static void free_build(struct mid_build *b, int L)
{
	if (!b)
		return;
	for (int l = 0; b->lists && l < L; l++)
		free(b->lists[l].e);
	void *own[] = {&b->lists, &b->hidx, &b->hvert, &b->seen, &b->adj, &b->nmid_to,
		&b->last_slots, &b->last_seen, &b};
	pm_free_each(own, sizeof own / sizeof *own);
}

int pm_mt_mid_end(struct mt *m)
{
	int rc = choose(m, m->mids->midb);

	if (!rc && m->mids->nmid == 0)
		m->mid = 0;	/* nothing can fill: the end links decide */
	else if (!rc)
		rc = rows(m, m->mids->midb);
	free_build(m->mids->midb, pm_topo_nlinks(m->t));
	m->mids->midb = NULL;
	return rc;
}

void pm_mt_mid_free(struct mt *m)
{
	struct mt_mid *d = m->mids;

	if (!d)
		return;
	free_build(d->midb, pm_topo_nlinks(m->t));
	void *own[] = {&d->mid_rng, &d->mid_of_link, &d->mid_off, &d->reach, &d->reach0,
		&d->reach_vert, &d->dreach, &d->hop_row, &d->two_hop, &d->reachw, &d->reachw0,
		&d->adj, &d->adjw, &d};
	pm_free_each(own, sizeof own / sizeof *own);
	m->mids = NULL;
}

void pm_mt_mid_step(struct mt *m)
{
	size_t W = m->words;

	memcpy(m->mids->reach, m->mids->reach0, sizeof(uint64_t) * W * (size_t)m->mids->nreach);
	memset(m->mids->dreach, 0xff, sizeof(uint64_t) * W);
	memcpy(m->mids->reachw, m->mids->reachw0, sizeof(uint64_t) * m->sw * ((size_t)m->mids->nreach + 2));
}

void pm_mt_mid_words(const struct mt *m, int p, int j, uint64_t *out)
{
	int h = m->mid ? m->mids->hop_row[(size_t)p * (size_t)m->dout + (size_t)j] : -1;
	size_t sw = m->sw;

	for (size_t i = 0; i < sw; i++)
		out[i] = ~(uint64_t)0;
	if (h < 0)
		return;
	const uint64_t *r = m->mids->reachw + (size_t)h * sw, *d = m->mids->reachw + (size_t)m->mids->nreach * sw,
		       *a = m->mids->adjw + (size_t)h * sw;
	for (size_t i = 0; i < sw; i++)
		out[i] = r[i] & (m->mids->dglobal ? d[i] | a[i] : ~(uint64_t)0);
}

uint64_t pm_mt_mid_word(const struct mt *m, int p, int j, size_t w)
{
	int h = m->mids->hop_row[(size_t)p * (size_t)m->dout + (size_t)j];
	size_t W = m->words;

	if (h < 0)
		return ~(uint64_t)0;
	uint64_t r = m->mids->reach[(size_t)h * W + w];
	return m->mids->dglobal ? r & (m->mids->dreach[w] | m->mids->adj[(size_t)h * W + w]) : r;
}

/* Clear endpoints [lo, hi) of a row, and from its word mask the words
 * left empty. */
static void clear_range(uint64_t *row, uint64_t *words, int lo, int hi)
{
	for (int w = lo / 64; w <= (hi - 1) / 64; w++) {
		int a = w * 64 > lo ? w * 64 : lo, b = w * 64 + 64 < hi ? w * 64 + 64 : hi;
		uint64_t bits = b - a == 64 ? ~(uint64_t)0 : (((uint64_t)1 << (b - a)) - 1) << (a % 64);
		if (!(row[w] &= ~bits))
			words[w / 64] &= ~((uint64_t)1 << (w % 64));
	}
}

int pm_mt_mid_links(struct mt *m, int p, int c, int *out)
{
	int n = pm_topo_route(m->t, p, c, m->pathbuf), k = 0;

	for (int i = 1; i < n - 1; i++)
		if (m->mids->mid_of_link[m->pathbuf[i]] >= 0)
			out[k++] = m->pathbuf[i];
	return k;
}

/* Reach row h has no endpoint left: the links into its vertex from
 * endpoints have no room for a tree edge this step (the sender masks). */
static void row_spent(struct mt *m, int h)
{
	size_t W = m->words;
	const uint64_t *row = m->mids->reach + (size_t)h * W;
	int v = m->mids->reach_vert[h];

	for (size_t w = 0; w < W; w++)
		if (row[w])
			return;
	for (int j = m->in_off[v]; j < m->in_off[v + 1]; j++) {
		int l = m->in[j], p = m->links[l].src, n;
		if (p >= m->P)
			continue;
		const int *out = pm_topo_out(m->t, p, &n);
		for (int k = 0; k < n && k < m->dout; k++)
			if (out[k] == l)
				m->outroom[(size_t)k * W + (size_t)p / 64] &= ~((uint64_t)1 << (p % 64));
	}
}

/* Endpoint c left dreach: no route into it crossing a link between
 * switches has room, so its links in that only such routes enter by have
 * none (the receivers' masks). */
static void dest_spent(struct mt *m, int c)
{
	size_t W = m->words;

	for (int k = 0; k < m->in_off[c + 1] - m->in_off[c] && k < m->din && k < 64; k++)
		if (!(m->mids->two_hop[c] >> k & 1))
			m->inroom[(size_t)k * W + (size_t)c / 64] &= ~((uint64_t)1 << (c % 64));
}

void pm_mt_mid_filled(struct mt *m, int l)
{
	int i = m->mids->mid_of_link[l];
	size_t W = m->words;

	for (int e = m->mids->mid_off[i]; e < m->mids->mid_off[i + 1]; e++) {
		const struct mt_mid_rng *r = &m->mids->mid_rng[e];
		int h = r->h < 0 ? m->mids->nreach : r->h;
		clear_range(r->h < 0 ? m->mids->dreach : m->mids->reach + (size_t)r->h * W, m->mids->reachw + (size_t)h * m->sw, r->lo,
			    r->hi);
		if (r->h >= 0) {
			if (e + 1 == m->mids->mid_off[i + 1] || m->mids->mid_rng[e + 1].h != r->h)
				row_spent(m, r->h);	/* once the run of this row's entries is cleared */
		} else
			for (int c = r->lo; c < r->hi; c++)
				dest_spent(m, c);
	}
}

