/* test_algos.c: every registered algorithm.
 *
 * Three kinds of evidence, none of them a copy of the code under test:
 *  - closed forms at non-round inputs against numbers worked out by hand
 *    (the arithmetic is in each comment) and against the MPICH cost
 *    formulas of Thakur, Rabenseifner & Gropp 2005;
 *  - identities between independent computations: every schedule replayed
 *    by the all-reduce checker, and on full:P (one link per pair) the
 *    contention evaluator equal to the closed form;
 *  - the facts the seeds state (25% link use, 2N(N-1) vs N^2-1, 15/8 steps).
 */
#include "model/limits.h"
#include "helpers.h"
#include "model/eval.h"

/* alpha 2.385 us, delta 0.31 us, 100 Gb/s = 12.5 GB/s links
 * (beta = 0.08 ns/B), gamma 0.0731 ns/B, n = 3,000,000 B.  Handy
 * pieces: alpha + delta = 2.695 us; n beta = 240 us; n gamma = 219.3 us. */
#define ALPHA 2.385e-6
#define DELTA 0.31e-6
#define BW 12.5e9
#define GAMMA 0.0731e-9
#define NB 3e6
/* the size a sized instance (the pipelines' default chunk count) is made
 * for in the loops over every algorithm: 4 MiB, K = 8 chunks of 512 KiB */
#define SIZED_AT 4194304.0

static double closed_time(const char *algo, const char *topo)
{
	struct pm_topo *t = topo_with(topo, BW, DELTA);
	struct pm_params p = plain_params(ALPHA, DELTA, BW, GAMMA);
	struct pm_inst in;
	struct pm_cost c;

	resolve_or_die(algo, t, 0, &in);
	pm_algo_closed(&in, NB, &p, &c);
	assert_rel(c.time_s, c.alpha_s + c.lat_s + c.bw_s + c.red_s, 1e-12);
	pm_topo_free(t);
	return c.time_s;
}

/* ring, P = 6: 10 steps x 2.695 = 26.95; 10 x (n/6 = 500,000 B) beta =
 * 10 x 40 = 400; 5 x 500,000 x gamma = 182.75.  Total 609.70 us. */
Test(closed, ring)
{
	assert_rel(closed_time("ring", "full:6"), 609.70e-6, 1e-9);
}

/* bidir-ring, P = 6: 10 x (2.695 + (n/12 = 250,000 B) x beta = 20)
 * = 226.95; reduction as the ring 182.75.  Total 409.70 us. */
Test(closed, bidir_ring)
{
	assert_rel(closed_time("bidir-ring", "full:6"), 409.70e-6, 1e-9);
}

/* Rabenseifner, P = 8: 6 x 2.695 = 16.17; 2 (n/2 + n/4 + n/8) beta =
 * 2 x 2,625,000 x 0.08 ns = 420; 7/8 n gamma = 191.8875.  628.0575 us.
 * MPICH (Thakur et al. 2005): 2 lg p alpha + 2 (p-1)/p n beta
 * + (p-1)/p n gamma with alpha -> alpha + delta gives the same. */
Test(closed, rabenseifner_pow2)
{
	double thakur = 2 * 3 * (ALPHA + DELTA) + 2 * 7.0 / 8 * NB / BW + 7.0 / 8 * NB * GAMMA;
	assert_rel(closed_time("rabenseifner", "full:8"), 628.0575e-6, 1e-9);
	assert_rel(closed_time("rabenseifner", "full:8"), thakur, 1e-12);
}

/* Rabenseifner, P = 6 (p' = 4, rem = 2): 4 + 2 = 6 steps x 2.695 =
 * 16.17; 2 (n/2 + n/4) beta + 2 n beta = 360 + 480 = 840; (3/4 n + n)
 * gamma = 383.775.  Total 1239.945 us. */
Test(closed, rabenseifner_fold)
{
	assert_rel(closed_time("rabenseifner", "full:6"), 1239.945e-6, 1e-9);
}

/* Recursive doubling, P = 8: 3 x (2.695 + 240 + 219.3) = 1385.985 us,
 * which is Thakur's lg p (alpha + n beta + n gamma). */
Test(closed, recdoubling)
{
	assert_rel(closed_time("recdoubling", "full:8"), 1385.985e-6, 1e-9);
	/* P = 6: (2 + 2) x (2.695 + 240) + 3 x 219.3 = 970.78 + 657.9 */
	assert_rel(closed_time("recdoubling", "full:6"), 1628.68e-6, 1e-9);
}

/* Binomial, P = 6: ceil(lg 6) = 3; 6 x (2.695 + 240) + 3 x 219.3 =
 * 1456.17 + 657.9 = 2114.07 us; Shi et al. (MG-WFBP) Table 2 "binary tree":
 * a = 2 alpha log N, b = (2 beta + gamma) log N with log N = 3. */
Test(closed, binomial)
{
	double table2 = 2 * (ALPHA + DELTA) * 3 + (2 / BW + GAMMA) * 3 * NB;
	assert_rel(closed_time("binomial", "full:6"), 2114.07e-6, 1e-9);
	assert_rel(closed_time("binomial", "full:6"), table2, 1e-12);
}

/* hring:2x3, P = 6: layer 1 (p = 2): 2 x (2.695 + n/2 beta = 120) =
 * 245.39, reduction n/2 gamma = 109.65; layer 2 (p = 3, n2 = n/2):
 * 4 x (2.695 + n2/3 beta = 40) = 170.78, reduction 2 x n2/3 gamma =
 * 73.1.  Total 598.92 us.  Seed 001's form: 2 alpha (sum p_i - h) =
 * 2 x 2.695 x 3; 2 n beta sum (p_i-1)/prod = 480 x (1/2 + 2/6) = 400. */
Test(closed, hring)
{
	double ueno = 2 * (ALPHA + DELTA) * (2 + 3 - 2) + 2 * NB / BW * (0.5 + 2.0 / 6) +
		      (5.0 / 6) * NB * GAMMA;
	assert_rel(closed_time("hring:2x3", "full:6"), 598.92e-6, 1e-9);
	assert_rel(closed_time("hring:2x3", "full:6"), ueno, 1e-12);
	/* the flat ring and Rabenseifner are hring's two ends */
	assert_rel(closed_time("hring:6", "full:6"), closed_time("ring", "full:6"), 1e-12);
	assert_rel(closed_time("hring:2x2x2", "full:8"), closed_time("rabenseifner", "full:8"), 1e-12);
}

/* dbtree on 9 ranks, K = 9: S = 15 reduce steps (the MULTITREE supplement §II), so
 * 30 x (2.695 + n/9 beta = 26.6667) + 15 x n/9 gamma = 880.85 + 365.5
 * = 1246.35 us. */
Test(closed, dbtree)
{
	assert_rel(closed_time("dbtree:9", "full:9"), 1246.35e-6, 1e-6);
}

/* tree (one pipelined binary tree), by hand.  NCCL's tree on 3 ranks is
 * the chain 1 -> 2 -> 0; with K = 4 chunks chunk k leaves rank 1 in step
 * k+1 and reaches rank 0 in step k+2, so S = 5 reduce steps:
 * 10 x (2.695 + (n/4 = 750,000 B) beta = 60) + 5 x 750,000 gamma =
 * 626.95 + 274.125 = 901.075 us.  On 4 ranks the tree is 0 <- 2 <- {1, 3}:
 * rank 2 hears its children on alternate steps (1 in odd, 3 in even
 * steps), and 2 -> 0, without a sibling, may send in every step.  K = 2:
 * step 1: 1->2 c0; 2: 3->2 c0; 3: 1->2 c1, 2->0 c0; 4: 3->2 c1; 5: 2->0 c1.
 * S = 5: 10 x (2.695 + 120) + 5 x 1.5e6 gamma = 1226.95 + 548.25 =
 * 1775.2 us. */
/* chain (pipelined chain 0 <- 1 <- ... <- P-1): chunk j leaves rank P-1
 * in step j+1 and reaches rank 0 in step j+P-1, so S = K + P - 2; K = 4
 * on 6 ranks: S = 8, 16 x (2.695 + (n/4 = 750,000 B) beta = 60) +
 * 8 x 750,000 gamma = 1003.12 + 438.6 = 1441.72 us. */
Test(closed, chain)
{
	assert_rel(closed_time("chain:4", "full:6"), 1441.72e-6, 1e-9);
}

Test(closed, tree)
{
	assert_rel(closed_time("tree:4", "full:3"), 901.075e-6, 1e-9);
	assert_rel(closed_time("tree:2", "full:4"), 1775.2e-6, 1e-9);
}

/* 2d-ring on torus:4x4 (N = 4): 4(N-1) = 12 steps x (2.695 + n/16 beta =
 * 15) = 212.34; reduction 2(N-1) = 6 steps x n/4 gamma = 328.95.
 * Total 541.29 us. */
Test(closed, ring2d)
{
	assert_rel(closed_time("2d-ring", "torus:4x4"), 541.29e-6, 1e-9);
}

/* Ueno & Yokota's pipelining factor s: alpha and delta terms x s, the
 * reduction hidden.  ring, P = 6, s = 2: 2 x 26.95 + 400 = 453.9 us. */
Test(closed, pipelining_factor)
{
	struct pm_topo *t = topo_with("full:6", BW, DELTA);
	struct pm_params p = plain_params(ALPHA, DELTA, BW, GAMMA);
	struct pm_inst in;
	struct pm_cost c;
	p.pipeline_s = 2;
	resolve_or_die("ring", t, 0, &in);
	pm_algo_closed(&in, NB, &p, &c);
	assert_rel(c.time_s, 453.9e-6, 1e-9);
	pm_topo_free(t);
}

/* The networks each algorithm is checked on. */
static const char *const nets[] = {
	"full:1", "full:2", "full:3", "full:5", "full:6", "full:8", "full:9",
	"full:12", "full:16", "torus:4x4", "torus:3x5", "mesh:3x3", "mesh:4x2",
	"ring:7", "fattree:4,2", "bigraph:4x8", "switch:6", "torus:2x2x2",
	"torus:4x3x2", "torus:8",
};
#define NNETS (sizeof nets / sizeof nets[0])

/* Every schedule of every algorithm is an all-reduce: replayed on sets of
 * contributions, every rank ends with every chunk reduced exactly once. */
Test(every_algo, schedules_are_allreduces)
{
	int na;
	const struct pm_algo *const *all = pm_algos(&na);
	for (size_t k = 0; k < NNETS; k++) {
		struct pm_topo *t = topo_or_die(nets[k]);
		for (int a = 0; a < na; a++) {
			struct pm_inst in;
			struct pm_sched s;
			struct pm_err err;
			int rc = pm_algo_resolve(all[a]->name, t, 0, &in, &err);
			if (rc == PM_ENOTAPPLICABLE)
				continue;
			cr_assert_eq(rc, PM_OK, "%s on %s: %s", all[a]->name, nets[k], err.msg);
			cr_assert_eq(made_for(&in, SIZED_AT, &err), PM_OK, "%s", err.msg);
			cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
			cr_assert_eq(s.nx, (size_t)in.algo->xfers(&in), "%s on %s: %zu transfers, estimate %.0f",
				     in.label, nets[k], s.nx, in.P > 1 ? in.algo->xfers(&in) : 0);
			rc = pm_sched_check_allreduce(&s, &err);
			cr_assert_eq(rc, PM_OK, "%s on %s: %s", in.label, nets[k], err.msg);
			pm_sched_release(&s);
		}
		pm_topo_free(t);
	}
}

/* The compact schedule (repeated steps stored once) and its played-out
 * form are the same schedule: the contention evaluator must give exactly
 * the same total, terms, step count, link loads and per-step records on
 * both, on every algorithm and network of the suite (non-round
 * parameters, flow control on so wire bytes differ from payload). */
static void same_cost(const struct pm_cost *a, const struct pm_cost *b,
		      const char *what)
{
	const double *x = (const double *)a, *y = (const double *)b;
	for (size_t i = 0; i < sizeof *a / sizeof(double); i++)
		cr_assert(fabs(x[i] - y[i]) <= 1e-9 * fabs(y[i]) + 1e-18,
			  "%s: field %zu: compact %.17g, played %.17g", what, i, x[i], y[i]);
}

Test(every_algo, compact_equals_played_out)
{
	int na;
	const struct pm_algo *const *all = pm_algos(&na);
	struct pm_params p = plain_params(2.385e-6, 137e-9, 11.3e9, 0.71e-9);

	p.flow = PM_FLOW_PACKET;
	for (size_t k = 0; k < NNETS; k++) {
		struct pm_topo *t = topo_or_die(nets[k]);
		for (int a = 0; a < na; a++) {
			struct pm_inst in;
			struct pm_sched s, e;
			struct pm_err err;
			struct pm_cost cs, ce;
			char what[256];
			if (pm_algo_resolve(all[a]->name, t, 0, &in, &err) != PM_OK || made_for(&in, SIZED_AT, &err))
				continue;
			snprintf(what, sizeof what, "%s on %s", in.label, nets[k]);
			cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
			cr_assert_eq(pm_sched_expand(&s, &e, 1u << 24, &err), PM_OK, "%s", err.msg);
			cr_assert_eq(e.nsteps, s.nsteps, "%s", what);
			cr_assert_float_eq((double)e.nx, s.nx_played, 0, "%s", what);
			struct pm_step_cost *ss = calloc((size_t)s.nsteps + 1, sizeof *ss);
			struct pm_step_cost *se = calloc((size_t)s.nsteps + 1, sizeof *se);
			cr_assert_eq(pm_algo_contention(&in, &s, 7.3e6, &p, &cs, ss, &err), PM_OK);
			cr_assert_eq(pm_algo_contention(&in, &e, 7.3e6, &p, &ce, se, &err), PM_OK);
			same_cost(&cs, &ce, what);
			for (int j = 0; j < s.nsteps; j++) {
				cr_assert_float_eq(ss[j].time_s, se[j].time_s, 1e-15, "%s step %d", what, j);
				cr_assert_float_eq(ss[j].max_link_B, se[j].max_link_B, 1e-6, "%s step %d", what, j);
				cr_assert_eq(ss[j].busy_links, se[j].busy_links, "%s step %d", what, j);
				cr_assert_eq(ss[j].xfers, se[j].xfers, "%s step %d", what, j);
			}
			free(ss);
			free(se);
			pm_sched_release(&e);
			pm_sched_release(&s);
		}
		pm_topo_free(t);
	}
}

/* A schedule's profile (its loads counted once per transfer size) must
 * price every size as the contention evaluator does, field by field and
 * step by step: an identity between two evaluators, on every algorithm
 * and network of the suite plus a two-node DGX H100, with each flow
 * control (packet rounding makes wire bytes non-linear in the size), an
 * injection limit and the baseline endpoint's memory reads. */
static void profile_case(const struct pm_inst *in, const struct pm_sched *s,
			 const struct pm_params *p, const char *what)
{
	static const double sizes[] = {1, 100, 4097, 7.3e6, 3.1e9};
	struct pm_profile *f = pm_algo_profile(in, s, p);
	struct pm_err err;

	cr_assert(f, "%s: no profile", what);
	struct pm_step_cost *sa = calloc((size_t)s->nsteps + 1, sizeof *sa);
	struct pm_step_cost *sb = calloc((size_t)s->nsteps + 1, sizeof *sb);
	for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
		struct pm_cost a, b;
		char at[300];
		snprintf(at, sizeof at, "%s at %.0f B", what, sizes[z]);
		pm_profile_price(f, sizes[z], &a, sa);
		cr_assert_eq(pm_algo_contention(in, s, sizes[z], p, &b, sb, &err), PM_OK, "%s", err.msg);
		const double *x = (const double *)&a, *y = (const double *)&b;
		for (size_t i = 0; i < sizeof a / sizeof(double); i++)
			cr_assert(fabs(x[i] - y[i]) <= 1e-12 * fabs(y[i]) + 1e-300,
				  "%s: field %zu: profile %.17g, evaluator %.17g", at, i, x[i], y[i]);
		for (int j = 0; j < s->nsteps; j++) {
			cr_assert(fabs(sa[j].time_s - sb[j].time_s) <= 1e-12 * sb[j].time_s, "%s step %d", at, j);
			cr_assert(fabs(sa[j].max_link_B - sb[j].max_link_B) <= 1e-12 * sb[j].max_link_B, "%s step %d", at, j);
			cr_assert_eq(sa[j].busy_links, sb[j].busy_links, "%s step %d", at, j);
			cr_assert_eq(sa[j].hops_max, sb[j].hops_max, "%s step %d", at, j);
			cr_assert_eq(sa[j].xfers, sb[j].xfers, "%s step %d", at, j);
		}
	}
	free(sa);
	free(sb);
	pm_profile_free(f);
}

Test(every_algo, profile_prices_as_the_evaluator)
{
	int na;
	const struct pm_algo *const *all = pm_algos(&na);
	struct pm_params ps[4];
	const char *more[] = {"machine:dgx-h100:2"};
	int cases = 0;

	for (int v = 0; v < 4; v++)
		ps[v] = plain_params(2.385e-6, 137e-9, 11.3e9, 0.71e-9);
	ps[1].flow = PM_FLOW_PACKET;
	ps[2].flow = PM_FLOW_MESSAGE;
	ps[3].flow = PM_FLOW_PACKET;
	ps[3].inj_bw_Bps = 7.7e9;
	ps[3].endpoint = PM_END_BASELINE;
	ps[3].mem_bw_Bps = 19e9;
	for (size_t k = 0; k <= NNETS; k++) {
		const char *net = k < NNETS ? nets[k] : more[0];
		struct pm_topo *t = topo_or_die(net);
		for (int a = 0; a < na; a++) {
			struct pm_inst in;
			struct pm_sched s;
			struct pm_err err;
			char what[256];
			if (pm_algo_resolve(all[a]->name, t, 0, &in, &err) != PM_OK || made_for(&in, SIZED_AT, &err) ||
			    pm_algo_schedule(&in, &s, &err) != PM_OK)
				continue;
			for (int v = 0; v < 4; v++) {
				snprintf(what, sizeof what, "%s on %s, parameters %d", in.label, net, v);
				profile_case(&in, &s, &ps[v], what);
				cases++;
			}
			pm_sched_release(&s);
		}
		pm_topo_free(t);
	}
	cr_assert_gt(cases, 800, "only %d algorithm, network and parameter cases ran", cases);
}

/* The profile refuses what it cannot hold: the ACE endpoint. */
Test(every_algo, profile_refuses_ace)
{
	struct pm_topo *t = topo_or_die("torus:4x4");
	struct pm_inst in;
	struct pm_sched s;
	struct pm_profile *f;
	struct pm_err err;
	struct pm_params p = plain_params(0, 0, 1e9, 0);

	p.endpoint = PM_END_ACE;
	p.mem_bw_Bps = 1e9;
	resolve_or_die("ring", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert_eq(pm_profile_build(in.topo, &s, &p, &f, &err), PM_ENOTAPPLICABLE);
	cr_assert_null(f);
	cr_assert_null(pm_algo_profile(&in, &s, &p));
	cr_assert(strstr(err.msg, "ACE"), "%s", err.msg);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* On a GPU cluster the hierarchical ring's closed form takes each
 * layer's own bottleneck, as the contention evaluator sees it: a GPU's
 * NVLink rate inside a node, a rail's rate shared by the GPUs that cross
 * on it.  Hand value, hring:8x16 on machine:dgx-h100:16 at 1 GiB, no
 * flow control: layer 1, 2 x 7 steps of 2^30/8 B at 370 GB/s = 5.0785 ms;
 * layer 2, 2 x 15 steps of 2^30/128 B at one 48 GB/s rail = 5.2429 ms;
 * 10.3214 ms.  And on four clusters (one NIC per GPU, and two or four
 * GPUs to a NIC: aws-p4d, abci) both evaluators' bandwidth terms agree. */
Test(hring, closed_form_takes_each_layers_bottleneck_on_a_cluster)
{
	const char *cases[][2] = {
		{"machine:dgx-h100:16", "hring:8x16"}, {"machine:dgx-h100:16", "hring:4x32"},
		{"machine:dgx-h100:16", "hring:2x4x16"}, {"machine:dgx-h100:16", "hring:16x8"},
		{"machine:aws-p4d:4", "hring:4x8"}, {"machine:aws-p4d:4", "hring:2x16"},
		{"machine:dgx-a100:4", "hring:2x2x8"}, {"machine:abci:16", "hring:2x32"},
		{"machine:abci:16", "hring:4x16"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		struct pm_topo *t = topo_or_die(cases[k][0]);
		struct pm_inst in;
		struct pm_sched s;
		struct pm_cost cc, ce;
		struct pm_err err;
		double slow, lat;
		pm_topo_slowest(t, &slow, &lat);
		struct pm_params p = plain_params(0, 0, slow, 0);
		resolve_or_die(cases[k][1], t, 0, &in);
		pm_algo_closed(&in, 1 << 30, &p, &cc);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(pm_algo_contention(&in, &s, 1 << 30, &p, &ce, NULL, &err), PM_OK, "%s", err.msg);
		cr_assert(fabs(cc.bw_s - ce.bw_s) <= 1e-9 * ce.bw_s, "%s on %s: closed %.9g s, contention %.9g s",
			  cases[k][1], cases[k][0], cc.bw_s, ce.bw_s);
		if (k == 0)
			cr_assert_float_eq(cc.bw_s, 14 * 134217728 / 370e9 + 30 * 8388608 / 48e9, 1e-9);
		pm_sched_release(&s);
		pm_topo_free(t);
	}
}

/* Arguments too: hring layer lists and dbtree chunk counts. */
Test(every_algo, schedules_with_arguments)
{
	const char *cases[][2] = {
		{"hring:2x3x2", "full:12"}, {"hring:3x4", "full:12"}, {"hring:12", "full:12"},
		{"hring:2x2x2x2", "torus:4x4"}, {"dbtree:1", "full:7"}, {"dbtree:2", "full:9"},
		{"dbtree:5", "full:10"}, {"dbtree:17", "full:13"}, {"dbtree:5,shift", "full:10"},
		{"dbtree:shift", "full:8"}, {"chain:3", "full:5"}, {"tree:6", "full:11"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct pm_topo *t = topo_or_die(cases[i][1]);
		struct pm_inst in;
		struct pm_sched s;
		struct pm_err err;
		resolve_or_die(cases[i][0], t, 0, &in);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
		cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s: %s", cases[i][0], err.msg);
		cr_assert_eq(s.nx, (size_t)in.algo->xfers(&in), "%s: transfer estimate", cases[i][0]);
		pm_sched_release(&s);
		pm_topo_free(t);
	}
}

/* On full:P every message crosses exactly one private link, so the
 * per-step contention evaluator must reproduce the closed form exactly:
 * the identity the issue asks for (ring, recursive doubling, Rabenseifner
 * with no hop latency), checked for every algorithm that runs on full:P,
 * with and without link latency. */
Test(every_algo, contention_equals_closed_on_full)
{
	int na, Ps[] = {2, 3, 5, 6, 8, 9, 12, 16};
	const struct pm_algo *const *all = pm_algos(&na);
	double lats[] = {0, DELTA};
	for (size_t k = 0; k < sizeof Ps / sizeof Ps[0]; k++)
		for (int l = 0; l < 2; l++) {
			char spec[32];
			snprintf(spec, sizeof spec, "full:%d", Ps[k]);
			struct pm_topo *t = topo_with(spec, BW, lats[l]);
			struct pm_params p = plain_params(ALPHA, lats[l], BW, GAMMA);
			for (int a = 0; a < na; a++) {
				struct pm_inst in;
				struct pm_sched s;
				struct pm_cost cc, ce;
				struct pm_err err;
				if (pm_algo_resolve(all[a]->name, t, 0, &in, &err) != PM_OK || made_for(&in, NB, &err))
					continue;
				cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
				pm_algo_closed(&in, NB, &p, &cc);
				cr_assert_eq(pm_algo_contention(&in, &s, NB, &p, &ce, NULL, &err), PM_OK);
				cr_assert(rel_close(cc.time_s, ce.time_s, 1e-9),
					  "%s on %s: closed %.9g contention %.9g", in.label, spec,
					  cc.time_s, ce.time_s);
				cr_assert(rel_close(cc.sent_B, ce.sent_B, 1e-9),
					  "%s on %s: sent %.9g vs %.9g", in.label, spec, cc.sent_B, ce.sent_B);
				cr_assert_eq(cc.steps, ce.steps, "%s on %s: steps", in.label, spec);
				pm_sched_release(&s);
			}
			pm_topo_free(t);
		}
}

/* P = 1: nothing to do, nothing to pay, in both evaluators. */
Test(every_algo, zero_cost_at_one_rank)
{
	int na;
	const struct pm_algo *const *all = pm_algos(&na);
	struct pm_topo *t = topo_or_die("full:1");
	struct pm_params p = plain_params(ALPHA, DELTA, BW, GAMMA);
	for (int a = 0; a < na; a++) {
		struct pm_inst in;
		struct pm_sched s;
		struct pm_cost c;
		struct pm_err err;
		if (pm_algo_resolve(all[a]->name, t, 0, &in, &err) != PM_OK)
			continue;
		pm_algo_closed(&in, NB, &p, &c);
		cr_assert_eq(c.time_s, 0, "%s", in.label);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
		cr_assert_eq(s.nsteps, 0, "%s", in.label);
		cr_assert_eq(pm_algo_contention(&in, &s, NB, &p, &c, NULL, &err), PM_OK);
		cr_assert_eq(c.time_s, 0, "%s", in.label);
		pm_sched_release(&s);
	}
	pm_topo_free(t);
}

/* Time grows with size, and never beats the bandwidth lower bound
 * 2(P-1)/P n beta / ports (Patarasuk & Yuan 2009, Chan et al. 2007), where
 * ports is the number of links per endpoint the algorithm drives at once
 * (1 for most, 2 for bidir-ring, 4 for 2d-ring); checked for both
 * evaluators with every other cost set to zero, the tightest case. */
Test(every_algo, monotone_and_above_bandwidth_bound)
{
	int na;
	const struct pm_algo *const *all = pm_algos(&na);
	const char *where[] = {"full:8", "full:6", "torus:4x4", "mesh:4x4", "fattree:4,2",
			       "bigraph:4x8", "full:13"};
	for (size_t k = 0; k < sizeof where / sizeof where[0]; k++) {
		struct pm_topo *t = topo_with(where[k], BW, 0);
		struct pm_params p = plain_params(0, 0, BW, 0);
		struct pm_params q = plain_params(ALPHA, DELTA, BW, GAMMA);
		int P = pm_topo_endpoints(t);
		for (int a = 0; a < na; a++) {
			struct pm_inst in;
			struct pm_sched s;
			struct pm_err err;
			if (pm_algo_resolve(all[a]->name, t, 0, &in, &err) != PM_OK)
				continue;
			cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
			double prev_c = 0, prev_e = 0;
			for (double n = 1024; n <= 64.0 * 1048576; n *= 4) {
				struct pm_cost c, e;
				double bound = 2.0 * (P - 1) / P * n / BW / in.ports;
				pm_algo_closed(&in, n, &p, &c);
				pm_algo_contention(&in, &s, n, &p, &e, NULL, &err);
				cr_assert(c.time_s >= bound * (1 - 1e-12), "%s on %s: closed %g below bound %g",
					  in.label, where[k], c.time_s, bound);
				cr_assert(e.time_s >= bound * (1 - 1e-12), "%s on %s: contention %g below bound %g",
					  in.label, where[k], e.time_s, bound);
				pm_algo_closed(&in, n, &q, &c);
				pm_algo_contention(&in, &s, n, &q, &e, NULL, &err);
				cr_assert(c.time_s > prev_c && e.time_s > prev_e, "%s on %s: not increasing at %g",
					  in.label, where[k], n);
				prev_c = c.time_s;
				prev_e = e.time_s;
			}
			pm_sched_release(&s);
		}
		pm_topo_free(t);
	}
}

/* Seed 000 §I: "only 25% link utilization rate in a 4x4 2D Torus" for
 * ring all-reduce: 16 of the 64 directed links carry data. */
Test(seed_facts, ring_uses_a_quarter_of_a_torus)
{
	struct pm_topo *t = topo_or_die("torus:4x4");
	struct pm_params p;
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c;
	struct pm_err err;

	pm_params_default(&p);
	resolve_or_die("ring", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert_eq(pm_algo_contention(&in, &s, 64.0 * 1048576, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.links_used, 0.25, 1e-12);
	assert_rel(c.util_avg, 0.25, 1e-12);
	pm_sched_release(&s);
	/* 2D-ring keeps every link busy (Huang et al. 2021 Table I: "none" contention,
	 * full utilisation) */
	resolve_or_die("2d-ring", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert_eq(pm_algo_contention(&in, &s, 64.0 * 1048576, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.links_used, 1.0, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Seed 000 §I: on an N x N torus 2D-ring transmits 2N(N-1) data where the
 * flat ring transmits N^2 - 1, counted per node per reduce-scatter (or
 * all-gather) pass in units of n/N^2.  Measured from the schedules: the
 * bytes one node sends over the whole all-reduce are twice that. */
Test(seed_facts, ring2d_moves_2N_N_minus_1)
{
	for (int N = 3; N <= 8; N++) {
		char spec[32];
		snprintf(spec, sizeof spec, "torus:%dx%d", N, N);
		struct pm_topo *t = topo_or_die(spec);
		struct pm_params p;
		double n = 1e6, unit = n / (N * N);
		const char *algos[] = {"2d-ring", "ring"};
		double expect[] = {2.0 * N * (N - 1), N * N - 1.0};
		pm_params_default(&p);
		for (int a = 0; a < 2; a++) {
			struct pm_inst in;
			struct pm_sched s;
			struct pm_cost c;
			struct pm_err err;
			resolve_or_die(algos[a], t, 0, &in);
			cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
			cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK);
			assert_rel(c.sent_B / unit / 2, expect[a], 1e-9);
			pm_sched_release(&s);
		}
		pm_topo_free(t);
	}
}

/* Seed 003 §II/§III: on 9 nodes the pipelined double binary tree (9
 * chunks) needs 15 steps for the reduce phase and 8 without pipelining. */
Test(seed_facts, dbtree_steps_on_nine_nodes)
{
	struct pm_topo *t = topo_or_die("full:9");
	struct pm_inst in;
	struct pm_sched s;
	struct pm_err err;

	cr_assert_eq(pm_dbtree_reduce_steps(9, 9), 15);
	cr_assert_eq(pm_dbtree_reduce_steps(9, 2), 8);
	resolve_or_die("dbtree:9", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert_eq(s.nsteps, 30);
	cr_assert_eq(s.second_phase, 15);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Once the pipeline is full, reduce step t+2 is step t with every chunk
 * two further on (each edge of one parity sends its tree's next chunk), so
 * the schedule stores a run of two steps and plays it: with K = 64 chunks
 * on 16 ranks the 2 x 15 x 64 = 1920 transfers played (every chunk up and
 * down its tree's 15 edges) come from far fewer stored ones, and the
 * steps played are those of the construction (2S). */
Test(seed_facts, dbtree_stores_the_pipeline_once)
{
	struct pm_topo *t = topo_or_die("full:16");
	struct pm_inst in;
	struct pm_sched s;
	struct pm_err err;

	resolve_or_die("dbtree:64", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert(pm_sched_is_compact(&s));
	cr_assert_float_eq(s.nx_played, 1920, 0);
	cr_assert_lt(s.nx, 1920 / 4, "%zu transfers stored", s.nx);
	cr_assert_eq(s.nsteps, 2 * pm_dbtree_reduce_steps(16, 64));
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	/* one binary tree too, though its edges advance unevenly: an edge
	 * into a rank with two children carries a chunk every other step, an
	 * edge into a rank with one child every step, so a pass of the run
	 * moves each edge's chunk by 1 or 2.  Played, as for dbtree: every
	 * chunk up and down 15 edges, 1920. */
	resolve_or_die("tree:64", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert(pm_sched_is_compact(&s));
	cr_assert_float_eq(s.nx_played, 1920, 0);
	cr_assert_lt(s.nx, 1920 / 4, "%zu transfers stored", s.nx);
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	/* the chain likewise: 2 x 15 x 64 = 1920 played, S = 64 + 14 = 78.
	 * Reduce step t carries min(t, 15, 79 - t) transfers: the filling
	 * steps 1..14 (105 transfers) and the draining 65..78 (105) are stored,
	 * the full steps 15..64 are two stored steps (30) played 25 times; the
	 * broadcast mirrors it: 2 x 240 = 480 stored. */
	resolve_or_die("chain:64", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert(pm_sched_is_compact(&s));
	cr_assert_float_eq(s.nx_played, 1920, 0);
	cr_assert_eq(s.nx, 480);
	cr_assert_eq(s.nsteps, 2 * 78);
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* The construction's step count sits within Sanders et al.'s pipelining
 * bound: 2h + K - 3 <= S <= 2h + K - 2 with h = ceil(lg P). */
Test(seed_facts, dbtree_step_bound)
{
	for (int P = 2; P <= 80; P++)
		for (int K = 1; K <= P + 3; K++) {
			int h = pm_ceil_log2(P), S = pm_dbtree_reduce_steps(P, K);
			cr_assert(S >= 2 * h + K - 3 && S <= 2 * h + K - 2, "P=%d K=%d: S=%d h=%d", P, K, S, h);
		}
}

/* The colouring keeps every rank to one send and one receive per step
 * (the point of Sanders et al.'s two-tree schedule), with NCCL's trees,
 * with tree 1 shifted for every P (the MULTITREE artifact's), and for the
 * single pipelined tree and chain. */
Test(seed_facts, dbtree_single_port)
{
	const char *algos[] = {"dbtree", "dbtree:shift", "tree", "chain"};
	for (int a = 0; a < 4; a++)
	for (int P = 2; P <= 40; P++) {
		char spec[32];
		snprintf(spec, sizeof spec, "full:%d", P);
		struct pm_topo *t = topo_or_die(spec);
		struct pm_inst in;
		struct pm_sched s;
		struct pm_err err;
		int *snd = calloc((size_t)P, sizeof(int)), *rcv = calloc((size_t)P, sizeof(int));
		struct pm_sched c;
		resolve_or_die(algos[a], t, 0, &in);
		cr_assert_eq(pm_algo_schedule(&in, &c, &err), PM_OK);
		cr_assert_eq(pm_sched_expand(&c, &s, 1u << 20, &err), PM_OK);
		pm_sched_release(&c);
		for (int k = 0; k < s.nsteps; k++) {
			memset(snd, 0, sizeof(int) * (size_t)P);
			memset(rcv, 0, sizeof(int) * (size_t)P);
			for (size_t i = s.step_off[k]; i < s.step_off[k + 1]; i++) {
				cr_assert_eq(++snd[s.x[i].src], 1, "%s P=%d step %d: rank %d sends twice", algos[a], P, k, s.x[i].src);
				cr_assert_eq(++rcv[s.x[i].dst], 1, "%s P=%d step %d: rank %d receives twice", algos[a], P, k, s.x[i].dst);
			}
		}
		free(snd);
		free(rcv);
		pm_sched_release(&s);
		pm_topo_free(t);
	}
}

/* Tree 1 on 4 ranks, by hand.  Tree 0 is 0 <- 2 <- {1, 3}.  NCCL mirrors
 * it (r -> 3 - r): 3 <- 1 <- {2, 0}, so chunk 1 (tree 1) reaches root 3
 * from rank 1.  Shifted by one rank (the MULTITREE artifact): 1 <- 3 <-
 * {0, 2}, so chunk 1 reaches root 1 from rank 3. */
static int reduces_chunk1(const char *algo, int src, int dst)
{
	struct pm_topo *t = topo_or_die("full:4");
	struct pm_inst in;
	struct pm_sched c, s;
	struct pm_err err;
	int found = 0;

	resolve_or_die(algo, t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &c, &err), PM_OK);
	cr_assert_eq(pm_sched_expand(&c, &s, 1u << 20, &err), PM_OK);
	for (size_t i = 0; i < s.step_off[s.second_phase]; i++)
		found |= s.x[i].lo == 1 && s.x[i].src == src && s.x[i].dst == dst;
	pm_sched_release(&c);
	pm_sched_release(&s);
	pm_topo_free(t);
	return found;
}

Test(seed_facts, dbtree_shift_option)
{
	cr_assert(reduces_chunk1("dbtree:2", 1, 3));
	cr_assert(!reduces_chunk1("dbtree:2", 3, 1));
	cr_assert(reduces_chunk1("dbtree:2,shift", 3, 1));
	cr_assert(!reduces_chunk1("dbtree:2,shift", 1, 3));
}

/* NCCL's trees on 12 ranks (trees.cc illustration): tree 0 is
 * 0 -> 8 -> {4, 10} ..., the mirrored tree 1 is 11 -> 3 -> {1, 7} ...
 * with rank 0 a leaf under 1.  So in the reduce only rank 8 sends to 0 and
 * only rank 3 sends to 11. */
Test(seed_facts, dbtree_is_nccl_shape)
{
	struct pm_topo *t = topo_or_die("full:12");
	struct pm_inst in;
	struct pm_sched s;
	struct pm_err err;
	resolve_or_die("dbtree:2", t, 0, &in);	/* one chunk per tree */
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	for (size_t i = 0; i < s.nx; i++) {
		if (s.x[i].op != PM_REDUCE)
			continue;
		if (s.x[i].dst == 0)
			cr_assert_eq(s.x[i].src, 8);
		if (s.x[i].dst == 11)
			cr_assert_eq(s.x[i].src, 3);
		if (s.x[i].dst == 1 && s.x[i].flow == 1)
			cr_assert(s.x[i].src == 0 || s.x[i].src == 2, "rank %d under 1 in tree 1", s.x[i].src);
	}
	pm_sched_release(&s);
	pm_topo_free(t);
}

static void expect_na(const char *algo, const char *topo, const char *needle)
{
	struct pm_topo *t = topo_or_die(topo);
	struct pm_inst in;
	struct pm_err err;
	cr_assert_eq(pm_algo_resolve(algo, t, 0, &in, &err), PM_ENOTAPPLICABLE, "%s on %s", algo, topo);
	cr_assert(strstr(err.msg, needle), "'%s' lacks '%s'", err.msg, needle);
	pm_topo_free(t);
}

static void expect_bad(const char *algo, const char *topo, const char *needle)
{
	struct pm_topo *t = topo_or_die(topo);
	struct pm_inst in;
	struct pm_err err;
	cr_assert_eq(pm_algo_resolve(algo, t, 0, &in, &err), PM_EINPUT, "%s on %s", algo, topo);
	cr_assert(strstr(err.msg, needle), "'%s' lacks '%s'", err.msg, needle);
	pm_topo_free(t);
}

Test(resolve, restrictions_and_errors)
{
	expect_na("2d-ring", "fattree:4,2", "needs a 2-D torus or mesh (got fattree:4,2)");
	expect_na("2d-ring", "torus:2x2x2", "needs a 2-D torus or mesh");
	expect_bad("rign", "full:4", "did you mean 'ring'");
	expect_bad("hring:3x3", "full:8", "multiplies to 9");
	expect_bad("hring:1x8", "full:8", "factors of at least 2");
	expect_bad("hring:4x", "full:8", "hring:4x");
	expect_bad("dbtree:0", "full:8", "pipeline chunk count '0'");
	expect_bad("ring:x", "full:8", "invalid channel count");
	expect_bad("ring:9", "machine:dgx-h100:2", "expected 1 to 8");
	expect_bad("dbtree:", "full:8", "empty argument");
}

/* Default hierarchies follow the network. */
Test(resolve, hring_default_layers)
{
	struct { const char *topo, *label; } c[] = {
		{"torus:4x8", "hring:4x8"}, {"fattree:4,3", "hring:4x4x4"},
		{"bigraph:4x8", "hring:4x8"}, {"full:6", "hring:6"}, {"torus:1x8", "hring:8"},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct pm_topo *t = topo_or_die(c[i].topo);
		struct pm_inst in;
		resolve_or_die("hring", t, 0, &in);
		cr_assert_str_eq(in.label, c[i].label);
		pm_topo_free(t);
	}
}

/* ---- MULTITREE (Huang et al. 2021 Algorithm 1, the MULTITREE supplement) ---------------------- */

/* Schedule algo on t (which must be an all-reduce) and price 64 MiB under
 * p both ways: where the schedule shares no link the two evaluators are
 * one identity, asserted here; *c, *e and *steps for more checks. */
static void closed_is_contention(const char *algo, const struct pm_topo *t, const char *label,
				 const struct pm_params *p, struct pm_cost *c, struct pm_cost *e,
				 int *steps)
{
	struct pm_inst in;
	struct pm_sched s;
	struct pm_err err;

	resolve_or_die(algo, t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s on %s: %s", algo, label, err.msg);
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s on %s: %s", algo, label, err.msg);
	pm_algo_closed(&in, 64.0 * 1048576, p, c);
	cr_assert_eq(pm_algo_contention(&in, &s, 64.0 * 1048576, p, e, NULL, &err), PM_OK);
	cr_assert(rel_close(c->time_s, e->time_s, 1e-9), "%s on %s: closed %.9g contention %.9g",
		  algo, label, c->time_s, e->time_s);
	*steps = s.nsteps;
	pm_sched_release(&s);
}

static void build_sched(const char *algo, const char *topo, struct pm_topo **t,
			struct pm_inst *in, struct pm_sched *s)
{
	struct pm_err err;
	*t = topo_or_die(topo);
	resolve_or_die(algo, *t, 0, in);
	cr_assert_eq(pm_algo_schedule(in, s, &err), PM_OK, "%s on %s: %s", algo, topo, err.msg);
}

/* Properties checked on the schedule itself, not on the construction's
 * internals: tree T (flow T, chunk T) reaches every node in the
 * all-gather from a node that already holds chunk T; on direct networks
 * every tree edge is one link between the two endpoints; no directed link
 * carries two transfers in a step; the reduce-scatter is the all-gather
 * reversed (edge p -> c at all-gather step S+t-1 is c -> p at step S-t). */
static void check_multitree(const char *topo)
{
	struct pm_topo *t;
	struct pm_inst in;
	struct pm_sched s;
	build_sched("multitree", topo, &t, &in, &s);
	int P = in.P, S = in.steps, direct = pm_topo_vertices(t) == P;
	int L = pm_topo_nlinks(t);
	int *got = malloc(sizeof(int) * (size_t)P * P);	/* step node got chunk T */
	int *use = calloc((size_t)L, sizeof(int));

	cr_assert_eq(s.nsteps, 2 * S, "%s", topo);
	cr_assert_eq(s.second_phase, S);
	for (int i = 0; i < P * P; i++)
		got[i] = -1;
	for (int T = 0; T < P; T++)
		got[T * P + T] = 0;
	for (int k = S; k < 2 * S; k++) {
		memset(use, 0, sizeof(int) * (size_t)L);
		for (size_t i = s.step_off[k]; i < s.step_off[k + 1]; i++) {
			const struct pm_xfer *x = &s.x[i];
			int T = x->flow;
			cr_assert_eq(x->lo, (uint32_t)T);
			cr_assert_eq(x->op, PM_COPY);
			cr_assert(got[T * P + x->src] >= 0 && got[T * P + x->src] <= k - S,
				  "%s: tree %d: %d forwards before it has the chunk", topo, T, x->src);
			cr_assert_eq(got[T * P + x->dst], -1, "%s: tree %d reaches %d twice", topo, T, x->dst);
			got[T * P + x->dst] = k - S + 1;
			uint32_t a = s.route_off[i], b = s.route_off[i + 1];
			if (direct) {
				cr_assert_eq(b - a, 1u, "%s: tree edge of %u links", topo, b - a);
				const struct pm_link *l = pm_topo_link(t, s.route[a]);
				cr_assert(l->src == x->src && l->dst == x->dst);
			}
			for (uint32_t j = a; j < b; j++)
				cr_assert_eq(++use[s.route[j]], 1, "%s step %d: link %d twice", topo, k, s.route[j]);
		}
	}
	for (int i = 0; i < P * P; i++)
		cr_assert(got[i] >= 0, "%s: tree %d misses node %d", topo, i / P, i % P);
	/* reduce-scatter: the same edges reversed, mirrored in time */
	for (int k = 0; k < S; k++) {
		memset(use, 0, sizeof(int) * (size_t)L);
		size_t n_rs = s.step_off[k + 1] - s.step_off[k];
		size_t n_ag = s.step_off[2 * S - k] - s.step_off[2 * S - k - 1];
		cr_assert_eq(n_rs, n_ag, "%s: step %d has %zu transfers, its mirror %zu", topo, k, n_rs, n_ag);
		for (size_t i = s.step_off[k]; i < s.step_off[k + 1]; i++) {
			const struct pm_xfer *x = &s.x[i];
			cr_assert_eq(x->op, PM_REDUCE);
			cr_assert_eq(got[x->flow * P + x->src], S - k, "%s: RS edge out of place", topo);
			for (uint32_t j = s.route_off[i]; j < s.route_off[i + 1]; j++)
				cr_assert_eq(++use[s.route[j]], 1, "%s RS step %d: link twice", topo, k);
		}
	}
	free(got);
	free(use);
	pm_sched_release(&s);
	pm_topo_free(t);
}

Test(multitree, trees_span_and_links_are_exclusive)
{
	const char *nets2[] = {"torus:3x3", "torus:4x4", "torus:5x4", "torus:8x8",
			       "torus:2x4", "torus:3x3x3", "mesh:2x2", "mesh:3x4", "mesh:4x4",
			       "ring:6", "full:5", "fattree:4,2", "fattree:8,2", "fattree:3,3",
			       "bigraph:4x8", "bigraph:4x16", "bigraph:2x6", "switch:5"};
	for (size_t i = 0; i < sizeof nets2 / sizeof nets2[0]; i++)
		check_multitree(nets2[i]);
}

static int mt_steps(const char *algo, const char *topo)
{
	struct pm_topo *t = topo_or_die(topo);
	struct pm_inst in;
	resolve_or_die(algo, t, 0, &in);
	pm_topo_free(t);
	return in.steps;
}

/* Seed 000 Fig. 3: a 2x2 mesh takes 2 steps per phase; the MULTITREE supplement §I: a
 * 3x3 torus takes 3 ("the trees can finish each phase in 3 time steps"). */
Test(multitree, seed_examples)
{
	cr_assert_eq(mt_steps("multitree", "mesh:2x2"), 2);
	cr_assert_eq(mt_steps("multitree", "torus:3x3"), 3);
}

/* Seed 003 Fig. 1: the first link allocated is 0 -> 6 in tree 0 and the
 * second 1 -> 7 in tree 1 (Y neighbours, the - side first). */
Test(multitree, seed003_first_links)
{
	struct pm_topo *t;
	struct pm_inst in;
	struct pm_sched s;
	int seen0 = 0, seen1 = 0;
	build_sched("multitree", "torus:3x3", &t, &in, &s);
	for (size_t i = s.step_off[in.steps]; i < s.step_off[in.steps + 1]; i++) {
		if (s.x[i].flow == 0 && s.x[i].src == 0 && s.x[i].dst == 6)
			seen0 = 1;
		if (s.x[i].flow == 1 && s.x[i].src == 1 && s.x[i].dst == 7)
			seen1 = 1;
	}
	cr_assert(seen0 && seen1);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* The MULTITREE artifact's own trees on a 4x4 torus (its log of a run,
 * tests/data/artifact_multitree_torus4x4.txt: 240 reduce-scatter edges
 * with their timesteps) are ours, edge for edge and step for step: two
 * implementations of Algorithm 1 (Huang et al., ISCA 2021) agree. */
Test(multitree, artifact_trees_torus4x4)
{
	char path[4096], line[256];
	int want[5][16][16], nwant = 0, nours = 0;
	struct pm_topo *t;
	struct pm_inst in;
	struct pm_sched s;

	memset(want, -1, sizeof want);
	snprintf(path, sizeof path, "%s/tests/data/artifact_multitree_torus4x4.txt", getenv("PM_SRCDIR"));
	FILE *f = fopen(path, "r");
	cr_assert(f, "cannot open %s", path);
	while (fgets(line, sizeof line, f)) {
		int k, flow, c, p;
		if (line[0] == '#')
			continue;
		cr_assert_eq(sscanf(line, "%d %d %d %d", &k, &flow, &c, &p), 4, "%s", line);
		cr_assert(k >= 0 && k < 5 && flow >= 0 && flow < 16 && c >= 0 && c < 16, "%s", line);
		want[k][flow][c] = p;
		nwant++;
	}
	fclose(f);
	cr_assert_eq(nwant, 240);	/* 16 trees of 15 edges */
	build_sched("multitree", "torus:4x4", &t, &in, &s);
	cr_assert_eq(s.second_phase, 5);
	for (int k = 0; k < s.second_phase; k++)
		for (size_t i = s.step_off[k]; i < s.step_off[k + 1]; i++, nours++)
			cr_assert_eq(want[k][s.x[i].flow][s.x[i].src], s.x[i].dst,
				     "step %d, tree %d: %d -> %d, the artifact's parent is %d", k,
				     s.x[i].flow, s.x[i].src, s.x[i].dst, want[k][s.x[i].flow][s.x[i].src]);
	cr_assert_eq(nours, 240);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* The MULTITREE artifact's double binary tree on 16 ranks (its log,
 * tests/data/artifact_dtree_16.txt: 15 edges a tree) is ours: it mirrors
 * tree 1 for even P as NCCL does. */
/* The default pipeline takes its chunk count from the size: NCCL's LL
 * chunk (512 KiB buffer / 8 steps, half of it data: 32 KiB), K = n /
 * 32 KiB rounded up to a power of two, at most max(P, 256) up to 4,096
 * ranks and 256 beyond (the chain keeps P there).  By hand on 4,096 GPUs
 * (machine:dgx-h100:512): 1 KiB -> 1; 96 KiB -> 3, rounded to 4; 2 MiB ->
 * 64; 1 GiB -> 32768, capped at 4096.  Past 4,096 ranks one pipeline
 * serves every size: on 4,104 (machine:dgx-h100:513) the chain takes 4104
 * chunks and the trees 256, where the double binary tree's
 * reduce runs at most K + 2 ceil(log2 P) - 2 = 256 + 26 - 2 = 280 steps
 * (Sanders et al.'s bound, which the construction meets or beats) and
 * its all-reduce twice that.  On 8 ranks a 1 GiB broadcast takes 256
 * chunks, not 8: the pipeline reaches 256/262 of the line rate. */
Test(dbtree, default_pipeline_from_the_size)
{
	struct pm_topo *big = topo_or_die("machine:dgx-h100:513"), *at = topo_or_die("machine:dgx-h100:512");
	struct pm_topo *eight = topo_or_die("ring:8");
	struct pm_inst in, m;
	struct pm_sched s;
	struct pm_cost c;
	struct pm_err err;
	struct pm_params p = plain_params(1e-6, 0, 1e9, 0);
	static const struct {
		double n;
		const char *label;
	} want[] = {{1024, "dbtree:1"}, {96 << 10, "dbtree:4"}, {2 << 20, "dbtree:64"}, {1 << 30, "dbtree:4096"}};

	resolve_or_die("dbtree", at, 0, &in);
	cr_assert_str_eq(in.label, "dbtree");
	cr_assert(in.sized);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		cr_assert_eq(pm_algo_at_size(&in, want[i].n, &m, &err), PM_OK);
		cr_assert_str_eq(m.label, want[i].label);
	}
	resolve_or_die("dbtree:64", at, 0, &in);
	cr_assert(!in.sized);
	cr_assert_str_eq(in.label, "dbtree:64");
	resolve_or_die("chain", big, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 1 << 30, &m, &err), PM_OK);
	cr_assert(strncmp(m.label, "chain:4104", 10) == 0, "%s", m.label);
	resolve_or_die("tree", big, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 1 << 30, &m, &err), PM_OK);
	cr_assert_str_eq(m.label, "tree:256");
	resolve_or_die("chain", eight, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 1 << 30, &m, &err), PM_OK);
	cr_assert_str_eq(m.label, "chain:256");
	resolve_or_die("dbtree", big, 0, &in);
	cr_assert(!in.sized);
	cr_assert_eq(pm_algo_at_size(&in, 1 << 30, &m, &err), PM_OK);
	cr_assert_str_eq(m.label, "dbtree:256");
	cr_assert_leq(m.steps, 280);
	cr_assert_eq(pm_algo_schedule(&m, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_contention(&m, &s, 1 << 30, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(c.steps, 2 * m.steps);
	/* every step moves at least one 1 GiB / 256 chunk, and every
	 * transfer leaves its GPU through the GPU's own link, 370 GB/s on
	 * dgx-h100 (its ring_busbw): at least chunk / 400 GB/s a step */
	cr_assert_geq(c.bw_s, c.steps * (1 << 30) / 256.0 / 400e9);
	pm_sched_release(&s);
	pm_topo_free(big);
	pm_topo_free(at);
	pm_topo_free(eight);
}

Test(dbtree, artifact_trees_16)
{
	char path[4096], line[256];
	int want[2][16], seen[2][16] = {{0}}, nwant = 0, nours = 0;
	struct pm_topo *t;
	struct pm_inst in;
	struct pm_sched s;

	memset(want, -1, sizeof want);
	snprintf(path, sizeof path, "%s/tests/data/artifact_dtree_16.txt", getenv("PM_SRCDIR"));
	FILE *f = fopen(path, "r");
	cr_assert(f, "cannot open %s", path);
	while (fgets(line, sizeof line, f)) {
		int tree, c, p;
		if (line[0] == '#')
			continue;
		cr_assert_eq(sscanf(line, "%d %d %d", &tree, &c, &p), 3, "%s", line);
		cr_assert(tree >= 0 && tree < 2 && c >= 0 && c < 16, "%s", line);
		want[tree][c] = p;
		nwant++;
	}
	fclose(f);
	cr_assert_eq(nwant, 30);
	build_sched("dbtree:16", "torus:4x4", &t, &in, &s);
	for (size_t i = 0; i < s.nx; i++) {
		if (s.x[i].op != PM_REDUCE)
			continue;	/* the reduce half: child to parent */
		cr_assert_eq(want[s.x[i].flow][s.x[i].src], s.x[i].dst,
			     "tree %d: %d -> %d, the artifact's parent is %d", s.x[i].flow,
			     s.x[i].src, s.x[i].dst, want[s.x[i].flow][s.x[i].src]);
		if (!seen[s.x[i].flow][s.x[i].src]++)
			nours++;
	}
	cr_assert_eq(nours, 30);	/* and every edge of the artifact's is ours */
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* The step count is never below max(depth bound, ceil((P-1)/ports)): a
 * tree on a direct network cannot be shallower than the root's distance
 * to the farthest node (the diameter bounds the deepest tree), and a
 * node receives at most `ports` chunks per step.  On a switch network
 * one step may cross switches, so only the second bound applies.  Seed
 * 000 §VI-A: on fat tree and BiGraph MULTITREE takes as many steps as
 * RING (P-1 per phase). */
Test(multitree, step_bounds)
{
	struct { const char *topo; int exact; } c[] = {
		{"torus:4x4", -1}, {"torus:8x8", -1}, {"torus:16x16", 64}, {"mesh:4x4", -1},
		{"mesh:8x8", -1}, {"torus:3x3x3", -1}, {"fattree:4,2", 15}, {"fattree:8,2", 63},
		{"bigraph:4x8", 31}, {"bigraph:4x16", 63}, {"full:7", 1},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct pm_topo *t = topo_or_die(c[i].topo);
		struct pm_topo_info info;
		struct pm_inst in;
		pm_topo_describe(t, &info);
		resolve_or_die("multitree", t, 0, &in);
		int depth = info.switches ? 1 : info.diameter;
		int spread = (in.P - 1 + in.ports - 1) / in.ports;
		int lb = depth > spread ? depth : spread;
		cr_assert(in.steps >= lb, "%s: %d steps below bound %d", c[i].topo, in.steps, lb);
		if (c[i].exact > 0)
			cr_assert_eq(in.steps, c[i].exact, "%s: %d steps", c[i].topo, in.steps);
		pm_topo_free(t);
	}
}

/* A switched link k times as fast as the slowest carries k tree edges a
 * step (docs/model.md).  tests/data/fat_link.csv: endpoints 0, 1 on
 * switch a, 2, 3 on switch b, every link 10 GB/s but a-b at 20 GB/s.
 * By hand, all-gather, ports = 1, trees by root: step 1 (stage of 2
 * links) 0->1, 1->0, 2->3, 3->2; step 2 nothing within 2 links, then 4
 * links: 0->2 and 1->3 both over a->b (2 slots), 2->0 and 3->1 over b->a;
 * step 3 each tree lacks one node on its own side: 2->3, 3->2, 0->1, 1->0.
 * 3 steps = P - 1.  tests/data/thin_link.csv (a-b at 10 GB/s): in step 2
 * only trees 0 (0->2) and 2 (2->0) cross; step 3: trees 0 and 2 finish on
 * their far side, trees 1 (1->2) and 3 (3->0) cross; step 4 trees 1 and 3
 * finish: 4 steps. */
Test(multitree, fat_link)
{
	char fat[4096], thin[4096];
	snprintf(fat, sizeof fat, "file:%s/tests/data/fat_link.csv", getenv("PM_SRCDIR"));
	snprintf(thin, sizeof thin, "file:%s/tests/data/thin_link.csv", getenv("PM_SRCDIR"));
	cr_assert_eq(mt_steps("multitree", fat), 3);
	cr_assert_eq(mt_steps("multitree", thin), 4);
}

/* The per-turn breadth-first search of §III-C3 taken literally wastes
 * switch-to-switch links on BiGraph same-layer detours (docs/validation.md). */
Test(multitree, literal_search_is_slower_on_bigraph)
{
	cr_assert_gt(mt_steps("multitree:literal", "bigraph:4x8"), mt_steps("multitree", "bigraph:4x8"));
	cr_assert_eq(mt_steps("multitree:literal", "torus:8x8"), mt_steps("multitree", "torus:8x8"));
}

/* The fabric construction (multitree/fabric.c) on schedules it builds:
 * a valid all-reduce (pm_sched_check_allreduce, the schedule checker),
 * every endpoint sending and receiving at most `ports` transfers a step,
 * and the step counts the port bound allows.  With one port a phase needs
 * at least P - 1 steps (P(P-1) tree edges, at most P a step); fattree:4,2
 * (16 endpoints), fattree:8,2 (64), bigraph:4x8 (32) and switch:5 reach it.  A GPU
 * of machine:dgx-h100:2 has two ports (its NVSwitch link and its NIC):
 * at least ceil(15/2) = 8 steps. */
Test(multitree, fabric_schedules)
{
	struct { const char *topo; int exact, lb; } c[] = {
		{"fattree:4,2", 15, 15}, {"fattree:8,2", 63, 63}, {"bigraph:4x8", 31, 31},
		{"switch:5", 4, 4}, {"machine:dgx-h100:2", -1, 8}, {"fattree:3,3", -1, 26},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct pm_topo *t;
		struct pm_inst in;
		struct pm_sched s;
		struct pm_err err;
		build_sched("multitree:fabric", c[i].topo, &t, &in, &s);
		cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s: %s", c[i].topo, err.msg);
		cr_assert_geq(in.steps, c[i].lb, "%s: %d steps", c[i].topo, in.steps);
		if (c[i].exact > 0)
			cr_assert_eq(in.steps, c[i].exact, "%s: %d steps", c[i].topo, in.steps);
		int *sent = calloc((size_t)in.P, sizeof(int)), *recv = calloc((size_t)in.P, sizeof(int));
		for (int k = 0; k < 2 * in.steps; k++) {
			memset(sent, 0, sizeof(int) * (size_t)in.P);
			memset(recv, 0, sizeof(int) * (size_t)in.P);
			for (size_t j = s.step_off[k]; j < s.step_off[k + 1]; j++) {
				cr_assert_leq(++sent[s.x[j].src], in.ports, "%s step %d", c[i].topo, k);
				cr_assert_leq(++recv[s.x[j].dst], in.ports, "%s step %d", c[i].topo, k);
			}
		}
		free(sent);
		free(recv);
		pm_sched_release(&s);
		pm_topo_free(t);
	}
}

/* By hand, switch:4, one port, every route two links (one distance
 * class): each tree's parent is its lowest-ranked node with a port, the
 * root first, and its child the first endpoint after the parent,
 * cyclically, that the tree lacks and that can receive.  Step 1: 0->1,
 * 1->2, 2->3, 3->0 (trees 0..3 in turn); step 2: tree 0 {0,1}: root 0 ->
 * 2, tree 1: 1 -> 3, tree 2: 2 -> 0, tree 3: 3 -> 1; step 3 likewise 0->3,
 * 1->0, 2->1, 3->2.  Every tree is a star: in the all-gather's step t
 * root T sends chunk T to T + t mod 4. */
Test(multitree, fabric_by_hand)
{
	struct pm_topo *t;
	struct pm_inst in;
	struct pm_sched s;
	build_sched("multitree:fabric", "switch:4", &t, &in, &s);
	cr_assert_eq(in.steps, 3);
	for (int step = 1; step <= 3; step++) {
		int k = in.steps + step - 1, n = 0;
		for (size_t j = s.step_off[k]; j < s.step_off[k + 1]; j++, n++) {
			const struct pm_xfer *x = &s.x[j];
			cr_assert_eq(x->src, x->flow, "step %d: tree %d sent by %d", step, x->flow, x->src);
			cr_assert_eq(x->dst, (x->flow + step) % 4, "step %d: tree %d -> %d", step, x->flow, x->dst);
		}
		cr_assert_eq(n, 4);
	}
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Where the fabric construction loses, by hand: tests/data/three_rails.csv
 * puts 64 endpoints on three switches r0, r1, r2 (vertices 64, 65, 66),
 * each endpoint listing r0 first.  Routing balances ties per destination
 * (OpenSM's MinHop, src/model/topo_file.c): endpoint p takes its
 * destinations in order, skipping itself, over r0, r1, r2 in turn, so
 * the route p -> c crosses rail (c - [c > p]) mod 3.  Every sender below
 * c thus enters c over one rail and every sender above over one other:
 * c's third link in carries nothing, a step brings c at most two tree
 * edges, and a phase, in which c receives from 63 trees, needs at least
 * ceil(63 / 2) = 32 steps.  The searching construction spreads the edges
 * over the three rails: 3 ports, ceil(63 / 3) = 21 steps, and it reaches
 * that bound. */
Test(multitree, fabric_static_routes_three_rails)
{
	char rails[4096];
	snprintf(rails, sizeof rails, "file:%s/tests/data/three_rails.csv", getenv("PM_SRCDIR"));
	struct pm_topo *t;
	struct pm_inst in;
	struct pm_sched s;
	struct pm_err err;
	int links[4];
	build_sched("multitree:fabric", rails, &t, &in, &s);
	for (int p = 0; p < 64; p++)
		for (int c = 0; c < 64; c++)
			if (c != p) {
				cr_assert_eq(pm_topo_route(t, p, c, links), 2);
				cr_assert_eq(pm_topo_link(t, links[0])->dst, 64 + (c - (c > p)) % 3, "%d -> %d", p, c);
			}
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(in.ports, 3);
	cr_assert_geq(in.steps, 32);
	pm_sched_release(&s);
	pm_topo_free(t);
	cr_assert_eq(mt_steps("multitree", rails), 21);
}

/* The same network, priced: the reduce-scatter runs every tree edge
 * backwards over the reversed links of its all-gather route, so its
 * step S - t carries exactly the reversed loads of all-gather step t and
 * the two halves must take the same time but for the reductions (an
 * identity between the halves).  The routes back are not the routes forward reversed here
 * (c -> p crosses rail (p - [p > c]) mod 3), so taking the network's own
 * routes back made the reduce-scatter 171.2 us against the all-gather's
 * 87.4 at 1 MiB (docs/validation/06-scale.md). */
Test(multitree, fabric_halves_price_alike_three_rails)
{
	char rails[4096];
	snprintf(rails, sizeof rails, "file:%s/tests/data/three_rails.csv", getenv("PM_SRCDIR"));
	struct pm_topo *t;
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c;
	struct pm_err err;
	struct pm_params p = plain_params(ALPHA, DELTA, BW, GAMMA);
	build_sched("multitree:fabric", rails, &t, &in, &s);
	struct pm_step_cost *st = calloc((size_t)s.nsteps, sizeof *st);
	cr_assert_eq(pm_algo_contention(&in, &s, 1 << 20, &p, &c, st, &err), PM_OK, "%s", err.msg);
	double half[2] = {0, 0};
	for (int k = 0; k < s.nsteps; k++)
		half[k >= s.second_phase] += st[k].time_s - st[k].red_s;	/* the reductions: one half */
	cr_assert_eq(s.second_phase * 2, s.nsteps);
	cr_assert(rel_close(half[0], half[1], 1e-12), "reduce-scatter %.17g s, all-gather %.17g s", half[0],
		  half[1]);
	free(st);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* On a fat tree the fabric construction's steps are permutations (one
 * port: each endpoint sends and receives at most one tree edge a step),
 * and a K-ary L-tree carries any permutation with no link shared (it is
 * rearrangeably non-blocking, Benes 1965): routed as a set
 * (pm_topo_route_set) no step contends, so the contention evaluator
 * must price the schedule exactly as the closed form, which assumes no
 * contention (an identity between the two evaluators).  With the
 * network's own D-mod-K routes fattree:6,3 took 2.7x its closed form
 * (26,306 against 9,718 us at 64 MiB, docs/validation/06-scale.md);
 * fattree:3,4 (four levels) and fattree:5,2 cover odd K and other depths. */
static void fabric_closed_is_contention(const char *spec)
{
	struct pm_topo *t = topo_with(spec, BW, DELTA);
	struct pm_params p = plain_params(ALPHA, DELTA, BW, GAMMA);
	struct pm_cost cc, ce;
	int steps;
	closed_is_contention("multitree:fabric", t, spec, &p, &cc, &ce, &steps);
	pm_topo_free(t);
}

Test(multitree, fabric_fat_trees_do_not_contend)
{
	const char *specs[] = {"fattree:6,3", "fattree:3,4", "fattree:5,2"};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
		fabric_closed_is_contention(specs[i]);
}

/* Where the schedule takes the network's own routes, the fabric
 * construction counts the links between switches too (multitree/mid.c):
 * no step may put more tree edges on a link than its slots, the link's
 * bandwidth over the slowest link's, rounded down.  Checked from the
 * schedule alone, routing every transfer with the network's routes: on
 * BiGraph (one link between a pair of switches of the two layers: the
 * end links alone put up to 8.5x the searched trees' time on it,
 * docs/validation/06-scale.md) and on ABCI (Ueno & Yokota, CCGrid 2019:
 * two GPUs share an HCA's link, racks at a third of full bisection).
 * With all links equal (BiGraph, tests/data/leaf_spine.csv) no step
 * shares a link, so the contention evaluator must price the schedule
 * exactly as the closed form (an identity between the evaluators). */
static void steps_within_slots(const char *spec)
{
	struct pm_topo *t;
	struct pm_inst in;
	struct pm_sched s;
	build_sched("multitree:fabric", spec, &t, &in, &s);
	int L = pm_topo_nlinks(t), H = pm_topo_max_hops(t), *cnt = calloc((size_t)L, sizeof(int));
	int *links = malloc(sizeof(int) * (size_t)H);
	double slow = 0;
	for (int l = 0; l < L; l++)
		if (slow == 0 || pm_topo_link(t, l)->bw_Bps < slow)
			slow = pm_topo_link(t, l)->bw_Bps;
	for (int k = 0; k < s.nsteps; k++) {
		memset(cnt, 0, sizeof(int) * (size_t)L);
		for (size_t j = s.step_off[k]; j < s.step_off[k + 1]; j++) {
			int n = pm_topo_route(t, s.x[j].src, s.x[j].dst, links);
			for (int i = 0; i < n; i++)
				cnt[links[i]]++;
		}
		for (int l = 0; l < L; l++)
			cr_assert_leq(cnt[l], (int)floor(pm_topo_link(t, l)->bw_Bps / slow * (1 + 1e-9)),
				      "%s step %d: link %d carries %d edges", spec, k, l, cnt[l]);
	}
	free(cnt);
	free(links);
	pm_sched_release(&s);
	pm_topo_free(t);
}

Test(multitree, fabric_counts_links_between_switches)
{
	char leaves[4200];
	snprintf(leaves, sizeof leaves, "file:%s/tests/data/leaf_spine.csv", getenv("PM_SRCDIR"));
	const char *specs[] = {"bigraph:4x8", "bigraph:8x16", "machine:abci:8", "machine:abci:16", leaves};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
		steps_within_slots(specs[i]);
	const char *equal[] = {"bigraph:4x8", "bigraph:8x16", leaves};
	for (size_t i = 0; i < sizeof equal / sizeof equal[0]; i++)
		fabric_closed_is_contention(equal[i]);
}

/* The fabric schedule splits into its two phases like every all-reduce
 * of reduce-scatter + all-gather: each phase alone, replayed by the
 * schedule checker (pm_algo_check), does its collective, unrouted
 * (fattree:4,2, switch:8) and routed by the step router (fattree:6,3). */
Test(multitree, fabric_phases_are_collectives)
{
	const char *specs[] = {"fattree:4,2", "fattree:6,3", "switch:8"};
	enum pm_coll cs[] = {PM_COLL_REDUCESCATTER, PM_COLL_ALLGATHER};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
		for (size_t k = 0; k < 2; k++) {
			struct pm_topo *t = topo_or_die(specs[i]);
			struct pm_inst in;
			struct pm_err err;
			cr_assert_eq(pm_algo_resolve_coll(cs[k], "multitree:fabric", t, 0, &in, &err), PM_OK,
				     "%s: %s", specs[i], err.msg);
			cr_assert_eq(pm_algo_check(&in, &err), PM_OK, "%s: %s", specs[i], err.msg);
			pm_topo_free(t);
		}
}

/* multitree-msg prices MULTITREE's schedule with message flow control,
 * so the command hands multitree's built schedule to it
 * (pm_algo_same_schedule).  The claim checked where it is made: built
 * separately, the two schedules are transfer for transfer the same; a
 * different argument, another algorithm or network does not match. */
Test(multitree, msg_shares_the_schedule)
{
	struct pm_topo *t = topo_or_die("torus:4x4"), *u = topo_or_die("torus:4x4");
	struct pm_inst a, b, c, d, e;
	struct pm_sched sa, sb;
	struct pm_err err;
	resolve_or_die("multitree", t, 0, &a);
	resolve_or_die("multitree-msg", t, 0, &b);
	resolve_or_die("multitree-msg:ports=1", t, 0, &c);
	resolve_or_die("ring", t, 0, &d);
	resolve_or_die("multitree", u, 0, &e);
	cr_assert(pm_algo_same_schedule(&a, &b));
	cr_assert(pm_algo_same_schedule(&b, &a));
	cr_assert_not(pm_algo_same_schedule(&a, &c));
	cr_assert_not(pm_algo_same_schedule(&a, &d));
	cr_assert_not(pm_algo_same_schedule(&a, &e));
	cr_assert_eq(pm_algo_schedule(&a, &sa, &err), PM_OK);
	cr_assert_eq(pm_algo_schedule(&b, &sb, &err), PM_OK);
	cr_assert_eq(sa.nx, sb.nx);
	cr_assert_eq(sa.nstored, sb.nstored);
	cr_assert_arr_eq(sa.x, sb.x, sizeof(struct pm_xfer) * sa.nx);
	cr_assert_arr_eq(sa.step_off, sb.step_off, sizeof(size_t) * ((size_t)sa.nstored + 1));
	pm_sched_release(&sa);
	pm_sched_release(&sb);
	pm_topo_free(t);
	pm_topo_free(u);
}

/* The fabric construction is for switch networks; past its reach it is
 * declined before any work, with the estimate. */
Test(multitree, fabric_limits)
{
	struct pm_topo *t = topo_or_die("torus:4x4");
	struct pm_inst in;
	struct pm_err err;
	cr_assert_eq(pm_algo_resolve("multitree:fabric", t, 0, &in, &err), PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "for switch networks"), "%s", err.msg);
	pm_topo_free(t);
	/* 64 endpoints on three rails: one word of 64, three links out and
	 * three in: 64^2 x (1 x (3 + 3) + 3 x 3) = 61,440, over the limit
	 * scaled to 1e-5 (5e4; the P^3 limit, 6.9e5, still passes) */
	char rails[4096];
	snprintf(rails, sizeof rails, "file:%s/tests/data/three_rails.csv", getenv("PM_SRCDIR"));
	t = topo_or_die(rails);
	pm_limit_scale = 1e-5;
	int rc = pm_algo_resolve("multitree:fabric", t, 0, &in, &err);
	pm_limit_scale = 1;
	cr_assert_eq(rc, PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "= 6.1e+04 here (expected at most 5e+04)"), "%s", err.msg);
	pm_topo_free(t);
	/* two endpoints through 600 switches: a route of 601 links does not
	 * fit the tables' byte of length */
	char chain[4096];
	snprintf(chain, sizeof chain, "file:%s/tests/data/switch_chain.csv", getenv("PM_SRCDIR"));
	t = topo_or_die(chain);
	cr_assert_eq(pm_algo_resolve("multitree:fabric", t, 0, &in, &err), PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "routes of at most 254 links"), "%s", err.msg);
	pm_topo_free(t);
}

/* One port per node makes a node send and receive one chunk per step:
 * at least P-1 steps per phase even on a torus. */
Test(multitree, ports_option)
{
	cr_assert_geq(mt_steps("multitree:ports=1", "torus:4x4"), 15);
	struct pm_topo *t = topo_or_die("torus:4x4");
	struct pm_inst in;
	struct pm_err err;
	cr_assert_eq(pm_algo_resolve("multitree:ports=0", t, 0, &in, &err), PM_EINPUT);
	cr_assert_eq(pm_algo_resolve("multitree:bogus", t, 0, &in, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "'bogus'"), "%s", err.msg);
	resolve_or_die("multitree:priority", t, 0, &in);
	cr_assert_str_eq(in.label, "multitree:ports=4,priority");
	pm_topo_free(t);
	/* default: the most links out of an endpoint.  A fat-tree endpoint
	 * has its one leaf link; a GPU of machine:dgx-h100:2 has its NVSwitch
	 * link and its NIC rail link (docs/model.md, Machine networks). */
	struct { const char *topo; int ports; } c[] = {{"fattree:4,2", 1}, {"machine:dgx-h100:2", 2}, {"torus:4x4x4", 6}};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		t = topo_or_die(c[i].topo);
		resolve_or_die("multitree", t, 0, &in);
		cr_assert_eq(in.ports, c[i].ports, "%s: %d ports", c[i].topo, in.ports);
		pm_topo_free(t);
	}
}

/* The trees are built once per network and options and kept with the
 * network: multitree and multitree-msg share them; other options get
 * their own. */
Test(multitree, one_construction_per_network)
{
	struct pm_topo *t = topo_or_die("torus:4x4");
	struct pm_inst a, b, c;
	const char *key = "multitree:ports=4,priority=0,literal=0,fabric=0";
	cr_assert_null(pm_topo_memo(t, key));
	resolve_or_die("multitree", t, 0, &a);
	void *kept = pm_topo_memo(t, key);
	cr_assert_not_null(kept);
	resolve_or_die("multitree-msg", t, 0, &b);
	cr_assert_eq(pm_topo_memo(t, key), kept);
	resolve_or_die("multitree:ports=1", t, 0, &c);
	cr_assert_not_null(pm_topo_memo(t, "multitree:ports=1,priority=0,literal=0,fabric=0"));
	cr_assert_eq(pm_topo_memo(t, key), kept);
	cr_assert_eq(a.steps, b.steps);
	cr_assert_gt(c.steps, a.steps);	/* one port: at least P-1 = 15 steps */
	pm_topo_free(t);
}

/* Message-based flow control (Huang et al. 2021 §IV-B): at 64 MiB on torus:8x8 a
 * chunk is 1 MiB; packet flow control puts 1 MiB x 17/16 on the wire,
 * message flow control 1 MiB + 16 B, so the bandwidth terms differ by
 * (1048576 + 16) / (1048576 x 17 / 16) = 0.941191. */
Test(multitree, message_flow_control)
{
	struct pm_topo *t = topo_or_die("torus:8x8");
	struct pm_params p;
	struct pm_inst a, b;
	struct pm_cost ca, cb;
	pm_params_default(&p);
	resolve_or_die("multitree", t, 0, &a);
	resolve_or_die("multitree-msg", t, 0, &b);
	pm_algo_closed(&a, 64.0 * 1048576, &p, &ca);
	pm_algo_closed(&b, 64.0 * 1048576, &p, &cb);
	assert_rel(cb.bw_s / ca.bw_s, (1048576.0 + 16) / (1048576.0 * 17 / 16), 1e-12);
	cr_assert_eq(ca.lat_s, cb.lat_s);
	pm_topo_free(t);
}

/* ---- HDRM ----------------------------------------------------------- */

/* Every exchange pairs an upper-layer node with a lower-layer node, and
 * the schedule is contention free: with no flow control the contention
 * evaluator equals Rabenseifner's closed form with 3-link latency. */
Test(hdrm, crosses_layers_without_contention)
{
	const char *nets2[] = {"bigraph:4x8", "bigraph:4x16", "bigraph:2x8", "bigraph:8x16"};
	for (size_t k = 0; k < sizeof nets2 / sizeof nets2[0]; k++) {
		struct pm_topo *t = topo_with(nets2[k], BW, DELTA);
		struct pm_params p = plain_params(ALPHA, DELTA, BW, GAMMA);
		struct pm_inst in;
		struct pm_sched s;
		struct pm_cost cc, ce;
		struct pm_err err;
		int m, n;
		pm_topo_bigraph(t, &m, &n);
		resolve_or_die("hdrm", t, 0, &in);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
		cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
		for (size_t i = 0; i < s.nx; i++) {
			int sa = s.map[s.x[i].src] / m, sb = s.map[s.x[i].dst] / m;
			cr_assert((sa < n / 2) != (sb < n / 2), "%s: %d -> %d stays in a layer", nets2[k],
				  s.x[i].src, s.x[i].dst);
		}
		pm_algo_closed(&in, NB, &p, &cc);
		cr_assert_eq(pm_algo_contention(&in, &s, NB, &p, &ce, NULL, &err), PM_OK);
		assert_rel(ce.time_s, cc.time_s, 1e-9);
		/* = 2 lg P (alpha + 3 delta) + 2 (P-1)/P n beta + (P-1)/P n gamma */
		double P = in.P, lg = log2(P);
		assert_rel(cc.time_s, 2 * lg * (ALPHA + 3 * DELTA) + 2 * (P - 1) / P * NB / BW +
				      (P - 1) / P * NB * GAMMA, 1e-12);
		pm_sched_release(&s);
		pm_topo_free(t);
	}
}

Test(hdrm, not_applicable_elsewhere)
{
	expect_na("hdrm", "torus:4x4", "needs a BiGraph network such as bigraph:4x8 (got torus:4x4)");
	expect_na("hdrm", "bigraph:3x8", "needs a power-of-two number of endpoints (got 24)");
	expect_na("multitree", "torus:65x65", "at most 4096 endpoints (got 4225)");
}

/* ---- multiphase (Rashidi et al. 2021) ------------------------------------------ */

static struct pm_topo *ace_torus(const char *spec)
{
	struct pm_link_defaults ld = {.bw_Bps = 16e9, .lat_s = 150e-9, .ndim_bw = 3, .ndim_lat = 3,
				      .dim_bw_Bps = {200e9, 25e9, 25e9},
				      .dim_lat_s = {72e-9, 402e-9, 402e-9}};
	struct pm_topo *t = NULL;
	struct pm_err err;
	ld.ndim_bw = 1;	/* one value per dimension: count the x separators */
	for (const char *c = spec; *c; c++)
		ld.ndim_bw += *c == 'x';
	ld.ndim_lat = ld.ndim_bw;
	cr_assert_eq(pm_topo_parse(spec, &ld, &t, &err), PM_OK, "%s", err.msg);
	return t;
}

/* Seed 004 §VI-A on the 4x4x4 platform: of every N bytes an NPU holds it
 * sends 3/4 N in the local reduce-scatter, 6/16 N in each of the vertical
 * and horizontal all-reduces and 3/4 N in the local all-gather: 2.25 N.
 * 18 steps: 2 x 3 local, 6 vertical, 6 horizontal.
 *
 * Time on Table V's links (X 200 GB/s 72 ns, Y and Z 25 GB/s 402 ns) with
 * alpha 1 us, gamma 0.0731 ns/B, no flow-control overhead, n = 3e6 B:
 *   X: 6 steps of 1 + 0.072 + (n/8 = 375,000 B)/200 GB/s = 1.875 -> 2.947 us
 *      = 17.682 us;
 *   Y: 6 steps of 1 + 0.402 + (n/32 = 93,750 B)/25 GB/s = 3.75 -> 5.152 us
 *      = 30.912 us; Z the same;
 *   gamma: (3/4 n + 2 x 3/4 n/4) = 3.375e6 B x 0.0731 ns = 246.7125 us.
 *   Total 326.2185 us.  Each step drives one link per direction of one
 * dimension, so the contention evaluator must give the same. */
Test(multiphase, seed004_platform_by_hand)
{
	struct pm_topo *t = ace_torus("torus:4x4x4");
	struct pm_params p = plain_params(1e-6, 0, 16e9, GAMMA);
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c, e;
	struct pm_err err;

	resolve_or_die("multiphase", t, 0, &in);
	pm_algo_closed(&in, NB, &p, &c);
	assert_rel(c.time_s, 326.2185e-6, 1e-9);
	assert_rel(c.sent_B, 2.25 * NB, 1e-12);
	cr_assert_eq(c.steps, 18);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert_eq(pm_algo_contention(&in, &s, NB, &p, &e, NULL, &err), PM_OK);
	assert_rel(e.time_s, 326.2185e-6, 1e-9);
	assert_rel(e.sent_B, 2.25 * NB, 1e-12);
	/* 2 of 6 ports per node busy in every step, every link used once */
	assert_rel(e.util_avg, 1.0 / 3, 1e-9);
	assert_rel(e.links_used, 1.0, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Closed form equals the contention evaluator on other shapes too,
 * including size-2 dimensions (two distinct links join the pair) and a
 * 2-D torus, with packet flow control on. */
Test(multiphase, contention_equals_closed)
{
	const char *shapes[] = {"torus:4x4x4", "torus:2x3x4", "torus:5x2x3", "torus:4x6", "torus:3x3"};
	struct pm_params p = plain_params(ALPHA, 0, 16e9, GAMMA);
	p.flow = PM_FLOW_PACKET;
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		struct pm_topo *t = ace_torus(shapes[i]);
		struct pm_cost c, e;
		int steps;
		closed_is_contention("multiphase", t, shapes[i], &p, &c, &e, &steps);
		pm_topo_free(t);
	}
}

/* On a 1-D torus the four phases collapse to the local reduce-scatter and
 * all-gather, both directions: the bidirectional ring, step for step. */
Test(multiphase, one_dimension_is_the_bidirectional_ring)
{
	struct pm_topo *t = topo_with("torus:7", BW, DELTA);
	struct pm_params p = plain_params(ALPHA, DELTA, BW, GAMMA);
	struct pm_inst a, b;
	struct pm_cost ca, cb;

	resolve_or_die("multiphase", t, 0, &a);
	resolve_or_die("bidir-ring", t, 0, &b);
	pm_algo_closed(&a, NB, &p, &ca);
	pm_algo_closed(&b, NB, &p, &cb);
	assert_rel(ca.time_s, cb.time_s, 1e-12);
	cr_assert_eq(ca.steps, cb.steps);
	pm_topo_free(t);
}

/* multiphase:2 on Rashidi et al. 2021 Table V's platform (4x4x4; X 200
 * GB/s 72 ns, Y and Z 25 GB/s 402 ns), 256 MiB, packet flow control
 * (w(m) = 17/16 m), alpha 0, by hand.  Phases X-RS 3 steps, Y-AR 6, Z-AR
 * 6, X-AG 3; chunk 0 runs them at steps 0-2, 3-8, 9-14, 15-17; chunk 1
 * starts each when chunk 0 leaves it and it has left the one before:
 * 3-5, 9-14, 15-20, 21-23: 24 steps.  Per chunk m_X = 256 MiB/(2 x 4 x 2)
 * = 16 MiB, m_Y = m_Z = 4 MiB; a step of X alone takes 72 ns + 17 MiB /
 * 200 GB/s = 89.20096 us, any step with Y or Z busy 402 ns + 4.25 MiB /
 * 25 GB/s = 178.65992 us (X's 89.13 us of serialization runs beside it on
 * other links).  X alone in steps 0-2 and 21-23:
 * T = 6 x 89.20096 + 18 x 178.65992 = 3751.08432 us, against 5352.99 us
 * for the phases one after the other.  Both evaluators. */
Test(multiphase, pipelined_chunks_by_hand)
{
	struct pm_topo *t = ace_torus("torus:4x4x4");
	struct pm_params p = plain_params(0, 0, 16e9, 0);
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c, e;
	struct pm_err err;
	const double n = 256.0 * 1048576;

	p.flow = PM_FLOW_PACKET;
	resolve_or_die("multiphase:2", t, 0, &in);
	cr_assert_str_eq(in.label, "multiphase:2");
	pm_algo_closed(&in, n, &p, &c);
	assert_rel(c.time_s, 3751.08432e-6, 1e-9);
	cr_assert_eq(c.steps, 24);
	assert_rel(c.sent_B, 2.25 * n, 1e-12);	/* chunking sends no byte more */
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nsteps, 24);
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &e, NULL, &err), PM_OK);
	assert_rel(e.time_s, 3751.08432e-6, 1e-9);
	assert_rel(e.sent_B, 2.25 * n, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Pipelined schedules are all-reduces (the replay check), and the step
 * table of the closed form prices them as the contention evaluator does
 * link by link, with alpha, gamma, flow control, size-2 dimensions (both
 * directions on one link) and steps where the X reduce-scatter of one
 * chunk and the X all-gather of another share every X link. */
Test(multiphase, pipelined_schedules_check_and_price_alike)
{
	const char *shapes[] = {"torus:4x4x4", "torus:2x3x4", "torus:5x2x3", "torus:4x6", "torus:3x3", "torus:6"};
	const int ks[] = {2, 3, 7}, fs[] = {1, 2, 3};
	struct pm_params p = plain_params(ALPHA, 0, 16e9, GAMMA);
	p.flow = PM_FLOW_PACKET;
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		for (size_t j = 0; j < sizeof ks / sizeof ks[0] * 3; j++) {
			struct pm_topo *t = ace_torus(shapes[i]);
			struct pm_cost c, e;
			char name[32];
			int steps;
			snprintf(name, sizeof name, "multiphase:%d,fsm=%d", ks[j % 3], fs[j / 3]);
			closed_is_contention(name, t, shapes[i], &p, &c, &e, &steps);
			cr_assert(rel_close(c.red_s, e.red_s, 1e-9), "%s on %s: reduction %.9g vs %.9g",
				  name, shapes[i], c.red_s, e.red_s);
			cr_assert_eq(c.steps, steps);
			pm_topo_free(t);
		}
	expect_bad("multiphase:0", "torus:4x4", "invalid chunk count '0'");
	expect_bad("multiphase:4,fsm=0", "torus:4x4", "invalid FSMs per phase '0'");
	expect_bad("multiphase:4,fsms=2", "torus:4x4", "invalid multiphase option 'fsms=2'");
}

/* multiphase:3,fsm=2 on torus:4x4x4 (phases X-RS 3 steps, Y-AR 6, Z-AR
 * 6, X-AG 3), by hand from start(c,k) = max(end(c,k-1), end(c-2,k)):
 * chunks 0 and 1 both run X-RS at steps 0-2, Y-AR 3-8, Z-AR 9-14, X-AG
 * 15-17 (two FSMs: neither waits for the other); chunk 2 waits for chunk
 * 0 to leave each phase: X-RS 3-5, Y-AR 9-14, Z-AR 15-20, X-AG 21-23: 24
 * steps.  No flow control, alpha 0, links of 16 GB/s and no latency,
 * 3 MiB: m_X = 3 MiB / (2 x 4 x 3) = 131072 B a chunk, m_Y = m_Z = 32768
 * B.  Per step the busiest dimension: steps 0-2 two X messages a link
 * (16.384 us); 3-5 X-RS of chunk 2 (one, 8.192 us) beside two Y messages
 * (4.096 us): 8.192 us; 6-8 two Y: 4.096 us; 9-14 Y (chunk 2) and two Z:
 * 4.096 us; 15-17 two X-AG with one Z: 16.384 us; 18-20 one Z: 2.048
 * us; 21-23 one X: 8.192 us.
 * T = 3(16.384 + 8.192 + 4.096) + 6(4.096) + 3(16.384 + 2.048 + 8.192)
 *   = 86.016 + 24.576 + 79.872 = 190.464 us.  Both evaluators. */
Test(multiphase, fsms_by_hand)
{
	struct pm_topo *t = topo_with("torus:4x4x4", 16e9, 0);
	struct pm_params p = plain_params(0, 0, 16e9, 0);
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c, e;
	struct pm_err err;
	const double n = 3.0 * 1048576;

	resolve_or_die("multiphase:3,fsm=2", t, 0, &in);
	cr_assert_str_eq(in.label, "multiphase:3,fsm=2");
	pm_algo_closed(&in, n, &p, &c);
	assert_rel(c.time_s, 190.464e-6, 1e-9);
	cr_assert_eq(c.steps, 24);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &e, NULL, &err), PM_OK);
	assert_rel(e.time_s, 190.464e-6, 1e-9);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* In lockstep, F FSMs a phase run chunks in groups of F that enter and
 * leave every phase together (by induction on start(c,k): chunks jF ..
 * jF+F-1 start each phase when group j-1 leaves it), so multiphase:FK,
 * fsm=F is multiphase:K with chunks F times larger, step for step; and
 * fsm=K moves all K chunks as one: multiphase:1.  Equal without flow
 * control (with it, F small messages carry F headers). */
Test(multiphase, fsms_group_chunks_in_lockstep)
{
	const char *pairs[][2] = {{"multiphase:6,fsm=2", "multiphase:3"},
				  {"multiphase:8,fsm=4", "multiphase:2"},
				  {"multiphase:5,fsm=5", "multiphase"},
				  {"multiphase:4,fsm=9", "multiphase"}};
	struct pm_topo *t = ace_torus("torus:4x2x3");
	struct pm_params p = plain_params(ALPHA, 0, 16e9, GAMMA);

	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		struct pm_inst a, b;
		struct pm_cost ca, cb;
		resolve_or_die(pairs[i][0], t, 0, &a);
		resolve_or_die(pairs[i][1], t, 0, &b);
		pm_algo_closed(&a, 7.3e6, &p, &ca);
		pm_algo_closed(&b, 7.3e6, &p, &cb);
		cr_assert(rel_close(ca.time_s, cb.time_s, 1e-12), "%s %.12g vs %s %.12g",
			  pairs[i][0], ca.time_s, pairs[i][1], cb.time_s);
		cr_assert_eq(ca.steps, cb.steps, "%s", pairs[i][0]);
	}
	pm_topo_free(t);
}

Test(multiphase, needs_a_torus)
{
	expect_na("multiphase", "mesh:4x4", "needs a torus");
	expect_na("multiphase", "fattree:4,2", "needs a torus");
	/* a ring is a 1-D torus: multiphase is the bidirectional ring there */
	struct pm_topo *a = topo_with("ring:8", BW, DELTA), *b = topo_with("torus:8", BW, DELTA);
	struct pm_params p = plain_params(ALPHA, DELTA, BW, GAMMA);
	struct pm_inst ia, ib;
	struct pm_cost ca, cb;
	resolve_or_die("multiphase", a, 0, &ia);
	resolve_or_die("multiphase", b, 0, &ib);
	pm_algo_closed(&ia, NB, &p, &ca);
	pm_algo_closed(&ib, NB, &p, &cb);
	assert_rel(ca.time_s, cb.time_s, 1e-12);
	pm_topo_free(a);
	pm_topo_free(b);
}

/* Ring across nodes on machine:dgx-h100:4 by hand (no latency, no flow
 * control), links at the achieved rates of the description (ring_busbw
 * 370 GB/s per GPU, nic_bw 48 GB/s per NIC).  ring:1: 32 ranks in the
 * rail-aware snake, 62 steps of n/32 each; the four node-to-node hops
 * (7->15, 8->16, 23->31, 24->0) each cross their own GPU->leaf and
 * leaf->GPU links at 48 GB/s, the others the node crossbar at 370 GB/s:
 * each step (64 MiB/32)/48 GB/s = 43.690667 us, the ring 62 x that =
 * 2708.821333 us.  ring (8 channels, one per rail): each step moves 64
 * MiB/8/32 = 256 KiB per channel; each GPU sends one channel's part by its
 * NIC (262144/48e9 = 5.461333 us) and seven by NVLink (7 x 262144/370e9
 * = 4.959 us): 62 x 5.461333 = 338.602667 us, 8x faster. */
Test(algos, ring_on_a_machine_network)
{
	struct pm_topo *t = topo_with("machine:dgx-h100:4", 16e9, 0);	/* links: no latency */
	struct pm_params p = plain_params(0, 0, 16e9, 0);
	const char *algo[] = {"ring:1", "ring"};
	double want[] = {2708.821333e-6, 338.602667e-6};

	for (int k = 0; k < 2; k++) {
		struct pm_inst in;
		struct pm_sched s;
		struct pm_cost c;
		struct pm_err err;
		resolve_or_die(algo[k], t, 0, &in);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
		cr_assert_eq(pm_algo_contention(&in, &s, 64.0 * 1048576, &p, &c, NULL, &err), PM_OK);
		assert_rel(c.time_s, want[k], 1e-6);
		cr_assert_float_eq(c.steps, 62, 0);
		pm_sched_release(&s);
	}
	pm_topo_free(t);
}

/* ace:LxVxH carries Table V's links: 200 GB/s and 90 cycles inside a
 * package, 25 GB/s and 500 cycles between packages, at 1245 MHz (72.29
 * and 401.61 ns); and multiphase prices it as the torus with those links. */
Test(endpoint, ace_preset_is_table_v)
{
	struct pm_topo *t = NULL;
	struct pm_err err;
	double bw, lat;
	cr_assert_eq(pm_topo_parse("ace:4x2x2", NULL, &t, &err), PM_OK, "%s", err.msg);
	pm_topo_dim_link(t, 0, &bw, &lat);
	assert_rel(bw, 200e9, 1e-12);
	assert_rel(lat, 90 / 1245e6, 1e-12);
	pm_topo_dim_link(t, 2, &bw, &lat);
	assert_rel(bw, 25e9, 1e-12);
	assert_rel(lat, 500 / 1245e6, 1e-12);
	cr_assert_eq(pm_topo_endpoints(t), 16);
	pm_topo_free(t);
	cr_assert_eq(pm_topo_parse("ace:4x4", NULL, &t, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "ace:LxVxH"), "%s", err.msg);
}

/* ---- the endpoint (Rashidi et al. 2021 SVI-A) ------------------------ */

/* ring on full:4, n = 4 MiB (1 MiB a step), 16 GB/s links, no latency or
 * flow control, by hand.  Ideal: 6 steps x 1 MiB / 16 GB/s = 6 x 65.536
 * = 393.216 us.  Baseline with 16 GB/s of memory: a reduce-scatter step
 * reads 2 MiB (its data and what it received) = 131.072 us, an
 * all-gather step 1 MiB = 65.536 us: 3 x 131.072 + 3 x 65.536 = 589.824
 * us, 9 MiB read = 1.5 x the 6 MiB sent.  ACE: step 1 loads the part it
 * sends and the part it reduces into (2 MiB, 131.072 us), steps 2-3 one
 * new part each (1 MiB, as long as the link), the all-gather none:
 * 131.072 + 5 x 65.536 = 458.752 us, 4 MiB read = n. */
Test(endpoint, ring_on_full4_by_hand)
{
	struct pm_topo *t = topo_with("full:4", 16e9, 0);
	struct pm_params p = plain_params(0, 0, 16e9, 0);
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c;
	struct pm_err err;
	const double n = 4.0 * 1048576;
	const double want[3] = {393.216e-6, 589.824e-6, 458.752e-6};
	const double reads[3] = {0, 9.0 * 1048576, 4.0 * 1048576};

	resolve_or_die("ring", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	for (int e = 0; e < 3; e++) {
		p.endpoint = (enum pm_endpoint)e;
		p.mem_bw_Bps = 16e9;
		cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
		assert_rel(c.time_s, want[e], 1e-9);
		assert_rel(c.mem_B, reads[e], 1e-12);
	}
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Rashidi et al. 2021 SVI-A on 4x4x4: the baseline reads 1.5 N for every
 * N it sends; ACE sends 2.25 N for every N it reads (3/4 + 2 x 6/16 + 3/4).
 * With memory bandwidth far above the links' the baseline and ACE equal
 * the ideal endpoint; at every memory share ACE reaches at least the
 * baseline's network bandwidth. */
Test(endpoint, table_v_platform_traffic)
{
	struct pm_topo *t = ace_torus("torus:4x4x4");
	struct pm_params p = plain_params(0, 0, 16e9, 0);
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost ideal, c;
	struct pm_err err;
	const double n = 64.0 * 1048576;

	p.flow = PM_FLOW_PACKET;
	resolve_or_die("multiphase", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &ideal, NULL, &err), PM_OK);
	p.mem_bw_Bps = 1e15;
	p.endpoint = PM_END_BASELINE;
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.mem_B, 1.5 * c.sent_B, 1e-12);
	assert_rel(c.time_s, ideal.time_s, 1e-12);
	p.endpoint = PM_END_ACE;
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.sent_B, 2.25 * c.mem_B, 1e-12);
	assert_rel(c.mem_B, n, 1e-12);
	assert_rel(c.time_s, ideal.time_s, 1e-12);
	for (double mem = 25e9; mem <= 800e9; mem *= 2) {
		struct pm_cost base, ace;
		p.mem_bw_Bps = mem;
		p.endpoint = PM_END_BASELINE;
		cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &base, NULL, &err), PM_OK);
		p.endpoint = PM_END_ACE;
		cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &ace, NULL, &err), PM_OK);
		cr_assert(ace.time_s <= base.time_s * (1 + 1e-12), "at %g B/s ACE %g s, baseline %g s",
			  mem, ace.time_s, base.time_s);
		cr_assert(base.time_s >= ideal.time_s * (1 - 1e-12));
	}
	pm_sched_release(&s);
	pm_topo_free(t);
}
