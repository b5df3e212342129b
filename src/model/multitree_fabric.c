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
 * tree's next child is the first endpoint after the parent, in endpoint
 * order and cyclically, that the tree lacks, that can still receive and
 * whose route from the parent finds room on both end links; endpoints of
 * one node, leaf or unit are numbered together on every built-in switch
 * network, so "after the parent" is "nearest first" there.
 * Cost: P^2 routes once (three bytes a pair), then per tree edge a scan of
 * the tree's missing endpoints in words of 64.  docs/model.md compares it
 * with the searching construction where both run. */
#include "model/multitree.h"
#include "model/limits.h"

#include <stdlib.h>

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

/* The bit sets of every endpoint: by route length (shortest first), by
 * first link and by last link.  -1: out of memory. */
static int bitsets(struct mt *m)
{
	size_t P = (size_t)m->P, W = m->words;
	int of[256] = {0};

	for (size_t k = 0; k < P * P; k++)
		of[m->hop[k]] = 1;
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
	if (!m->near || !m->out || !m->in_by || !m->inroom)
		return -1;
	for (size_t p = 0; p < P; p++)
		for (size_t c = 0; c < P; c++)
			if (c != p) {
				size_t k = p * P + c;
				set_bit(m->near + (p * (size_t)m->ncls + (size_t)of[m->hop[k]]) * W, c);
				set_bit(m->out + (p * (size_t)m->dout + m->fo[k]) * W, c);
				set_bit(m->in_by + (p * (size_t)m->din + m->li[k]) * W, c);
			}
	return 0;
}

/* Bytes the tables take for P endpoints (mt_fabric_setup). */
static double table_bytes(double P, int ncls, int dout, int din)
{
	return P * P * (3 + (ncls + dout + din) / 8.0);
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

/* Can the fabric construction run here?  0, or the bytes its tables would
 * need when past MT_FABRIC_MAX_BYTES or an endpoint has more than 32
 * links out or 255 in. */
double mt_fabric_refusal(const struct pm_topo *t)
{
	int dout, din;
	double P = pm_topo_endpoints(t);

	degrees(t, &dout, &din);
	double b = table_bytes(P, pm_topo_max_hops(t), dout, din);
	return dout > 32 || din > 255 || b > MT_FABRIC_MAX_BYTES ? b : 0;
}

/* The route tables.  0, or -1: out of memory or an endpoint the network
 * does not reach. */
int mt_fabric_setup(struct mt *m)
{
	size_t P = (size_t)m->P;

	degrees(m->t, &m->dout, &m->din);
	if (mt_fabric_refusal(m->t))
		return -1;
	m->fo = malloc(P * P);
	m->li = malloc(P * P);
	m->hop = malloc(P * P);
	if (!m->fo || !m->li || !m->hop)
		return -1;
	for (size_t p = 0; p < P; p++) {
		int nout;
		const int *out = pm_topo_out(m->t, (int)p, &nout);
		for (size_t c = 0; c < P; c++) {
			if (c == p) {
				m->fo[p * P + c] = m->li[p * P + c] = m->hop[p * P + c] = 0;
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
			m->fo[p * P + c] = (uint8_t)a;
			m->li[p * P + c] = (uint8_t)b;
			m->hop[p * P + c] = (uint8_t)n;
		}
	}
	return bitsets(m);
}

void mt_fabric_free(struct mt *m)
{
	free(m->fo);
	free(m->li);
	free(m->hop);
	free(m->near);
	free(m->out);
	free(m->in_by);
	free(m->inroom);
	m->fo = m->li = m->hop = NULL;
	m->near = m->out = m->in_by = m->inroom = NULL;
}

/* A new step: every endpoint's links in have room again. */
void mt_fabric_step(struct mt *m)
{
	size_t W = m->words;

	for (int j = 0; j < m->din; j++)
		for (size_t w = 0; w < W; w++)
			m->inroom[(size_t)j * W + w] = m->recvable[w];
}

/* The end links of the route p -> c: first into ends[0], last into
 * ends[1]; returns how many distinct (1 when the route is one link). */
static int end_links(const struct mt *m, int p, int c, int *ends)
{
	size_t k = (size_t)p * m->P + c;
	int nout;
	const int *out = pm_topo_out(m->t, p, &nout);

	ends[0] = out[m->fo[k]];
	ends[1] = m->in[m->in_off[c] + m->li[k]];
	return ends[0] == ends[1] ? 1 : 2;
}

/* Word w of the endpoints tree T could take from p this step, at
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
	for (int j = 0; j < m->din; j++)
		last |= m->in_by[(P * (size_t)m->din + (size_t)j) * W + w] &
			m->inroom[(size_t)j * W + w];
	return b & first & last;
}

/* Tree T's next child from parent p: the nearest endpoint (fewest links
 * on the route), and among equals the first after p cyclically, that T
 * lacks, that can receive, with room on the route's end links; -1 if
 * none. */
static int next_child(const struct mt *m, int T, int p, int t)
{
	const uint64_t *row = m->member + (size_t)T * m->words;
	size_t W = m->words, from = (size_t)(p + 1 == m->P ? 0 : p + 1);
	size_t w0 = from / 64;
	uint32_t room = 0;
	int nout;
	const int *out = pm_topo_out(m->t, p, &nout);

	for (int j = 0; j < nout && j < 32; j++)
		if (!mt_link_full(m, out[j], t))
			room |= (uint32_t)1 << j;
	if (!room)
		return -1;
	for (int k = 0; k < m->ncls; k++)
		for (size_t i = 0; i <= W; i++) {
			size_t w = (w0 + i) % W;
			uint64_t b = word_of(m, row, p, k, room, w);
			if (i == 0)
				b &= ~(uint64_t)0 << (from % 64);
			else if (i == W)
				b &= from % 64 ? ((uint64_t)1 << (from % 64)) - 1 : 0;
			if (b)
				return (int)(w * 64) + __builtin_ctzll(b);
		}
	return -1;
}

/* Does tree T lack an endpoint that can still receive? */
static int any_target(const struct mt *m, int T)
{
	const uint64_t *row = m->member + (size_t)T * m->words;

	for (size_t w = 0; w < m->words; w++)
		if (~row[w] & m->recvable[w])
			return 1;
	return 0;
}

/* Tree T's turn in step t: 1 if it added a node, 0 if it cannot this
 * step, -1 out of memory. */
int mt_fabric_turn(struct mt *m, int T, int t)
{
	struct front *f = &m->fr[T];
	int ends[2];

	if (!any_target(m, T)) {
		f->cur = f->first_new;
		return 0;
	}
	for (;;) {
		int p = mt_next_sender(m, T, t);
		if (p < 0)
			return 0;
		int c = next_child(m, T, p, t);
		if (c < 0) {
			f->cur++;	/* p has no child in T this step */
			continue;
		}
		int n = end_links(m, p, c, ends);
		if (mt_attach(m, T, p, c, t, ends, n))
			return -1;
		size_t k = (size_t)p * m->P + c;
		if (mt_link_full(m, ends[1], t))
			m->inroom[(size_t)m->li[k] * m->words + (size_t)c / 64] &=
				~((uint64_t)1 << (c % 64));
		return 1;
	}
}
