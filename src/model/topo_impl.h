/* topo_impl.h: the representation behind struct pm_topo, shared only by
 * topo.c and the topo_<kind>.c files that build and route it. */
#ifndef PM_TOPO_IMPL_H
#define PM_TOPO_IMPL_H

#include "model/topo.h"

#include <stddef.h>

#define PM_TOPO_MAX_HIER 9

struct pm_memo {
	char key[96];
	void *data;
	void (*free_fn)(void *);
	struct pm_memo *next;
};

struct pm_topo {
	char spec[256];
	const struct pm_topo_kind *kind;
	int n_end, n_vert;	/* endpoints are vertices 0..n_end-1 */
	int n_links;
	size_t cap_links;
	struct pm_link *links;
	int *out_off, *out_idx;	/* CSR of links leaving each vertex */
	int n_ports;		/* structured kinds: port table width */
	int *port;		/* port[v * n_ports + p] = link id or -1 */
	int max_hops, min_hops;
	void *shape;		/* the kind's own description (its file's struct; kind->shape_free) */
	int *next;		/* routing tables: next[d * n_vert + v] = link toward endpoint d */
	double *hop_lat;	/* every link the same latency: hop_lat[h] = h links' (see pm_topo_route_lat) */
	double same_bw;		/* every link's bandwidth where all are equal, else 0 */
	double *bw;		/* else bw[l] = links[l].bw_Bps, dense (pm_topo_bws) */
	struct pm_memo *memo;	/* see pm_topo_memo */
	int switch_reduces;	/* see pm_topo_switch_reduces */
	int nodes_reduce;	/* see pm_topo_nodes_reduce */
	int net_reduces;	/* see pm_topo_net_reduces */
};

/* Reserve room for n_vert vertices, nlinks links and an optional port
 * table (n_ports > 0); checks the size limits first. */
int pm_topo_alloc(struct pm_topo *t, long long n_vert, int n_end,
		  long long nlinks, int n_ports, struct pm_err *err);
/* Append a link; records it in the port table when port >= 0. */
int pm_topo_add(struct pm_topo *t, int src, int dst, double bw, double lat,
		int port);
/* Build the adjacency once all links are in. */
int pm_topo_finish(struct pm_topo *t, struct pm_err *err);

/* Shortest-path routing tables (one breadth-first search per endpoint),
 * for kinds without a routing rule of their own (file:, astrasim:); among
 * equal next hops the link added first (balance = 0), or the one the
 * fewest destinations leave by so far (balance = 1, OpenSM's MinHop);
 * refused above 2^30 search steps.  pm_topo_route_table follows them. */
int pm_topo_route_shortest(struct pm_topo *t, int balance, struct pm_err *err);
int pm_topo_route_table(const struct pm_topo *t, int src, int dst, int *links);

static inline int pm_port_link(const struct pm_topo *t, int v, int p)
{
	return t->port[v * t->n_ports + p];
}

#endif
