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
 * RS X, AR Y, AG X; on a ring it is the bidirectional ring.  Ranks on
 * endpoints in order (X fastest).
 *
 * multiphase:K[,fsm=F], the pipeline ACE runs (Rashidi et al. 2021
 * §IV-E/F): the message is cut into K chunks that flow through the
 * phases, F FSMs per phase (default 1) taking its chunks in order, so
 * chunk c starts phase k at the first step when it has finished phase
 * k-1 and an FSM of phase k is free, that is chunk c-F has finished
 * phase k: start(c,k) = max(end(c,k-1), end(c-F,k)).  ACE's 16 FSMs over
 * four phases are fsm=4.  Every step of the schedule holds the current
 * step of each chunk busy in each phase.  chunk=BYTES instead of K cuts
 * each size into K = ceil(n / BYTES) chunks (Table III: 64 KB), and
 * sram=BYTES splits ACE's SRAM over the phases as §IV-I does; a phase
 * whose partition holds fewer than F chunks runs only that many at once
 * (F_k in the recurrence).  Both make the instance sized: it is made,
 * and its schedule built, for each size (at_size).  With 64 KB chunks
 * 4 MB holds at least 5 chunks in every phase of Table V's platform, more
 * than its 4 FSMs a phase run (docs/model.md).  Phases 1 and 4 both
 * drive the X links, so a step where both are busy puts two messages on
 * every X link, as do F chunks in one phase.  Cost, per step g over the (phase,
 * chunk) pairs busy in it, with m_d the message of dimension d divided by
 * K and a_d of them on each link of d:
 *   T = sum_g [alpha + max_d delta_d + max_d a_d w(m_d) f_d / b_d
 *              + gamma sum_phases 2 m_d (reduce steps)]
 * (f_d = 2 on a dimension of size 2, as below).  The contention evaluator
 * prices the same steps link by link; a test holds the two equal.
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
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mp_state {
	int dims[3], ndims;	/* L x V x H */
	int chunks;		/* pipeline chunks K (at_size: from chunk_B) */
	int fsm;		/* chunks one phase runs at once (its FSMs) */
	int run[4];		/* chunks phase k runs at once: fsm, or fewer
				 * where its SRAM partition holds fewer */
	double chunk_B;		/* chunk= (0: K given) */
	double sram_B;		/* ACE's SRAM (0: not checked) */
};
_Static_assert(sizeof(struct mp_state) <= PM_PRIV_BYTES, "mp_state fits pm_inst.priv");

static struct mp_state *mps_of(struct pm_inst *in)
{
	return (struct mp_state *)(void *)in->priv.bytes;
}

static const struct mp_state *cmps_of(const struct pm_inst *in)
{
	return (const struct mp_state *)(const void *)in->priv.bytes;
}

/* The phases, in order, on the dimensions of size > 1. */
enum { RS, AR, AG };

struct phase {
	int d, kind, len;	/* dimension, kind, steps */
};

static int phase_steps(int kind, int p)
{
	return p < 2 ? 0 : kind == AR ? 2 * (p - 1) : p - 1;
}

static int phases(const int dims[3], struct phase ph[4])
{
	static const int d[4] = {0, 1, 2, 0}, kind[4] = {RS, AR, AR, AG};
	int n = 0;
	for (int i = 0; i < 4; i++)
		if (dims[d[i]] > 1)
			ph[n++] = (struct phase){d[i], kind[i], phase_steps(kind[i], dims[d[i]])};
	return n;
}

/* start[c * np + k]: the step chunk c starts phase k; returns the steps in
 * all.  start(c,k) = max(end(c,k-1), end(c-F_k,k)), F_k = run[k]. */
static int pipeline(const struct phase *ph, int np, int K, const int *run, int *start)
{
	int total = 0;
	for (int c = 0; c < K; c++)
		for (int k = 0; k < np; k++) {
			int F = run[k];
			int a = k > 0 ? start[c * np + k - 1] + ph[k - 1].len : 0;
			int b = c >= F ? start[(c - F) * np + k] + ph[k].len : 0;
			start[c * np + k] = a > b ? a : b;
			if (start[c * np + k] + ph[k].len > total)
				total = start[c * np + k] + ph[k].len;
		}
	return total;
}

/* The chunks in phase k at step g are [*first, returned): a phase takes
 * its chunks in order and every chunk spends ph[k].len steps in it, so
 * start and end grow with c and the finished ones are a prefix; *first
 * only moves forward as g grows.  At most F of them. */
static int busy_chunks(const struct phase *ph, int np, int K, const int *start,
		       int k, int g, int *first)
{
	int c;
	while (*first < K && start[*first * np + k] + ph[k].len <= g)
		(*first)++;
	for (c = *first; c < K && start[c * np + k] <= g; c++)
		;
	return c;
}

#define MP_SYNTAX "K or chunk=BYTES, then ,fsm=F and ,sram=BYTES"
#define MP_MAX_CHUNKS 65536

/* "K|chunk=BYTES[,fsm=F][,sram=BYTES]". */
static int parse_arg(const char *arg, long *k, double *chunk, long *f, double *sram,
		     struct pm_err *err)
{
	char buf[64], *save, *o;

	if (!arg)
		return PM_OK;
	if (strlen(arg) >= sizeof buf)
		return pm_fail(err, PM_EINPUT, "invalid multiphase argument '%s' (expected %s)", arg, MP_SYNTAX);
	strcpy(buf, arg);
	for (int i = 0; (o = strtok_r(i ? NULL : buf, ",", &save)); i++) {
		if (i == 0 && strncmp(o, "chunk=", 6) == 0) {
			if (pm_parse_size(o + 6, chunk, err))
				return PM_EINPUT;
			if (!(*chunk >= 1))
				return pm_fail(err, PM_EINPUT, "invalid multiphase chunk size '%s' (expected at least one byte, such as chunk=64K)", o + 6);
		} else if (i == 0) {
			if (pm_parse_int(o, 1, 4096, "chunk count", k, err))
				return PM_EINPUT;
		} else if (strncmp(o, "fsm=", 4) == 0) {
			if (pm_parse_int(o + 4, 1, 4096, "FSMs per phase", f, err))
				return PM_EINPUT;
		} else if (strncmp(o, "sram=", 5) == 0) {
			if (pm_parse_size(o + 5, sram, err))
				return PM_EINPUT;
		} else
			return pm_fail(err, PM_EINPUT, "invalid multiphase option '%s' in '%s' (expected %s)", o, arg, MP_SYNTAX);
	}
	return PM_OK;
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct mp_state *own = mps_of(in);
	int wrap;
	long k = 1, f = 1;
	double sram = 0, chunk = 0;

	own->ndims = pm_topo_grid(in->topo, own->dims, &wrap);
	in->ports = 2;	/* one link each way along the dimension of the phase */
	if (parse_arg(arg, &k, &chunk, &f, &sram, err))
		return PM_EINPUT;
	if (2.0 * in->P * (double)k > 2147483648.0)
		return pm_fail(err, PM_EINPUT,
			       "multiphase:%ld on %d endpoints cuts the message into %.0f units (expected at most 2^31: fewer chunks)",
			       k, in->P, 2.0 * in->P * (double)k);
	own->chunks = (int)k;
	own->fsm = (int)f;
	for (int i = 0; i < 4; i++)
		own->run[i] = (int)f;
	own->chunk_B = chunk;
	own->sram_B = sram;
	/* the chunk count or the chunks in flight depend on the size */
	in->sized = chunk > 0 || sram > 0;
	char ks[40], fs[32] = "", ss[48] = "", z[32];
	if (chunk > 0) {
		pm_fmt_size(chunk, z, sizeof z);
		snprintf(ks, sizeof ks, "chunk=%s", z);
	} else
		snprintf(ks, sizeof ks, "%ld", k);
	if ((k > 1 || chunk > 0) && f > 1)
		snprintf(fs, sizeof fs, ",fsm=%ld", f);
	if (sram > 0) {
		pm_fmt_size(sram, z, sizeof z);
		snprintf(ss, sizeof ss, ",sram=%s", z);
	}
	if (k > 1 || chunk > 0 || sram > 0)
		snprintf(in->label, sizeof in->label, "multiphase:%s%s%s", ks, fs, ss);
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

/* Step t of a phase on every line of dimension d, both directions, as
 * logical step `step`.  Direction stream k (0: +, 1: -) owns units
 * [k q, (k+1) q); in phases on Y and Z a member works on the share its X
 * coordinate owns after phase 1. */
static void phase_step(struct pm_sched *s, const int dims[3], int d, int kind,
		       uint32_t q, uint32_t base, int step, int t, int *members)
{
	int p = dims[d], P = dims[0] * dims[1] * dims[2];

	for (int k = 0; k < 2; k++)
		for (int line = 0; line < P / p; line++) {
			line_members(dims, d, line, members);
			uint32_t share = d == 0 ? q : q / (uint32_t)dims[0];
			uint32_t lo = base + (uint32_t)k * q +
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
		phase_step(s, dims, d, kind, q, 0, step0 + t, t, members);
		pm_sched_repeat(s, 1, p - 1);
	}
}

/* multiphase:K: step by step, the current step of every busy phase, each
 * on its chunk's units [c 2q, (c+1) 2q). */
static int build_pipelined(const struct pm_inst *in, struct pm_sched *s, int *members,
			   struct pm_err *err)
{
	const struct mp_state *own = cmps_of(in);
	struct phase ph[4];
	int np = phases(own->dims, ph), K = own->chunks;
	int *start = malloc(sizeof(int) * (size_t)(K * np + 1));
	uint32_t q = (uint32_t)in->P;

	if (!start)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	s->nchunks = 2 * q * (uint32_t)K;
	int total = pipeline(ph, np, K, own->run, start), first[4] = {0, 0, 0, 0};
	for (int g = 0; g < total; g++)
		for (int k = 0; k < np; k++) {
			int end = busy_chunks(ph, np, K, start, k, g, &first[k]);
			for (int c = first[k]; c < end; c++)
				phase_step(s, own->dims, ph[k].d, ph[k].kind, q,
					   (uint32_t)c * 2 * q, g, g - start[c * np + k], members);
		}
	s->second_phase = start[np - 1];	/* chunk 0's all-gather */
	free(start);
	return PM_OK;
}

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	const struct mp_state *own = cmps_of(in);
	int dims[3] = {own->dims[0], own->dims[1], own->dims[2]};
	uint32_t q = (uint32_t)in->P;	/* units per direction */
	int big = dims[0] > dims[1] ? dims[0] : dims[1];
	int *members = malloc(sizeof(int) * (size_t)(big > dims[2] ? big : dims[2]));
	int step = 0;

	if (!members)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	if (own->chunks > 1) {
		int rc = build_pipelined(in, s, members, err);
		free(members);
		return rc;
	}
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

/* multiphase:K, step by step as the header states. */
static void closed_pipelined(const struct pm_inst *in, double n,
			     const struct pm_params *p, struct pm_cost *c)
{
	const struct mp_state *own = cmps_of(in);
	struct phase ph[4];
	int np = phases(own->dims, ph), K = own->chunks, first[4] = {0, 0, 0, 0};
	int *start = malloc(sizeof(int) * (size_t)(K * np + 1));
	double bw[3], lat[3], m[3], L = own->dims[0];

	if (!start)
		return;	/* leaves the cost zero; resolve has succeeded already */
	for (int d = 0; d < 3; d++) {
		pm_topo_dim_link(in->topo, d, &bw[d], &lat[d]);
		m[d] = (d == 0 ? n / (2 * L) : n / (2 * L * own->dims[d])) / K;
		if (own->dims[d] > 1)	/* bytes sent: as one chunk, unchanged by K */
			c->sent_B += 2 * (own->dims[d] - 1) * 2 * m[d] * K;
	}
	int total = pipeline(ph, np, K, own->run, start);
	for (int g = 0; g < total; g++) {
		int on[3] = {0, 0, 0};
		double red = 0, dl = 0, load = 0;
		for (int k = 0; k < np; k++) {
			int end = busy_chunks(ph, np, K, start, k, g, &first[k]);
			for (int ch = first[k]; ch < end; ch++) {
				int d = ph[k].d, t = g - start[ch * np + k];
				on[d]++;
				if (ph[k].kind == RS || (ph[k].kind == AR && t < own->dims[d] - 1))
					red += 2 * m[d];	/* both directions reduced */
			}
		}
		for (int d = 0; d < 3; d++) {
			if (!on[d])
				continue;
			double tl = on[d] * pm_wire_bytes(p, m[d]) / bw[d] * (own->dims[d] == 2 ? 2 : 1);
			dl = lat[d] > dl ? lat[d] : dl;
			load = tl > load ? tl : load;
		}
		c->alpha_s += p->alpha_s;
		c->lat_s += dl;
		c->bw_s += load;
		c->red_s += red * p->gamma_spB;
	}
	c->steps = total;
	free(start);
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	const struct mp_state *own = cmps_of(in);
	const int *dims = own->dims;
	double L = dims[0];

	if (own->chunks > 1) {
		closed_pipelined(in, n, p, c);
		return;
	}

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

/* sram=S: how many chunks ACE's SRAM lets each phase run at once.
 * Rashidi et al. 2021 §IV-I partition it in proportion to the phase's
 * link bandwidth times the size a chunk enters the phase with, a terminal
 * partition as large as the last; a chunk of c = n/K bytes is c in X-RS,
 * c/L in Y-AR and Z-AR, enters X-AG at c/L and grows to c there.  Phase
 * k holds floor(partition_k / size held) chunks and runs at most that
 * many of its F at once: the pipeline slows.  A partition that holds no
 * chunk cannot run this size. */
static int sram_limits(struct pm_inst *in, double n, struct pm_err *err)
{
	static const char *const name[3][3] = {{"X-RS", "X-AR", "X-AG"},
					       {"Y-RS", "Y-AR", "Y-AG"},
					       {"Z-RS", "Z-AR", "Z-AG"}};
	struct mp_state *own = mps_of(in);
	struct phase ph[4];
	int np = phases(own->dims, ph);
	double c = n / own->chunks, L = own->dims[0], w[5], sum = 0;

	for (int k = 0; k < 4; k++)
		own->run[k] = own->fsm;
	if (own->sram_B <= 0 || np == 0)
		return PM_OK;
	for (int k = 0; k < np; k++) {
		double bw, lat;
		pm_topo_dim_link(in->topo, ph[k].d, &bw, &lat);
		w[k] = bw * (ph[k].kind == RS ? c : c / L);
		sum += w[k];
	}
	sum += w[np - 1];	/* the terminal partition */
	for (int k = 0; k < np; k++) {
		double part = own->sram_B * w[k] / sum;
		double held = ph[k].kind == AR ? c / L : c;
		double cap = floor(part / held);
		if (cap < own->run[k])
			own->run[k] = (int)cap;
		if (cap < 1) {
			char s[32], p[32], h[32], z[32];
			pm_fmt_size(n, z, sizeof z);
			pm_fmt_size(own->sram_B, s, sizeof s);
			pm_fmt_size(part, p, sizeof p);
			pm_fmt_size(held, h, sizeof h);
			return pm_fail(err, PM_ENOTAPPLICABLE,
				       "not applicable to %s: the SRAM of %s (split by link bandwidth x chunk size, Rashidi et al. 2021 SIV-I) gives %s a partition of %s, less than one chunk of %s (expected more or smaller chunks, or a larger sram=)",
				       z, s, name[ph[k].d][ph[k].kind], p, h);
		}
	}
	return PM_OK;
}

/* A sized instance made for n bytes: chunk=C cuts n into K = ceil(n/C)
 * equal chunks of at most C bytes (Table III's 64 KB), then the SRAM
 * bounds the chunks each phase runs. */
static int at_size(struct pm_inst *in, double n, struct pm_err *err)
{
	struct mp_state *own = mps_of(in);

	if (own->chunk_B > 0) {
		double k = ceil(n / own->chunk_B);
		k = k < 1 ? 1 : k;
		if (k > MP_MAX_CHUNKS || 2.0 * in->P * k > 2147483648.0) {
			char z[32], ch[32];
			pm_fmt_size(n, z, sizeof z);
			pm_fmt_size(own->chunk_B, ch, sizeof ch);
			return pm_fail(err, PM_ENOTAPPLICABLE,
				       "not applicable to %s: chunk=%s cuts it into %.0f chunks (expected at most %d on %d endpoints: a larger chunk=)",
				       z, ch, k, 2.0 * in->P * MP_MAX_CHUNKS > 2147483648.0 ?
				       (int)(1073741824.0 / in->P) : MP_MAX_CHUNKS, in->P);
		}
		own->chunks = (int)k;
	}
	return sram_limits(in, n, err);
}

/* stored: per dimension of size > 1 a reduce-scatter and an all-gather
 * step, both directions, P transfers each */
static double xfers(const struct pm_inst *in)
{
	const struct mp_state *own = cmps_of(in);
	struct phase ph[4];
	int np = phases(own->dims, ph);
	double t = 0;

	/* K = 1: one stored step per ring half (two for an all-reduce);
	 * K > 1: every step stored; both directions, P transfers each */
	for (int k = 0; k < np; k++)
		t += 2.0 * in->P * (own->chunks > 1 ? (double)ph[k].len * own->chunks
						  : ph[k].kind == AR ? 2 : 1);
	return t;
}

const struct pm_algo pm_algo_multiphase = {
	.name = "multiphase",
	.arg_syntax = "K|chunk=BYTES[,fsm=F][,sram=BYTES]",
	.arg_help = "K: chunks pipelined through the phases (default 1: the phases one after the other); chunk=BYTES instead: as many chunks as the size needs, ceil(n / BYTES) (Table III: 64K); fsm=F: chunks one phase runs at once, its FSMs (default 1; ACE's 16 FSMs over 4 phases: fsm=4); sram=BYTES: ACE's SRAM (Table III: 4M), split over the phases by link bandwidth x chunk size: a phase whose partition holds fewer than F chunks runs fewer at once (default: not limited). ACE as Rashidi et al. configure it: multiphase:chunk=64K,fsm=4,sram=4M",
	.summary = "ACE's 3-D torus all-reduce: RS along X, AR along Y, AR along Z, AG along X (bidirectional rings)",
	.flags = PM_ALGO_TORUS | PM_ALGO_NEEDS_TOPO,
	.formula = "K = 1: sum over d: 2(k_d-1)(a + d_d + w(m_d)/b_d), m_X = n/2L, m_Y = n/2LV, m_Z = n/2LH; + gamma terms; K > 1: sum over pipeline steps of a + max d_d + max a_d w(m_d/K)/b_d",
	.reference = "Rashidi et al. ISCA 2021 (ACE) SV and SVI-A; ASTRA-SIM",
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
	.at_size = at_size,
};
