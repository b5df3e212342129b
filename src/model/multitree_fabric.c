/* multitree_fabric.c: MULTITREE's trees on a large switch network, grown
 * without searching the network for every tree edge.
 *
 * Algorithm 1 of Huang et al. (MULTITREE, ISCA 2021) on a switch network
 * (§III-C3) finds each tree edge by a search over the links still free
 * in the step; its cost grows as P^2 x links (algo_multitree.c), out of
 * reach at 4,096 endpoints.  The fabric construction keeps everything of
 * Algorithm 1 but the search: the trees take turns in lockstep steps, a
 * tree's parent is its earliest-added node that joined before the step
 * and has a port left, an endpoint sends and receives at most `ports`
 * tree edges a step, and an endpoint's own links carry at most their
 * slots a step.  What it drops is the capacity of the links between
 * switches: the fabric is taken as non-blocking while the trees are
 * built, every edge follows the network's own route (the one every other
 * algorithm's transfers take), and the contention evaluator then prices
 * whatever the routes share, step by step, as for any schedule.  A
 * tree's next child is the nearest endpoint (fewest links on the route),
 * and among equals the first after the parent in endpoint order,
 * cyclically, that the tree lacks, that can still receive and whose route
 * from the parent finds room on both end links.
 * Cost: P^2 routes once (three bytes a pair, and bit sets), then per tree
 * edge a scan of the tree's missing endpoints in words of 64.
 * docs/model.md describes it; docs/validation.md (section 6) compares it
 * with the searching construction where both run, and says where it
 * loses (static routes that collide: BiGraph, fattree:9,3). */
#include "model/multitree.h"
#include "model/limits.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Receivers few enough to look for senders from their side. */
#define MT_FABRIC_FEW 64

/* Index of link l among v's links out (or in). */
static int index_in(const int *list, int n, int l)
{
	for (int i = 0; i < n && i < 255; i++)
		if (list[i] == l)
			return i;
	return -1;
}

static void set_bit(uint64_t *row, size_t c)
{
	row[c / 64] |= (uint64_t)1 << (c % 64);
}

/* For each of n sets of W words: the first and one past the last word
 * with a bit. */
static void word_range(const uint64_t *sets, size_t n, size_t W, uint16_t *lo,
		       uint16_t *hi)
{
	for (size_t j = 0; j < n; j++) {
		const uint64_t *row = sets + j * W;
		size_t a = 0, b = W;
		while (a < W && !row[a])
			a++;
		while (b > a && !row[b - 1])
			b--;
		lo[j] = (uint16_t)a;
		hi[j] = (uint16_t)b;
	}
}

/* The route tables, per ordered endpoint pair [p P + c]: the route's
 * first link as an index into p's links out, its last link as an index
 * into c's links in, and its length.  Scratch of mt_fabric_setup: the
 * construction reads only the bit sets made from them. */
struct routes {
	uint8_t *fo, *li, *hop;
};

/* The bit sets of every endpoint: by route length (shortest first), by
 * first link and by last link.  -1: out of memory. */
static int bitsets(struct mt *m, const struct routes *r)
{
	size_t P = (size_t)m->P, W = m->words;
	int of[256] = {0};

	for (size_t k = 0; k < P * P; k++)
		of[r->hop[k]] = 1;
	m->ncls = 0;
	for (int h = 1; h < 256; h++)
		if (of[h]) {
			of[h] = m->ncls;
			m->cls_hops[m->ncls++] = h;
		}
	m->near = calloc(P * (size_t)m->ncls * W, sizeof(uint64_t));
	m->out = calloc(P * (size_t)m->dout * W, sizeof(uint64_t));
	m->in_by = calloc(P * (size_t)m->din * W, sizeof(uint64_t));
	m->inroom = calloc((size_t)m->din * W, sizeof(uint64_t));
	m->outroom = calloc((size_t)m->dout * W, sizeof(uint64_t));
	m->spent = calloc(P * (size_t)m->dout * W, sizeof(uint64_t));
	m->smask = calloc(W, sizeof(uint64_t));
	m->src_out = calloc(P * (size_t)m->dout * W, sizeof(uint64_t));
	m->src_in = calloc(P * (size_t)m->din * W, sizeof(uint64_t));
	m->avail = calloc((size_t)m->din * W, sizeof(uint64_t));
	m->reach = calloc(W, sizeof(uint64_t));
	m->out_lo = malloc(sizeof(uint16_t) * P * (size_t)m->dout);
	m->near_lo = malloc(sizeof(uint16_t) * P * (size_t)m->ncls);
	m->near_hi = malloc(sizeof(uint16_t) * P * (size_t)m->ncls);
	m->out_hi = malloc(sizeof(uint16_t) * P * (size_t)m->dout);
	if (!m->near || !m->out || !m->in_by || !m->inroom || !m->out_lo || !m->out_hi ||
	    !m->outroom || !m->spent || !m->smask || !m->src_out || !m->src_in || !m->avail || !m->reach ||
	    !m->near_lo || !m->near_hi)
		return -1;
	for (size_t p = 0; p < P; p++)
		for (size_t c = 0; c < P; c++)
			if (c != p) {
				size_t k = p * P + c;
				set_bit(m->near + (p * (size_t)m->ncls + (size_t)of[r->hop[k]]) * W, c);
				set_bit(m->out + (p * (size_t)m->dout + r->fo[k]) * W, c);
				set_bit(m->in_by + (p * (size_t)m->din + r->li[k]) * W, c);
				set_bit(m->src_out + (c * (size_t)m->dout + r->fo[k]) * W, p);
				set_bit(m->src_in + (c * (size_t)m->din + r->li[k]) * W, p);
			}
	word_range(m->out, P * (size_t)m->dout, W, m->out_lo, m->out_hi);
	word_range(m->near, P * (size_t)m->ncls, W, m->near_lo, m->near_hi);
	return 0;
}

/* Bytes the tables take for P endpoints (mt_fabric_setup). */
static double table_bytes(double P, int ncls, int dout, int din)
{
	return P * P * (3 + (ncls + 3 * dout + 2 * din) / 8.0);
}

/* The most links out of (into) an endpoint. */
static void degrees(const struct pm_topo *t, int *dout, int *din)
{
	int P = pm_topo_endpoints(t), L = pm_topo_nlinks(t);
	int *cnt = calloc((size_t)P, sizeof(int));

	*dout = *din = 1;
	for (int v = 0; v < P; v++) {
		int n;
		pm_topo_out(t, v, &n);
		if (n > *dout)
			*dout = n;
	}
	for (int l = 0; cnt && l < L; l++) {
		int d = pm_topo_link(t, l)->dst;
		if (d < P && ++cnt[d] > *din)
			*din = cnt[d];
	}
	if (!cnt)
		*din = 256;
	free(cnt);
}

/* The construction's work: every tree edge reads up to a tree's row of
 * P/64 words, for each pair of end links: P^2 x P/64 x links out x links
 * in (measured, docs/validation.md section 6: fattree:16,3, 1.07e9, 11
 * s; machine:dgx-h100:256, 5.4e8, 14 s). */
double mt_fabric_work(const struct pm_topo *t)
{
	int dout, din;
	double P = pm_topo_endpoints(t);

	degrees(t, &dout, &din);
	return P * P * ceil(P / 64) * dout * din;
}

/* Can the fabric construction run here?  0, or the bytes its tables would
 * need when past MT_FABRIC_MAX_BYTES, an endpoint has more than 32 links
 * out or 255 in, or a route more than 254 links (its length is a byte). */
double mt_fabric_refusal(const struct pm_topo *t)
{
	int dout, din;
	double P = pm_topo_endpoints(t);

	degrees(t, &dout, &din);
	double b = table_bytes(P, pm_topo_max_hops(t), dout, din);
	return dout > 32 || din > 255 || pm_topo_max_hops(t) > 254 || b > MT_FABRIC_MAX_BYTES ? b : 0;
}

/* Fill the route tables.  -1: an endpoint the network does not reach. */
static int fill_routes(struct mt *m, struct routes *r)
{
	size_t P = (size_t)m->P;

	for (size_t p = 0; p < P; p++) {
		int nout;
		const int *out = pm_topo_out(m->t, (int)p, &nout);
		for (size_t c = 0; c < P; c++) {
			size_t k = p * P + c;
			if (c == p) {
				r->fo[k] = r->li[k] = r->hop[k] = 0;
				continue;
			}
			int n = pm_topo_route(m->t, (int)p, (int)c, m->pathbuf);
			if (n <= 0 || n > 255)
				return -1;
			int a = index_in(out, nout, m->pathbuf[0]);
			int b = index_in(m->in + m->in_off[c], m->in_off[c + 1] - m->in_off[c],
					 m->pathbuf[n - 1]);
			if (a < 0 || b < 0)
				return -1;
			r->fo[k] = (uint8_t)a;
			r->li[k] = (uint8_t)b;
			r->hop[k] = (uint8_t)n;
		}
	}
	return 0;
}

/* The bit sets, from the routes.  0, or -1: out of memory or an endpoint
 * the network does not reach. */
int mt_fabric_setup(struct mt *m)
{
	size_t P = (size_t)m->P;
	struct routes r = {malloc(P * P), malloc(P * P), malloc(P * P)};
	int rc = -1;

	degrees(m->t, &m->dout, &m->din);
	if (!mt_fabric_refusal(m->t) && r.fo && r.li && r.hop && !fill_routes(m, &r))
		rc = bitsets(m, &r);
	free(r.fo);
	free(r.li);
	free(r.hop);
	return rc;
}

void mt_fabric_free(struct mt *m)
{
	free(m->near);
	free(m->out);
	free(m->in_by);
	free(m->inroom);
	free(m->out_lo);
	free(m->out_hi);
	free(m->near_lo);
	free(m->near_hi);
	m->near_lo = m->near_hi = NULL;
	free(m->outroom);
	free(m->spent);
	free(m->smask);
	free(m->src_out);
	free(m->src_in);
	free(m->avail);
	free(m->reach);
	m->reach = NULL;
	m->outroom = m->spent = m->smask = NULL;
	m->src_out = m->src_in = m->avail = NULL;
	m->out_lo = m->out_hi = NULL;
	m->near = m->out = m->in_by = m->inroom = NULL;
}

/* A new step: every endpoint's links in have room again. */
void mt_fabric_step(struct mt *m)
{
	size_t W = m->words;

	for (int j = 0; j < m->din; j++)
		for (size_t w = 0; w < W; w++)
			m->inroom[(size_t)j * W + w] = m->recvable[w];
	for (int j = 0; j < m->dout; j++)
		for (size_t w = 0; w < W; w++)
			m->outroom[(size_t)j * W + w] = m->sendable[w];
}

/* Clear bit c of a set. */
static void clear_bit(uint64_t *row, size_t c)
{
	row[c / 64] &= ~((uint64_t)1 << (c % 64));
}

/* The senders worth trying in tree T this turn: a link out with room
 * that does not lead only to T's members. */
static void sender_mask(struct mt *m, int T)
{
	size_t W = m->words;

	for (size_t w = 0; w < W; w++) {
		uint64_t x = 0;
		for (int j = 0; j < m->dout; j++)
			x |= m->outroom[(size_t)j * W + w] &
			     ~m->spent[((size_t)T * (size_t)m->dout + (size_t)j) * W + w];
		m->smask[w] = x;
	}
}

/* After p found no child in T: mark the links out of p that lead only to
 * T's members (trees only grow: for good). */
static void mark_spent(struct mt *m, int T, int p)
{
	size_t W = m->words;
	const uint64_t *row = m->member + (size_t)T * W;

	for (int j = 0; j < m->dout; j++) {
		size_t r = (size_t)p * (size_t)m->dout + (size_t)j;
		const uint64_t *o = m->out + r * W;
		size_t w = m->out_lo[r];
		while (w < m->out_hi[r] && !(o[w] & ~row[w]))
			w++;
		if (w >= m->out_hi[r])
			set_bit(m->spent + ((size_t)T * (size_t)m->dout + (size_t)j) * W, (size_t)p);
	}
}

/* Does bit c of set row say yes? */
static int has_bit(const uint64_t *row, int c)
{
	return (int)(row[c / 64] >> (c % 64) & 1);
}

/* The end links of the route p -> c as indices into p's links out (*a)
 * and c's links in (*b), read from the bit sets the scan just read (the
 * P x P tables would be a cache miss an edge). */
static void end_index(const struct mt *m, int p, int c, int *a, int *b)
{
	size_t W = m->words, P = (size_t)p;

	*a = *b = 0;
	for (int j = 0; j < m->dout; j++)
		if (has_bit(m->out + (P * (size_t)m->dout + (size_t)j) * W, c))
			*a = j;
	for (int j = 0; j < m->din; j++)
		if (has_bit(m->in_by + (P * (size_t)m->din + (size_t)j) * W, c))
			*b = j;
}

/* Word w of the endpoints tree T could take from p this step at
 * distance class k: lacking in T, able to receive, with room on the
 * route's first link (room: p's links out that have room) and last. */
static uint64_t word_of(const struct mt *m, const uint64_t *row, int p, int k,
			uint32_t room, size_t w)
{
	size_t W = m->words, P = (size_t)p;
	uint64_t b = ~row[w] & m->recvable[w] &
		     m->near[(P * (size_t)m->ncls + (size_t)k) * W + w];
	uint64_t first = 0, last = 0;

	if (!b)
		return 0;
	for (int j = 0; j < m->dout; j++)
		if (room & ((uint32_t)1 << j))
			first |= m->out[(P * (size_t)m->dout + (size_t)j) * W + w];
	if (!(b &= first))
		return 0;
	for (int j = 0; j < m->din; j++)
		last |= m->in_by[(P * (size_t)m->din + (size_t)j) * W + w] &
			m->inroom[(size_t)j * W + w];
	return b & last;
}

/* The first candidate of class k in words [a, b), or -1. */
static int first_in(const struct mt *m, const uint64_t *row, int p, int k,
		    uint32_t room, size_t a, size_t b)
{
	for (size_t w = a; w < b; w++) {
		uint64_t x = word_of(m, row, p, k, room, w);
		if (x)
			return (int)(w * 64) + __builtin_ctzll(x);
	}
	return -1;
}

/* Tree T's next child from parent p: the nearest endpoint (fewest links
 * on the route), and among equals the first after p cyclically, that T
 * lacks, that can receive, with room on the route's end links; -1 if
 * none.  Only the words where p's links with room lead, and where the
 * class has endpoints, are read (a GPU whose NIC is busy reads its
 * node's word; a fat-tree endpoint reads one word for its leaf, four
 * for its pod of 256). */
static int next_child(const struct mt *m, int T, int p, int t, int *cls)
{
	const uint64_t *row = m->member + (size_t)T * m->words;
	size_t W = m->words, from = (size_t)(p + 1 == m->P ? 0 : p + 1);
	size_t w0 = from / 64, olo = W, ohi = 0;
	uint32_t room = 0;
	int nout;
	const int *out = pm_topo_out(m->t, p, &nout);

	for (int j = 0; j < nout && j < 32; j++)
		if (!mt_link_full(m, out[j], t)) {
			size_t r = (size_t)p * (size_t)m->dout + (size_t)j;
			room |= (uint32_t)1 << j;
			if (m->out_lo[r] < olo)
				olo = m->out_lo[r];
			if (m->out_hi[r] > ohi)
				ohi = m->out_hi[r];
		}
	if (!room || olo >= ohi)
		return -1;
	uint64_t after = ~(uint64_t)0 << (from % 64);
	for (int k = 0; k < m->ncls; k++) {
		size_t r = (size_t)p * (size_t)m->ncls + (size_t)k;
		size_t lo = m->near_lo[r] > olo ? m->near_lo[r] : olo;
		size_t hi = m->near_hi[r] < ohi ? m->near_hi[r] : ohi;
		int c;
		if (lo >= hi)
			continue;
		/* word w0 from `from` on, the words after it, the words before
		 * it, then word w0 below `from` */
		uint64_t x0 = w0 >= lo && w0 < hi ? word_of(m, row, p, k, room, w0) : 0;
		if (x0 & after)
			return *cls = k, (int)(w0 * 64) + __builtin_ctzll(x0 & after);
		if ((c = first_in(m, row, p, k, room, w0 + 1 > lo ? w0 + 1 : lo, hi)) >= 0 ||
		    (c = first_in(m, row, p, k, room, lo, w0 < hi ? w0 : hi)) >= 0)
			return *cls = k, c;
		if (x0 & ~after)
			return *cls = k, (int)(w0 * 64) + __builtin_ctzll(x0 & ~after);
	}
	return -1;
}

/* Tree T's receivers this turn, by link in: avail[j] holds the endpoints
 * T lacks whose j-th link in has room (and a port left).  Returns how
 * many endpoints are in any of them, counted up to MT_FABRIC_FEW + 1
 * (then avail is incomplete and not used). */
static int receivers(struct mt *m, int T)
{
	const uint64_t *row = m->member + (size_t)T * m->words;
	size_t W = m->words;
	int n = 0;

	for (size_t w = 0; w < W && n <= MT_FABRIC_FEW; w++) {
		uint64_t any = 0;
		for (int j = 0; j < m->din; j++) {
			uint64_t x = ~row[w] & m->recvable[w] & m->inroom[(size_t)j * W + w];
			m->avail[(size_t)j * W + w] = x;
			any |= x;
		}
		n += __builtin_popcountll(any);
	}
	return n;
}

/* Seen from the receivers (few of them): narrow smask to the senders
 * that reach one of them with room on both end links.  These are exactly
 * the senders whose next_child succeeds, so the parent found is the
 * same; the cost is the receivers', not the senders' failures. */
static void reachers(struct mt *m)
{
	size_t W = m->words;
	uint64_t *reach = m->reach;

	memset(reach, 0, sizeof(uint64_t) * W);
	for (int j = 0; j < m->din; j++)
		for (size_t w = 0; w < W; w++)
			for (uint64_t b = m->avail[(size_t)j * W + w]; b; b &= b - 1) {
				size_t c = w * 64 + (size_t)__builtin_ctzll(b);
				const uint64_t *in = m->src_in + (c * (size_t)m->din + (size_t)j) * W;
				const uint64_t *so = m->src_out + c * (size_t)m->dout * W;
				for (size_t v = 0; v < W; v++) {
					uint64_t out = 0;
					for (int k = 0; k < m->dout; k++)
						out |= so[(size_t)k * W + v] & m->outroom[(size_t)k * W + v];
					reach[v] |= in[v] & out;
				}
			}
	for (size_t v = 0; v < W; v++)
		m->smask[v] &= reach[v];
}

/* Tree T's turn in step t: 1 if it added a node, 0 if it cannot this
 * step, -1 out of memory. */
int mt_fabric_turn(struct mt *m, int T, int t)
{
	struct front *f = &m->fr[T];
	int ends[2];

	int n = receivers(m, T);
	if (n == 0) {
		f->cur = f->first_new;
		return 0;
	}
	/* with one link out, a sender's failure costs one test (no room) or
	 * comes with no receiver at all: no mask needed */
	const uint64_t *mask = NULL;
	if (m->dout > 1 || n <= MT_FABRIC_FEW) {
		sender_mask(m, T);
		if (n <= MT_FABRIC_FEW)
			reachers(m);
		mask = m->smask;
	}
	for (;;) {
		int p = mt_next_sender(m, T, t, mask);
		if (p < 0)
			return 0;
		int cls, c = next_child(m, T, p, t, &cls);
		if (c < 0) {
			mark_spent(m, T, p);
			f->cur++;	/* p has no child in T this step */
			continue;
		}
		int a, b, nout;
		end_index(m, p, c, &a, &b);
		ends[0] = pm_topo_out(m->t, p, &nout)[a];
		ends[1] = m->in[m->in_off[c] + b];
		if (mt_attach(m, T, p, c, t, ends, ends[0] == ends[1] ? 1 : 2, m->cls_hops[cls]))
			return -1;
		if (mt_link_full(m, ends[1], t))
			clear_bit(m->inroom + (size_t)b * m->words, (size_t)c);
		if (mt_link_full(m, ends[0], t))
			clear_bit(m->outroom + (size_t)a * m->words, (size_t)p);
		return 1;
	}
}
