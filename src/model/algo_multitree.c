/* algo_multitree.c: MULTITREE all-reduce (Huang et al., ISCA 2021; seed
 * 000 Algorithm 1, §III) and MULTITREE-MSG (the same with message-based
 * flow control, §IV-B).
 *
 * Construction: one spanning tree per endpoint, rooted there, grown top
 * down one time step (tree level) at a time.  Each step starts from a
 * fresh copy of the network's links; the trees take turns (by root id, or
 * by larger root eccentricity first with the priority option) to add one
 * node each: a tree examines its nodes added in earlier steps
 * breadth-first in order of addition and takes the first free link to a
 * node it lacks (neighbours tried Y before X, - before +, on a torus or
 * mesh).  The link is used up for the step.  When no tree can add a node
 * a new step begins.  On switch networks (§III-C3) the search from a node
 * is breadth first over free links through switches; every link of the
 * path found is used up.  Within a step the allowed path length grows in
 * stages (shortest first): every tree takes its one-switch and
 * one-switch-link edges before any tree spends two switch-to-switch links
 * on one edge.  This reproduces Huang et al. 2021 §VI-A ("both MULTITREE and RING
 * derive the same number of steps" on fat tree and BiGraph); the literal
 * per-turn search ("literal" option) needs 43 steps where the ring needs
 * 31 on bigraph:4x8 (docs/validation.md).  A node sends at most `ports` messages and
 * receives at most `ports` per step (footnote 3: NI bandwidth / link
 * bandwidth); default: the most links out of an endpoint (a torus node's
 * links, the one link into a fat tree, a GPU's NVLink and NIC).
 * Schedule: tree T carries chunk T (of P).  The all-gather is the trees top
 * down, step t of the construction at step S + t; the reduce-scatter is
 * its exact reverse, edge (p -> c, t) becoming (c -> p) at step S - t
 * (Algorithm 1 lines 15-18).  Transfers are source-routed along the
 * construction's links (the NI precomputes routes, §IV-B).
 * Cost:  the step count S comes from the construction, not from a formula
 *        in P.  With h_t the longest path and r_t the most children one
 *        node gains in step t:
 *          T = 2S (alpha + w(n/P) beta) + 2 delta sum_t h_t
 *              + (n/P) gamma sum_t r_t
 *        (direct networks: h_t = 1, so 2S(alpha + delta + w(n/P) beta) + ...).
 *        S >= max(diameter, ceil((P-1)/ports)) on a direct network.
 * Restrictions: at most 4096 endpoints (P trees of P nodes are kept), and
 * on switch networks up to P^2 x links = 6e9, where the construction's
 * cost grows as about P^3 (refused before any work; the `fabric` option
 * builds trees without the search, multitree_fabric.c).  On switch networks a
 * tree's next parent is found from the targets' side (add_one).  A search that came back
 * empty marks the switches it expanded, with the hops they had left, for
 * the rest of its step, stage and tree; later searches do not expand
 * them again (exact: within a step links are only used up, receivers only
 * fill and trees only grow).  A step ends as soon as no endpoint can send
 * or none can receive.
 * The trees of one network and one set of options are built once and
 * kept with the network (pm_topo_memo): resolving, building the schedule
 * and the multitree-msg variant all use the same construction.
 */
#include "model/algo.h"
#include "model/progress.h"
#include "model/multitree.h"
#include "model/limits.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MT_MAX_P 4096
/* The construction's work grows as about P^3 (P trees of P nodes, each
 * step scanning frontiers): 4096^3 at scale 1, so the same 4096; the
 * fuzzers' volume mode scales it (limits.h). */
#define MT_MAX_WORK pm_limit(68719476736.0)
/* Switch networks: the construction searches the network for every tree,
 * stage and step, about P^2 L searched links a stage.  Measured
 * (docs/validation.md, section 6): up to 512 endpoints anything answers
 * in seconds; beyond, 1 to 3.2 ns per unit of P^2 L (machine:dgx-h100:128
 * 4.4e9 in 4.9 s, fattree:10,3 6e9 in 13 s, switch:1500 6.75e9 in 21 s),
 * so up to P^2 L = 6e9 (about 20 s at worst). */
#define MT_MAX_SWITCHED_P ((int)pm_limit(512))	/* limits.h */
#define MT_MAX_SWITCHED_WORK pm_limit(6e9)
/* Switch networks: forward searches from a tree's next senders before the
 * search from the targets' side (machine:dgx-h100:128 4.1 s with 1, 3.3 s
 * with 4; more helps fat trees and slows BiGraph). */
#define MT_FORWARD_TRIES 4
#define MT_MAX_STEPS 65535	/* a guard: no network here needs a tenth of it */

struct mt_state {
	double sent_units;	/* most chunk units one rank sends */
	double sum_hops;	/* sum over steps of the longest path */
	double sum_red;		/* sum over steps of most children gained */
};
_Static_assert(sizeof(struct mt_state) <= PM_PRIV_BYTES, "mt_state fits pm_inst.priv");

static struct mt_state *mts_of(struct pm_inst *in)
{
	return (struct mt_state *)(void *)in->priv.bytes;
}

static const struct mt_state *cmts_of(const struct pm_inst *in)
{
	return (const struct mt_state *)(const void *)in->priv.bytes;
}

/* Free what only the construction needs; the trees (edge, estart, path,
 * hops, red) stay for the schedule builder. */
static void mt_drop_scratch(struct mt *m)
{
	free(m->member);
	free(m->sendable);
	free(m->rank);
	free(m->in);
	free(m->in_off);
	free(m->rl);
	free(m->rl_pos);
	free(m->nbr);
	free(m->nbr_dst);
	free(m->nbr_off);
	free(m->link_stamp);
	free(m->link_cnt);
	free(m->link_slots);
	free(m->sent);
	free(m->sent_stamp);
	free(m->recv);
	free(m->recv_stamp);
	free(m->bfs_seen);
	free(m->bfs_pred);
	free(m->bfs_depth);
	free(m->queue);
	if (m->fr)
		for (int i = 0; i < m->P; i++) {
			free(m->fr[i].v);
			free(m->fr[i].o);
		}
	free(m->fr);
	free(m->missing);
	free(m->pathbuf);
	free(m->dead);
	free(m->dead_budget);
	free(m->sortbuf);
	free(m->tcount);
	free(m->recvable);
	m->recvable = NULL;
	mt_fabric_free(m);
	m->sortbuf = NULL;
	m->tcount = NULL;
	m->member = m->sendable = NULL;
	m->rank = NULL;
	m->nbr_dst = NULL;
	m->in = m->in_off = m->rl = m->rl_pos = NULL;
	m->nbr = m->nbr_off = m->link_stamp = m->sent = m->sent_stamp = NULL;
	m->link_cnt = m->link_slots = NULL;
	m->recv = m->recv_stamp = m->bfs_seen = m->bfs_pred = m->bfs_depth = NULL;
	m->queue = m->missing = m->pathbuf = m->dead_budget = NULL;
	m->fr = NULL;
	m->dead = NULL;
}

static void mt_free(struct mt *m)
{
	mt_drop_scratch(m);
	free(m->edge);
	free(m->estart);
	free(m->path);
	free(m->hops);
	free(m->red);
	memset(m, 0, sizeof *m);
}

static void mt_free_kept(void *p)
{
	mt_free(p);
	free(p);
}

/* Append v to a tree's nodes; ranks are kept on switch networks only
 * (the search from the targets' side reads them). */
static int push(struct front *f, int v, int ranks)
{
	if (f->n == f->cap) {
		int cap = f->cap ? 2 * f->cap : 8;
		int *n = realloc(f->v, sizeof(int) * (size_t)cap);
		if (!n)
			return -1;
		f->v = n;
		if (ranks) {
			uint16_t *o = realloc(f->o, sizeof(uint16_t) * (size_t)cap);
			if (!o)
				return -1;
			f->o = o;
		}
		f->cap = cap;
	}
	if (ranks)
		f->o[f->n] = (uint16_t)f->size;
	f->size++;
	f->v[f->n++] = v;
	return 0;
}

static void set_member(struct mt *m, int T, int v)
{
	m->member[(size_t)T * m->words + (size_t)v / 64] |= (uint64_t)1 << (v % 64);
}

/* A free link from p to an endpoint c that tree T lacks and that can still
 * receive; direct networks look one link away only.  When there is none,
 * *full says whether every neighbour of p is in T already (then p never
 * gains a child in T again). */
static int find_direct(struct mt *m, int T, int p, int t, int *path, int *full)
{
	*full = 1;
	for (int j = m->nbr_off[p]; j < m->nbr_off[p + 1]; j++) {
		int c = m->nbr_dst[j];
		if (mt_in_tree(m, T, c))
			continue;
		*full = 0;
		int l = m->nbr[j];
		if (m->link_stamp[l] == t ||
		    mt_count_of(m->recv, m->recv_stamp, c, t) >= m->ports)
			continue;
		path[0] = l;
		return c;
	}
	return -1;
}

/* Was switch w searched empty, in this step, stage and tree, with at
 * least `budget` hops left?  Then nothing it leads to within budget is a
 * target now either: within a step links are only used up, receivers
 * only fill and the tree only grows.  Pruning it changes no search's
 * answer (docs/model.md, MULTITREE on switch networks). */
static int is_dead(const struct mt *m, int w, int budget)
{
	return m->dead[w] == m->dead_key && m->dead_budget[w] >= budget;
}

/* After an empty search: every switch it expanded is dead with the hops
 * it had left. */
static void mark_dead(struct mt *m, int tail)
{
	for (int i = 1; i < tail; i++) {
		int w = m->queue[i], b = m->maxlen - m->bfs_depth[w];
		if (m->dead[w] != m->dead_key || m->dead_budget[w] < b) {
			m->dead[w] = m->dead_key;
			m->dead_budget[w] = b;
		}
	}
}

/* Breadth-first search from p over free links, through switches only. */
static int find_switched(struct mt *m, int T, int p, int t, int *path, int *len)
{
	int head = 0, tail = 0;

	m->bfs_gen++;
	m->bfs_seen[p] = m->bfs_gen;
	m->bfs_depth[p] = 0;
	m->queue[tail++] = p;
	while (head < tail) {
		int u = m->queue[head++];
		if (m->bfs_depth[u] >= m->maxlen)
			continue;	/* longer paths wait for a later stage */
		for (int j = m->nbr_off[u]; j < m->nbr_off[u + 1]; j++) {
			int l = m->nbr[j], w = m->nbr_dst[j];
			if (mt_link_full(m, l, t) || m->bfs_seen[w] == m->bfs_gen)
				continue;
			m->bfs_seen[w] = m->bfs_gen;
			m->bfs_pred[w] = l;
			m->bfs_depth[w] = m->bfs_depth[u] + 1;
			if (w >= m->P) {	/* a switch forwards, unless known empty */
				if (!is_dead(m, w, m->maxlen - m->bfs_depth[w]))
					m->queue[tail++] = w;
				continue;
			}
			if (mt_in_tree(m, T, w) ||
			    mt_count_of(m->recv, m->recv_stamp, w, t) >= m->ports)
				continue;	/* endpoints do not forward */
			int n = 0;
			for (int v = w; v != p; v = m->links[m->bfs_pred[v]].src)
				n++;
			*len = n;
			for (int v = w; v != p; v = m->links[m->bfs_pred[v]].src)
				path[--n] = m->bfs_pred[v];
			return w;
		}
	}
	mark_dead(m, tail);
	return -1;
}

static int parent_of(const struct mt *m, int32_t via)
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
	if (m->npath + (size_t)len + 1 > m->cappath) {
		size_t cap = m->cappath ? 2 * m->cappath : 4096;
		while (cap < m->npath + (size_t)len + 1)
			cap *= 2;
		int32_t *q = realloc(m->path, sizeof(int32_t) * cap);
		if (!q)
			return -1;
		m->path = q;
		m->cappath = cap;
	}
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

int mt_attach(struct mt *m, int T, int p, int c, int t, const int *path,
	      int len, int hops)
{
	size_t k = (size_t)T * m->P + c;
	int32_t via = path[0];

	if (m->switched)
		m->rank[k] = (uint16_t)m->fr[T].size;
	set_member(m, T, c);
	if (m->fabric)
		via = p;	/* the route is the network's own (multitree_fabric.c) */
	else if (m->switched && (via = keep_path(m, path, len)) < 0)
		return -1;
	m->edge[m->nedge++] = (struct edge){(uint32_t)k, via};
	for (int i = 0; i < len; i++) {
		int l = path[i];
		if (m->switched && m->link_stamp[l] != t)
			m->link_cnt[l] = 0;
		m->link_stamp[l] = t;
		if (m->switched)
			m->link_cnt[l]++;
	}
	use_ports(m, p, c, t);
	if (hops > m->hops[t])
		m->hops[t] = hops;
	if (m->sent[p] > m->red[t])
		m->red[t] = m->sent[p];
	m->missing[T]--;
	/* the fabric construction drops no entry, so a node's rank is its
	 * index in the list (index_of_rank) and the list keeps no ranks */
	return push(&m->fr[T], c, m->switched && !m->fabric);
}

/* Could endpoint p, seen from a target, be tree T's next parent: in T
 * since before this step, not before the tree's scan position, ports
 * left?  Then its rank, else -1. */
static int candidate(const struct mt *m, int T, int p, int t, int lo)
{
	if (!mt_in_tree(m, T, p) || mt_count_of(m->sent, m->sent_stamp, p, t) >= m->ports)
		return -1;
	int r = m->rank[(size_t)T * m->P + p];
	return r >= lo && r < m->fr[T].new_rank ? r : -1;
}

static void enqueue_target(struct mt *m, int c, int *tail)
{
	m->bfs_seen[c] = m->bfs_gen;
	m->bfs_depth[c] = 0;
	m->queue[(*tail)++] = c;
}

/* Queue every endpoint tree T lacks that can still receive, reading
 * whichever is shorter: the receivers' list or the tree's missing bits. */
static int enqueue_targets(struct mt *m, int T, int t)
{
	int tail = 0;
	const uint64_t *row = m->member + (size_t)T * m->words;

	if (m->can_recv < m->missing[T]) {
		for (int i = 0; i < m->can_recv; i++)
			if (!mt_in_tree(m, T, m->rl[i]))
				enqueue_target(m, m->rl[i], &tail);
		return tail;
	}
	for (size_t w = 0; w < m->words; w++)
		for (uint64_t lack = ~row[w]; lack; lack &= lack - 1) {
			int c = (int)(w * 64) + __builtin_ctzll(lack);
			if (c >= m->P)
				break;
			if (mt_count_of(m->recv, m->recv_stamp, c, t) < m->ports)
				enqueue_target(m, c, &tail);
		}
	return tail;
}

/* The search from the targets' side: breadth first backwards from every
 * endpoint tree T lacks that can still receive, over free links and
 * through switches only, at most maxlen links; the endpoints it meets
 * are exactly those a forward search from which succeeds.  Returns the
 * lowest rank among them at or after rank lo, or -1. */
static int first_parent_back(struct mt *m, int T, int t, int lo)
{
	int head = 0, tail, best = -1;

	m->bfs_gen++;
	tail = enqueue_targets(m, T, t);
	while (head < tail) {
		int u = m->queue[head++];
		if (m->bfs_depth[u] >= m->maxlen)
			continue;
		for (int j = m->in_off[u]; j < m->in_off[u + 1]; j++) {
			int l = m->in[j], w = m->links[l].src;
			if (mt_link_full(m, l, t) || m->bfs_seen[w] == m->bfs_gen)
				continue;
			m->bfs_seen[w] = m->bfs_gen;
			m->bfs_depth[w] = m->bfs_depth[u] + 1;
			if (w >= m->P) {
				m->queue[tail++] = w;
				continue;
			}
			int r = candidate(m, T, w, t, lo);
			if (r >= 0 && (best < 0 || r < best))
				best = r;
		}
	}
	return best;
}

/* Index in f->v[f->cur .. f->first_new) of the node of rank r: r itself
 * while no entry was ever dropped (the fabric construction drops none),
 * else a binary search of the ranks. */
static int index_of_rank(const struct front *f, int r)
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
 * tree of P nodes late in a step would be walked end to end: measured on
 * fattree:9,3, 27% of the turns found no node with a port). */
int mt_next_sender(struct mt *m, int T, const uint64_t *mask)
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
	 * (index_of_rank), which spares a read the cache rarely holds */
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
	f->cur = index_of_rank(f, best);
	/* the node of rank best is best_v, unless dropped entries (-1) moved
	 * it in the list: then the list says */
	return f->n == f->size ? best_v : f->v[f->cur];
}

/* Move tree T's scan position to the parent the search from the
 * targets' side names; 0 if there is none this stage (the scan ends). */
static int jump_back(struct mt *m, int T, int t)
{
	struct front *f = &m->fr[T];
	int r = first_parent_back(m, T, t, f->o[f->cur]);

	if (r < 0) {
		f->cur = f->first_new;
		return 0;
	}
	f->cur = index_of_rank(f, r);
	return 1;
}

/* Tree T's turn in step t: 1 if it added a node, 0 if it cannot this
 * step, -1 out of memory.  The tree's parent is the first node, in order
 * of addition from the scan position, from which a search succeeds.  On
 * a direct network the scan tries each node (a tree's nodes that can
 * still gain children are few, and the first usually succeeds).  On a
 * switch network a tree holds every node it has, most of whose searches
 * fail, so the search from the targets' side names the node directly:
 * same node, same edge (docs/model.md), about half the time on fattree:8,3
 * and machine:dgx-h100:64. */
static int add_one(struct mt *m, int T, int t)
{
	struct front *f = &m->fr[T];
	int *path = m->pathbuf, len = 1;

	if (m->fabric)
		return mt_fabric_turn(m, T, t);
	m->dead_key = (((uint64_t)t * 4096 + (uint64_t)m->maxlen) << 32) | (uint64_t)(T + 1);
	if (m->switched) {
		/* the first node that can send: when its search succeeds it is
		 * the parent (the lowest rank), and one search stopping at the
		 * nearest target costs far less than the search from every
		 * target; when it fails, the search from the targets' side
		 * names the parent among the later nodes */
		for (int tries = 0; tries < MT_FORWARD_TRIES; tries++) {
			int p = mt_next_sender(m, T, NULL);
			if (p < 0)
				return 0;
			int c = find_switched(m, T, p, t, path, &len);
			if (c >= 0)
				return mt_attach(m, T, p, c, t, path, len, len) ? -1 : 1;
			f->cur++;	/* p cannot send in T this stage */
		}
		if (f->cur >= f->first_new || !jump_back(m, T, t))
			return 0;
	}
	while (f->cur < f->n) {
		int p = f->v[f->cur];
		if (p < 0) {
			f->cur++;
			continue;
		}
		if (f->cur >= f->first_new)
			return 0;	/* added this step: not a parent yet */
		if (mt_count_of(m->sent, m->sent_stamp, p, t) < m->ports) {
			int full = 0;
			int c = m->switched ? find_switched(m, T, p, t, path, &len)
					    : find_direct(m, T, p, t, path, &full);
			if (c >= 0)
				return mt_attach(m, T, p, c, t, path, len, len) ? -1 : 1;
			if (full) {
				f->v[f->cur] = -1;	/* never a parent again */
				f->spent++;
			}
		}
		f->cur++;
	}
	return 0;
}

/* Ask for what tree T's next turn reads first, while the turn before it
 * runs: its member row and, in the fabric construction, its spent sets
 * and the sets of the node at its scan position.  At 4,096 endpoints the
 * trees' rows and lists are past the last-level cache (the lists alone
 * are 64 MB), and a turn waited on them (perf on machine:dgx-h100:512:
 * 16% of the run on the list at the scan position); docs/validation.md
 * section 6 has the measurements. */
static void prefetch_tree(const struct mt *m, int T)
{
	const struct front *f = &m->fr[T];
	const uint64_t *row = m->member + (size_t)T * m->words;

	for (size_t w = 0; w < m->words; w += 8)
		__builtin_prefetch(row + w);
	if (m->fabric)	/* its spent sets, and the sets of the node at its scan position */
		mt_fabric_prefetch(m, T, f->cur < f->first_new ? f->v[f->cur] : -1);
}

/* Before a turn: the next tree's rows (prefetch_tree), and the node list
 * of the tree after it at its scan position, a turn earlier, so that the
 * next turn's prefetch_tree finds it.  next[0 .. n): the trees after the
 * current one in the round. */
static void prefetch_next(const struct mt *m, const int *next, int n, const int *done)
{
	int found = 0;

	for (int k = 0; k < n && found < 2; k++) {
		int T = next[k];
		if (done[T] || m->missing[T] == 0)
			continue;
		if (found++ == 0)
			prefetch_tree(m, T);
		else if (m->fr[T].cur < m->fr[T].n)
			__builtin_prefetch(&m->fr[T].v[m->fr[T].cur]);
	}
}

/* Drop the spent entries (a walk of the whole tree: only when there are
 * some; measured, it was 75% of the fabric construction on fattree:16,3). */
static void compact(struct front *f)
{
	int n = 0;

	if (!f->spent)
		return;
	f->spent = 0;
	for (int i = 0; i < f->n; i++)
		if (f->v[i] >= 0) {
			if (f->o)
				f->o[n] = f->o[i];
			f->v[n++] = f->v[i];
		}
	f->n = n;
}

/* Eccentricity of every endpoint, in links, for the priority option. */
static int *eccentricities(const struct mt *m)
{
	int *ecc = calloc((size_t)m->P, sizeof(int));
	int *dist = malloc(sizeof(int) * (size_t)m->V);
	int *q = malloc(sizeof(int) * (size_t)m->V);

	if (!ecc || !dist || !q) {
		free(ecc);
		free(dist);
		free(q);
		return NULL;
	}
	for (int r = 0; r < m->P; r++) {
		int head = 0, tail = 0;
		for (int v = 0; v < m->V; v++)
			dist[v] = -1;
		dist[r] = 0;
		q[tail++] = r;
		while (head < tail) {
			int u = q[head++];
			for (int j = m->nbr_off[u]; j < m->nbr_off[u + 1]; j++) {
				int w = m->links[m->nbr[j]].dst;
				if (dist[w] < 0) {
					dist[w] = dist[u] + 1;
					q[tail++] = w;
					if (w < m->P && dist[w] > ecc[r])
						ecc[r] = dist[w];
				}
			}
		}
	}
	free(dist);
	free(q);
	return ecc;
}

static const int *ecc_for_sort;

static int by_priority(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	if (ecc_for_sort[x] != ecc_for_sort[y])
		return ecc_for_sort[y] - ecc_for_sort[x];
	return x - y;
}

/* Do all paths between endpoints have even length?  True when the links,
 * taken both ways, 2-colour the network with every endpoint one colour
 * (a fat tree, BiGraph, a switch, the clusters: links join levels).  Then
 * a stage of odd path length finds nothing the stage before it did not
 * (docs/model.md).  Uses the BFS scratch. */
static int even_paths(struct mt *m)
{
	int *col = m->bfs_depth, *q = m->queue;

	for (int v = 0; v < m->V; v++)
		col[v] = -1;
	for (int s = 0; s < m->P; s++) {
		if (col[s] >= 0) {
			if (col[s] != 0)
				return 0;
			continue;
		}
		int head = 0, tail = 0;
		col[s] = 0;
		q[tail++] = s;
		while (head < tail) {
			int u = q[head++];
			for (int pass = 0; pass < 2; pass++) {
				int a = pass ? m->in_off[u] : m->nbr_off[u];
				int b = pass ? m->in_off[u + 1] : m->nbr_off[u + 1];
				for (int j = a; j < b; j++) {
					int w = pass ? m->links[m->in[j]].src : m->nbr_dst[j];
					if (col[w] < 0) {
						col[w] = !col[u];
						q[tail++] = w;
					} else if (col[w] == col[u])
						return 0;
				}
			}
		}
	}
	return 1;
}

/* Tree edges a switched link carries in one step: its bandwidth over the
 * slowest link's, at least 1, at most P.  A switch network built with one
 * fat link where a real fabric has k parallel cables (a unit's up link in
 * the machine networks carries all its NICs' bandwidth) then admits the
 * k edges the cables would, and the contention evaluator prices them at
 * the slowest link's rate; on networks of equal links every link carries
 * one (docs/model.md). */
static int *link_slots(const struct pm_link *links, int L, int P)
{
	int *slots = malloc(sizeof(int) * ((size_t)L + 1));
	double slow = 0;

	if (!slots)
		return NULL;
	for (int l = 0; l < L; l++)
		if (slow == 0 || links[l].bw_Bps < slow)
			slow = links[l].bw_Bps;
	for (int l = 0; l < L; l++) {
		double k = floor(links[l].bw_Bps / slow * (1 + 1e-9));
		slots[l] = k < 1 ? 1 : k > P ? P : (int)k;
	}
	return slots;
}

/* Each vertex's in-links (in_off, in) and out-neighbours (nbr_off, nbr,
 * nbr_dst: the links and their heads). */
static void index_links(struct mt *m, const struct pm_topo *t, int V, int L)
{
	for (int l = 0; l < L; l++)
		m->in_off[m->links[l].dst + 2]++;
	for (int v = 0; v < V; v++)
		m->in_off[v + 2] += m->in_off[v + 1];
	for (int l = 0; l < L; l++)
		m->in[m->in_off[m->links[l].dst + 1]++] = l;
	m->nbr_off[0] = 0;
	for (int v = 0; v < V; v++)
		m->nbr_off[v + 1] = m->nbr_off[v] + pm_topo_neighbors(t, v, m->nbr + m->nbr_off[v]);
	for (int j = 0; j < m->nbr_off[V]; j++)
		m->nbr_dst[j] = m->links[m->nbr[j]].dst;
}

/* Every tree T starts as its root alone, P - 1 members missing. */
static int seed_trees(struct mt *m)
{
	int P = m->P;

	for (int T = 0; T < P; T++) {
		if (m->switched)
			m->rank[(size_t)T * P + T] = 0;
		set_member(m, T, T);
		m->missing[T] = P - 1;
		if (push(&m->fr[T], T, m->switched))
			return -1;
	}
	return 0;
}

static int setup(struct mt *m, const struct pm_topo *t, int ports, int priority)
{
	int P = pm_topo_endpoints(t), V = pm_topo_vertices(t), L = pm_topo_nlinks(t);
	size_t PP = (size_t)P * P;

	memset(m, 0, sizeof *m);
	m->t = t;
	m->P = P;
	m->V = V;
	m->switched = V > P;
	m->ports = ports;
	m->priority = priority;
	m->links = pm_topo_links(t);
	m->edge = malloc(sizeof *m->edge * (PP - (size_t)P + 1));
	m->tcount = malloc(sizeof(int) * ((size_t)P + 1));
	m->words = ((size_t)P + 63) / 64;
	m->member = calloc((size_t)P * m->words, sizeof(uint64_t));
	m->sendable = calloc(m->words, sizeof(uint64_t));
	m->recvable = calloc(m->words, sizeof(uint64_t));
	if (m->switched)
		m->rank = malloc(sizeof(uint16_t) * PP);
	m->in_off = calloc((size_t)V + 2, sizeof(int));
	m->in = malloc(sizeof(int) * ((size_t)L + 1));
	m->rl = malloc(sizeof(int) * (size_t)P);
	m->rl_pos = malloc(sizeof(int) * (size_t)P);
	m->nbr_off = malloc(sizeof(int) * ((size_t)V + 1));
	m->nbr = malloc(sizeof(int) * ((size_t)L + 1));
	m->nbr_dst = malloc(sizeof(int) * ((size_t)L + 1));
	m->link_stamp = calloc((size_t)L + 1, sizeof(int));
	if (m->switched) {
		m->link_cnt = calloc((size_t)L + 1, sizeof(int));
		m->link_slots = link_slots(m->links, L, P);
		if (!m->link_cnt || !m->link_slots)
			return -1;
	}
	m->sent = calloc((size_t)P, sizeof(int));
	m->sent_stamp = calloc((size_t)P, sizeof(int));
	m->recv = calloc((size_t)P, sizeof(int));
	m->recv_stamp = calloc((size_t)P, sizeof(int));
	m->bfs_seen = calloc((size_t)V, sizeof(int));
	m->bfs_pred = calloc((size_t)V, sizeof(int));
	m->bfs_depth = calloc((size_t)V, sizeof(int));
	m->queue = malloc(sizeof(int) * (size_t)V);
	m->fr = calloc((size_t)P, sizeof *m->fr);
	m->missing = malloc(sizeof(int) * (size_t)P);
	m->pathbuf = malloc(sizeof(int) * ((size_t)V + 1));
	m->dead = calloc((size_t)V + 1, sizeof(uint64_t));
	m->dead_budget = calloc((size_t)V + 1, sizeof(int));
	if (!m->edge || !m->tcount || !m->member || !m->nbr_off || !m->nbr || !m->link_stamp ||
	    !m->pathbuf || !m->dead || !m->dead_budget ||
	    !m->sent || !m->sent_stamp || !m->recv || !m->recv_stamp ||
	    !m->bfs_seen || !m->bfs_pred || !m->bfs_depth || !m->queue || !m->fr ||
	    !m->missing || (m->switched && !m->rank) || !m->nbr_dst || !m->in_off || !m->in ||
	    !m->rl || !m->rl_pos || !m->sendable || !m->recvable)
		return -1;
	index_links(m, t, V, L);
	m->even = m->switched && even_paths(m);
	return seed_trees(m);
}

/* Sort step t's edges, made in turns of the trees, by (tree, child): a
 * stable count by tree, then the few children one tree gained in the
 * step by insertion. */
static int sort_step(struct mt *m, int t)
{
	size_t a = m->estart[t], n = m->nedge - a;
	struct edge *e = m->edge + a, *b;
	int P = m->P;

	if (n < 2)
		return 0;
	if (!(b = realloc(m->sortbuf, sizeof *b * n)))
		return -1;
	m->sortbuf = b;
	memset(m->tcount, 0, sizeof(int) * ((size_t)P + 1));
	for (size_t i = 0; i < n; i++)
		m->tcount[e[i].k / (uint32_t)P + 1]++;
	for (int T = 0; T < P; T++)
		m->tcount[T + 1] += m->tcount[T];
	for (size_t i = 0; i < n; i++)
		b[m->tcount[e[i].k / (uint32_t)P]++] = e[i];
	for (size_t i = 0; i < n; i++) {
		struct edge x = b[i];
		size_t j = i;
		for (; j > 0 && e[j - 1].k > x.k && e[j - 1].k / (uint32_t)P == x.k / (uint32_t)P; j--)
			e[j] = e[j - 1];
		e[j] = x;
	}
	return 0;
}

/* The construction's options (parse_opts). */
struct mt_opts {
	int ports, priority, literal;
	int fabric;	/* grow the trees without searching (multitree_fabric.c) */
};

/* Room for step tstep's per-step tallies. */
static int grow_steps(struct mt *m, int tstep)
{
	if (tstep < m->capsteps)
		return 0;
	int cap = m->capsteps ? 2 * m->capsteps : 64;
	int *h = realloc(m->hops, sizeof(int) * (size_t)cap);
	int *r = h ? realloc(m->red, sizeof(int) * (size_t)cap) : NULL;
	size_t *es = r ? realloc(m->estart, sizeof(size_t) * ((size_t)cap + 1)) : NULL;
	if (h)
		m->hops = h;
	if (r)
		m->red = r;
	if (!es)
		return -1;
	m->estart = es;
	m->capsteps = cap;
	return 0;
}

/* Step tstep begins: every endpoint may send and receive again, and the
 * trees still missing members (in the order of `order`) are active. */
static int begin_step(struct mt *m, int tstep, const int *order, int *active)
{
	int P = m->P, na = 0;

	m->hops[tstep] = m->red[tstep] = 0;
	m->estart[tstep] = m->nedge;
	m->can_send = m->can_recv = P;
	for (size_t w = 0; w < m->words; w++)
		m->sendable[w] = m->recvable[w] = w + 1 < m->words || P % 64 == 0 ? ~(uint64_t)0
			: ((uint64_t)1 << (P % 64)) - 1;
	for (int v = 0; v < P; v++)
		m->rl[v] = m->rl_pos[v] = v;
	if (m->fabric)
		mt_fabric_step(m);
	for (int i = 0; i < P; i++)
		if (m->missing[order[i]] > 0) {
			active[na++] = order[i];
			m->fr[order[i]].first_new = m->fr[order[i]].n;
			m->fr[order[i]].new_rank = m->fr[order[i]].size;
		}
	return na;
}

/* One stage (paths up to m->maxlen): the active trees in turn add a
 * member each until none can, or no endpoint can send or receive. */
static int run_stage(struct mt *m, const int *active, int na, int *done, int tstep)
{
	for (int i = 0; i < na; i++) {
		m->fr[active[i]].cur = 0;
		done[active[i]] = 0;
	}
	for (int progress = 1; progress && m->can_send > 0 && m->can_recv > 0;) {
		progress = 0;
		for (int i = 0; i < na; i++) {
			int T = active[i];
			if (done[T] || m->missing[T] == 0)
				continue;
			prefetch_next(m, active + i + 1, na - i - 1, done);
			int r = add_one(m, T, tstep);
			if (r < 0)
				return -1;
			if (r)
				progress = 1;
			else
				done[T] = 1;
		}
	}
	return 0;
}

/* The order the trees take turns in: by number, or with priority by
 * their roots' eccentricity (parse_opts). */
static int tree_order(const struct mt *m, int priority, int *order)
{
	for (int i = 0; i < m->P; i++)
		order[i] = i;
	if (!priority)
		return 0;
	int *ecc = eccentricities(m);
	if (!ecc)
		return -1;
	ecc_for_sort = ecc;
	qsort(order, (size_t)m->P, sizeof(int), by_priority);
	free(ecc);
	return 0;
}

/* Run Algorithm 1.  Returns 0, or -1 out of memory / too many steps. */
static int mt_construct(struct mt *m, const struct pm_topo *t,
			const struct mt_opts *o)
{
	int *order = NULL, *active = NULL, *done = NULL, rc = -1;

	if (setup(m, t, o->ports, o->priority))
		goto out;
	if (o->fabric && (m->fabric = 1, mt_fabric_setup(m)))
		goto out;
	int P = m->P, incomplete = P > 1 ? P : 0;
	order = malloc(sizeof(int) * (size_t)P);
	active = malloc(sizeof(int) * (size_t)P);
	done = calloc((size_t)P, sizeof(int));
	if (!order || !active || !done || tree_order(m, o->priority, order))
		goto out;
	/* stages of growing path length (one stage on a direct network) */
	int first = m->switched && !o->literal && (!m->fabric || m->mid) ? pm_topo_min_hops(t) : pm_topo_max_hops(t);
	while (incomplete > 0) {
		int tstep = ++m->S;
		pm_progress("building MULTITREE's trees", P - incomplete, P);
		if (tstep >= MT_MAX_STEPS || grow_steps(m, tstep))
			goto out;
		int na = begin_step(m, tstep, order, active);
		/* stages of growing path length, until no endpoint can send or
		 * none can receive: then no tree can grow this step */
		for (m->maxlen = first; m->maxlen <= pm_topo_max_hops(t) &&
		     m->can_send > 0 && m->can_recv > 0; m->maxlen += 1 + m->even)
			if (run_stage(m, active, na, done, tstep))
				goto out;
		if (sort_step(m, tstep))
			goto out;
		m->estart[tstep + 1] = m->nedge;
		incomplete = 0;
		for (int i = 0; i < na; i++) {
			compact(&m->fr[active[i]]);
			incomplete += m->missing[active[i]] > 0;
		}
		if (m->hops[tstep] == 0)	/* no tree could grow: disconnected */
			goto out;
	}
	rc = 0;
out:
	free(order);
	free(active);
	free(done);
	return rc;
}

/* Options, comma separated: "ports=N", "priority", "literal", "fabric". */
static int parse_opts(struct pm_inst *in, const char *arg, struct mt_opts *mo,
		      struct pm_err *err)
{
	char buf[128];

	if (!arg)
		return PM_OK;
	if (strlen(arg) >= sizeof buf)
		return pm_fail(err, PM_EINPUT, "invalid MULTITREE options '%s' (expected ports=N, priority, literal, fabric)", arg);
	strcpy(buf, arg);
	for (char *save, *o = strtok_r(buf, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		long v;
		if (strcmp(o, "priority") == 0)
			mo->priority = 1;
		else if (strcmp(o, "literal") == 0)
			mo->literal = 1;
		else if (strcmp(o, "fabric") == 0)
			mo->fabric = 1;
		else if (strncmp(o, "ports=", 6) == 0) {
			if (pm_parse_int(o + 6, 1, 64, "port count", &v, err))
				return PM_EINPUT;
			mo->ports = (int)v;
		} else
			return pm_fail(err, PM_EINPUT,
				       "invalid MULTITREE option '%s' in '%s' (expected ports=N, priority, literal or fabric)",
				       o, in->label);
	}
	return PM_OK;
}

/* The opposite direction of link l; among parallel links, the k-th for the
 * k-th, so distinct links stay distinct. */
static int reverse_link(const struct pm_topo *t, int l)
{
	const struct pm_link *L = pm_topo_links(t);
	int n, k = 0;
	const int *out = pm_topo_out(t, L[l].src, &n);

	for (int i = 0; i < n && out[i] != l; i++)
		k += L[out[i]].dst == L[l].dst;
	out = pm_topo_out(t, L[l].dst, &n);
	for (int i = 0; i < n; i++)
		if (L[out[i]].dst == L[l].src && k-- == 0)
			return out[i];
	return -1;
}

/* The reduce-scatter runs every tree edge backwards: each link needs a
 * link the other way. */
static int first_one_way(const struct pm_topo *t)
{
	for (int l = 0; l < pm_topo_nlinks(t); l++)
		if (reverse_link(t, l) < 0)
			return l;
	return -1;
}

/* Every link out of an endpoint is a port (Huang et al. 2021 footnote 3:
 * NI bandwidth over link bandwidth): the node's links on a direct
 * network, the one link into the switches on a fat tree or BiGraph, and
 * on the machine networks a GPU's NVLink and its NIC, two engines that
 * run at once.  The most any endpoint has. */
static int default_ports(const struct pm_topo *t)
{
	int best = 0;
	for (int v = 0; v < pm_topo_endpoints(t); v++) {
		int n;
		pm_topo_out(t, v, &n);
		if (n > best)
			best = n;
	}
	return best > 0 ? best : 1;
}

/* The trees for these options on this network: built once and kept with
 * the network (pm_topo_memo), so prepare and build, and multitree and
 * multitree-msg, share one construction.  NULL: construction failed. */
static const struct mt *trees(const struct pm_topo *t, const struct mt_opts *o)
{
	char key[96];
	struct mt *m;

	snprintf(key, sizeof key, "multitree:ports=%d,priority=%d,literal=%d,fabric=%d",
		 o->ports, o->priority, o->literal, o->fabric);
	if ((m = pm_topo_memo(t, key)))
		return m;
	if (!(m = malloc(sizeof *m)))
		return NULL;
	if (mt_construct(m, t, o) ||
	    pm_topo_memo_keep(t, key, m, mt_free_kept)) {
		mt_free_kept(m);
		return NULL;
	}
	mt_drop_scratch(m);
	return m;
}

/* Would the construction on this switch network take too long?  Decided
 * before any work from P and the links (MT_MAX_SWITCHED_* above). */
static int too_large_switched(const struct pm_topo *t, int P)
{
	return pm_topo_vertices(t) > P && P > MT_MAX_SWITCHED_P &&
	       (double)P * P * pm_topo_nlinks(t) > MT_MAX_SWITCHED_WORK;
}

/* Why the construction asked for cannot run on this network: the fabric
 * construction on a direct network, a searching one too large, the
 * fabric's work or tables too large, a link with no link back. */
static int refusal(const struct pm_inst *in, const struct mt_opts *o, struct pm_err *err)
{
	int switched = pm_topo_vertices(in->topo) > in->P;

	if (o->fabric && !switched)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: the fabric construction is for switch networks (this network's endpoints are its routers; plain multitree builds the trees of Huang et al. 2021 here)");
	if (!o->fabric && too_large_switched(in->topo, in->P))
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: MULTITREE's construction on a switch network searches the network for every tree, stage and step, about P^3 = %.2g searches of up to %d links here; answered up to %d endpoints, or where P^2 x links <= %.0e (got %d endpoints, P^2 x links = %.2g); multitree:fabric builds trees without the search",
			       (double)in->P * in->P * in->P, pm_topo_nlinks(in->topo),
			       MT_MAX_SWITCHED_P, MT_MAX_SWITCHED_WORK, in->P,
			       (double)in->P * in->P * pm_topo_nlinks(in->topo));
	double fw = o->fabric ? mt_fabric_work(in->topo) : 0;
	if (fw > MT_FABRIC_MAX_WORK)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: MULTITREE's fabric construction reads P^2 x (P/64 words x (links out + links in) + links out x links in) of an endpoint = %.2g here (expected at most %.2g)",
			       fw, MT_FABRIC_MAX_WORK);
	double fb = o->fabric ? mt_fabric_refusal(in->topo) : 0;
	if (fb > 0)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: MULTITREE's fabric construction keeps route tables of %.3g bytes here (expected at most %.3g, at most 32 links out of an endpoint and routes of at most 254 links)",
			       fb, MT_FABRIC_MAX_BYTES);
	int l = first_one_way(in->topo);
	if (l >= 0)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: MULTITREE runs its trees backwards in the reduce-scatter, and link %d (%d -> %d) has no link back",
			       l, pm_topo_link(in->topo, l)->src, pm_topo_link(in->topo, l)->dst);
	return PM_OK;
}

/* What the closed form reads of the trees: most chunks a node sends (one
 * up each tree it is not the root of, one down to each of its children
 * in every tree), the steps' longest routes and reductions. */
static int tally_trees(struct pm_inst *in, const struct mt *m, struct pm_err *err)
{
	struct mt_state *own = mts_of(in);
	double *kids = calloc((size_t)in->P, sizeof(double));

	if (!kids)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	own->sent_units = 0;
	for (size_t i = 0; i < m->nedge; i++)
		kids[parent_of(m, m->edge[i].via)]++;
	for (int v = 0; v < in->P; v++)
		if (in->P - 1 + kids[v] > own->sent_units)
			own->sent_units = in->P - 1 + kids[v];
	free(kids);
	own->sum_hops = 0;
	own->sum_red = 0;
	for (int t = 1; t <= m->S; t++) {
		own->sum_hops += m->hops[t];
		own->sum_red += m->red[t];
	}
	return PM_OK;
}

/* multitree[-msg] with the options that differ from the defaults. */
static void label_of(struct pm_inst *in, const struct mt_opts *o)
{
	char opts[64] = "";

	if (o->ports != default_ports(in->topo) || o->priority || o->literal)
		snprintf(opts, sizeof opts, ":ports=%d%s%s%s", o->ports,
			 o->priority ? ",priority" : "", o->literal ? ",literal" : "",
			 o->fabric ? ",fabric" : "");
	else if (o->fabric)
		snprintf(opts, sizeof opts, ":fabric");
	snprintf(in->label, sizeof in->label, "%s%s", in->algo->name, opts);
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct mt_opts o = {.ports = default_ports(in->topo)};
	const struct mt *m;

	if (in->P > MT_MAX_P || (double)in->P * in->P * in->P > MT_MAX_WORK)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: MULTITREE keeps P trees of P nodes, at most %.0f endpoints (got %d): at this scale the trees NCCL runs are dbtree and tree, pipelined into 256 chunks, and the hierarchical ring hring; on part of the cluster (--topo machine:NAME:512) multitree:fabric answers",
			       cbrt(MT_MAX_WORK) < MT_MAX_P ? floor(cbrt(MT_MAX_WORK) + 1e-9) : (double)MT_MAX_P, in->P);
	if (parse_opts(in, arg, &o, err))
		return PM_EINPUT;
	int rc = refusal(in, &o, err);
	if (rc)
		return rc;
	if (!(m = trees(in->topo, &o)))
		return pm_fail(err, PM_EINTERNAL,
			       "MULTITREE construction failed on %s (out of memory, or endpoints the trees cannot reach)",
			       pm_topo_spec(in->topo));
	in->ports = o.ports;
	in->steps = m->S;
	if ((rc = tally_trees(in, m, err)))
		return rc;
	label_of(in, &o);
	if (strcmp(in->algo->name, "multitree-msg") == 0)
		in->flow_override = PM_FLOW_MESSAGE;
	return PM_OK;
}

static int edge_path(const struct mt *m, int32_t via, int *path)
{
	if (!m->switched) {
		path[0] = via;
		return 1;
	}
	const int32_t *p = m->path + via;
	for (int i = 0; i < p[0]; i++)
		path[i] = p[1 + i];
	return p[0];
}

/* Tree T's edge p -> c, at schedule step `step`: the reduce-scatter
 * (PM_REDUCE) runs it backwards over the reversed links (rev[]; back is
 * scratch of n links), the all-gather forwards.  links NULL: the
 * network's own route. */
static void add_edge(struct pm_sched *s, int step, enum pm_op op, int p, int c, int T,
		     const int *links, int n, const int *rev, int *back)
{
	int from = op == PM_REDUCE ? c : p, to = op == PM_REDUCE ? p : c;

	if (!links) {
		pm_sched_add(s, step, from, to, (uint32_t)T, 1, op, T);
		return;
	}
	if (op == PM_REDUCE) {
		for (int j = 0; j < n; j++)
			back[j] = rev[links[n - 1 - j]];
		links = back;
	}
	pm_sched_add_routed(s, step, from, to, (uint32_t)T, 1, op, T, links, n);
}

/* One construction step's edges and the routes the network gives them
 * sent at once (pm_topo_route_set): route i at links[i H ..] (links NULL:
 * none).  Returns pm_topo_route_set's answer: 1 if some route is not the
 * network's own, 0 if none, -1 out of memory. */
struct step_routes {
	int *src, *dst, *len, *links, n;
};

static int step_routes(const struct pm_topo *topo, const struct mt *m, int t,
		       struct step_routes *r, int *links)
{
	r->n = 0;
	for (size_t i = m->estart[t]; i < m->estart[t + 1]; i++, r->n++) {
		r->src[r->n] = m->edge[i].via;
		r->dst[r->n] = (int)(m->edge[i].k % (size_t)m->P);
	}
	return pm_topo_route_set(topo, r->n, r->src, r->dst, links, r->len);
}

/* Does the network route some step's edges apart from its own routes
 * (they would collide)?  1 yes, 0 no, -1 out of memory. */
static int fabric_rerouted(const struct pm_topo *topo, const struct mt *m,
			   struct step_routes *r)
{
	for (int t = 1; t <= m->S; t++) {
		int rc = step_routes(topo, m, t, r, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

/* The fabric construction's schedule: each step's edges take the
 * network's own routes, unless the network routes a step's transfers
 * apart where its own routes would collide (fat trees, pm_topo_route_set)
 * or its routes back are not the forward ones reversed at their end
 * links (balanced ties on a file network: the construction counted the
 * forward routes' end links, and the reduce-scatter runs every edge
 * backwards over them, as the searching construction's schedule does):
 * then every transfer carries its route (pm_sched asks all or none).  -1
 * out of memory. */
static int fabric_build(const struct pm_topo *topo, const struct mt *m, const int *rev,
			int *back, struct pm_sched *s)
{
	size_t most = 1, H = (size_t)pm_topo_max_hops(topo);
	struct step_routes r = {0};
	int rc = -1;

	for (int t = 1; t <= m->S; t++)
		if (m->estart[t + 1] - m->estart[t] > most)
			most = m->estart[t + 1] - m->estart[t];
	r = (struct step_routes){malloc(sizeof(int) * most), malloc(sizeof(int) * most),
				 malloc(sizeof(int) * most), malloc(sizeof(int) * most * H), 0};
	if (!r.src || !r.dst || !r.len || !r.links)
		goto out;
	int routed = fabric_rerouted(topo, m, &r);
	if (routed < 0)
		goto out;
	routed = routed || !pm_topo_mirrored(topo);
	for (int phase = 0; phase < 2; phase++)	/* reduce-scatter, then all-gather */
		for (int k = 1; k <= m->S; k++) {
			int t = phase ? k : m->S + 1 - k, step = phase ? m->S + t - 1 : m->S - t;
			if (routed && step_routes(topo, m, t, &r, r.links) < 0)
				goto out;
			for (size_t i = m->estart[t], e = 0; i < m->estart[t + 1]; i++, e++)
				add_edge(s, step, phase ? PM_COPY : PM_REDUCE, m->edge[i].via,
					 (int)(m->edge[i].k % (size_t)m->P), (int)(m->edge[i].k / (size_t)m->P),
					 routed ? r.links + e * H : NULL, routed ? r.len[e] : 0, rev, back);
		}
	rc = 0;
out:
	free(r.src);
	free(r.dst);
	free(r.len);
	free(r.links);
	return rc;
}

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	const struct mt *mp;
	int P = in->P, *path = NULL, *back = NULL, *rev = NULL;
	int rc = PM_OK;

	s->nchunks = (uint32_t)P;
	strcpy(s->mapping, "identity: tree T is rooted at endpoint T and carries chunk T");
	if (P < 2)
		return PM_OK;
	const struct mt_opts o = {in->ports, strstr(in->label, "priority") != NULL,
				  strstr(in->label, "literal") != NULL,
				  strstr(in->label, "fabric") != NULL};
	if (!(mp = trees(in->topo, &o)))
		return pm_fail(err, PM_EINTERNAL, "MULTITREE construction failed");
	const struct mt m = *mp;
	int L = pm_topo_nlinks(in->topo);
	rev = malloc(sizeof(int) * ((size_t)L + 1));
	path = malloc(sizeof(int) * ((size_t)m.V + 1));
	back = malloc(sizeof(int) * ((size_t)m.V + 1));
	if (!rev || !path || !back) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		goto out;
	}
	for (int l = 0; l < L; l++)
		rev[l] = reverse_link(in->topo, l);
	if (m.fabric && fabric_build(in->topo, &m, rev, back, s)) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		goto out;
	}
	/* reduce-scatter: construction step t reversed, at step S - t; then
	 * the all-gather: the trees top down, step t at step S + t - 1 */
	for (int phase = 0; !m.fabric && phase < 2; phase++)
		for (int k = 1; k <= m.S; k++) {
			int t = phase ? k : m.S + 1 - k, step = phase ? m.S + t - 1 : m.S - t;
			for (size_t i = m.estart[t]; i < m.estart[t + 1]; i++) {
				int n = edge_path(&m, m.edge[i].via, path);
				add_edge(s, step, phase ? PM_COPY : PM_REDUCE, pm_topo_link(in->topo, path[0])->src,
					 (int)(m.edge[i].k % (size_t)P), (int)(m.edge[i].k / (size_t)P), path, n,
					 rev, back);
			}
		}
	s->second_phase = m.S;
out:
	free(rev);
	free(path);
	free(back);
	return rc;
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	const struct mt_state *own = cmts_of(in);
	double S = in->steps, P = in->P;

	c->alpha_s = 2 * S * p->alpha_s;
	c->lat_s = 2 * p->link_lat_s * own->sum_hops;
	c->bw_s = 2 * S * pm_msg_bw_s(p, n / P);
	c->red_s = (n / P) * p->gamma_spB * own->sum_red;
	c->steps = 2 * S;
	c->sent_B = own->sent_units * n / P;
}

static double xfers(const struct pm_inst *in)
{
	return 2.0 * in->P * (in->P - 1);
}

const struct pm_algo pm_algo_multitree = {
	.phases = PM_PHASES_RS_AG,
	.name = "multitree",
	.summary = "one topology-aware spanning tree per node, built top down in lockstep (Huang et al. 2021)",
	.arg_syntax = "ports=N,priority,literal,fabric",
	.arg_help = "ports: messages a node sends/receives per step (default: the most links out of an endpoint: all of a torus node's, 1 into a fat tree or BiGraph, 2 for a GPU of the machine networks); priority: trees with the larger remaining height first; literal: switch networks without the shortest-first stages; fabric: switch networks, trees built without searching the network (a step's edges routed apart on fat trees, by edge colouring; elsewhere the network's own routes, and the links between switches that can fill counted with stages of route length, shortest first, while P^2 x (P/64 x (links out + in) + links out x in) x stages <= 5e9; the contention evaluator prices what they share): 4,096 endpoints where the search is declined (fattree:16,3 about 10 s, machine:dgx-h100:512 about 30 s), as good as the search on switches, fat trees, BiGraph, leaf-spine files and DGX-like clusters, better on ABCI up to 2,048 GPUs; past the bound only the end links count, and on BiGraph and ABCI link collisions cost up to 8x (docs/validation.md)",
	.flags = PM_ALGO_NEEDS_TOPO,
	.formula = "2S(a + w(n/P) b) + 2 d sum_t h_t + (n/P) g sum_t r_t, S, h_t, r_t from the construction",
	.reference = "Huang et al., ISCA 2021 (Huang et al. 2021) Algorithm 1, SIII-C3",
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
};

const struct pm_algo pm_algo_multitree_msg = {
	.phases = PM_PHASES_RS_AG,
	.name = "multitree-msg",
	.summary = "MULTITREE with message-based flow control: one head flit per message (Huang et al. 2021 SIV-B)",
	.arg_syntax = "ports=N,priority,literal,fabric",
	.arg_help = "as multitree",
	.flags = PM_ALGO_NEEDS_TOPO,
	.formula = "as multitree with w(m) = m + flit",
	.reference = "Huang et al., ISCA 2021 (Huang et al. 2021) SIV-B",
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
	.schedule_of = &pm_algo_multitree,
};
