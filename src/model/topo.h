/* topo.h: networks of accelerators.
 *
 * A topology is a graph of endpoints (accelerators, vertices 0..P-1) and
 * switches (vertices P..V-1) joined by directed links, each with its own
 * bandwidth and latency, plus one deterministic routing function.  It is
 * opaque because its routing tables must stay consistent with its links.
 * Specs are one line, "kind:args" (torus:8x8, fattree:8,2, file:net.csv);
 * the kinds live in one table (topos.c), one file per kind.
 */
#ifndef PM_TOPO_H
#define PM_TOPO_H

#include "model/err.h"

#include "model/limits.h"

/* limits.h: these scale for the fuzzers' volume mode, 1 in perfmodel */
#define PM_TOPO_MAX_VERTICES ((int)pm_limit(1 << 20))
#define PM_TOPO_MAX_LINKS ((int)pm_limit(1 << 22))
#define PM_TOPO_MAX_FILE_VERTICES 4096
#define PM_TOPO_MAX_PORTS ((int)pm_limit(1 << 26))	/* port table entries: 256 MiB */

struct pm_topo;

/* Bandwidth and latency given to every generated link; the defaults are
 * Huang et al. 2021 Table III (16 GB/s, 150 ns).  Rings, tori and meshes may give
 * each dimension its own links (dimension 0 = X, the first size of the
 * spec), as the L x V x H platform of Rashidi et al. 2021 Table V does: the first
 * ndim_bw (ndim_lat) dimensions take dim_bw_Bps[d] (dim_lat_s[d]). */
struct pm_link_defaults {
	double bw_Bps;
	double lat_s;
	int ndim_bw, ndim_lat;
	double dim_bw_Bps[3], dim_lat_s[3];
};
#define PM_DEFAULT_LINK_BW 16e9
#define PM_DEFAULT_LINK_LAT 150e-9

struct pm_link {
	int src, dst;		/* vertices */
	double bw_Bps, lat_s;
};

/* What `perfmodel topo` prints. */
struct pm_topo_info {
	const char *kind;
	int endpoints, switches, links;
	int degree;		/* most links leaving one endpoint */
	int radix;		/* most links leaving one switch (0: none) */
	int diameter;		/* most links on a route between endpoints */
	int min_hops;		/* fewest links between two endpoints */
	double bisection_Bps;	/* one direction across the worst balanced cut; <0: not computed */
	const char *bisection_cut;	/* which cut it is */
	const char *routing;	/* one line: how routes are chosen */
	const char *ring_order;	/* one line: the rank order ring algorithms use */
};

/* One kind of topology: a row of the table in topos.c. */
struct pm_topo_kind {
	const char *name;
	const char *syntax;
	const char *summary;
	int (*build)(struct pm_topo *t, const char *args,
		     const struct pm_link_defaults *ld, struct pm_err *err);
	int (*route)(const struct pm_topo *t, int src, int dst, int *links);
	/* Routes for transfers sent at once (pm_topo_route_set, same
	 * contract); NULL: the kind's own route for each. */
	int (*route_set)(const struct pm_topo *t, int n, const int *src,
			 const int *dst, int *links, int *len);
	void (*ring_order)(const struct pm_topo *t, int *order);
	/* Out-links of vertex v in the order tree builders try neighbours
	 * (NULL: link id order); returns their number. */
	int (*neighbors)(const struct pm_topo *t, int v, int *links);
	void (*describe)(const struct pm_topo *t, struct pm_topo_info *info);
	/* 1: the route c -> p leaves c over the reverse of the link the route
	 * p -> c enters c by, and enters p over the reverse of the one it
	 * leaves p by, for every pair, by construction (pm_topo_mirrored) */
	int mirrored;
	/* 1: routes may turn from down to up and back (BiGraph, routing
	 * tables of file and ASTRA-sim networks), so a router needs a
	 * virtual-channel class per hop to stay deadlock free */
	int turns;
	/* The kind's own shape (t->shape, topo_impl.h), freed with the
	 * network; NULL: plain free. */
	void (*shape_free)(void *shape);
	/* Grids (torus, mesh, ring, ace): the dimensions' sizes (1 past the
	 * last), whether they wrap, and their number; NULL: not a grid. */
	int (*grid)(const struct pm_topo *t, int dims[3], int *wrap);
	/* The network's natural groups, innermost first (hring's default
	 * layers): a machine's GPUs per node and nodes per unit, a grid's
	 * dimensions, a fat tree's arity per level, a BiGraph's endpoints per
	 * switch and switches; their number (at most PM_TOPO_MAX_LAYERS).
	 * NULL: none. */
	int (*layers)(const struct pm_topo *t, int *sizes);
};

const struct pm_topo_kind *const *pm_topo_kinds(int *n);

int pm_topo_parse(const char *spec, const struct pm_link_defaults *ld,
		  struct pm_topo **out, struct pm_err *err);
void pm_topo_free(struct pm_topo *t);

/* Results derived from the network alone that are costly to compute and
 * the same for every algorithm instance that asks (MULTITREE's trees for
 * given options: seconds at 4096 endpoints) are kept with the network
 * under a key and freed with it.  Keeping one does not change the
 * network, so both take it const.  pm_topo_memo returns NULL for an
 * unknown key; pm_topo_memo_keep returns -1 (and frees nothing) when out
 * of memory. */
void *pm_topo_memo(const struct pm_topo *t, const char *key);
int pm_topo_memo_keep(const struct pm_topo *t, const char *key, void *data,
		      void (*free_fn)(void *));

const char *pm_topo_spec(const struct pm_topo *t);
const char *pm_topo_kind_name(const struct pm_topo *t);
const struct pm_topo_kind *pm_topo_kind_of(const struct pm_topo *t);
int pm_topo_endpoints(const struct pm_topo *t);
int pm_topo_vertices(const struct pm_topo *t);
int pm_topo_nlinks(const struct pm_topo *t);
const struct pm_link *pm_topo_link(const struct pm_topo *t, int id);
/* The link topology-blind closed forms see: the lowest bandwidth and the
 * longest latency of the network's links. */
void pm_topo_slowest(const struct pm_topo *t, double *bw_Bps, double *lat_s);
/* The one link a topology-blind closed form sees on this network: where
 * the network sets its own rates (a link unlike the defaults ld: a
 * machine description, a file's bandwidth column, per-dimension rates),
 * its slowest bandwidth and longest latency, which a ring through every
 * dimension meets; returns 1 then.  Else 0 and bw_Bps, lat_s untouched
 * (the defaults, which every link has). */
int pm_topo_closed_link(const struct pm_topo *t, const struct pm_link_defaults *ld,
			double *bw_Bps, double *lat_s);
/* All links, indexed by id (for loops that touch millions of them). */
const struct pm_link *pm_topo_links(const struct pm_topo *t);
/* The latency of a route of h links: the sum of theirs (a table lookup
 * where all links have the same latency). */
double pm_topo_route_lat(const struct pm_topo *t, const int *route, int h);
/* Every link's bandwidth (B/s) where all links have the same, else 0. */
double pm_topo_same_bw(const struct pm_topo *t);
/* Where links differ in bandwidth, every link's (B/s) in one dense
 * array, link id order (read in the evaluators' inner loops); else NULL. */
const double *pm_topo_bws(const struct pm_topo *t);
/* Links leaving vertex v, in a fixed order (*count of them). */
const int *pm_topo_out(const struct pm_topo *t, int v, int *count);
/* Upper bound on the links of any route: size buffers for pm_topo_route. */
int pm_topo_max_hops(const struct pm_topo *t);
/* 1 if one switch joins every endpoint and can reduce and multicast in
 * the network (one NVSwitch node with NVLink SHARP, a machine whose
 * param nvls_busbw is set): nvls runs there, and an all-reduce's bound
 * halves. */
int pm_topo_switch_reduces(const struct pm_topo *t);
/* 1 if the network is two or more nodes, each a switch joining its GPUs
 * that reduces and multicasts (NVSwitch nodes with NVLink SHARP, a machine
 * whose param nvls_busbw is set): nvlstree runs there. */
int pm_topo_nodes_reduce(const struct pm_topo *t);
/* 1 if the network is two or more nodes whose switches reduce and
 * multicast (SHARP, a machine whose param sharp is 1): collnet runs there. */
int pm_topo_net_reduces(const struct pm_topo *t);
int pm_topo_min_hops(const struct pm_topo *t);

/* Write the link ids from endpoint src to endpoint dst; return their
 * number (0 when src == dst). */
int pm_topo_route(const struct pm_topo *t, int src, int dst, int *links);

/* Routes for n transfers sent at once (src[i] -> dst[i], src[i] !=
 * dst[i]): route i's links at links[i * pm_topo_max_hops(t) ..], their
 * number len[i].  A network that can carry any such set with no two
 * transfers on one link, if no endpoint sends or receives more than its
 * links allow, chooses such routes, keeping its own route for a transfer
 * wherever that is free (fat trees, which are rearrangeably non-blocking:
 * topo_fattree.c); every other network gives its own route for each.
 * links NULL: only the answer.  1 if some route is not the network's own
 * (pm_topo_route), 0 if none, -1 out of memory. */
int pm_topo_route_set(const struct pm_topo *t, int n, const int *src,
		      const int *dst, int *links, int *len);

/* 1 if pm_topo_route_set may route transfers sent at once apart from
 * the network's own routes (fat trees), 0 if it always gives those. */
int pm_topo_routes_sets(const struct pm_topo *t);

/* 1 if every route c -> p starts and ends on the reversed end links of
 * the route p -> c (the kind says so, or every pair is checked), else 0:
 * a schedule that runs a transfer backwards over the reversed links of
 * its forward route may then take the network's own route instead. */
int pm_topo_mirrored(const struct pm_topo *t);

/* Out-links of v in the kind's neighbour order (torus and mesh: the
 * highest dimension first, - before +, as Huang et al. 2021 SIII-C tries Y before
 * X); links must hold the vertex's out-degree. */
int pm_topo_neighbors(const struct pm_topo *t, int v, int *links);
/* Most links leaving one vertex. */
int pm_topo_max_degree(const struct pm_topo *t);
/* Fewest links leaving one endpoint. */
int pm_topo_endpoint_degree(const struct pm_topo *t);

/* order[i] = endpoint holding rank i for ring algorithms. */
void pm_topo_ring_order(const struct pm_topo *t, int *order);

void pm_topo_describe(const struct pm_topo *t, struct pm_topo_info *info);

/* Grid shape of torus, mesh and ring (ndims 0 otherwise). */
int pm_topo_grid(const struct pm_topo *t, int dims[3], int *wrap);
/* The grid dimension link belongs to on a ring, torus or mesh (-1 on
 * other kinds); *dateline is 1 for a torus's wrap-around link, where the
 * packet simulator moves a packet to its second virtual-channel class so
 * that dimension-order routing cannot deadlock (Dally & Seitz 1987). */
int pm_topo_link_dim(const struct pm_topo *t, int link, int *dateline);
/* Bandwidth and latency of the links along grid dimension d. */
void pm_topo_dim_link(const struct pm_topo *t, int d, double *bw_Bps,
		      double *lat_s);
/* BiGraph shape: endpoints per switch and switches (0 if not BiGraph). */
int pm_topo_bigraph(const struct pm_topo *t, int *per_switch, int *switches);
/* The network's natural groups, innermost first (the kind's layers: a
 * machine's GPUs per node and nodes per unit of each switch level, with
 * the outermost cut to the network; a grid's dimensions longer than 1;
 * a fat tree's arity per level; a BiGraph's endpoints per switch and
 * switches): their number, 0 where the kind has none.  sizes holds
 * PM_TOPO_MAX_LAYERS. */
#define PM_TOPO_MAX_LAYERS 32
int pm_topo_layers(const struct pm_topo *t, int *sizes);
/* The machine description a machine: network was built from (machine.h);
 * NULL for other kinds. */
struct pm_machine;
const struct pm_machine *pm_topo_machine_desc(const struct pm_topo *t);

#endif
