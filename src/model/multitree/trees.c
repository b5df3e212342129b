/* trees.c: the operations on MULTITREE's trees that both constructions
 * use (the search, search.c, and the fabric, fabric.c): a node joins a
 * tree by an edge that uses up links and ports, and a tree's next sender
 * is found from its scan position.  The algorithm: multitree.c. */
#include "model/grow.h"
#include "model/multitree/mt.h"

#include <stdlib.h>

/* Append v to a tree's nodes; ranks are kept on switch networks only
 * (the search from the targets' side reads them). */
int pm_mt_push(struct front *f, int v, int ranks)
{
	if (f->n == f->cap) {
		size_t cap = pm_grow_cap((size_t)f->cap, (size_t)f->n + 1, 8);
		if (pm_resize(&f->v, cap, sizeof(int)) || (ranks && pm_resize(&f->o, cap, sizeof(uint16_t))))
			return -1;
		f->cap = (int)cap;
	}
	if (ranks)
		f->o[f->n] = (uint16_t)f->size;
	f->size++;
	f->v[f->n++] = v;
	return 0;
}

void pm_mt_set_member(struct mt *m, int T, int v)
{
	m->member[(size_t)T * m->words + (size_t)v / 64] |= (uint64_t)1 << (v % 64);
}

int pm_mt_parent_of(const struct mt *m, int32_t via)
{
	if (m->fabric)
		return via;
	int first = m->switched ? m->path[via + 1] : via;
	return m->links[first].src;
}

/* A switched network's route of len links kept in m->path (its length
 * first): where it starts, or -1 out of memory. */
static int32_t keep_path(struct mt *m, const int *path, int len)
{
	if (pm_grow(&m->path, &m->cappath, m->npath + (size_t)len + 1, sizeof(int32_t), 4096))
		return -1;
	int32_t via = (int32_t)m->npath;
	m->path[m->npath++] = len;
	for (int i = 0; i < len; i++)
		m->path[m->npath++] = path[i];
	return via;
}

/* Step t's port counts after p sends to c: a sender or receiver whose
 * ports are all taken leaves the step's lists. */
static void use_ports(struct mt *m, int p, int c, int t)
{
	if (m->sent_stamp[p] != t) {
		m->sent_stamp[p] = t;
		m->sent[p] = 0;
	}
	if (m->recv_stamp[c] != t) {
		m->recv_stamp[c] = t;
		m->recv[c] = 0;
	}
	m->sent[p]++;
	m->recv[c]++;
	if (m->sent[p] == m->ports) {
		m->can_send--;
		m->sendable[p / 64] &= ~((uint64_t)1 << (p % 64));
	}
	if (m->recv[c] == m->ports) {	/* c leaves the receivers' list */
		m->recvable[c / 64] &= ~((uint64_t)1 << (c % 64));
		int last = m->rl[--m->can_recv];
		m->rl[m->rl_pos[c]] = last;
		m->rl_pos[last] = m->rl_pos[c];
	}
}

int pm_mt_attach(struct mt *m, int T, int p, int c, int t, const int *path,
	      int len, int hops)
{
	size_t k = (size_t)T * m->P + c;
	int32_t via = path[0];

	if (m->switched)
		m->rank[k] = (uint16_t)m->fr[T].size;
	pm_mt_set_member(m, T, c);
	if (m->fabric)
		via = p;	/* the route is the network's own (fabric.c) */
	else if (m->switched && (via = keep_path(m, path, len)) < 0)
		return -1;
	m->edge[m->nedge++] = (struct edge){(uint32_t)k, via};
	for (int i = 0; i < len; i++) {
		int l = path[i];
		if (m->switched && m->link_stamp[l] != t)
			m->link_cnt[l] = 0;
		m->link_stamp[l] = t;
		if (m->switched && ++m->link_cnt[l] >= m->link_slots[l]) {
			m->in_full[m->in_pos[l]] = t;	/* full: mt_link_full */
			if (m->nbr_pos[l] >= 0)
				m->nbr_full[m->nbr_pos[l]] = t;
		}
	}
	use_ports(m, p, c, t);
	if (hops > m->hops[t])
		m->hops[t] = hops;
	if (m->sent[p] > m->red[t])
		m->red[t] = m->sent[p];
	m->missing[T]--;
	/* the fabric construction drops no entry, so a node's rank is its
	 * index in the list (pm_mt_index_of_rank) and the list keeps no ranks */
	return pm_mt_push(&m->fr[T], c, m->switched && !m->fabric);
}

/* Index in f->v[f->cur .. f->first_new) of the node of rank r: r itself
 * while no entry was ever dropped (the fabric construction drops none),
 * else a binary search of the ranks. */
int pm_mt_index_of_rank(const struct front *f, int r)
{
	int lo = f->cur, hi = f->first_new - 1;

	if (f->n == f->size)
		return r;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (f->o[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Move tree T's scan position to its first node, from the position on,
 * that joined before this step and has a port left; that node, or -1
 * (position at the step's new nodes) if there is none.  Nodes without a
 * port are skipped as the scan skips them.  A short walk first; then the
 * tree's members AND the endpoints with a port left, lowest rank (a
 * tree of P nodes late in a step would be walked end to end). */
int pm_mt_next_sender(struct mt *m, int T, const uint64_t *mask)
{
	struct front *f = &m->fr[T];
	const uint64_t *row = m->member + (size_t)T * m->words;
	const uint16_t *rank = m->rank + (size_t)T * m->P;
	const uint64_t *can = mask ? mask : m->sendable;
	int best = -1, best_v = -1;

	for (int walk = 0; walk < MT_WALK && f->cur < f->first_new; walk++, f->cur++) {
		int v = f->v[f->cur];
		if (v >= 0 && (can[v / 64] >> (v % 64) & 1))
			return v;
	}
	if (f->cur >= f->first_new)
		return -1;
	/* the scan position's rank: itself while no entry was ever dropped
	 * (pm_mt_index_of_rank), which spares a read the cache rarely holds */
	int from = f->n == f->size ? f->cur : f->o[f->cur];
	for (size_t w = 0; w < m->words; w++)
		for (uint64_t b = row[w] & can[w]; b;
		     b &= b - 1) {
			int v = (int)(w * 64) + __builtin_ctzll(b), r = rank[v];
			if (r >= from && r < f->new_rank && (best < 0 || r < best)) {
				best = r;
				best_v = v;
			}
		}
	if (best < 0) {
		f->cur = f->first_new;
		return -1;
	}
	f->cur = pm_mt_index_of_rank(f, best);
	/* the node of rank best is best_v, unless dropped entries (-1) moved
	 * it in the list: then the list says */
	return f->n == f->size ? best_v : f->v[f->cur];
}
