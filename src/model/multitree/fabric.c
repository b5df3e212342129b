/* fabric.c: MULTITREE's trees on a large switch network, grown
 * without searching the network for every tree edge.
 *
 * Algorithm 1 of Huang et al. (MULTITREE, ISCA 2021) on a switch network
 * (§III-C3) finds each tree edge by a search over the links still free
 * in the step; its cost grows as P^2 x links (search.c), out of
 * reach at 4,096 endpoints.  The fabric construction keeps everything of
 * Algorithm 1 but the search: the trees take turns in lockstep steps, a
 * tree's parent is its earliest-added node that joined before the step
 * and has a port left, an endpoint sends and receives at most `ports`
 * tree edges a step, and an endpoint's own links carry at most their
 * slots a step.  What it drops is the capacity of the links between
 * switches: the fabric is taken as non-blocking while the trees are
 * built, every edge follows the network's own route (the one every other
 * algorithm's transfers take), and the contention evaluator then prices
 * whatever the routes share, step by step, as for any schedule (on a
 * fat tree, which is rearrangeably non-blocking, the schedule routes
 * each step's edges apart: search.c, pm_topo_route_set).  A
 * tree's next child is the nearest endpoint (fewest links on the route),
 * and among equals the first after the parent in endpoint order,
 * cyclically, that the tree lacks, that can still receive and whose route
 * from the parent finds room on both end links.
 * Cost: P^2 routes once (three bytes a pair, and bit sets), then per turn
 * of a tree a pass over its row of members in words of 64; senders are
 * grouped by the words their routes reach, so a turn tries only senders
 * that reach a word holding a receiver, and reads only such words.
 * docs/model.md describes it; docs/validation/06-scale.md compares it
 * with the searching construction where both run, and says where it
 * loses (edges that collide on BiGraph's single links between layers). */
#include "model/grow.h"
#include "model/multitree/mt.h"
#include "model/limits.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The fabric construction's own state (m->fab): the endpoints seen from
 * p, word w of each set in one record, ends[(p words + w) stride ..]
 * (a child's test reads one cache line, not one per set): word i < ncls
 * of those cls_hops[i] links away (class i), then of those whose route
 * leaves by p's j-th link out (ncls + j), then of those it enters by
 * their j-th link in (ncls + dout + j). */
struct mt_fab {
	int ncls, cls_hops[256];
	size_t stride;
	uint64_t *ends;
	uint16_t *out_lo, *out_hi;	/* [p dout + j]: the words whose set of link out j has bits */
	/* Word masks (sw uint64_t each): nearw[p ncls + k] of class k's sets;
	 * pairw[(p dout + a) din + b] of the endpoints whose route from p
	 * leaves by a and enters by b; availw[b] of the tree's receivers by
	 * link in b (this turn); rw: one sender's words with a receiver */
	uint64_t *nearw, *pairw, *availw, *rw;
	uint64_t *reachbuf;	/* sw words: what one link out may still reach (pm_mt_mid_words) */
	/* spent[(T dout + j) words ..]: members whose j-th link out leads
	 * only to members of tree T (never a child that way again); smask:
	 * one turn's senders worth trying */
	uint64_t *spent, *smask;
	uint64_t *zero, *ones;	/* sets of W words with no bit, with every bit */
	uint8_t *spent_any;	/* [T dout + j]: spent[..] has a bit */
	/* Senders grouped, per end link pair q = a din + b, by their pairw
	 * row: pair q's groups are grp_first[q] .. + grp_n[q] (-1: too many,
	 * its senders count as able), group g's row at grp_row[g sw ..], its
	 * senders at grp_set[g words ..] in words grp_lo[g] .. grp_hi[g];
	 * able[a words ..]: the senders whose link out a reaches a
	 * receiver's word this turn */
	uint64_t *grp_row, *grp_set, *able;
	int *grp_first, *grp_n;
	uint16_t *grp_lo, *grp_hi;
	uint8_t *grp_all;	/* group g holds every endpoint */
	const uint64_t **able_row;	/* per link out: its able set, or ones */
	/* The groups of one word mask bit whose senders lie in one word (a
	 * node's endpoints over its own switch) are kept apart, by bit:
	 * pair q's are block smp_at[q] (-1: none), whose smp_bits (sw words)
	 * has bit i when one's row is bit i, its senders in word
	 * smp_word[block sw 64 + i], those of smp_set[..] */
	int *smp_at;
	uint64_t *smp_bits, *smp_set;
	uint16_t *smp_word;
	int *midpath;		/* an edge's counted links (mid.c) */
};

/* Sender groups (endpoints alike in which words of endpoints their
 * routes reach by a pair of end links): at most this many per pair, this
 * many in all.  Past them a pair's senders all count as able. */
#define MT_FABRIC_GROUPS 64
#define MT_FABRIC_POOL 256

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
 * into c's links in, and its length.  Scratch of pm_mt_fabric_setup: the
 * construction reads only the bit sets made from them. */
struct routes {
	uint8_t *fo, *li, *hop;
};

/* Group pair q's senders by their pairw row, in the pool from *used on:
 * the number of groups, or -1 when they are more than MT_FABRIC_GROUPS,
 * overflow the pool, or span more than 2 W words in all (able_senders
 * would then cost more than the masks it saves). */
static int group_pair(struct mt *m, size_t q, int kmax, int *used, int pool)
{
	size_t P = (size_t)m->P, W = m->words, sw = m->sw, pairs = (size_t)m->dout * (size_t)m->din;
	int first = *used, n = 0;
	size_t span = 0;

	for (size_t p = 0; p < P; p++) {
		const uint64_t *pw = m->fab->pairw + (p * pairs + q) * sw, *row = pw;
		uint64_t any = 0;
		if (kmax < m->fab->ncls - 1) {	/* pw within classes 0 .. kmax, in scratch */
			memset(m->fab->rw, 0, sizeof(uint64_t) * sw);
			for (int k = 0; k <= kmax; k++)
				for (size_t i = 0; i < sw; i++)
					m->fab->rw[i] |= pw[i] & m->fab->nearw[(p * (size_t)m->fab->ncls + (size_t)k) * sw + i];
			row = m->fab->rw;
		}
		for (size_t i = 0; i < sw; i++)
			any |= row[i];
		if (!any)
			continue;	/* no route of p in these classes takes this pair */
		int g = first;
		while (g < first + n && memcmp(m->fab->grp_row + (size_t)g * sw, row, sizeof(uint64_t) * sw))
			g++;
		if (g == first + n) {
			if (n == MT_FABRIC_GROUPS || g == pool)
				return -1;
			memcpy(m->fab->grp_row + (size_t)g * sw, row, sizeof(uint64_t) * sw);
			n++;
		}
		set_bit(m->fab->grp_set + (size_t)g * W, p);
	}
	word_range(m->fab->grp_set + (size_t)first * W, (size_t)n, W, m->fab->grp_lo + first, m->fab->grp_hi + first);
	for (int g = first; g < first + n; g++)
		span += (size_t)(m->fab->grp_hi[g] - m->fab->grp_lo[g]);
	if (span > 2 * W)
		return -1;
	*used = first + n;
	return n;
}

/* Is group g one of a single word mask bit (its index into *bit) whose
 * senders lie in one word? */
static int simple_group(const struct mt *m, int g, int *bit)
{
	const uint64_t *row = m->fab->grp_row + (size_t)g * m->sw;
	int n = 0;

	for (size_t i = 0; i < m->sw; i++)
		if (row[i]) {
			n += __builtin_popcountll(row[i]);
			*bit = (int)(i * 64) + __builtin_ctzll(row[i]);
		}
	return n == 1 && m->fab->grp_hi[g] == m->fab->grp_lo[g] + 1;
}

/* Move the simple groups of each pair (simple_group) out of its list into
 * a block of the tables by bit (struct mt): able_senders then visits a
 * receiver's bit, not every group.  -1: out of memory. */
static int split_simple(struct mt *m, size_t npairs)
{
	size_t sw = m->sw, nblk = 0;

	m->fab->smp_at = malloc(sizeof(int) * npairs);
	if (!m->fab->smp_at)
		return -1;
	for (size_t q = 0; q < npairs; q++) {
		int bit, any = 0;
		for (int g = m->fab->grp_first[q]; g < m->fab->grp_first[q] + m->fab->grp_n[q]; g++)
			any |= simple_group(m, g, &bit);
		m->fab->smp_at[q] = any ? (int)nblk++ : -1;
	}
	m->fab->smp_bits = calloc(nblk * sw + 1, sizeof(uint64_t));
	m->fab->smp_set = calloc(nblk * sw * 64 + 1, sizeof(uint64_t));
	m->fab->smp_word = calloc(nblk * sw * 64 + 1, sizeof(uint16_t));
	if (!m->fab->smp_bits || !m->fab->smp_set || !m->fab->smp_word)
		return -1;
	for (size_t q = 0; q < npairs; q++) {
		int first = m->fab->grp_first[q], kept = first, bit;
		size_t blk = (size_t)m->fab->smp_at[q];
		if (m->fab->smp_at[q] < 0)
			continue;
		for (int g = first; g < first + m->fab->grp_n[q]; g++) {
			if (simple_group(m, g, &bit)) {
				size_t k = blk * sw * 64 + (size_t)bit;
				set_bit(m->fab->smp_bits + blk * sw, (size_t)bit);
				m->fab->smp_word[k] = m->fab->grp_lo[g];
				m->fab->smp_set[k] = m->fab->grp_set[(size_t)g * m->words + m->fab->grp_lo[g]];
				continue;
			}
			if (kept != g) {	/* keep the others at the front of the list */
				memcpy(m->fab->grp_row + (size_t)kept * sw, m->fab->grp_row + (size_t)g * sw, sizeof(uint64_t) * sw);
				memcpy(m->fab->grp_set + (size_t)kept * m->words, m->fab->grp_set + (size_t)g * m->words,
				       sizeof(uint64_t) * m->words);
				m->fab->grp_lo[kept] = m->fab->grp_lo[g];
				m->fab->grp_hi[kept] = m->fab->grp_hi[g];
			}
			kept++;
		}
		m->fab->grp_n[q] = kept - first;
	}
	return 0;
}

/* The sender groups of every end-link pair (see struct mt), one set of
 * them per stage of route lengths when the construction has stages (the
 * routes up to class k), else one for all.  -1: out of memory. */
static int group_senders(struct mt *m)
{
	size_t W = m->words, sw = m->sw, pairs = (size_t)m->dout * (size_t)m->din;
	int used = 0, levels = m->mid ? m->fab->ncls : 1, pool = MT_FABRIC_POOL * levels;

	m->fab->grp_first = malloc(sizeof(int) * pairs * (size_t)levels);
	m->fab->grp_n = malloc(sizeof(int) * pairs * (size_t)levels);
	m->fab->grp_row = calloc((size_t)pool * sw, sizeof(uint64_t));
	m->fab->grp_set = calloc((size_t)pool * W, sizeof(uint64_t));
	m->fab->grp_lo = malloc(sizeof(uint16_t) * (size_t)pool);
	m->fab->grp_hi = malloc(sizeof(uint16_t) * (size_t)pool);
	if (!m->fab->grp_first || !m->fab->grp_n || !m->fab->grp_row || !m->fab->grp_set || !m->fab->grp_lo || !m->fab->grp_hi)
		return -1;
	for (int s = 0; s < levels; s++)
		for (size_t q = 0; q < pairs; q++) {
			int first = used, kmax = m->mid ? s : m->fab->ncls - 1;
			size_t i = (size_t)s * pairs + q;
			m->fab->grp_first[i] = first;
			m->fab->grp_n[i] = group_pair(m, q, kmax, &used, pool);
			if (m->fab->grp_n[i] < 0) {	/* give its part of the pool back */
				memset(m->fab->grp_row + (size_t)first * sw, 0, sizeof(uint64_t) * sw * (size_t)(pool - first));
				memset(m->fab->grp_set + (size_t)first * W, 0, sizeof(uint64_t) * W * (size_t)(pool - first));
				used = first;
			}
		}
	if (split_simple(m, pairs * (size_t)levels) || !(m->fab->grp_all = calloc((size_t)pool, 1)))
		return -1;
	for (int g = 0; g < pool; g++) {	/* after the split: it moves groups */
		size_t n = 0;
		for (size_t w = 0; w < W; w++)
			n += (size_t)__builtin_popcountll(m->fab->grp_set[(size_t)g * W + w]);
		m->fab->grp_all[g] = n == (size_t)m->P;
	}
	return 0;
}

/* uint64_t words of a record of the bit sets (struct mt, ends): one word
 * per route length, link out and link in, padded to a cache line when it
 * fits in one. */
static size_t record_words(int ncls, int dout, int din)
{
	size_t n = (size_t)ncls + (size_t)dout + (size_t)din;
	return n <= 8 ? 8 : n;
}

/* Endpoint p's record of word w (struct mt, ends). */
static uint64_t *record(const struct mt *m, size_t p, size_t w)
{
	return m->fab->ends + (p * m->words + w) * m->fab->stride;
}

/* The bit sets of every endpoint: by route length (shortest first), by
 * first link and by last link.  -1: out of memory. */
static int bitsets(struct mt *m, const struct routes *r)
{
	size_t P = (size_t)m->P, W = m->words;
	int of[256] = {0};

	for (size_t k = 0; k < P * P; k++)
		of[r->hop[k]] = 1;
	m->fab->ncls = 0;
	for (int h = 1; h < 256; h++)
		if (of[h]) {
			of[h] = m->fab->ncls;
			m->fab->cls_hops[m->fab->ncls++] = h;
		}
	m->fab->stride = record_words(m->fab->ncls, m->dout, m->din);
	m->fab->ends = calloc(P * W * m->fab->stride, sizeof(uint64_t));
	m->inroom = calloc((size_t)m->din * W, sizeof(uint64_t));
	m->outroom = calloc((size_t)m->dout * W, sizeof(uint64_t));
	m->fab->spent = calloc(P * (size_t)m->dout * W, sizeof(uint64_t));
	m->fab->smask = calloc(W, sizeof(uint64_t));
	m->fab->zero = calloc(W, sizeof(uint64_t));
	m->fab->ones = malloc(sizeof(uint64_t) * W);
	m->fab->able_row = malloc(sizeof(uint64_t *) * (size_t)m->dout);
	if (m->fab->ones)
		memset(m->fab->ones, 0xff, sizeof(uint64_t) * W);
	m->fab->able = calloc((size_t)m->dout * W, sizeof(uint64_t));
	m->fab->out_lo = malloc(sizeof(uint16_t) * P * (size_t)m->dout);
	m->fab->out_hi = malloc(sizeof(uint16_t) * P * (size_t)m->dout);
	m->fab->nearw = calloc(P * (size_t)m->fab->ncls * m->sw, sizeof(uint64_t));
	m->fab->pairw = calloc(P * (size_t)m->dout * (size_t)m->din * m->sw, sizeof(uint64_t));
	m->fab->availw = calloc((size_t)m->din * m->sw, sizeof(uint64_t));
	m->fab->rw = calloc(m->sw, sizeof(uint64_t));
	m->fab->reachbuf = malloc(sizeof(uint64_t) * m->sw);
	m->fab->spent_any = calloc(P * (size_t)m->dout, 1);
	if (!m->fab->ends || !m->inroom || !m->fab->out_lo || !m->fab->out_hi ||
	    !m->outroom || !m->fab->spent || !m->fab->smask || !m->fab->zero || !m->fab->ones || !m->fab->able_row || !m->fab->able || !m->fab->nearw || !m->fab->pairw || !m->fab->availw || !m->fab->rw || !m->fab->spent_any || !m->fab->reachbuf)
		return -1;
	for (size_t p = 0; p < P; p++)
		for (size_t c = 0; c < P; c++)
			if (c != p) {
				size_t k = p * P + c;
				uint64_t bit = (uint64_t)1 << (c % 64), *e = record(m, p, c / 64);
				e[of[r->hop[k]]] |= bit;
				e[m->fab->ncls + r->fo[k]] |= bit;
				e[m->fab->ncls + m->dout + r->li[k]] |= bit;
				set_bit(m->fab->nearw + (p * (size_t)m->fab->ncls + (size_t)of[r->hop[k]]) * m->sw, c / 64);
				set_bit(m->fab->pairw + ((p * (size_t)m->dout + r->fo[k]) * (size_t)m->din + r->li[k]) * m->sw,
					c / 64);
			}
	for (size_t p = 0; p < P; p++)	/* the words of each link's set with bits */
		for (int j = 0; j < m->dout; j++) {
			size_t a = 0, b = W, i = p * (size_t)m->dout + (size_t)j;
			while (a < W && !record(m, p, a)[m->fab->ncls + j])
				a++;
			while (b > a && !record(m, p, b - 1)[m->fab->ncls + j])
				b--;
			m->fab->out_lo[i] = (uint16_t)a;
			m->fab->out_hi[i] = (uint16_t)b;
		}
	return group_senders(m);
}

/* Bytes the tables take for P endpoints (pm_mt_fabric_setup): the route
 * tables (3 bytes a pair), the records of bit sets by class, link out
 * and link in (record_words) and the spent sets, P^2 x (3 + (record +
 * dout) / 8), and the word masks, P x (ncls + dout din) x ceil(P / 4096)
 * x 8. */
static double table_bytes(double P, int ncls, int dout, int din)
{
	return P * P * (3 + ((double)record_words(ncls, dout, din) + dout) / 8.0) +
	       P * (ncls + (double)dout * din) * ceil(P / 4096) * 8;
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

/* The construction's work: every turn of a tree reads its missing
 * endpoints and its senders' masks, P/64 words per link in and per link
 * out, and tests each pair of end links once; turns are about P^2
 * (P - 1 edges a tree, and one turn a tree and step that ends it):
 * P^2 x (P/64 x (links out + links in) + links out x links in).
 * Measured, docs/validation/06-scale.md: fattree:16,3, 2.2e9, 12 s;
 * machine:dgx-h100:256, 5.5e8, 5.5 s; machine:dgx-h100:512, 4.4e9. */
double pm_mt_fabric_work(const struct pm_topo *t)
{
	int dout, din;
	double P = pm_topo_endpoints(t);

	degrees(t, &dout, &din);
	return P * P * (ceil(P / 64) * (dout + din) + (double)dout * din);
}

/* Does the fabric construction count the links between switches here
 * (mid.c)?  Where the schedule takes the network's own routes
 * and the work, with a round of turns per stage of route lengths (a
 * stage per length, shortest first, as the searching construction), is
 * within MT_FABRIC_MAX_WORK: pm_mt_fabric_work x stages.  Past it, only the
 * end links (docs/model.md). */
int pm_mt_fabric_counts_mid(const struct pm_topo *t, int even)
{
	int lo = pm_topo_min_hops(t), hi = pm_topo_max_hops(t);
	double stages = hi > lo ? (hi - lo) / (1 + even) + 1 : 1;

	return !pm_topo_routes_sets(t) && pm_mt_fabric_work(t) * stages <= MT_FABRIC_MAX_WORK;
}

/* Can the fabric construction run here?  0, or the bytes its tables would
 * need when past MT_FABRIC_MAX_BYTES, an endpoint has more than 32 links
 * out or 255 in, or a route more than 254 links (its length is a byte). */
double pm_mt_fabric_refusal(const struct pm_topo *t)
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
			if (m->mid && pm_mt_mid_add(m, (int)c, m->pathbuf, n))
				return -1;
		}
	}
	return 0;
}

/* The bit sets, from the routes.  0, or -1: out of memory or an endpoint
 * the network does not reach. */
int pm_mt_fabric_setup(struct mt *m)
{
	size_t P = (size_t)m->P;
	struct routes r = {malloc(P * P), malloc(P * P), malloc(P * P)};
	int rc = -1;

	if (!(m->fab = calloc(1, sizeof *m->fab))) {
		free(r.fo);
		free(r.li);
		free(r.hop);
		return -1;
	}
	degrees(m->t, &m->dout, &m->din);
	m->sw = (m->words + 63) / 64;
	m->mid = pm_mt_fabric_counts_mid(m->t, m->even);
	m->fab->midpath = malloc(sizeof(int) * ((size_t)pm_topo_max_hops(m->t) + 2));
	if (m->fab->midpath && (!m->mid || !pm_mt_mid_begin(m)) && !pm_mt_fabric_refusal(m->t) && r.fo && r.li &&
	    r.hop && !fill_routes(m, &r) && (!m->mid || !pm_mt_mid_end(m)))
		rc = bitsets(m, &r);
	free(r.fo);
	free(r.li);
	free(r.hop);
	return rc;
}

void pm_mt_fabric_free(struct mt *m)
{
	struct mt_fab *f = m->fab;

	pm_mt_mid_free(m);
	free(m->inroom);
	free(m->outroom);
	m->inroom = m->outroom = NULL;
	if (!f)
		return;
	void *own[] = {&f->midpath, &f->ends, &f->out_lo, &f->out_hi, &f->nearw, &f->pairw,
		&f->availw, &f->rw, &f->reachbuf, &f->spent, &f->spent_any, &f->smask, &f->zero,
		&f->ones, &f->able_row, &f->grp_all, &f->able, &f->grp_row, &f->grp_set,
		&f->grp_first, &f->grp_n, &f->grp_lo, &f->grp_hi, &f->smp_at, &f->smp_bits,
		&f->smp_set, &f->smp_word, &f};
	pm_free_each(own, sizeof own / sizeof *own);
	m->fab = NULL;
}

/* A new step: every endpoint's links in have room again. */
void pm_mt_fabric_step(struct mt *m)
{
	size_t W = m->words;

	for (int j = 0; j < m->din; j++)
		for (size_t w = 0; w < W; w++)
			m->inroom[(size_t)j * W + w] = m->recvable[w];
	for (int j = 0; j < m->dout; j++)
		for (size_t w = 0; w < W; w++)
			m->outroom[(size_t)j * W + w] = m->sendable[w];
	if (m->mid)
		pm_mt_mid_step(m);
}

/* Ask for tree T's spent sets that have bits (sender_mask reads them)
 * and, when p >= 0, for p's record of the word where next_child starts. */
void pm_mt_fabric_prefetch(const struct mt *m, int T, int p)
{
	size_t W = m->words;

	for (int j = 0; j < m->dout; j++) {
		size_t r = (size_t)T * (size_t)m->dout + (size_t)j;
		if (m->fab->spent_any[r])
			for (size_t w = 0; w < W; w += 8)
				__builtin_prefetch(m->fab->spent + r * W + w);
	}
	if (p >= 0)
		__builtin_prefetch(record(m, (size_t)p, (size_t)(p + 1 == m->P ? 0 : p + 1) / 64));
}

/* Clear bit c of a set. */
static void clear_bit(uint64_t *row, size_t c)
{
	row[c / 64] &= ~((uint64_t)1 << (c % 64));
}

/* able[a]: the senders whose link out a reaches a word that holds a
 * receiver entering by the route's last link (by their groups, a few
 * word-mask tests per group). */
static void able_senders(struct mt *m)
{
	size_t W = m->words, sw = m->sw;

	size_t base = 0;	/* the groups of this stage's route lengths */
	if (m->mid)
		for (int k = 1; k < m->fab->ncls && m->fab->cls_hops[k] <= m->maxlen; k++)
			base += (size_t)m->dout * (size_t)m->din;
	for (int a = 0; a < m->dout; a++) {
		uint64_t *able = m->fab->able + (size_t)a * W;
		int all = 0;
		memset(able, 0, sizeof(uint64_t) * W);
		for (int b = 0; b < m->din && !all; b++) {
			size_t q = base + (size_t)a * (size_t)m->din + (size_t)b;
			const uint64_t *aw = m->fab->availw + (size_t)b * sw;
			if (m->fab->grp_n[q] < 0) {
				all = 1;
				break;
			}
			for (int g = m->fab->grp_first[q]; g < m->fab->grp_first[q] + m->fab->grp_n[q]; g++) {
				const uint64_t *row = m->fab->grp_row + (size_t)g * sw, *set = m->fab->grp_set + (size_t)g * W;
				uint64_t hit = row[0] & aw[0];
				for (size_t i = 1; i < sw; i++)
					hit |= row[i] & aw[i];
				if (hit && m->fab->grp_all[g]) {
					all = 1;
					break;
				}
				if (hit)
					for (size_t w = m->fab->grp_lo[g]; w < m->fab->grp_hi[g]; w++)
						able[w] |= set[w];
			}
			if (all || m->fab->smp_at[q] < 0)
				continue;
			size_t blk = (size_t)m->fab->smp_at[q] * sw;	/* the simple groups a receiver's bit hits */
			for (size_t i = 0; i < sw; i++)
				for (uint64_t x = aw[i] & m->fab->smp_bits[blk + i]; x; x &= x - 1) {
					size_t k = blk * 64 + i * 64 + (size_t)__builtin_ctzll(x);
					able[m->fab->smp_word[k]] |= m->fab->smp_set[k];
				}
		}
		m->fab->able_row[a] = all ? m->fab->ones : able;
	}
}

/* The senders worth trying in tree T this turn: a link out with room
 * (outroom: only endpoints with a port left) that reaches a receiver's
 * word (able) and does not lead only to T's members.  Links out two at a
 * time, in one pass; a spent set with no bit is not read (it misses the
 * cache): the zero row stands in. */
static void sender_mask(struct mt *m, int T)
{
	size_t W = m->words;

	able_senders(m);
	for (int j = 0; j < m->dout; j += 2) {
		int j1 = j + 1 < m->dout ? j + 1 : j;
		size_t r0 = (size_t)T * (size_t)m->dout + (size_t)j, r1 = r0 + (size_t)(j1 - j);
		const uint64_t *room0 = m->outroom + (size_t)j * W, *able0 = m->fab->able_row[j];
		const uint64_t *room1 = m->outroom + (size_t)j1 * W, *able1 = m->fab->able_row[j1];
		const uint64_t *sp0 = m->fab->spent_any[r0] ? m->fab->spent + r0 * W : m->fab->zero;
		const uint64_t *sp1 = m->fab->spent_any[r1] ? m->fab->spent + r1 * W : m->fab->zero;
		uint64_t *sm = m->fab->smask;
		if (j == 0)	/* the first pair sets the mask */
			for (size_t w = 0; w < W; w++)
				sm[w] = (room0[w] & able0[w] & ~sp0[w]) | (room1[w] & able1[w] & ~sp1[w]);
		else
			for (size_t w = 0; w < W; w++)
				sm[w] |= (room0[w] & able0[w] & ~sp0[w]) | (room1[w] & able1[w] & ~sp1[w]);
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
		size_t w = m->fab->out_lo[r];
		while (w < m->fab->out_hi[r] && !(record(m, (size_t)p, w)[m->fab->ncls + j] & ~row[w]))
			w++;
		if (w >= m->fab->out_hi[r]) {
			size_t k = (size_t)T * (size_t)m->dout + (size_t)j;
			set_bit(m->fab->spent + k * W, (size_t)p);
			m->fab->spent_any[k] = 1;
		}
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
	const uint64_t *e = record(m, (size_t)p, (size_t)c / 64);
	uint64_t bit = (uint64_t)1 << (c % 64);

	*a = *b = 0;
	for (int j = 0; j < m->dout; j++)
		if (e[m->fab->ncls + j] & bit)
			*a = j;
	for (int j = 0; j < m->din; j++)
		if (e[m->fab->ncls + m->dout + j] & bit)
			*b = j;
}

/* Word w of the endpoints p could give a child of class k this turn in
 * the tree whose members are row: endpoints it lacks that can receive,
 * whose route from p leaves by a link of p's with room and enters by a
 * link of theirs with room. */
static uint64_t word_of(const struct mt *m, const uint64_t *row, int p, int k, uint32_t room,
		       size_t w)
{
	size_t W = m->words;
	const uint64_t *e = record(m, (size_t)p, w), *o = e + m->fab->ncls, *in = o + m->dout;
	uint64_t b = e[k], first = 0, last = 0;

	if (!b)
		return 0;
	for (int j = 0; j < m->dout; j++)
		if (room & ((uint32_t)1 << j)) {
			uint64_t x = o[j];
			if (m->mid && (x & b))	/* only over links between switches with room */
				x &= pm_mt_mid_word(m, p, j, w);
			first |= x;
		}
	if (!(b &= first))
		return 0;
	for (int j = 0; j < m->din; j++)
		last |= in[j] & m->inroom[(size_t)j * W + w];
	return b & last & ~row[w];	/* inroom: only endpoints that can receive */
}

/* The first word in [a, b) whose bit is set in both masks x and y, or
 * -1. */
static long first_word(const uint64_t *x, const uint64_t *y, size_t a, size_t b)
{
	while (a < b) {
		uint64_t v = (x[a / 64] & y[a / 64]) >> (a % 64);
		if (v) {
			size_t w = a + (size_t)__builtin_ctzll(v);
			return w < b ? (long)w : -1;
		}
		a = (a / 64 + 1) * 64;
	}
	return -1;
}

/* The first candidate of class k in the words [a, b) that nw (class k's
 * words) and rw (the words with a receiver) share, or -1. */
static int first_in(const struct mt *m, const uint64_t *row, int p, int k, uint32_t room,
		    const uint64_t *nw, size_t a, size_t b)
{
	for (long w; (w = first_word(nw, m->fab->rw, a, b)) >= 0; a = (size_t)w + 1) {
		uint64_t x = word_of(m, row, p, k, room, (size_t)w);
		if (x)
			return (int)(w * 64) + __builtin_ctzll(x);
	}
	return -1;
}

/* rw: the words holding a receiver that p's links with room (room) reach
 * over a route entering it by a link with room.  0 if there are none. */
static int receiver_words(struct mt *m, int p, uint32_t room)
{
	size_t sw = m->sw;
	uint64_t any = 0;

	memset(m->fab->rw, 0, sizeof(uint64_t) * sw);
	for (int a = 0; a < m->dout; a++) {
		if (!(room & ((uint32_t)1 << a)))
			continue;
		const uint64_t *pw = m->fab->pairw + ((size_t)p * (size_t)m->dout + (size_t)a) * (size_t)m->din * sw;
		if (m->mid) {	/* only words still reached over links between switches */
			uint64_t *reach = m->fab->reachbuf;
			pm_mt_mid_words(m, p, a, reach);
			for (int b = 0; b < m->din; b++)
				for (size_t i = 0; i < sw; i++)
					m->fab->rw[i] |= pw[(size_t)b * sw + i] & m->fab->availw[(size_t)b * sw + i] & reach[i];
			continue;
		}
		for (int b = 0; b < m->din; b++)
			for (size_t i = 0; i < sw; i++)
				m->fab->rw[i] |= pw[(size_t)b * sw + i] & m->fab->availw[(size_t)b * sw + i];
	}
	for (size_t i = 0; i < sw; i++)
		any |= m->fab->rw[i];
	return any != 0;
}

/* Tree T's next child from parent p: the nearest endpoint (fewest links
 * on the route), and among equals the first after p cyclically, that T
 * lacks, that can receive, with room on the route's end links; -1 if
 * none.  Only the words that hold such a receiver for p (receiver_words)
 * and endpoints of the class are read: a sender with no receiver in
 * reach costs a few word-mask operations, not a scan of the tree. */
static int next_child(struct mt *m, int T, int p, int *cls)
{
	const uint64_t *row = m->member + (size_t)T * m->words;
	size_t W = m->words, from = (size_t)(p + 1 == m->P ? 0 : p + 1);
	size_t w0 = from / 64;
	uint32_t room = 0;
	int nout;

	pm_topo_out(m->t, p, &nout);
	/* p's links out with room: outroom (only p's own edges take them;
	 * it also drops a link whose every route is blocked between
	 * switches, through which word_of would find no child) */
	for (int j = 0; j < nout && j < 32; j++)
		if (has_bit(m->outroom + (size_t)j * W, p))
			room |= (uint32_t)1 << j;
	if (!room || !receiver_words(m, p, room))
		return -1;
	uint64_t after = ~(uint64_t)0 << (from % 64);
	for (int k = 0; k < m->fab->ncls && m->fab->cls_hops[k] <= m->maxlen; k++) {
		const uint64_t *nw = m->fab->nearw + ((size_t)p * (size_t)m->fab->ncls + (size_t)k) * m->sw;
		int c;
		/* word w0 from `from` on, the words after it, the words before
		 * it, then word w0 below `from` */
		uint64_t x0 = first_word(nw, m->fab->rw, w0, w0 + 1) >= 0 ? word_of(m, row, p, k, room, w0) : 0;
		if (x0 & after)
			return *cls = k, (int)(w0 * 64) + __builtin_ctzll(x0 & after);
		if ((c = first_in(m, row, p, k, room, nw, w0 + 1, W)) >= 0 ||
		    (c = first_in(m, row, p, k, room, nw, 0, w0)) >= 0)
			return *cls = k, c;
		if (x0 & ~after)
			return *cls = k, (int)(w0 * 64) + __builtin_ctzll(x0 & ~after);
	}
	return -1;
}

/* Tree T's receivers this turn, by link in: availw[j] marks the words
 * holding an endpoint T lacks whose j-th link in has room (inroom holds
 * only endpoints with a port left: pm_mt_fabric_turn keeps it so); word_of
 * reads the endpoints themselves.  Links in two at a time, so that one
 * read of the tree's row serves both.  Returns 1 if there is any. */
static int receivers(struct mt *m, int T)
{
	const uint64_t *row = m->member + (size_t)T * m->words;
	size_t W = m->words, sw = m->sw;
	uint64_t any = 0;

	for (int j = 0; j < m->din; j += 2) {
		const uint64_t *r0 = m->inroom + (size_t)j * W;
		const uint64_t *r1 = j + 1 < m->din ? r0 + W : r0;
		for (size_t i = 0; i < sw; i++) {
			uint64_t b0 = 0, b1 = 0;
			size_t end = W < i * 64 + 64 ? W : i * 64 + 64;
			for (size_t w = i * 64; w < end; w++) {
				uint64_t lack = ~row[w];
				b0 |= (uint64_t)((lack & r0[w]) != 0) << (w % 64);
				b1 |= (uint64_t)((lack & r1[w]) != 0) << (w % 64);
			}
			m->fab->availw[(size_t)j * sw + i] = b0;
			if (j + 1 < m->din)
				m->fab->availw[(size_t)(j + 1) * sw + i] = b1;
			any |= b0 | b1;
		}
	}
	return any != 0;
}

/* After edge p -> c: p if it has no port left to send this step, and c
 * if it has none left to receive, leave every set of endpoints whose link
 * out (in) has room. */
static void drop_ports(struct mt *m, int p, int c)
{
	size_t W = m->words;

	if (!has_bit(m->sendable, p))
		for (int j = 0; j < m->dout; j++)
			clear_bit(m->outroom + (size_t)j * W, (size_t)p);
	if (!has_bit(m->recvable, c))
		for (int j = 0; j < m->din; j++)
			clear_bit(m->inroom + (size_t)j * W, (size_t)c);
}

/* Tree T's turn in step t: 1 if it added a node, 0 if it cannot this
 * step, -1 out of memory. */
int pm_mt_fabric_turn(struct mt *m, int T, int t)
{
	struct front *f = &m->fr[T];
	int ends[2];

	if (!receivers(m, T)) {
		f->cur = f->first_new;
		return 0;
	}
	sender_mask(m, T);
	for (;;) {
		int p = pm_mt_next_sender(m, T, m->fab->smask);
		if (p < 0)
			return 0;
		int cls, c = next_child(m, T, p, &cls);
		if (c < 0) {
			mark_spent(m, T, p);
			f->cur++;	/* p has no child in T this step */
			continue;
		}
		int a, b, nout, *path = m->fab->midpath;
		end_index(m, p, c, &a, &b);
		ends[0] = pm_topo_out(m->t, p, &nout)[a];
		ends[1] = m->in[m->in_off[c] + b];
		int len = ends[0] == ends[1] ? 1 : 2, nmid = 0;
		path[0] = ends[0];
		path[1] = ends[1];
		if (m->mid)
			nmid = pm_mt_mid_links(m, p, c, path + len);
		if (pm_mt_attach(m, T, p, c, t, path, len + nmid, m->fab->cls_hops[cls]))
			return -1;
		for (int i = len; i < len + nmid; i++)
			if (mt_link_full(m, path[i], t))
				pm_mt_mid_filled(m, path[i]);
		if (mt_link_full(m, ends[1], t))
			clear_bit(m->inroom + (size_t)b * m->words, (size_t)c);
		if (mt_link_full(m, ends[0], t))
			clear_bit(m->outroom + (size_t)a * m->words, (size_t)p);
		drop_ports(m, p, c);
		return 1;
	}
}
