/* topo_machine.c: machine:NAME[:NODES], a cluster of GPU nodes built from
 * the same machine description `perfmodel hier` reads (data/machines).
 *
 * Level 0 of the description is the node: its count G GPUs sit on one
 * NVSwitch-like crossbar, each joined to it by a link of the rate a GPU
 * achieves in a ring (param ring_busbw; the level's nominal inner_bw when
 * not given).  The node's NICs (param nics, default one per GPU; more
 * than G are grouped G rails) share what they achieve together (param
 * nic_bw x nics; else egress_bw): GPU i uses rail i*nics/G.  With one NIC
 * per GPU the GPU's own link goes to its rail's leaf switch; with fewer,
 * GPUs reach a shared NIC vertex over a link of inner_bw (the host path
 * is not in the description) and the NIC has the rail link.  Level 1
 * units (a scalable unit, a rack) have one leaf switch per rail
 * (rail-optimized) and one spine switch joining the rails; each higher
 * level unit has one switch joining its children's switches.  A leaf's up
 * link carries everything its NICs can send; a unit's up link has the
 * level's egress_bw, or the unit's whole NIC bandwidth when none is given
 * (non-blocking).  flow_bw is not modelled: one link carries all flows.
 * Every link has the --link-lat latency.  Routing is up to the lowest
 * common switch and down, the only path in this tree.
 */
#include "model/machine.h"
#include "model/topo_impl.h"
#include "model/units.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct pm_topo_kind pm_topo_machine;

/* What the network keeps of its build (t->shape, the kind's own). */
struct mnet {
	struct pm_machine m;	/* the description, for models that read more than links (NCCL's, nccl.h) */
	int *parent;		/* parent[v] in the network tree, -1 at the top */
	int node_size;		/* GPUs per node */
	int hier[PM_TOPO_MAX_HIER], nhier;	/* group sizes, innermost first */
};

static void mnet_free(void *shape)
{
	struct mnet *n = shape;
	if (n)
		free(n->parent);
	free(n);
}

static struct mnet *mnet_of(const struct pm_topo *t)
{
	return t->shape;
}

/* The network's shape and vertex numbering while it is built. */
struct shape {
	int G, nics, nodes, nlev;	/* nlev switch levels above the node */
	long long unit[PM_TOPO_MAX_HIER];	/* nodes per unit of switch level k */
	int nunits[PM_TOPO_MAX_HIER];
	int base_nvs, base_nic, base_leaf, base_sw[PM_TOPO_MAX_HIER];
	double nic_bw, inner_bw, egress[PM_TOPO_MAX_HIER];
};

/* "NAME" or "NAME:NODES"; NODES defaults to the whole machine. */
static int split_args(const char *args, char *name, size_t size, long *nodes)
{
	const char *c = strrchr(args, ':');

	*nodes = 0;
	if (c && c[1] && strspn(c + 1, "0123456789") == strlen(c + 1)) {
		if ((size_t)(c - args) >= size || strlen(c + 1) > 9)
			return -1;
		memcpy(name, args, (size_t)(c - args));
		name[c - args] = '\0';
		*nodes = atol(c + 1);
		return *nodes >= 1 ? 0 : -1;
	}
	if (strlen(args) >= size || !*args)
		return -1;
	strcpy(name, args);
	return 0;
}

static int shape_of(struct pm_topo *t, const struct pm_machine *m, long nodes,
		    struct shape *s, struct pm_err *err)
{
	const struct pm_level *node = &m->level[0];
	long long cap = m->capacity / node->count;

	memset(s, 0, sizeof *s);
	if (nodes == 0)
		nodes = cap > (1 << 20) ? (1 << 20) : (long)cap;
	if (nodes > cap && m->nlevels > 1)
		return pm_fail(err, PM_EINPUT,
			       "machine network '%s' asks for %ld nodes (expected at most the %lld the description holds)",
			       t->spec, nodes, cap);
	if ((double)nodes * node->count > PM_TOPO_MAX_VERTICES)
		return pm_fail(err, PM_EINPUT,
			       "network too large: '%s' has %.0f GPUs (expected at most %d endpoints)",
			       t->spec, (double)nodes * node->count, PM_TOPO_MAX_VERTICES);
	if (m->network[0])
		return pm_fail(err, PM_EINPUT,
			       "machine '%s' is not a switched cluster (expected a GPU cluster description; as a network it is --topo %s)",
			       m->name, m->network);
	if (node->inner_bw <= 0 || (nodes > 1 && node->egress_bw <= 0))
		return pm_fail(err, PM_EINPUT,
			       "machine '%s' cannot be built as a network: its level '%s' needs inner_bw and egress_bw (expected the NVLink and NIC bandwidths)",
			       m->name, node->name);
	s->G = (int)node->count;
	s->nics = pm_machine_rails(m);
	s->nodes = (int)nodes;
	s->inner_bw = pm_machine_gpu_bw(m);	/* achieved where the description says */
	s->nic_bw = pm_machine_egress_bw(m) / s->nics;	/* a rail carries its NICs' share */
	/* switch levels up to the first whose unit holds every node */
	long long u = 1;
	for (int k = 1; k < m->nlevels && s->nlev < PM_TOPO_MAX_HIER - 1; k++) {
		u *= m->level[k].count;
		s->unit[++s->nlev] = u < nodes ? u : nodes;
		s->egress[s->nlev] = m->level[k].egress_bw;
		if (u >= nodes)
			break;
	}
	if (s->nlev == 0 || s->unit[s->nlev] < nodes) {	/* one top switch */
		s->unit[++s->nlev] = nodes;
		s->egress[s->nlev] = 0;
	}
	return PM_OK;
}

static void number(struct shape *s, long long *nvert)
{
	int v = s->nodes * s->G;

	s->base_nvs = v;
	v += s->nodes;
	s->base_nic = v;
	if (s->nics < s->G)
		v += s->nodes * s->nics;
	s->base_leaf = v;
	s->nunits[1] = (int)((s->nodes + s->unit[1] - 1) / s->unit[1]);
	v += s->nunits[1] * s->nics;
	for (int k = 1; k <= s->nlev; k++) {
		s->nunits[k] = (int)((s->nodes + s->unit[k] - 1) / s->unit[k]);
		s->base_sw[k] = v;
		v += s->nunits[k];
	}
	*nvert = v;
}

/* Link child -> parent and back, recorded for routing: port 2 of the
 * child is its up link, port 3 the parent's link down to it. */
static void cable(struct pm_topo *t, int child, int parent, double bw,
		  double lat, int side)
{
	int up = pm_topo_add(t, child, parent, bw, lat, -1);
	int down = pm_topo_add(t, parent, child, bw, lat, -1);
	t->port[child * 4 + 2 * side] = up;
	t->port[child * 4 + 2 * side + 1] = down;
	if (side == 1)
		mnet_of(t)->parent[child] = parent;
}

static int rail_of(const struct shape *s, int gpu)
{
	return (int)((long long)(gpu % s->G) * s->nics / s->G);
}

static void add_links(struct pm_topo *t, const struct shape *s, double lat)
{
	for (int g = 0; g < s->nodes * s->G; g++)	/* NVSwitch side */
		cable(t, g, s->base_nvs + g / s->G, s->inner_bw, lat, 0);
	if (s->nodes < 2)
		return;	/* one node: no network */
	for (int g = 0; g < s->nodes * s->G; g++) {
		int n = g / s->G, r = rail_of(s, g);
		int leaf = s->base_leaf + (int)(n / s->unit[1]) * s->nics + r;
		if (s->nics < s->G)
			cable(t, g, s->base_nic + n * s->nics + r, s->inner_bw, lat, 1);
		else
			cable(t, g, leaf, s->nic_bw, lat, 1);
	}
	for (int n = 0; n < s->nodes && s->nics < s->G; n++)
		for (int r = 0; r < s->nics; r++)
			cable(t, s->base_nic + n * s->nics + r,
			      s->base_leaf + (int)(n / s->unit[1]) * s->nics + r,
			      s->nic_bw, lat, 1);
	for (int u = 0; u < s->nunits[1]; u++) {
		long long members = s->nodes - u * s->unit[1];
		members = members < s->unit[1] ? members : s->unit[1];
		for (int r = 0; r < s->nics; r++)
			cable(t, s->base_leaf + u * s->nics + r, s->base_sw[1] + u,
			      (double)members * s->nic_bw, lat, 1);
	}
	for (int k = 1; k < s->nlev; k++)
		for (int u = 0; u < s->nunits[k]; u++) {
			long long members = s->nodes - u * s->unit[k];
			members = members < s->unit[k] ? members : s->unit[k];
			double bw = s->egress[k] > 0 ? s->egress[k]
				: (double)members * s->nics * s->nic_bw;
			cable(t, s->base_sw[k] + u,
			      s->base_sw[k + 1] + (int)(u * s->unit[k] / s->unit[k + 1]),
			      bw, lat, 1);
		}
}

static void record_hierarchy(struct pm_topo *t, const struct shape *s)
{
	struct mnet *n = mnet_of(t);
	long long below = 1;

	n->nhier = 0;
	if (s->G > 1)
		n->hier[n->nhier++] = s->G;
	for (int k = 1; k <= s->nlev; k++) {
		long long g = s->unit[k] / below, left = s->nodes / below;
		if (g > 1 && s->nodes % s->unit[k] == 0) {
			n->hier[n->nhier++] = (int)g;
		} else if (g > 1 && n->nhier < PM_TOPO_MAX_HIER - 1) {
			/* a partial last unit (1000 nodes of 32-node units): the
			 * layer is the largest divisor of the units below that fits
			 * one unit (25), so no level is dropped; it is the last
			 * clean layer, the top takes the rest */
			long long d = g < left ? g : left;
			while (d > 1 && left % d)
				d--;
			if (d > 1)
				n->hier[n->nhier++] = (int)d;
			break;
		}
		below = s->unit[k];
	}
	/* the layers must multiply to P: the top takes what is left */
	long long prod = 1;
	for (int i = 0; i < n->nhier; i++)
		prod *= n->hier[i];
	if (prod < t->n_end && n->nhier < PM_TOPO_MAX_HIER) {
		if ((long long)t->n_end % prod == 0)
			n->hier[n->nhier++] = (int)(t->n_end / prod);
		else
			n->nhier = 0;
	}
}

static int build(struct pm_topo *t, const char *args,
		 const struct pm_link_defaults *ld, struct pm_err *err)
{
	struct pm_machine m;
	struct shape s;
	char name[512];
	long nodes;
	long long nvert;
	int rc;

	if (split_args(args, name, sizeof name, &nodes))
		return pm_fail(err, PM_EINPUT,
			       "invalid topology '%s' (expected machine:NAME or machine:NAME:NODES, NODES a whole number of 1 or more, such as machine:dgx-h100:16)",
			       t->spec);
	if ((rc = pm_machine_load(name, &m, err)))
		return rc;
	if ((rc = shape_of(t, &m, nodes, &s, err)))
		return rc;
	number(&s, &nvert);
	long long links = 2LL * (2 * s.nodes * s.G + s.nodes * s.nics +
				  s.nunits[1] * s.nics + nvert);
	if ((rc = pm_topo_alloc(t, nvert, s.nodes * s.G, links, 4, err)))
		return rc;
	struct mnet *n = calloc(1, sizeof *n);
	if (!(t->shape = n) || !(n->parent = malloc(sizeof(int) * (size_t)nvert)))
		return pm_fail(err, PM_EINTERNAL, "out of memory building '%s'", t->spec);
	n->m = m;
	for (long long v = 0; v < nvert; v++)
		n->parent[v] = -1;
	add_links(t, &s, ld->lat_s);
	int depth = 1 + (s.nics < s.G) + s.nlev;	/* GPU up to the top switch */
	t->max_hops = s.nodes > 1 ? 2 * depth : s.G > 1 ? 2 : 0;
	t->min_hops = s.nodes * s.G > 1 ? 2 : 0;
	n->node_size = s.G;
	t->switch_reduces = s.nodes == 1 && s.G > 1 && m.nccl.nvls_Bps > 0;	/* NVLS in one node */
	t->nodes_reduce = s.nodes > 1 && s.G > 1 && m.nccl.nvls_Bps > 0;	/* ... in each of several */
	t->net_reduces = s.nodes > 1 && m.nccl.collnet;	/* SHARP */
	record_hierarchy(t, &s);
	return PM_OK;
}

const struct pm_machine *pm_topo_machine_desc(const struct pm_topo *t)
{
	return t && t->kind == &pm_topo_machine ? &mnet_of(t)->m : NULL;
}

/* Up from v to the top: the vertices in order; returns their number. */
static int chain(const struct pm_topo *t, int v, int *out)
{
	int n = 0;
	for (; v >= 0 && n < 2 * PM_TOPO_MAX_HIER + 4; v = mnet_of(t)->parent[v])
		out[n++] = v;
	return n;
}

static int route(const struct pm_topo *t, int src, int dst, int *links)
{
	int G = mnet_of(t)->node_size, a[2 * PM_TOPO_MAX_HIER + 4], b[2 * PM_TOPO_MAX_HIER + 4];
	int na, nb, i, j, h = 0;

	if (src / G == dst / G) {	/* through the node's crossbar */
		links[0] = t->port[src * 4];
		links[1] = t->port[dst * 4 + 1];
		return 2;
	}
	na = chain(t, src, a);
	nb = chain(t, dst, b);
	/* the lowest common switch: walk both chains from the top */
	for (i = na - 1, j = nb - 1; i > 0 && j > 0 && a[i - 1] == b[j - 1]; i--, j--)
		;
	for (int k = 0; k < i; k++)
		links[h++] = t->port[a[k] * 4 + 2];
	for (int k = j - 1; k >= 0; k--)
		links[h++] = t->port[b[k] * 4 + 3];
	return h;
}

/* Rail-aware snake: node n's GPUs in order on even nodes, reversed on
 * odd ones, so every hop between nodes joins two GPUs of one rail. */
static void ring_order(const struct pm_topo *t, int *order)
{
	int G = mnet_of(t)->node_size;
	for (int i = 0; i < t->n_end; i++) {
		int n = i / G, k = i % G;
		order[i] = n * G + (n % 2 ? G - 1 - k : k);
	}
}

static void describe(const struct pm_topo *t, struct pm_topo_info *info)
{
	int top = -1;
	double half = 0;
	int nkids = 0;

	info->routing = "up the network tree (GPU, NIC, rail leaf, unit spines) to the lowest common switch and down; GPUs of one node through its crossbar";
	info->ring_order = "rail-aware snake: node GPUs 0..G-1, the next node G-1..0, so node-to-node hops stay on one rail";
	for (int v = t->n_vert - 1; v >= 0 && top < 0; v--)
		if (mnet_of(t)->parent[v] < 0 && v >= t->n_end)
			top = v;
	/* the top switch's children, halved: their up links are the cut */
	for (int v = t->n_end; v < t->n_vert; v++)
		if (mnet_of(t)->parent[v] == top)
			nkids++;
	for (int v = t->n_end, k = 0; v < t->n_vert && k < nkids / 2; v++)
		if (mnet_of(t)->parent[v] == top) {
			half += t->links[t->port[v * 4 + 2]].bw_Bps;
			k++;
		}
	info->bisection_Bps = nkids >= 2 ? half : -1;
	info->bisection_cut = nkids >= 2 ? "half of the top switch's children, their up links"
					: "not computed (one unit under the top switch)";
}

static int layers(const struct pm_topo *t, int *sizes)
{
	const struct mnet *n = mnet_of(t);

	for (int i = 0; i < n->nhier; i++)
		sizes[i] = n->hier[i];
	return n->nhier;
}

const struct pm_topo_kind pm_topo_machine = {
	.name = "machine",
	.syntax = "machine:NAME[:NODES]",
	.summary = "GPU cluster from a machine description: NVSwitch nodes, rail-optimized NICs, fat tree (hier's machines)",
	.build = build,
	.route = route,
	.ring_order = ring_order,
	.describe = describe,
	.mirrored = 1,	/* up to the lowest common switch and down the same cables */
	.shape_free = mnet_free,
	.layers = layers,
};
