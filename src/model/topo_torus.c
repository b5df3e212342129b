/* topo_torus.c: ring:N, torus:AxB[xC] and mesh:AxB[xC].
 *
 * Endpoint id = x0 + A*(x1 + B*x2), x0 is dimension 0 ("X").  Every node
 * has ports 2d (+ direction) and 2d+1 (- direction) per dimension d.  A
 * torus dimension of size 2 keeps both its links (the mesh link and the
 * wrap-around cable), so the two nodes are joined twice.  Routing is
 * dimension order X, Y, Z; in a torus each dimension goes the short way
 * round, and a tie (distance exactly half the ring) goes in the +
 * direction.  Ring algorithms use a boustrophedon (snake) order, and on a
 * mesh a Hamiltonian cycle where one exists, so ring neighbours are one
 * link apart.
 */
#include "model/topo_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The grid's shape, the kind's own (t->shape). */
struct grid {
	int dims[3], ndims, wrap;	/* sizes, dimensions, wrap-around links */
	int *coord;		/* coord[v * 3 + d], so routing never divides */
	int arith;		/* the link out of v by port p is v x n_ports + p */
};

static void grid_free(void *shape)
{
	struct grid *g = shape;
	if (g)
		free(g->coord);
	free(g);
}

/* Read A[xB[xC]] into a new shape (t->shape) that wraps or not. */
static int parse_dims(struct pm_topo *t, const char *args, int maxdims, int wrap,
		      const char *syntax, struct pm_err *err)
{
	struct grid *g = calloc(1, sizeof *g);
	const char *p = args;
	long long total = 1;

	if (!(t->shape = g))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	g->wrap = wrap;
	while (*p) {
		char *end;
		if (!isdigit((unsigned char)*p) || g->ndims == maxdims)
			goto bad;
		long v = strtol(p, &end, 10);
		if (v > PM_TOPO_MAX_VERTICES)	/* strtol saturates: print the digits given */
			return pm_fail(err, PM_EINPUT,
				       "network too large: '%s' has a dimension of %.*s endpoints (expected at most %d endpoints in all)",
				       t->spec, (int)(end - p), p, PM_TOPO_MAX_VERTICES);
		if (v < 1)
			goto bad;
		g->dims[g->ndims++] = (int)v;
		total *= v;
		if (total > PM_TOPO_MAX_VERTICES)
			return pm_fail(err, PM_EINPUT,
				       "network too large: '%s' has more than %d endpoints (expected at most %d)",
				       t->spec, PM_TOPO_MAX_VERTICES,
				       PM_TOPO_MAX_VERTICES);
		p = end;
		if (*p == 'x')
			p++;
		else if (*p)
			goto bad;
		if (p[-1] == 'x' && !*p)
			goto bad;
	}
	if (g->ndims == 0)
		goto bad;
	return PM_OK;
bad:
	return pm_fail(err, PM_EINPUT,
		       "invalid topology '%s' (expected %s with sizes from 1 to %d)",
		       t->spec, syntax, PM_TOPO_MAX_VERTICES);
}

static void coords(const struct pm_topo *t, int id, int c[3])
{
	const struct grid *g = t->shape;
	for (int d = 0; d < 3; d++) {
		int n = d < g->ndims ? g->dims[d] : 1;
		c[d] = id % n;
		id /= n;
	}
}

static int node_at(const struct pm_topo *t, const int c[3])
{
	const struct grid *g = t->shape;
	int id = 0;
	for (int d = g->ndims - 1; d >= 0; d--)
		id = id * g->dims[d] + c[d];
	return id;
}

static int build_grid(struct pm_topo *t, const struct pm_link_defaults *ld,
		      struct pm_err *err)
{
	struct grid *g = t->shape;
	long long n = 1, links = 0;
	int rc;

	for (int d = 0; d < g->ndims; d++)
		n *= g->dims[d];
	if (ld->ndim_bw > g->ndims || ld->ndim_lat > g->ndims)
		return pm_fail(err, PM_EINPUT,
			       "'%s' has %d dimension%s but %d per-dimension %s given (expected at most %d)",
			       t->spec, g->ndims, g->ndims > 1 ? "s" : "",
			       ld->ndim_bw > g->ndims ? ld->ndim_bw : ld->ndim_lat,
			       ld->ndim_bw > g->ndims ? "bandwidths" : "latencies", g->ndims);
	for (int d = 0; d < g->ndims; d++) {
		long long k = g->dims[d];
		if (k > 1)
			links += g->wrap ? 2 * n : 2 * (n / k) * (k - 1);
	}
	rc = pm_topo_alloc(t, n, (int)n, links, 2 * g->ndims, err);
	if (rc)
		return rc;
	g->coord = malloc(sizeof(int) * 3 * (size_t)n);
	if (!g->coord)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int v = 0; v < n; v++) {
		int c[3];
		coords(t, v, c);
		memcpy(g->coord + 3 * v, c, sizeof c);
		for (int d = 0; d < g->ndims; d++) {
			int k = g->dims[d];
			for (int dir = 0; dir < 2 && k > 1; dir++) {
				int step = dir == 0 ? 1 : -1, x = c[d] + step;
				if (!g->wrap && (x < 0 || x >= k))
					continue;
				int nc[3] = {c[0], c[1], c[2]};
				nc[d] = (x + k) % k;
				double bw = d < ld->ndim_bw ? ld->dim_bw_Bps[d] : ld->bw_Bps;
				double lat = d < ld->ndim_lat ? ld->dim_lat_s[d] : ld->lat_s;
				if (pm_topo_add(t, v, node_at(t, nc), bw, lat, 2 * d + dir) < 0)
					return pm_fail(err, PM_EINTERNAL, "out of memory");
			}
		}
	}
	/* where every vertex has every port (a torus without dimensions of
	 * one), the links were numbered vertex by vertex, port by port:
	 * routing then computes a link's id instead of loading it */
	g->arith = 1;
	for (long long i = 0; i < n * t->n_ports && g->arith; i++)
		g->arith = t->port[i] == i;
	t->max_hops = 0;
	t->min_hops = n > 1 ? 1 : 0;
	for (int d = 0; d < g->ndims; d++)
		t->max_hops += g->wrap ? g->dims[d] / 2 : g->dims[d] - 1;
	return PM_OK;
}

static int build_torus(struct pm_topo *t, const char *args,
		       const struct pm_link_defaults *ld, struct pm_err *err)
{
	int rc = parse_dims(t, args, 3, 1, "torus:AxB or torus:AxBxC", err);
	return rc ? rc : build_grid(t, ld, err);
}

/* ace:LxVxH, the platform of Rashidi et al. 2021 Table V: a 3-D torus of
 * L NPUs per package (X), V package rows (Y) and H package columns (Z),
 * links of 200 GB/s inside a package and 25 GB/s between packages, 90 and
 * 500 cycles of latency at the NPU's 1245 MHz.  --dim-bw and --dim-lat
 * still override.  The 94% link efficiency of the table is not applied. */
static int build_ace(struct pm_topo *t, const char *args,
		     const struct pm_link_defaults *ld, struct pm_err *err)
{
	struct pm_link_defaults a = *ld;
	int rc = parse_dims(t, args, 3, 1, "ace:LxVxH such as ace:4x4x4", err);

	if (rc)
		return rc;
	if (((const struct grid *)t->shape)->ndims != 3)
		return pm_fail(err, PM_EINPUT, "invalid topology '%s' (expected ace:LxVxH, three dimensions, such as ace:4x4x4)",
			       t->spec);
	if (!a.ndim_bw) {
		a.ndim_bw = 3;
		a.dim_bw_Bps[0] = 200e9;
		a.dim_bw_Bps[1] = a.dim_bw_Bps[2] = 25e9;
	}
	if (!a.ndim_lat) {
		a.ndim_lat = 3;
		a.dim_lat_s[0] = 90 / 1245e6;
		a.dim_lat_s[1] = a.dim_lat_s[2] = 500 / 1245e6;
	}
	return build_grid(t, &a, err);
}

static int build_mesh(struct pm_topo *t, const char *args,
		      const struct pm_link_defaults *ld, struct pm_err *err)
{
	int rc = parse_dims(t, args, 3, 0, "mesh:AxB or mesh:AxBxC", err);
	return rc ? rc : build_grid(t, ld, err);
}

static int build_ring(struct pm_topo *t, const char *args,
		      const struct pm_link_defaults *ld, struct pm_err *err)
{
	int rc = parse_dims(t, args, 1, 1, "ring:N", err);
	return rc ? rc : build_grid(t, ld, err);
}

/* Dimension by dimension, the shorter way round (ties +).  The next
 * vertex is arithmetic on the coordinate (id = x + X (y + Y z)), so the
 * walk reads only the port table, not each link's far end: on
 * torus:250x400 routing was 82% of a run, most of it waiting on that
 * load. */
static int route_grid(const struct pm_topo *t, int src, int dst, int *links)
{
	const struct grid *g = t->shape;
	int hops = 0, v = src, stride = 1, np = g->arith ? t->n_ports : 0;
	const int *a = g->coord + 3 * src, *b = g->coord + 3 * dst;

	for (int d = 0; d < g->ndims; stride *= g->dims[d], d++) {
		int k = g->dims[d], delta = b[d] - a[d], dir;
		if (delta == 0)
			continue;
		if (g->wrap) {
			int fwd = delta < 0 ? delta + k : delta;	/* hops going + */
			dir = fwd <= k - fwd ? 0 : 1;	/* tie goes + */
			delta = dir == 0 ? fwd : k - fwd;
		} else {
			dir = delta > 0 ? 0 : 1;
			delta = delta > 0 ? delta : -delta;
		}
		int c = a[d], port = 2 * d + dir;
		for (int s = 0; s < delta; s++) {	/* follow the port */
			links[hops++] = np ? v * np + port : pm_port_link(t, v, port);
			if (dir == 0) {
				v += ++c == k ? -(k - 1) * stride : stride;
				c = c == k ? 0 : c;
			} else {
				v -= --c < 0 ? -(k - 1) * stride : stride;
				c = c < 0 ? k - 1 : c;
			}
		}
	}
	return hops;
}

/* Snake through a 2D grid of a x b (x fastest) into out[], starting at
 * (0,0).  mesh_cycle: on a mesh with b even, return through column 0 so
 * the last node is next to the first (a Hamiltonian cycle). */
static void snake2(int a, int b, int mesh_cycle, int transpose, int *out)
{
	int n = 0;
	if (mesh_cycle && a >= 2) {
		for (int y = 0; y < b; y++)
			for (int i = 1; i < a; i++) {
				int x = y % 2 == 0 ? i : a - i;
				out[n++] = transpose ? x * b + y : y * a + x;
			}
		for (int y = b - 1; y >= 0; y--)	/* column 0 back up */
			out[n++] = transpose ? 0 * b + y : y * a + 0;
		/* rotate so the cycle starts at (0,0) */
		int first = out[n - 1];
		memmove(out + 1, out, sizeof(int) * (size_t)(n - 1));
		out[0] = first;
		return;
	}
	for (int y = 0; y < b; y++)
		for (int i = 0; i < a; i++) {
			int x = y % 2 == 0 ? i : a - 1 - i;
			out[n++] = transpose ? x * b + y : y * a + x;
		}
}

/* Plane order for the first two dimensions: which way to snake so the
 * ring closes with one link when it can. */
static void plane_order(const struct pm_topo *t, int *out)
{
	const struct grid *g = t->shape;
	int a = g->dims[0], b = g->ndims > 1 ? g->dims[1] : 1;
	int idx_of_xy;

	if (g->ndims == 1) {
		for (int i = 0; i < a; i++)
			out[i] = i;
		return;
	}
	int transpose = b % 2 != 0 && a % 2 == 0;
	int cycle = !g->wrap && (transpose ? a : b) % 2 == 0 &&
		    (transpose ? b : a) >= 2;
	if (!transpose) {
		snake2(a, b, cycle, 0, out);
		return;
	}
	/* snake over columns: swap roles, then map back to x0-fastest ids */
	snake2(b, a, cycle, 0, out);
	for (int i = 0; i < a * b; i++) {
		idx_of_xy = out[i];	/* = x * b + y in the swapped grid */
		int y = idx_of_xy % b, x = idx_of_xy / b;
		out[i] = y * a + x;
	}
}

static void ring_order_grid(const struct pm_topo *t, int *order)
{
	const struct grid *g = t->shape;
	int plane = g->dims[0] * (g->ndims > 1 ? g->dims[1] : 1);
	int depth = g->ndims > 2 ? g->dims[2] : 1;
	int *p = malloc(sizeof(int) * (size_t)plane);

	if (!p) {	/* identity is still a valid order */
		for (int i = 0; i < t->n_end; i++)
			order[i] = i;
		return;
	}
	plane_order(t, p);
	for (int z = 0; z < depth; z++)
		for (int i = 0; i < plane; i++) {
			int j = z % 2 == 0 ? i : plane - 1 - i;
			order[z * plane + i] = z * plane + p[j];
		}
	free(p);
}

/* Y before X (Z before Y in 3-D), - before + in each dimension: the
 * order of Huang et al. 2021 SIII-C and of its authors' simulator (north, south,
 * west, east), which makes the first MULTITREE edge on a 3x3 torus 0 -> 6
 * as in the MULTITREE supplement. */
static int neighbors_grid(const struct pm_topo *t, int v, int *links)
{
	const struct grid *g = t->shape;
	int n = 0;
	for (int d = g->ndims - 1; d >= 0; d--)
		for (int dir = 1; dir >= 0; dir--) {
			int l = pm_port_link(t, v, 2 * d + dir);
			if (l >= 0)
				links[n++] = l;
		}
	return n;
}

static void describe_grid(const struct pm_topo *t, struct pm_topo_info *info)
{
	const struct grid *g = t->shape;
	double best = 0;

	/* the cheapest cut into halves across one dimension: with equal links
	 * the largest dimension, else whichever crosses the least bandwidth */
	for (int d = 0; d < g->ndims; d++) {
		double bw, lat;
		if (g->dims[d] < 2)
			continue;
		pm_topo_dim_link(t, d, &bw, &lat);
		double cut = (double)(t->n_end / g->dims[d]) * (g->wrap ? 2.0 : 1.0) * bw;
		if (best == 0 || cut < best)
			best = cut;
	}
	info->routing = g->wrap
		? "dimension order X, Y, Z; each ring the short way, ties in the + direction"
		: "dimension order X, Y, Z";
	info->ring_order = g->ndims == 1
		? "identity: rank i on endpoint i"
		: g->wrap ? "boustrophedon (snake) rows, one link between ring neighbours"
			  : "Hamiltonian cycle through column 0 when a dimension is even, else snake";
	if (best > 0) {
		info->bisection_Bps = best;
		info->bisection_cut = "halves across one dimension, the cheapest cut";
	} else {
		info->bisection_Bps = 0;
		info->bisection_cut = "single endpoint";
	}
}

/* The kind's capabilities (struct pm_topo_kind). */
static int grid_dims(const struct pm_topo *t, int dims[3], int *wrap)
{
	const struct grid *g = t->shape;

	for (int i = 0; i < 3; i++)
		dims[i] = i < g->ndims ? g->dims[i] : 1;
	if (wrap)
		*wrap = g->wrap;
	return g->ndims;
}

static int grid_layers(const struct pm_topo *t, int *sizes)	/* the dimensions longer than 1 */
{
	const struct grid *g = t->shape;
	int n = 0;

	for (int d = 0; d < g->ndims; d++)
		if (g->dims[d] > 1)
			sizes[n++] = g->dims[d];
	return n;
}

/* This network's grid, or NULL where it is not one. */
static const struct grid *grid_of(const struct pm_topo *t)
{
	return t->kind->grid == grid_dims ? t->shape : NULL;
}

int pm_topo_link_dim(const struct pm_topo *t, int link, int *dateline)
{
	const struct grid *g = grid_of(t);
	int v = pm_topo_link(t, link)->src;

	*dateline = 0;
	if (!g || g->ndims == 0 || !g->coord || !t->port || v >= t->n_end)
		return -1;
	for (int d = 0; d < g->ndims && 2 * d + 1 < t->n_ports; d++)
		for (int dir = 0; dir < 2; dir++) {
			if (pm_port_link(t, v, 2 * d + dir) != link)
				continue;
			int x = g->coord[3 * v + d] + (dir == 0 ? 1 : -1);
			*dateline = g->wrap && (x < 0 || x >= g->dims[d]);
			return d;
		}
	return -1;
}

void pm_topo_dim_link(const struct pm_topo *t, int d, double *bw_Bps, double *lat_s)
{
	const struct grid *g = grid_of(t);
	int l = g && d < g->ndims && g->dims[d] > 1 ? pm_port_link(t, 0, 2 * d) : -1;

	*bw_Bps = l >= 0 ? pm_topo_link(t, l)->bw_Bps : 0;
	*lat_s = l >= 0 ? pm_topo_link(t, l)->lat_s : 0;
}

const struct pm_topo_kind pm_topo_ring = {
	.name = "ring",
	.syntax = "ring:N",
	.summary = "N endpoints on a bidirectional ring (a 1-D torus)",
	.build = build_ring,
	.route = route_grid,
	.ring_order = ring_order_grid,
	.neighbors = neighbors_grid,
	.describe = describe_grid,
	.shape_free = grid_free,
	.grid = grid_dims,
	.layers = grid_layers,
};

const struct pm_topo_kind pm_topo_torus = {
	.name = "torus",
	.syntax = "torus:A[xB[xC]]",
	.summary = "1-D, 2-D or 3-D torus, wrap-around links in every dimension (TPU-like); torus:N is ring:N as a torus",
	.build = build_torus,
	.route = route_grid,
	.ring_order = ring_order_grid,
	.neighbors = neighbors_grid,
	.describe = describe_grid,
	.shape_free = grid_free,
	.grid = grid_dims,
	.layers = grid_layers,
};

const struct pm_topo_kind pm_topo_ace = {
	.name = "ace",
	.syntax = "ace:LxVxH",
	.summary = "ACE's platform (Rashidi et al. 2021 Table V): 3-D torus, X 200 GB/s 90 cycles, Y and Z 25 GB/s 500 cycles at 1245 MHz",
	.build = build_ace,
	.route = route_grid,
	.ring_order = ring_order_grid,
	.neighbors = neighbors_grid,
	.describe = describe_grid,
	.shape_free = grid_free,
	.grid = grid_dims,
	.layers = grid_layers,
};

const struct pm_topo_kind pm_topo_mesh = {
	.name = "mesh",
	.syntax = "mesh:A[xB[xC]]",
	.summary = "1-D, 2-D or 3-D mesh, no wrap-around links",
	.build = build_mesh,
	.route = route_grid,
	.ring_order = ring_order_grid,
	.neighbors = neighbors_grid,
	.describe = describe_grid,
	.shape_free = grid_free,
	.grid = grid_dims,
	.layers = grid_layers,
};
