/* multitree.c: MULTITREE all-reduce (Huang et al., ISCA 2021; seed
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
 * builds trees without the search, fabric.c).  On switch networks a
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
#include "model/multitree/mt.h"
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
 * (docs/validation/06-scale.md): up to 512 endpoints anything answers
 * in seconds; beyond, 1 to 3.2 ns per unit of P^2 L (machine:dgx-h100:128
 * 4.4e9 in 4.9 s, fattree:10,3 6e9 in 13 s, switch:1500 6.75e9 in 21 s),
 * so up to P^2 L = 6e9 (about 20 s at worst). */
#define MT_MAX_SWITCHED_P ((int)pm_limit(512))	/* limits.h */
#define MT_MAX_SWITCHED_WORK pm_limit(6e9)

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
	if (pm_mt_construct(m, t, o) ||
	    pm_topo_memo_keep(t, key, m, pm_mt_free_kept)) {
		pm_mt_free_kept(m);
		return NULL;
	}
	pm_mt_drop_scratch(m);
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
	double fw = o->fabric ? pm_mt_fabric_work(in->topo) : 0;
	if (fw > MT_FABRIC_MAX_WORK)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: MULTITREE's fabric construction reads P^2 x (P/64 words x (links out + links in) + links out x links in) of an endpoint = %.2g here (expected at most %.2g)",
			       fw, MT_FABRIC_MAX_WORK);
	double fb = o->fabric ? pm_mt_fabric_refusal(in->topo) : 0;
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
		kids[pm_mt_parent_of(m, m->edge[i].via)]++;
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
