/* algo_hring.c: hierarchical ring all-reduce (Ueno & Yokota, Ueno & Yokota 2019
 * §IV-B/C) over a layer list p1 x p2 x ... x ph = P, p1 innermost.
 *
 * Steps: rank r has digits d_i = (r / (p1...p_(i-1))) mod p_i.  Layer by
 * layer outward, the ranks that differ only in d_i run a ring
 * reduce-scatter over the part they hold (p_i - 1 steps); the last layer
 * runs a full ring all-reduce; then all-gathers go back inward.  The flat
 * ring (one layer P) and Rabenseifner (2 x 2 x ... x 2) are its two ends.
 * Cost (Ueno & Yokota 2019 eq. before (1), one link class):
 *        T = sum_i 2(p_i - 1)[s(alpha + delta) + s w(n_i/(p_i s)) beta]
 *            + [s = 1] sum_i (p_i - 1) n_i/p_i gamma,   n_i = n/(p1...p_(i-1))
 *          = 2s alpha (sum p_i - h) + 2 n beta sum (p_i - 1)/(p1...p_i) + ...
 *        On a machine: network (a GPU cluster) a layer's link is its rings'
 *        own bottleneck, as ring's is: a GPU's achieved rate where the
 *        layer stays in a node, else min(GPU rate, a rail's rate / the
 *        GPUs of a node that send to another node over that rail);
 *        --link-bw,
 *        when given, instead.
 * Restrictions: the layers must multiply to P.  Default layers follow the
 * network: a machine network by its levels (GPUs per node, nodes per
 * unit, ...), a torus or mesh by its dimensions, a fat tree K x K x ...,
 * a BiGraph M x N; otherwise one layer (the flat ring).  Ranks sit on
 * endpoints in order, so layer 1 is the innermost group of the network.
 */
#include "model/algo.h"
#include "model/machine.h"
#include "model/ringlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hring_state {
	int layers[PM_MAX_LAYERS];	/* p1 (innermost) .. ph */
	int nlayers;
	double slowest_Bps;		/* machine: the network's slowest link (the closed
					 * forms' default, so --link-bw is told apart) */
};
_Static_assert(sizeof(struct hring_state) <= PM_PRIV_BYTES, "hring_state fits pm_inst.priv");
_Static_assert(PM_MAX_LAYERS >= PM_TOPO_MAX_LAYERS, "a network's layers fit hring's");

static struct hring_state *hr_of(struct pm_inst *in)
{
	return (struct hring_state *)(void *)in->priv.bytes;
}

static const struct hring_state *chr_of(const struct pm_inst *in)
{
	return (const struct hring_state *)(const void *)in->priv.bytes;
}

static void label(struct pm_inst *in)
{
	struct hring_state *own = hr_of(in);
	size_t used = (size_t)snprintf(in->label, sizeof in->label, "hring:");
	for (int i = 0; i < own->nlayers && used < sizeof in->label; i++)
		used += (size_t)snprintf(in->label + used, sizeof in->label - used,
					 "%s%d", i ? "x" : "", own->layers[i]);
	if (own->nlayers == 0)
		snprintf(in->label, sizeof in->label, "hring:1");
}

static int parse_layers(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct hring_state *own = hr_of(in);
	const char *p = arg;
	long long prod = 1;

	own->nlayers = 0;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 2 || v > (1L << 24) || own->nlayers == PM_MAX_LAYERS ||
		    (*end && *end != 'x') || (*end == 'x' && !end[1]))
			return pm_fail(err, PM_EINPUT,
				       "invalid layer list '%s' (expected factors of at least 2 joined by x, such as hring:4x8x4)",
				       arg);
		own->layers[own->nlayers++] = (int)v;
		prod *= v;
		if (prod > (1LL << 30))
			break;
		p = *end ? end + 1 : end;
	}
	if (prod != in->P)
		return pm_fail(err, PM_EINPUT,
			       "layer list '%s' multiplies to %lld (expected the %d endpoints of the network)",
			       arg, prod, in->P);
	return PM_OK;
}

/* Layers the network suggests (its kind's natural groups: a machine's
 * node and units, a grid's dimensions, a fat tree's levels, a BiGraph's
 * switches), else one ring of all. */
static void default_layers(struct pm_inst *in)
{
	struct hring_state *own = hr_of(in);

	own->nlayers = in->topo ? pm_topo_layers(in->topo, own->layers) : 0;
	if (own->nlayers == 0 && in->P > 1)
		own->layers[own->nlayers++] = in->P;
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	int rc = PM_OK;

	if (arg)
		rc = parse_layers(in, arg, err);
	else
		default_layers(in);
	if (rc == PM_OK)
		label(in);
	double lat;
	if (rc == PM_OK && in->topo && pm_topo_machine_desc(in->topo))
		pm_topo_slowest(in->topo, &hr_of(in)->slowest_Bps, &lat);
	return rc;
}

/* On a machine: network, the bandwidth a ring step of layer i gets (its
 * stride: the layers inside it multiplied): the GPU rate, or, where GPUs
 * of a node send to another node, what each gets of its rail
 * (pm_machine_rail_of): the rail's share of the egress divided among the
 * crossing GPUs on it (ranks fill nodes in order, every node alike). */
static double layer_bw(const struct pm_machine *m, int pi, int stride)
{
	int G = (int)m->level[0].count, most = 0, nic = -1, on = 0;
	double gpu = pm_machine_gpu_bw(m);

	for (int r = 0; r < G; r++) {	/* a rail's GPUs are consecutive */
		int d = (r / stride) % pi, succ = r + ((d + 1) % pi - d) * stride;
		int rail = pm_machine_rail_of(m, r);
		if (rail != nic) {
			nic = rail;
			on = 0;
		}
		if (succ / G != r / G && ++on > most)
			most = on;
	}
	return most ? fmin(gpu, pm_machine_egress_bw(m) / pm_machine_rails(m) / most) : gpu;
}

/* The first step of layer i's ring phase (reduce-scatter when rs) in
 * every group of that layer, as logical step `step`: each group holds the
 * part its outer digits chose, len units from lo. */
static void layer_step(const struct pm_inst *in, struct pm_sched *s, int i,
		       int rs, int step, int *members)
{
	const struct hring_state *own = chr_of(in);
	int P = in->P, pi = own->layers[i], stride = 1;
	uint32_t len = (uint32_t)P;

	for (int j = 0; j < i; j++) {
		stride *= own->layers[j];
		len /= (uint32_t)own->layers[j];
	}
	for (int base = 0; base < P; base++) {
		if ((base / stride) % pi != 0)
			continue;
		uint32_t lo = 0, l = (uint32_t)P;
		for (int j = 0, st = 1; j < i; j++) {	/* part held so far */
			l /= (uint32_t)own->layers[j];
			lo += (uint32_t)((base / st) % own->layers[j]) * l;
			st *= own->layers[j];
		}
		for (int m = 0; m < pi; m++)
			members[m] = base + m * stride;
		if (rs)
			pm_ring_rs_step(s, members, pi, lo, len, step, 0, +1, i);
		else
			pm_ring_ag_step(s, members, pi, lo, len, step, 0, +1, i);
	}
}

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	const struct hring_state *own = chr_of(in);
	int P = in->P, h = own->nlayers, step = 0;
	int *members = malloc(sizeof(int) * (size_t)(P > 0 ? P : 1));

	if (!members)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	s->nchunks = (uint32_t)P;
	/* reduce-scatter outward, all-reduce at the top, all-gather inward;
	 * a layer's phase is its first step played pi-1 times */
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < h; k++) {
			int i = pass == 0 ? k : h - 1 - k;
			if (pass == 1 && k == 0)
				s->second_phase = step;
			layer_step(in, s, i, pass == 0, step, members);
			pm_sched_repeat(s, 1, own->layers[i] - 1);
			step += own->layers[i] - 1;
		}
	free(members);
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	const struct hring_state *own = chr_of(in);
	double s = p->pipeline_s, ni = n;
	struct pm_params q = *p;
	const struct pm_machine *m = in->topo ? pm_topo_machine_desc(in->topo) : NULL;
	int stride = 1;

	if (m && p->link_bw_Bps != own->slowest_Bps)
		m = NULL;	/* --link-bw names the rate */
	for (int i = 0; i < own->nlayers; i++) {
		double pi = own->layers[i], steps = 2 * (pi - 1);
		if (m)
			q.link_bw_Bps = layer_bw(m, own->layers[i], stride);
		stride *= own->layers[i];
		c->alpha_s += s * steps * p->alpha_s;
		c->lat_s += s * steps * pm_hop_lat(in, p);
		c->bw_s += s * steps * pm_msg_bw_s(&q, ni / (pi * s));
		c->red_s += s > 1 ? 0 : (pi - 1) * (ni / pi) * p->gamma_spB;
		c->steps += steps;
		c->sent_B += steps * ni / pi;
		ni /= pi;
	}
}

/* stored: per layer, one reduce-scatter and one all-gather step of P */
static double xfers(const struct pm_inst *in)
{
	const struct hring_state *own = chr_of(in);
	return 2.0 * in->P * own->nlayers;
}

const struct pm_algo pm_algo_hring = {
	.phases = PM_PHASES_RS_AG,
	.name = "hring",
	.summary = "hierarchical ring over layers p1 x p2 x ... (Ueno & Yokota)",
	.arg_syntax = "P1xP2x...",
	.arg_help = "layer sizes, innermost first, multiplying to P (default: the network's natural hierarchy)",
	.formula = "sum_i 2(p_i-1)[(a+d) + w(n_i/p_i) b] + sum_i (p_i-1)(n_i/p_i) g, n_i = n/(p_1..p_(i-1))",
	.reference = "Ueno & Yokota, CCGrid 2019 (Ueno & Yokota 2019) SIV-C",
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
