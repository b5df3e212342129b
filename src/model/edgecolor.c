/* edgecolor.c: König's edge colouring of a bipartite multigraph, one edge
 * at a time with alternating-path swaps (edgecolor.h). */
#include "model/edgecolor.h"
#include "model/grow.h"

#include <stdlib.h>

int pm_ecolor_init(struct pm_ecolor *g, int nl, int nr, int ncol)
{
	size_t n = ((size_t)nl + (size_t)nr) * (size_t)ncol;

	*g = (struct pm_ecolor){nl, nr, ncol, malloc(sizeof(int) * (n ? n : 1)), NULL, 0};
	if (!g->at)
		return -1;
	for (size_t i = 0; i < n; i++)
		g->at[i] = -1;
	return 0;
}

void pm_ecolor_free(struct pm_ecolor *g)
{
	free(g->at);
	free(g->path);
	*g = (struct pm_ecolor){0};
}

static int free_colour(const int *at, int ncol)
{
	for (int c = 0; c < ncol; c++)
		if (at[c] < 0)
			return c;
	return -1;
}

static void put(struct pm_ecolor *g, int e, const int *u, const int *v, const int *col, int val)
{
	g->at[(size_t)u[e] * (size_t)g->ncol + (size_t)col[e]] = val;
	g->at[((size_t)g->nl + (size_t)v[e]) * (size_t)g->ncol + (size_t)col[e]] = val;
}

/* Swap colours a and b along the path that leaves right vertex x by its
 * a-edge and alternates b, a, ... (x has no b-edge).  -1 out of memory. */
static int swap_path(struct pm_ecolor *g, int x, int a, int b, const int *u, const int *v, int *col)
{
	int n = 0, side = 1, want = a;
	size_t at = (size_t)g->nl + (size_t)x;

	for (int f; (f = g->at[at * (size_t)g->ncol + (size_t)want]) >= 0;) {
		if (pm_grow(&g->path, &g->cap, (size_t)n + 1, sizeof(int), 64))
			return -1;
		g->path[n++] = f;
		side = !side;	/* the edge's other end */
		at = side ? (size_t)g->nl + (size_t)v[f] : (size_t)u[f];
		want = want == a ? b : a;
	}
	for (int i = 0; i < n; i++)
		put(g, g->path[i], u, v, col, -1);
	for (int i = 0; i < n; i++) {
		int f = g->path[i];
		col[f] = col[f] == a ? b : a;
		put(g, f, u, v, col, f);
	}
	return 0;
}

int pm_ecolor_run(struct pm_ecolor *g, int ne, const int *u, const int *v,
		  const int *pref, int *col)
{
	int e, rc = 0, K = g->ncol;

	for (e = 0; e < ne; e++) {
		const int *L = g->at + (size_t)u[e] * (size_t)K;
		const int *R = g->at + ((size_t)g->nl + (size_t)v[e]) * (size_t)K;
		int c = pref ? pref[e] : -1;
		if (c < 0 || c >= K || L[c] >= 0 || R[c] >= 0) {
			int a = free_colour(L, K), b = free_colour(R, K);
			if (a < 0 || b < 0) {
				rc = -1;
				break;
			}
			if (R[a] < 0)
				c = a;
			else if (L[b] < 0)
				c = b;
			else if (swap_path(g, v[e], a, b, u, v, col)) {
				rc = -1;
				break;
			} else
				c = a;
		}
		col[e] = c;
		put(g, e, u, v, col, e);
	}
	for (int f = 0; f < e; f++)	/* leave the tables empty */
		put(g, f, u, v, col, -1);
	return rc;
}
