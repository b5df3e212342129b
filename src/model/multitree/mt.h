/* mt.h: the MULTITREE construction's state, internal to
 * src/model/multitree/: the algorithm's rows and schedule (multitree.c)
 * over the construction (search.c, Huang et al., ISCA 2021, Algorithm
 * 1), which grows the trees by searching the network per tree edge or,
 * for large switch networks, by the fabric's tables (fabric.c, mid.c);
 * both add edges through the tree operations (trees.c).  Calls run one
 * way: multitree.c -> search.c -> fabric.c -> mid.c, trees.c. */
#ifndef PM_MULTITREE_MT_H
#define PM_MULTITREE_MT_H

#include "model/topo.h"

#include <stddef.h>
#include <stdint.h>

struct front {
	int *v;			/* tree nodes in order of addition; -1 = spent */
	uint16_t *o;		/* o[i]: v[i]'s rank of addition (kept when spent) */
	int n, cap, cur;
	int first_new;		/* v[first_new..] joined in the current step */
	int size;		/* nodes in the tree: the next rank of addition */
	int new_rank;		/* size when the current step began */
	int spent;		/* entries of v set to -1 since the last compact */
};

/* A tree edge: (tree, child) index k = T P + c and how the child is
 * reached, a link (direct) or an offset into path (switched). */
struct edge {
	uint32_t k;
	int32_t via;
};

struct mt_fab;
struct mt_mid;

struct mt {
	const struct pm_topo *t;
	int P, V, S, switched, ports, priority;
	/* The trees' edges in construction order, step by step: step t's are
	 * edge[estart[t] .. estart[t+1]), sorted by k, appended as they are
	 * made and read in this order by the schedule (why: docs/model.md,
	 * MULTITREE, how the construction's data are laid out). */
	struct edge *edge;
	size_t nedge;
	size_t *estart;		/* 1 .. S+1 */
	struct edge *sortbuf;	/* one step's edges, while sorting */
	int *tcount;		/* per tree, while sorting */
	uint16_t *rank;		/* [T][v]: v's rank of addition to tree T */
	uint64_t *member;	/* [T][v / 64] bit v % 64: v is in tree T, the
				 * only thing the searches test (a bit per node
				 * keeps every tree's membership in cache) */
	size_t words;		/* uint64_t per tree */
	int32_t *path;		/* switched: [len, links...] per edge */
	size_t npath, cappath;
	int *hops, *red;	/* per step 1..S: longest path, most children */
	int capsteps;
	/* construction scratch */
	const struct pm_link *links;
	int *nbr, *nbr_off;	/* neighbour order of every vertex */
	int *nbr_dst;		/* nbr_dst[j] = links[nbr[j]].dst, read in line */
	int *in_src;		/* in_src[j] = links[in[j]].src, likewise */
	int *in_pos, *in_full;	/* switched: link l is in[in_pos[l]]; in_full[j]: the
				 * step in[j] filled in (the searches read fullness
				 * in line with the adjacency they walk) */
	int *nbr_pos, *nbr_full;	/* the same for nbr[] (-1: not a neighbour link) */
	int *in, *in_off;	/* links into every vertex */
	int *link_stamp, *sent, *sent_stamp, *recv, *recv_stamp;
	int *link_cnt;		/* switched: tree edges on the link this step ... */
	int *link_slots;	/* ... and how many it carries (link_slots()) */
	int *bfs_seen, *bfs_pred, *bfs_depth, *queue, bfs_gen;
	int maxlen;		/* links a tree edge may span in this stage */
	uint64_t *dead;		/* switch: searched empty under key dead[] ... */
	int *dead_budget;	/* ... with this many hops left */
	uint64_t dead_key;	/* (step, stage, tree) of the current search */
	int can_send, can_recv;	/* endpoints with ports left this step */
	uint64_t *sendable;	/* bit v: endpoint v has a port left this step */
	int even;		/* every path between endpoints has even length
				 * (switch networks whose links join levels) */
	int *rl, *rl_pos;	/* rl[0 .. can_recv): endpoints that can still
				 * receive this step; rl_pos: index in rl */
	struct front *fr;
	int *missing;
	int *pathbuf;		/* one edge's links: at most V */
	uint64_t *recvable;	/* bit v: endpoint v can still receive this step */
	/* The fabric construction (fabric.c, with the links between switches
	 * counted by mid.c when mid): what both files read, and each file's
	 * own state.  inroom[j words ..]: the endpoints whose j-th link in has
	 * room this step; outroom[j words ..] those whose j-th link out has;
	 * sw: the uint64_t of a word mask (bit w: word w of a set has a bit). */
	int fabric, mid;
	int dout, din;
	size_t sw;
	uint64_t *inroom, *outroom;
	struct mt_fab *fab;	/* fabric.c's */
	struct mt_mid *mids;	/* mid.c's */
};

static inline int mt_in_tree(const struct mt *m, int T, int v)
{
	return (m->member[(size_t)T * m->words + (size_t)v / 64] >> (v % 64)) & 1;
}

static inline int mt_count_of(const int *cnt, const int *stamp, int v, int t)
{
	return stamp[v] == t ? cnt[v] : 0;
}

/* Has switched link l no room left for another tree edge in step t? */
static inline int mt_link_full(const struct mt *m, int l, int t)
{
	return m->link_stamp[l] == t && m->link_cnt[l] >= m->link_slots[l];
}

/* The construction's options (parse_opts). */
struct mt_opts {
	int ports, priority, literal;
	int fabric;	/* grow the trees without searching (fabric.c) */
};

/* search.c: run Algorithm 1 (0, or -1 out of memory / too many steps);
 * free what only the construction needs (the trees stay for the
 * schedule); free all of a kept construction (pm_topo_memo). */
int pm_mt_construct(struct mt *m, const struct pm_topo *t, const struct mt_opts *o);
void pm_mt_drop_scratch(struct mt *m);
void pm_mt_free_kept(void *p);

/* trees.c */
/* Append v to a tree's nodes (ranks kept when asked); v joins tree T. */
int pm_mt_push(struct front *f, int v, int ranks);
void pm_mt_set_member(struct mt *m, int T, int v);
/* The parent endpoint of the edge reached by via. */
int pm_mt_parent_of(const struct mt *m, int32_t via);
/* Index in f->v[f->cur .. f->first_new) of the node of rank r. */
int pm_mt_index_of_rank(const struct front *f, int r);
/* Add edge p -> c to tree T in step t: path[0 .. len) are the links it
 * uses up (stored as its route on a searched switch network), hops the
 * links it crosses. */
int pm_mt_attach(struct mt *m, int T, int p, int c, int t, const int *path, int len,
	      int hops);
/* Move tree T's scan position to its first node that joined before the
 * step and has a port left (mask, when not NULL: its bit in mask set,
 * and mask holds only endpoints with a port left):
 * a walk of MT_WALK nodes in order, then the lowest rank among the tree's
 * members AND the endpoints with a port left (AND mask).  MT_WALK is
 * short: the walk reads a node list the cache does not hold, the bit
 * sets it does (docs/model.md, MULTITREE's data layout). */
#define MT_WALK 8
int pm_mt_next_sender(struct mt *m, int T, const uint64_t *mask);

/* fabric.c.  Its tables: P^2 x (3 + (record + links out) / 8)
 * bytes, a record being route lengths + links out + links in words, at
 * least 8: 69 MB at 4,096 endpoints of a fat tree. */
#define MT_FABRIC_MAX_BYTES pm_limit(2e9)
double pm_mt_fabric_refusal(const struct pm_topo *t);
#define MT_FABRIC_MAX_WORK pm_limit(5e9)
double pm_mt_fabric_work(const struct pm_topo *t);
int pm_mt_fabric_counts_mid(const struct pm_topo *t, int even);
int pm_mt_fabric_setup(struct mt *m);
int pm_mt_fabric_turn(struct mt *m, int T, int t);
void pm_mt_fabric_step(struct mt *m);
void pm_mt_fabric_prefetch(const struct mt *m, int T, int p);
void pm_mt_fabric_free(struct mt *m);

/* mid.c: begin the tables, add the route p -> c (links[0 .. n),
 * every pair once), end (choose the links that can fill; mid = 0 when
 * none can); a new step; the tracked links between switches of the route
 * p -> c into out (their number); link l just filled.  -1: out of memory. */
int pm_mt_mid_begin(struct mt *m);
int pm_mt_mid_add(struct mt *m, int c, const int *links, int n);
int pm_mt_mid_end(struct mt *m);
void pm_mt_mid_free(struct mt *m);
void pm_mt_mid_step(struct mt *m);
int pm_mt_mid_links(struct mt *m, int p, int c, int *out);
void pm_mt_mid_filled(struct mt *m, int l);
/* The words (sw of them, into out) and word w of the endpoints that
 * endpoint p's j-th link out may still reach over the tracked links
 * (all ones when nothing is tracked). */
void pm_mt_mid_words(const struct mt *m, int p, int j, uint64_t *out);
uint64_t pm_mt_mid_word(const struct mt *m, int p, int j, size_t w);

#endif
