/* edgecolor.h: proper edge colouring of bipartite multigraphs.
 *
 * König's edge-colouring theorem (1916): a bipartite multigraph whose
 * vertices have at most D edges each can be coloured with D colours so
 * that no vertex has two edges of one colour.  The constructive proof
 * colours one edge at a time: take a colour a free at its left end and b
 * free at its right end; if a is not free at the right end, swap a and b
 * along the path of a/b edges starting there (it cannot reach the left
 * end), and a is free at both.
 *
 * Used to route a step's transfers over a rearrangeably non-blocking
 * network without two of them on one link (Clos, "A study of non-blocking
 * switching networks", Bell System Technical Journal 1953; Beneš,
 * "Mathematical theory of connecting networks and telephone traffic",
 * 1965): in a fat tree the colour of a transfer at a level is the up
 * port it takes there (topo_fattree.c).
 */
#ifndef PM_EDGECOLOR_H
#define PM_EDGECOLOR_H

#include <stddef.h>

struct pm_ecolor {
	int nl, nr, ncol;
	int *at;	/* [v ncol + c]: the edge of colour c at vertex v, or -1;
			 * left vertices first, then right ones (nl + v) */
	int *path;	/* one alternating path's edges */
	size_t cap;	/* edges path holds */
};

/* Tables for nl left and nr right vertices and ncol colours.  0, or -1
 * out of memory. */
int pm_ecolor_init(struct pm_ecolor *g, int nl, int nr, int ncol);
void pm_ecolor_free(struct pm_ecolor *g);

/* Colour edges e = 0 .. ne-1 joining left u[e] and right v[e]: col[e] in
 * [0, ncol), no vertex with two edges of one colour.  pref[e] (or pref
 * NULL) is taken where it is free at both ends when the edge's turn
 * comes (later swaps may change it).  Returns 0; -1 when a vertex has
 * more than ncol edges (col[] is then partly written), or out of memory.
 * The tables are left empty for the next call. */
int pm_ecolor_run(struct pm_ecolor *g, int ne, const int *u, const int *v,
		  const int *pref, int *col);

#endif
