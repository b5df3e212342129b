/* search.c: MULTITREE's construction (Huang et al., ISCA 2021,
 * Algorithm 1): one spanning tree per endpoint grown a step at a time,
 * each tree in turn adding the node its first parent's search of the
 * free links finds; on switch networks breadth first through switches,
 * from the targets' side where the forward searches fail; or, with the
 * fabric option, by fabric.c's tables instead of searching.  The
 * algorithm, its rules and its cost: multitree.c. */
#include "model/grow.h"
#include "model/multitree/mt.h"
#include "model/progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Switch networks: forward searches from a tree's next senders before the
 * search from the targets' side (machine:dgx-h100:128 4.1 s with 1, 3.3 s
 * with 4; more helps fat trees and slows BiGraph). */
#define MT_FORWARD_TRIES 4
#define MT_MAX_STEPS 65535	/* a guard: no network here needs a tenth of it */

/* Free what only the construction needs; the trees (edge, estart, path,
 * hops, red) stay for the schedule builder. */
void pm_mt_drop_scratch(struct mt *m)
{
	void *own[] = {&m->member, &m->sendable, &m->rank, &m->in, &m->in_off, &m->rl, &m->rl_pos,
		&m->nbr, &m->nbr_dst, &m->in_src, &m->in_pos, &m->in_full, &m->nbr_pos,
		&m->nbr_full, &m->nbr_off, &m->link_stamp, &m->link_cnt, &m->link_slots, &m->sent,
		&m->sent_stamp, &m->recv, &m->recv_stamp, &m->bfs_seen, &m->bfs_pred,
		&m->bfs_depth, &m->queue, &m->fr, &m->missing, &m->pathbuf, &m->dead,
		&m->dead_budget, &m->sortbuf, &m->tcount, &m->recvable};

	for (int i = 0; m->fr && i < m->P; i++) {
		free(m->fr[i].v);
		free(m->fr[i].o);
	}
	pm_free_each(own, sizeof own / sizeof *own);
	pm_mt_fabric_free(m);
}

static void mt_free(struct mt *m)
{
	pm_mt_drop_scratch(m);
	free(m->edge);
	free(m->estart);
	free(m->path);
	free(m->hops);
	free(m->red);
	memset(m, 0, sizeof *m);
}

void pm_mt_free_kept(void *p)
{
	mt_free(p);
	free(p);
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
			if (m->nbr_full[j] == t || m->bfs_seen[w] == m->bfs_gen)
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
			int w = m->in_src[j];
			if (m->in_full[j] == t || m->bfs_seen[w] == m->bfs_gen)
				continue;
			m->bfs_seen[w] = m->bfs_gen;
			m->bfs_depth[w] = m->bfs_depth[u] + 1;
			if (w >= m->P) {
				m->queue[tail++] = w;
				continue;
			}
			int r = candidate(m, T, w, t, lo);
			if (r == lo)	/* no rank below lo is asked for */
				return r;
			if (r >= 0 && (best < 0 || r < best))
				best = r;
		}
	}
	return best;
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
	f->cur = pm_mt_index_of_rank(f, r);
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
		return pm_mt_fabric_turn(m, T, t);
	m->dead_key = (((uint64_t)t * 4096 + (uint64_t)m->maxlen) << 32) | (uint64_t)(T + 1);
	if (m->switched) {
		/* the first node that can send: when its search succeeds it is
		 * the parent (the lowest rank), and one search stopping at the
		 * nearest target costs far less than the search from every
		 * target; when it fails, the search from the targets' side
		 * names the parent among the later nodes */
		for (int tries = 0; tries < MT_FORWARD_TRIES; tries++) {
			int p = pm_mt_next_sender(m, T, NULL);
			if (p < 0)
				return 0;
			int c = find_switched(m, T, p, t, path, &len);
			if (c >= 0)
				return pm_mt_attach(m, T, p, c, t, path, len, len) ? -1 : 1;
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
				return pm_mt_attach(m, T, p, c, t, path, len, len) ? -1 : 1;
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
 * are 64 MB), and a turn waited on them (docs/model.md, MULTITREE's data
 * layout). */
static void prefetch_tree(const struct mt *m, int T)
{
	const struct front *f = &m->fr[T];
	const uint64_t *row = m->member + (size_t)T * m->words;

	for (size_t w = 0; w < m->words; w += 8)
		__builtin_prefetch(row + w);
	if (m->fabric)	/* its spent sets, and the sets of the node at its scan position */
		pm_mt_fabric_prefetch(m, T, f->cur < f->first_new ? f->v[f->cur] : -1);
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
 * some). */
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
					int w = pass ? m->in_src[j] : m->nbr_dst[j];
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
	for (int j = 0; j < L; j++)
		m->in_src[j] = m->links[m->in[j]].src;
	for (int j = 0; m->in_pos && j < L; j++)
		m->in_pos[m->in[j]] = j;
	for (int l = 0; m->nbr_pos && l < L; l++)
		m->nbr_pos[l] = -1;
	for (int j = 0; m->nbr_pos && j < m->nbr_off[V]; j++)
		m->nbr_pos[m->nbr[j]] = j;
}

/* Every tree T starts as its root alone, P - 1 members missing. */
static int seed_trees(struct mt *m)
{
	int P = m->P;

	for (int T = 0; T < P; T++) {
		if (m->switched)
			m->rank[(size_t)T * P + T] = 0;
		pm_mt_set_member(m, T, T);
		m->missing[T] = P - 1;
		if (pm_mt_push(&m->fr[T], T, m->switched))
			return -1;
	}
	return 0;
}

/* A switch network's link state: how many tree edges a link carries in a
 * step and may, and where it sits in the adjacency the searches walk. */
static int switched_links(struct mt *m, int L, int P)
{
	m->link_cnt = calloc((size_t)L + 1, sizeof(int));
	m->link_slots = link_slots(m->links, L, P);
	m->in_pos = malloc(sizeof(int) * ((size_t)L + 1));
	m->in_full = calloc((size_t)L + 1, sizeof(int));
	m->nbr_pos = malloc(sizeof(int) * ((size_t)L + 1));
	m->nbr_full = calloc((size_t)L + 1, sizeof(int));
	return !m->link_cnt || !m->link_slots || !m->in_pos || !m->in_full || !m->nbr_pos || !m->nbr_full ? -1 : 0;
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
	m->in_src = malloc(sizeof(int) * ((size_t)L + 1));
	m->link_stamp = calloc((size_t)L + 1, sizeof(int));
	if (m->switched && switched_links(m, L, P))
		return -1;
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
	    !m->missing || (m->switched && !m->rank) || !m->nbr_dst || !m->in_src || !m->in_off || !m->in ||
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

/* Room for step tstep's per-step tallies. */
static int grow_steps(struct mt *m, int tstep)
{
	if (tstep < m->capsteps)
		return 0;
	size_t cap = pm_grow_cap((size_t)m->capsteps, (size_t)tstep + 1, 64);
	if (pm_resize(&m->hops, cap, sizeof(int)) || pm_resize(&m->red, cap, sizeof(int)) ||
	    pm_resize(&m->estart, cap + 1, sizeof(size_t)))
		return -1;
	m->capsteps = (int)cap;
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
		pm_mt_fabric_step(m);
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
int pm_mt_construct(struct mt *m, const struct pm_topo *t, const struct mt_opts *o)
{
	int *order = NULL, *active = NULL, *done = NULL, rc = -1;

	if (setup(m, t, o->ports, o->priority))
		goto out;
	if (o->fabric && (m->fabric = 1, pm_mt_fabric_setup(m)))
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
