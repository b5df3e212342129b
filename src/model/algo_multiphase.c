/* algo_multiphase.c: the hierarchical multi-phase all-reduce of the
 * L x V x H 3-D torus platform of ACE (Rashidi et al. 2021 §V, "Topology-aware
 * Collective Algorithms"; the algorithm comes from ASTRA-SIM).
 *
 * Steps: dimension 0 (X) is the local, intra-package ring of L NPUs,
 * dimension 1 (Y) the vertical ring of V packages, dimension 2 (Z) the
 * horizontal ring of H.  Four phases, each on every line of its dimension
 * at once:
 *   1. reduce-scatter along X: each NPU ends with 1/L of the message;
 *   2. all-reduce along Y of that 1/L share (reduce-scatter + all-gather);
 *   3. all-reduce along Z of the same share;
 *   4. all-gather along X.
 * Every ring is bidirectional (Rashidi et al. 2021 Table V: "1 bidirectional ring"
 * per dimension): half of the message turns in the + direction, half in
 * the - direction, on different links.  On a 2-D torus the phases are
 * RS X, AR Y, AG X; on a ring it is the bidirectional ring.  Phases run
 * one after the other (lockstep); ACE's overlap of chunks across phases is
 * not modelled.  Ranks on endpoints in order (X fastest).
 *
 * Cost: with n_X = n/2 per direction and (b_d, delta_d) the links of
 * dimension d,
 *   T = 2(L-1)(alpha + delta_X + w(n/2L) / b_X)
 *     + 2(V-1)(alpha + delta_Y + w(n/2LV) / b_Y)
 *     + 2(H-1)(alpha + delta_Z + w(n/2LH) / b_Z)
 *     + [(L-1)/L n + (V-1)/V n/L + (H-1)/H n/L] gamma.
 * Bytes one NPU sends: (L-1)/L n twice (phases 1 and 4) plus 2(V-1)/V n/L
 * and 2(H-1)/H n/L; 2.25 n on 4x4x4 (Rashidi et al. 2021 §VI-A: 3/4 + 2 x 6/16 +
 * 3/4).  Each step uses one link per direction of one dimension, so the
 * contention evaluator should price it exactly as the closed form.  On a
 * dimension of size 2 both directions reach the same neighbour and the
 * network's routing (ties go +) puts both halves on one link, so that
 * dimension's beta term doubles, as bidir-ring's does at P = 2.
 * Restrictions: a torus (wrap-around links make every line a ring).
 */
#include "model/algo.h"
#include "model/ringlib.h"

#include <stdlib.h>

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	int wrap;

	(void)arg;
	(void)err;
	in->ndims = pm_topo_grid(in->topo, in->dims, &wrap);
	in->ports = 2;	/* one link each way along the dimension of the phase */
	return PM_OK;
}

/* The members of line `line` along dimension d, in coordinate order.
 * Lines are numbered over the other two coordinates. */
static void line_members(const int dims[3], int d, int line, int *members)
{
	int a = (d + 1) % 3, b = (d + 2) % 3;
	int c[3];

	c[a] = line % dims[a];
	c[b] = line / dims[a];
	for (int i = 0; i < dims[d]; i++) {
		c[d] = i;
		members[i] = c[0] + dims[0] * (c[1] + dims[1] * c[2]);
	}
}

/* Phase kinds: reduce-scatter, all-reduce, all-gather. */
enum { RS, AR, AG };

static int phase_steps(int kind, int p)
{
	return p < 2 ? 0 : kind == AR ? 2 * (p - 1) : p - 1;
}

/* Step t of a phase on every line of dimension d, both directions, as
 * logical step `step`.  Direction stream k (0: +, 1: -) owns units
 * [k q, (k+1) q); in phases on Y and Z a member works on the share its X
 * coordinate owns after phase 1. */
static void phase_step(struct pm_sched *s, const int dims[3], int d, int kind,
		       uint32_t q, int step, int t, int *members)
{
	int p = dims[d], P = dims[0] * dims[1] * dims[2];

	for (int k = 0; k < 2; k++)
		for (int line = 0; line < P / p; line++) {
			line_members(dims, d, line, members);
			uint32_t share = d == 0 ? q : q / (uint32_t)dims[0];
			uint32_t lo = (uint32_t)k * q +
				(d == 0 ? 0 : (uint32_t)(members[0] % dims[0]) * share);
			int dir = k ? -1 : +1;
			int rs = kind == RS || (kind == AR && t < p - 1);
			int tt = kind == AR && !rs ? t - (p - 1) : t;
			if (rs)
				pm_ring_rs_step(s, members, p, lo, share, step, tt, dir, k);
			else
				pm_ring_ag_step(s, members, p, lo, share, step, tt, dir, k);
		}
}

/* One phase from step step0: its reduce-scatter and all-gather halves
 * each a first step played p-1 times. */
static void add_phase(struct pm_sched *s, const int dims[3], int d, int kind,
		      uint32_t q, int step0, int *members)
{
	int p = dims[d];

	if (p < 2)
		return;
	for (int t = 0; t < phase_steps(kind, p); t += p - 1) {
		phase_step(s, dims, d, kind, q, step0 + t, t, members);
		pm_sched_repeat(s, 1, p - 1);
	}
}

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	int dims[3] = {in->dims[0], in->dims[1], in->dims[2]};
	uint32_t q = (uint32_t)in->P;	/* units per direction */
	int big = dims[0] > dims[1] ? dims[0] : dims[1];
	int *members = malloc(sizeof(int) * (size_t)(big > dims[2] ? big : dims[2]));
	int step = 0;

	if (!members)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	s->nchunks = 2 * q;
	add_phase(s, dims, 0, RS, q, step, members);
	step += phase_steps(RS, dims[0]);
	for (int d = 1; d < 3; d++) {
		add_phase(s, dims, d, AR, q, step, members);
		step += phase_steps(AR, dims[d]);
	}
	s->second_phase = step;
	add_phase(s, dims, 0, AG, q, step, members);
	free(members);
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	const int *dims = in->dims;
	double L = dims[0];

	for (int d = 0; d < 3; d++) {
		double bw, lat, k = dims[d];
		if (dims[d] < 2)
			continue;
		pm_topo_dim_link(in->topo, d, &bw, &lat);
		/* X: phases 1 and 4 of (L-1) steps; Y, Z: 2(k-1) steps */
		double steps = 2 * (k - 1), m = d == 0 ? n / (2 * L) : n / (2 * L * k);
		c->alpha_s += steps * p->alpha_s;
		c->lat_s += steps * lat;
		/* k = 2: the routing's tie rule sends both directions over the
		 * + link, so the two halves queue on one link */
		c->bw_s += steps * pm_wire_bytes(p, m) / bw * (dims[d] == 2 ? 2 : 1);
		c->red_s += (k - 1) * 2 * m * p->gamma_spB;
		c->steps += steps;
		c->sent_B += steps * 2 * m;
	}
}

/* stored: per dimension of size > 1 a reduce-scatter and an all-gather
 * step, both directions, P transfers each */
static double xfers(const struct pm_inst *in)
{
	double t = 0;
	for (int d = 0; d < 3; d++)
		t += in->dims[d] > 1 ? 2.0 * 2 * in->P : 0;
	return t;
}

const struct pm_algo pm_algo_multiphase = {
	.name = "multiphase",
	.summary = "ACE's 3-D torus all-reduce: RS along X, AR along Y, AR along Z, AG along X (bidirectional rings)",
	.flags = PM_ALGO_TORUS | PM_ALGO_NEEDS_TOPO,
	.formula = "sum over d: 2(k_d-1)(a + d_d + w(m_d)/b_d), m_X = n/2L, m_Y = n/2LV, m_Z = n/2LH; + gamma terms",
	.reference = "Rashidi et al. ISCA 2021 (ACE) SV and SVI-A; ASTRA-SIM",
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
