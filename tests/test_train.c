/* test_train.c: the training timeline, the merge policies and the DNN
 * profiles (Shi et al. (MG-WFBP)).  Cases are built by hand (arithmetic in the
 * comments), properties are checked on random profiles from a seeded GSL
 * generator, and the two MG-WFBP and two optimum implementations are
 * checked against each other. */
#include "helpers.h"
#include "search/cost.h"
#include "search/train.h"
#include "search/parallel.h"

#include <gsl/gsl_rng.h>

static double run(const struct pm_iter *it, int (*planner)(const struct pm_iter *, struct pm_plan *),
		  struct pm_plan *keep)
{
	struct pm_plan p;
	struct pm_timing t;
	cr_assert_eq(planner(it, &p), PM_OK);
	pm_plan_time(it, &p, 0, &t);
	if (keep)
		*keep = p;
	else
		pm_plan_release(&p);
	return t.t_iter;
}

static int each(const struct pm_iter *it, struct pm_plan *p) { return pm_plan_each(it->L, p); }
static int single(const struct pm_iter *it, struct pm_plan *p) { return pm_plan_single(it->L, p); }

/* WFBP on 4 layers (eqs. 6-8), t_f = 5, a = 2, b = 0.5 per byte:
 * backward order 4, 3, 2, 1 with t_b = 3, 1, 4, 2 and bytes 10, 2, 6, 4.
 * ready: layer 4 at 8, layer 3 at 9, layer 2 at 13, layer 1 at 15.
 * comm:  4: 8 -> 8 + 2 + 5 = 15;  3: max(15, 9) = 15 -> 18;
 *        2: max(18, 13) = 18 -> 23;  1: max(23, 15) = 23 -> 27.
 * t_iter = 27, compute 15, t_c^no = 12, all communication 7+3+5+4 = 19. */
Test(timeline, wfbp_by_hand)
{
	double bytes[] = {4, 6, 2, 10}, tb[] = {2, 4, 1, 3};
	struct pm_iter it = {.L = 4, .bytes = bytes, .tb = tb, .tf = 5, .a = 2, .b = 0.5, .inflight = 1};
	struct pm_plan p;
	struct pm_timing t;
	double ready[4], start[4], end[4];
	pm_plan_each(4, &p);
	pm_plan_time(&it, &p, 0, &t);
	cr_assert_float_eq(t.t_iter, 27, 1e-12);
	cr_assert_float_eq(t.t_comp, 15, 1e-12);
	cr_assert_float_eq(t.t_c_no, 12, 1e-12);
	cr_assert_float_eq(t.t_comm, 19, 1e-12);
	cr_assert_eq(t.calls, 4);
	pm_plan_detail(&it, &p, 0, ready, start, end);
	double want_start[] = {8, 15, 18, 23}, want_ready[] = {8, 9, 13, 15};
	for (int g = 0; g < 4; g++) {
		cr_assert_float_eq(start[g], want_start[g], 1e-12);
		cr_assert_float_eq(ready[g], want_ready[g], 1e-12);
	}
	/* naive (eq. 3): 15 + 19 = 34; SyncEASGD (eq. 9): 15 + 2 + 0.5 x 22 = 28 */
	pm_plan_time(&it, &p, 1, &t);
	cr_assert_float_eq(t.t_iter, 34, 1e-12);
	pm_plan_release(&p);
	pm_plan_single(4, &p);
	pm_plan_time(&it, &p, 0, &t);
	cr_assert_float_eq(t.t_iter, 28, 1e-12);
	pm_plan_release(&p);
}

/* Seed 002 §3, Fig. 2: the four cases for layer l = 2 over layer 1, each
 * with t_f = 0 and layer 2's backward taking 10, so tau_c(2) = 10 (or
 * later, in case 4, behind a third layer).  Theorem 1 merges layer 2 iff
 * ready(1) < tau_c(2) + a; the timelines confirm each decision. */
struct case2 {
	int L;
	double bytes[3], tb[3], a, b;
	int merge;		/* Theorem 1's decision for layer 2 */
	double t_merged, t_separate;
};

static void check_case(const struct case2 *c, const char *name)
{
	struct pm_iter it = {.L = c->L, .bytes = c->bytes, .tb = c->tb, .tf = 0, .a = c->a, .b = c->b, .inflight = 1};
	struct pm_plan p;
	cr_assert_eq(pm_mgwfbp_fast(&it, &p), PM_OK);
	/* layer 2 merged into layer 1 <=> they end in the same (last) group */
	int merged = p.n >= 1 && (p.n == 1 || p.end[p.n - 2] < c->L - 1);
	cr_assert_eq(merged, c->merge, "%s: Theorem 1 decision", name);
	pm_plan_release(&p);
	/* both plans by hand: all layers above 2 as MG-WFBP decided */
	int sep_end[3], mer_end[3], n = 0;
	for (int k = 1; k < c->L - 1; k++)
		sep_end[n] = mer_end[n] = k, n++;
	sep_end[n] = c->L - 1;
	sep_end[n + 1] = c->L;
	mer_end[n] = c->L;
	struct pm_plan sep = {n + 2, sep_end}, mer = {n + 1, mer_end};
	struct pm_timing ts, tm;
	pm_plan_time(&it, &sep, 0, &ts);
	pm_plan_time(&it, &mer, 0, &tm);
	cr_assert_float_eq(ts.t_iter, c->t_separate, 1e-9, "%s separate %g", name, ts.t_iter);
	cr_assert_float_eq(tm.t_iter, c->t_merged, 1e-9, "%s merged %g", name, tm.t_iter);
	cr_assert_eq(tm.t_iter < ts.t_iter, c->merge, "%s: merging %s help", name, c->merge ? "should" : "should not");
}

Test(mgwfbp, four_cases_of_section_3)
{
	/* Case 1: fully hidden.  a 2, b 1, p2 = 3: comm 2 runs 10 -> 15;
	 * layer 1 (t_b 8, p1 = 1) ready at 18 >= 15.  18 >= 10 + 2: normal.
	 * separate: 2: 10 -> 15, 1: 18 -> 21;  merged: 18 -> 18 + 2 + 4 = 24. */
	struct case2 c1 = {2, {1, 3}, {8, 10}, 2, 1, 0, 24, 21};
	/* Case 2: partial overlap, merge pays.  a 4, b 1, p2 = 3, p1 = 5:
	 * comm 2 10 -> 17; layer 1 ready at 12 (t_b 2): 10 < 12 < 17 and
	 * 12 - 10 = 2 < a.  separate: 1 runs 17 -> 26; merged: 12 -> 24. */
	struct case2 c2 = {2, {5, 3}, {2, 10}, 4, 1, 1, 24, 26};
	/* Case 3: partial overlap, merge does not pay.  a 2, b 1, p2 = 6,
	 * p1 = 3: comm 2 10 -> 18; layer 1 ready at 15: 10 < 15 < 18 but
	 * 15 - 10 = 5 >= a.  separate: 18 -> 23; merged: 15 -> 15 + 2 + 9 = 26. */
	struct case2 c3 = {2, {3, 6}, {5, 10}, 2, 1, 0, 26, 23};
	/* Case 4: no overlap.  A third layer (t_b 1, p3 = 20, a 1, b 1) keeps
	 * the link busy 1 -> 22 (ready(2) - tau_c(3) = 1, not < a: normal).
	 * Layer 2 (t_b 1, p2 = 2) ready at 2, tau_c(2) = 22; layer 1 (t_b 1,
	 * p1 = 3) ready at 3 <= 22: merge.  separate: 2: 22 -> 25, 1: 25 -> 29;
	 * merged: 22 -> 22 + 1 + 5 = 28. */
	struct case2 c4 = {3, {3, 2, 20}, {1, 1, 1}, 1, 1, 1, 28, 29};
	check_case(&c1, "case 1");
	check_case(&c2, "case 2");
	check_case(&c3, "case 3");
	check_case(&c4, "case 4");
}

/* A counterexample to Theorem 1's optimality (found by search, checked
 * here by hand): a 9, b 1, t_f 0; layers (forward order) 1, 2, 3 with
 * bytes 6, 8, 1 and backward 6, 7, 6, so ready at 6 (layer 3), 13, 19.
 * MG-WFBP: 13 - 6 = 7 < 9 merges 3 into 2; 19 - 13 = 6 < 9 merges 2 into
 * 1: one all-reduce of 15 bytes, 19 -> 19 + 9 + 15 = 43.  Better: layer 3
 * alone 6 -> 16 (hidden), then 2 and 1 together 19 -> 19 + 9 + 14 = 42.
 * Merging 3 was right for layer 2's own end time (31 < 33) but its bytes
 * then ride in the last, exposed all-reduce. */
Test(mgwfbp, theorem1_counterexample)
{
	double bytes[] = {6, 8, 1}, tb[] = {6, 7, 6};
	struct pm_iter it = {.L = 3, .bytes = bytes, .tb = tb, .tf = 0, .a = 9, .b = 1, .inflight = 1};
	cr_assert_float_eq(run(&it, pm_mgwfbp_fast, NULL), 43, 1e-12);
	cr_assert_float_eq(run(&it, pm_mgwfbp_alg1, NULL), 43, 1e-12);
	cr_assert_float_eq(run(&it, pm_optimal_plan, NULL), 42, 1e-12);
	cr_assert_float_eq(run(&it, pm_optimal_plan_quadratic, NULL), 42, 1e-12);
}

/* Random profiles (GSL mt19937, seed 1729): sizes log-uniform 64 B to
 * 64 MB, backward 10 us to 20 ms, a 10 us to 5 ms, b 0.05 to 5 ns/B. */
static void random_iter(gsl_rng *r, int L, double *bytes, double *tb, struct pm_iter *it)
{
	for (int l = 0; l < L; l++) {
		bytes[l] = 64 * pow(1e6, gsl_rng_uniform(r));
		tb[l] = 1e-5 * pow(2000, gsl_rng_uniform(r));
	}
	*it = (struct pm_iter){.L = L, .bytes = bytes, .tb = tb, .tf = 1e-3 * gsl_rng_uniform(r),
			       .a = 1e-5 * pow(500, gsl_rng_uniform(r)),
			       .b = 5e-11 * pow(100, gsl_rng_uniform(r)), .inflight = 1};
}

Test(mgwfbp, random_profiles)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double bytes[200], tb[200];
	int worse = 0, trials = 3000;
	gsl_rng_set(r, 1729);
	for (int trial = 0; trial < trials; trial++) {
		struct pm_iter it;
		struct pm_plan pa, pf;
		int L = 1 + (int)gsl_rng_uniform_int(r, 120);
		random_iter(r, L, bytes, tb, &it);
		double mg = run(&it, pm_mgwfbp_fast, &pf);
		double alg1 = run(&it, pm_mgwfbp_alg1, &pa);
		/* the two implementations make the same groups */
		cr_assert_eq(pa.n, pf.n, "trial %d", trial);
		for (int g = 0; g < pa.n; g++)
			cr_assert_eq(pa.end[g], pf.end[g], "trial %d group %d", trial, g);
		cr_assert_eq(mg, alg1);
		pm_plan_release(&pa);
		pm_plan_release(&pf);
		double wf = run(&it, each, NULL), se = run(&it, single, NULL);
		double opt = run(&it, pm_optimal_plan, NULL), opt2 = run(&it, pm_optimal_plan_quadratic, NULL);
		cr_assert(rel_close(opt, opt2, 1e-12), "trial %d: optimum %g vs %g", trial, opt, opt2);
		cr_assert_leq(opt, mg * (1 + 1e-12), "trial %d: optimum above MG-WFBP", trial);
		cr_assert_leq(opt, wf * (1 + 1e-12));
		cr_assert_leq(opt, se * (1 + 1e-12));
		cr_assert_leq(mg, wf * (1 + 1e-12), "trial %d: MG-WFBP %g slower than WFBP %g", trial, mg, wf);
		cr_assert_leq(mg, se * (1 + 1e-12), "trial %d: MG-WFBP %g slower than SyncEASGD %g", trial, mg, se);
		worse += mg > opt * (1 + 1e-9);
	}
	gsl_rng_free(r);
	/* Theorem 1 does not hold: on these profiles MG-WFBP often misses */
	cr_assert_gt(worse, 0);
	cr_log_info("MG-WFBP above the optimum on %d of %d random profiles", worse, trials);
}

/* DDP buckets, backward order: sizes (bytes) 0.6M, 0.6M, 20M, 10M, 1M with
 * the first bucket closing at 1 MiB and the rest at 25 MiB: {0.6, 0.6}
 * (1.2M >= 1 MiB), {20, 10} (30M >= 25 MiB), {1} (the last). */
Test(timeline, ddp_buckets)
{
	double M = 1e6;
	double bytes[] = {1 * M, 10 * M, 20 * M, 0.6 * M, 0.6 * M};	/* forward order */
	double tb[] = {1, 1, 1, 1, 1};
	struct pm_iter it = {.L = 5, .bytes = bytes, .tb = tb, .tf = 0, .a = 1, .b = 1, .inflight = 1};
	struct pm_plan p;
	pm_plan_buckets(&it, 25.0 * 1048576, 1048576, &p);
	cr_assert_eq(p.n, 3);
	cr_assert_eq(p.end[0], 2);
	cr_assert_eq(p.end[1], 4);
	cr_assert_eq(p.end[2], 5);
	pm_plan_release(&p);
}

/* Seed 002 Table 2 at N = 8, alpha 10 us, beta 1 ns/B, gamma 0.5 ns/B:
 * ring a = 14 x 10 = 140 us, b = 14/8 x 1 + 7/8 x 0.5 = 2.1875 ns/B;
 * dbtree a = 2 x 10 x 3 = 60 us, b = 1.5 ns/B; halving-doubling
 * b = 2 - 2.5/8 + 0.5 = 2.1875 ns/B; binary tree b = 2.5 x 3 = 7.5 ns/B. */
Test(cost, table2)
{
	const struct pm_table2 *ring = pm_table2_find("ring"), *dbt = pm_table2_find("dbtree");
	const struct pm_table2 *hd = pm_table2_find("halving-doubling"), *bt = pm_table2_find("binary-tree");
	cr_assert(ring && dbt && hd && bt);
	cr_assert_null(pm_table2_find("butterfly"));
	assert_rel(ring->a(8, 10e-6), 140e-6, 1e-12);
	assert_rel(ring->b(8, 1e-9, 0.5e-9), 2.1875e-9, 1e-12);
	assert_rel(dbt->a(8, 10e-6), 60e-6, 1e-12);
	assert_rel(dbt->b(8, 1e-9, 0.5e-9), 1.5e-9, 1e-12);
	assert_rel(hd->b(8, 1e-9, 0.5e-9), 2.1875e-9, 1e-12);
	assert_rel(bt->b(8, 1e-9, 0.5e-9), 7.5e-9, 1e-12);
}

/* A line fitted to the ring's closed form (no flow control) recovers its
 * a = 2(P-1)(alpha + delta) and b = 2(P-1)/P beta + (P-1)/P gamma exactly. */
Test(cost, fit_to_closed_form)
{
	struct pm_topo *t = topo_with("full:8", 12.5e9, 0.31e-6);
	struct pm_params p = plain_params(2.385e-6, 0.31e-6, 12.5e9, 0.0731e-9);
	struct pm_inst in;
	struct pm_fit f;
	struct pm_err err;
	resolve_or_die("ring", t, 0, &in);
	cr_assert_eq(pm_cost_fit_algo(&in, &p, 0, 1024, 64e6, &f, &err), PM_OK);
	assert_rel(f.alpha_s, 14 * 2.695e-6, 1e-6);
	assert_rel(f.beta_spB, 14.0 / 8 / 12.5e9 + 7.0 / 8 * 0.0731e-9, 1e-9);
	assert_rel(f.r2, 1, 1e-12);
	cr_assert_eq(pm_cost_fit_algo(&in, &p, 1, 1024, 64e6, &f, &err), PM_OK);
	assert_rel(f.beta_spB, 14.0 / 8 / 12.5e9 + 7.0 / 8 * 0.0731e-9, 1e-9);
	pm_topo_free(t);
}

static struct pm_profile load(const char *name)
{
	struct pm_profile p;
	struct pm_err err;
	cr_assert_eq(pm_profile_load(name, &p, &err), PM_OK, "%s: %s", name, err.msg);
	return p;
}

/* Estimated profiles against Shi et al. (MG-WFBP) Table 4 (multiply-accumulates per
 * sample in the forward pass: GoogleNet 1.43G, ResNet-50 3.9G, ResNet-152
 * 11.61G): forward time x 7.85 TFLOP/s / (2 flops x batch).  And the
 * parameter totals of the sources (ResNet-50 25,557,032, VGG-16
 * 138,357,544). */
Test(profiles, estimates_match_published_counts)
{
	struct { const char *name; double macs, batch; } c[] = {
		{"googlenet", 1.43e9, 64}, {"resnet50", 3.9e9, 32}, {"resnet152", 11.61e9, 128},
	};
	for (size_t i = 0; i < 3; i++) {
		struct pm_profile p = load(c[i].name);
		double macs = p.tf_s * 7.85e12 / (2 * c[i].batch);
		cr_assert(fabs(macs / c[i].macs - 1) < 0.06, "%s: %.4g MACs vs %.4g", c[i].name, macs, c[i].macs);
		cr_assert_str_eq(p.kind, "estimated");
		cr_assert_eq(p.forward_assumed, 0);
		pm_profile_release(&p);
	}
	struct pm_profile r = load("resnet50"), v = load("vgg16");
	double pr = 0, pv = 0;
	for (int l = 0; l < r.L; l++)
		pr += r.params[l];
	for (int l = 0; l < v.L; l++)
		pv += v.params[l];
	cr_assert_eq(pr, 25557032);
	cr_assert_eq(r.L, 161);
	cr_assert_eq(pv, 138357544);
	pm_profile_release(&r);
	pm_profile_release(&v);
}

/* GNMT v2 (hidden H = 1024, vocabulary 32320, 4 layers, shared
 * embedding), by hand: an LSTM layer of input I holds 4H(I + H) + 8H
 * parameters; embedding 33,095,680; encoder 2 x 8,396,800 (bidirectional)
 * + 12,591,104 (I = 2H) + 2 x 8,396,800; decoder attention LSTM 8,396,800,
 * attention 2H^2 + 2H + 1 = 2,099,201, 3 x 12,591,104, classifier
 * 33,095,680 + 32,320: 160,671,297 in 44 tensors (NVIDIA reports about
 * 160M).  Time of encoder weight_ih_l0 (4096 x 1024): 32 tokens x 128
 * sentences x 2 flops, backward twice, over 7.85 TFLOP/s = 8754.07 us. */
Test(profiles, gnmt_by_hand)
{
	struct pm_profile g = load("gnmt");
	double pg = 0;
	for (int l = 0; l < g.L; l++)
		pg += g.params[l];
	cr_assert_eq(g.L, 44);
	cr_assert_eq(pg, 160671297);
	cr_assert_str_eq(g.names[1], "encoder.rnn_layers.0.weight_ih_l0");
	assert_rel(g.tb_s[1], 4194304.0 * 32 * 128 * 4 / 7.85e12, 1e-6);
	cr_assert_eq(g.tb_s[0], 0);	/* the embedding is looked up, not multiplied */
	pm_profile_release(&g);
}

/* The K80 estimate is calibrated on the measured GoogLeNet: equal totals. */
Test(profiles, k80_calibration_and_measured_profile)
{
	struct pm_profile m = load("googlenet-k80");
	double tb = 0;
	cr_assert_str_eq(m.kind, "measured");
	cr_assert_eq(m.L, 64);
	cr_assert(m.forward_assumed);
	for (int l = 0; l < m.L; l++)
		tb += m.tb_s[l];
	/* first layer: conv1/7x7_s2, 9472 parameters, 14744.1 us */
	cr_assert_eq(m.params[0], 9472);
	assert_rel(m.tb_s[0], 14744.1e-6, 1e-12);
	assert_rel(m.tf_s, tb / 2, 1e-12);
	pm_profile_release(&m);
}

Test(profiles, bad_files)
{
	struct { const char *text, *needle; } c[] = {
		{"name,params\nconv,10\n", "no 'backward_us' column"},
		{"name,params,backward_us\nconv,ten,5\n", "row 1: invalid numbers"},
		{"name,params,backward_us\nconv,10,-5\n", "row 1: invalid numbers"},
		{"name,params,backward_us\n", "has no layers"},
		{"name,params,backward_us,parallel\nemb,10,5,model\n", "model-parallel rows but no alltoall_values"},
		{"# alltoall_values: 64\nname,params,backward_us\nfc,10,5\n", "alltoall_values but no model-parallel row"},
		{"# alltoall_values: lots\nname,params,backward_us,parallel\nemb,10,5,model\n", "invalid alltoall_values"},
		{"name,params,backward_us,parallel\nemb,10,5,pipeline\n", "parallel 'pipeline' (expected data or model)"},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char path[128];
		snprintf(path, sizeof path, "/tmp/pm_prof_%d_%zu.csv", (int)getpid(), i);
		FILE *f = fopen(path, "w");
		fputs(c[i].text, f);
		fclose(f);
		struct pm_profile p;
		struct pm_err err;
		cr_assert_eq(pm_profile_load(path, &p, &err), PM_EINPUT, "%zu", i);
		cr_assert(strstr(err.msg, c[i].needle), "'%s' lacks '%s'", err.msg, c[i].needle);
		remove(path);
	}
	struct pm_profile p;
	struct pm_err err;
	cr_assert_eq(pm_profile_load("resnet5O", &p, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "did you mean 'resnet50'"), "%s", err.msg);
}

/* Sharded data parallelism by hand (search/parallel.h).  Two layers of
 * 1000 gradient bytes, backward 3 us (layer 0) and 1 us (layer 1),
 * forward 4 us, a = 0, b = 2 ns/B: an all-reduce of a layer takes 2 us, a
 * reduce-scatter or all-gather 1 us.
 * ddp, one all-reduce per layer: forward ends at 4, layer 1's gradients at
 *   5 (all-reduce 5-7), layer 0's at 8 (8-10): 10 us.
 * zero1: reduce-scatters 5-6 and 8-9, then the all-gather of all 2000
 *   bytes (2 us): 11 us.
 * zero3: gather 0 (0-1), forward 0 (1-4), gather 1 (1-2), forward 1
 *   (4-5); backward gather of 1 (5-6), backward 1 (6-7) with gather of 0
 *   prefetched (6-7), reduce-scatter 1 (7-8), backward 0 (7-10),
 *   reduce-scatter 0 (10-11): 11 us, 6 collectives, 6 us of them, 3 us
 *   exposed.
 * Memory with Psi = 100, N = 4 (ZeRO §3.1): 1600, 400 + 300, 200 + 350,
 * 400 bytes. */
Test(train, sharded_schemes_by_hand)
{
	double bytes[2] = {1000, 1000}, tb[2] = {3e-6, 1e-6};
	struct pm_iter it = {.L = 2, .bytes = bytes, .tb = tb, .tf = 4e-6, .a = 0, .b = 2e-9, .inflight = 1};
	struct pm_plan plan;
	struct pm_par_result r;
	const double t[PM_NPAR] = {10e-6, 11e-6, 11e-6, 11e-6}, mem[PM_NPAR] = {1600, 700, 550, 400};

	cr_assert_eq(pm_plan_each(2, &plan), PM_OK);
	for (int s = 0; s < PM_NPAR; s++) {
		cr_assert_eq(pm_parallel_time((enum pm_parallel)s, &it, &plan, 100, 4, &r), PM_OK);
		cr_assert(fabs(r.tm.t_iter - t[s]) < 1e-15, "%s: %.9g", pm_parallel_name((enum pm_parallel)s), r.tm.t_iter);
		cr_assert(fabs(r.state_B - mem[s]) < 1e-9, "%s: %.9g B", pm_parallel_name((enum pm_parallel)s), r.state_B);
	}
	cr_assert_eq(r.tm.calls, 6);
	cr_assert(fabs(r.tm.t_comm - 6e-6) < 1e-15);
	cr_assert(fabs(r.tm.t_c_no - 3e-6) < 1e-15);
	cr_assert_eq(pm_parallel_find("fsdp"), PM_PAR_ZERO3);
	pm_plan_release(&plan);
}

/* Several all-reduces in flight (train --in-flight N), the WFBP case by
 * hand: t_f = 5, a = 2, b = 0.5; backward order 4, 3, 2, 1, ready at 8, 9,
 * 13, 15, bytes 10, 2, 6, 4.  A group starts at max(ready, the end of the
 * group N before); its bandwidth term starts at max(start + a, the end of
 * the group before) and takes b M.
 * N = 2: 4: start 8, bandwidth 10 -> 15;  3: start 9, max(11, 15) -> 16;
 *        2: start max(13, 15) = 15, max(17, 16) -> 20;
 *        1: start max(15, 16) = 16, max(18, 20) -> 22.  t_iter 22.
 * N = 8: 2: start 13, max(15, 16) -> 19;  1: start 15, max(17, 19) -> 21.
 * N = 1 is the serial timeline (27, wfbp_by_hand). */
Test(timeline, in_flight_by_hand)
{
	double bytes[] = {4, 6, 2, 10}, tb[] = {2, 4, 1, 3};
	struct pm_iter it = {.L = 4, .bytes = bytes, .tb = tb, .tf = 5, .a = 2, .b = 0.5, .inflight = 2};
	struct pm_plan p;
	struct pm_timing t;
	double start[4], end[4];

	cr_assert_eq(pm_plan_each(4, &p), PM_OK);
	pm_plan_time(&it, &p, 0, &t);
	cr_assert_float_eq(t.t_iter, 22, 1e-12);
	cr_assert_float_eq(t.t_c_no, 7, 1e-12);
	cr_assert_float_eq(t.t_comm, 19, 1e-12);	/* all communication: unchanged */
	pm_plan_detail(&it, &p, 0, NULL, start, end);
	cr_assert_float_eq(start[2], 15, 1e-12);
	cr_assert_float_eq(end[1], 16, 1e-12);
	it.inflight = 8;
	pm_plan_time(&it, &p, 0, &t);
	cr_assert_float_eq(t.t_iter, 21, 1e-12);
	it.inflight = 1;
	pm_plan_time(&it, &p, 0, &t);
	cr_assert_float_eq(t.t_iter, 27, 1e-12);
	pm_plan_release(&p);
}

/* ---- The endpoint in the iteration (Rashidi et al. 2021 Table VI) ---- */
#include "search/system.h"

/* Compute slowdown (1 - f) S / (S - s) + f M / (M - m) by hand, NPU of 80
 * SMs and 900 GB/s:
 *   BaselineCommOpt holds 450 GB/s and 6 SMs: f = 1 -> 900/450 = 2;
 *   f = 0 -> 80/74 = 1.081081...; f = 0.5 -> (2 + 1.081081) / 2 = 1.540541.
 *   BaselineCompOpt holds 128 GB/s and 2 SMs: f = 1 -> 900/772 = 1.165803.
 *   ACE holds 128 GB/s and no SM: f = 0 -> 1 exactly. */
Test(endpoint_train, compute_factor_by_hand)
{
	struct pm_npu n;
	struct pm_err err;
	double k;

	pm_npu_default(&n);
	cr_assert_eq(pm_compute_factor(&n, 450e9, 6, &k, &err), PM_OK);
	cr_assert_float_eq(k, 2.0, 1e-12);
	n.mem_bound = 0;
	cr_assert_eq(pm_compute_factor(&n, 450e9, 6, &k, &err), PM_OK);
	cr_assert_float_eq(k, 80.0 / 74.0, 1e-12);
	n.mem_bound = 0.5;
	cr_assert_eq(pm_compute_factor(&n, 450e9, 6, &k, &err), PM_OK);
	cr_assert_float_eq(k, 1.540541, 1e-6);
	n.mem_bound = 1;
	cr_assert_eq(pm_compute_factor(&n, 128e9, 2, &k, &err), PM_OK);
	cr_assert_float_eq(k, 1.165803, 1e-6);
	n.mem_bound = 0;
	cr_assert_eq(pm_compute_factor(&n, 128e9, 0, &k, &err), PM_OK);
	cr_assert_float_eq(k, 1.0, 0);
	/* holding all of either leaves compute nothing: refused */
	cr_assert_eq(pm_compute_factor(&n, 900e9, 0, &k, &err), PM_EINPUT);
	cr_assert_eq(pm_compute_factor(&n, 0, 80, &k, &err), PM_EINPUT);
}

/* Table VI as the paper states it: CommOpt 450 GB/s + 6 SMs, CompOpt
 * 128 GB/s + 2 SMs, ACE 128 GB/s and no SM, NoOverlap everything and no
 * overlap, Ideal nothing. */
Test(endpoint_train, table6_rows)
{
	const struct pm_system *s;

	cr_assert_not_null(s = pm_system_find("baseline-commopt"));
	cr_assert_str_eq(s->mem_bw, "450GB/s");
	cr_assert_eq(s->sms, 6);
	cr_assert(s->overlap);
	cr_assert_not_null(s = pm_system_find("baseline-compopt"));
	cr_assert_str_eq(s->mem_bw, "128GB/s");
	cr_assert_eq(s->sms, 2);
	cr_assert_not_null(s = pm_system_find("ace"));
	cr_assert_eq(s->endpoint, PM_END_ACE);
	cr_assert_str_eq(s->mem_bw, "128GB/s");
	cr_assert_eq(s->sms, 0);
	cr_assert_not_null(s = pm_system_find("baseline-nooverlap"));
	cr_assert_null(s->mem_bw);
	cr_assert(!s->overlap);
	cr_assert_not_null(s = pm_system_find("ideal"));
	cr_assert_eq(s->endpoint, PM_END_IDEAL);
	cr_assert_null(pm_system_find("baseline"));
}

/* LIFO and the next forward, by hand.  Three layers (forward order 0, 1,
 * 2), backward 1 s each, forward 3 s in all (1 s a layer, in proportion
 * to backward), one all-reduce per layer (WFBP) of 3 s (a = 0, b = 3 s
 * per byte, 1 byte each).  Backward runs layer 2, 1, 0: their gradients
 * are ready at 4, 5 and 6 s; compute ends at C = 6 s.
 * FIFO: layer 2 4-7, layer 1 7-10, layer 0 10-13.
 * LIFO: layer 2 starts alone at 4 (7); at 7 layers 1 and 0 wait and the
 *   last ready, layer 0, goes first: 7-10; then layer 1 10-13.
 * Shi et al.'s iteration ends with the last all-reduce: 13 s both ways.
 * Next forward from C = 6: layer l starts at max(layer l-1 done, its
 * all-reduce done) and takes 1 s.
 *   FIFO: max(6, 13) + 1 = 14, max(14, 10) + 1 = 15, max(15, 7) + 1 = 16;
 *         the forward alone would end at 9: 7 s exposed, t_iter 13.
 *   LIFO: max(6, 10) + 1 = 11, max(11, 13) + 1 = 14, max(14, 7) + 1 = 15:
 *         6 s exposed, t_iter 12. */
Test(timeline, lifo_and_next_forward_by_hand)
{
	double bytes[3] = {1, 1, 1}, tb[3] = {1, 1, 1}, start[3], end[3];
	struct pm_iter it = {.L = 3, .bytes = bytes, .tb = tb, .tf = 3, .a = 0, .b = 3, .inflight = 1};
	struct pm_plan p;
	struct pm_timing t;

	cr_assert_eq(pm_plan_each(3, &p), 0);
	cr_assert_eq(pm_plan_time(&it, &p, 0, &t), PM_OK);
	cr_assert_float_eq(t.t_iter, 13, 1e-12);
	it.lifo = 1;
	cr_assert_eq(pm_plan_detail(&it, &p, 0, NULL, start, end), PM_OK);
	/* groups in backward order: group 0 is layer 2, group 2 layer 0 */
	cr_assert_float_eq(start[0], 4, 1e-12);
	cr_assert_float_eq(start[2], 7, 1e-12);
	cr_assert_float_eq(end[1], 13, 1e-12);
	cr_assert_eq(pm_plan_time(&it, &p, 0, &t), PM_OK);
	cr_assert_float_eq(t.t_iter, 13, 1e-12);
	it.next_forward = 1;
	cr_assert_eq(pm_plan_time(&it, &p, 0, &t), PM_OK);
	cr_assert_float_eq(t.t_iter, 12, 1e-12);
	cr_assert_float_eq(t.t_c_no, 6, 1e-12);
	it.lifo = 0;
	cr_assert_eq(pm_plan_time(&it, &p, 0, &t), PM_OK);
	cr_assert_float_eq(t.t_iter, 13, 1e-12);
	cr_assert_float_eq(t.t_c_no, 7, 1e-12);
	pm_plan_release(&p);
}

/* The next forward only ever hides communication: on random profiles,
 * under every plan kind and both orders, t_iter with next_forward is at
 * most Shi et al.'s max(compute, last all-reduce) and at least compute;
 * and FIFO with one in flight is the recurrence of Shi et al. eqs. 6-8
 * (start = max(ready, previous end)), recomputed here directly. */
Test(timeline, next_forward_never_longer)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	for (int trial = 0; trial < 200; trial++) {
		int L = 1 + (int)gsl_rng_uniform_int(r, 40);
		double *bytes = malloc(sizeof(double) * (size_t)L), *tb = malloc(sizeof(double) * (size_t)L);
		struct pm_iter it;
		struct pm_plan p;
		struct pm_timing shi, nf;
		random_iter(r, L, bytes, tb, &it);
		cr_assert_eq(trial % 2 ? pm_plan_each(L, &p) : pm_plan_buckets(&it, 1e5, 1e5, &p), 0);
		for (int lifo = 0; lifo < 2; lifo++) {
			it.lifo = lifo;
			it.next_forward = 0;
			cr_assert_eq(pm_plan_time(&it, &p, 0, &shi), PM_OK);
			it.next_forward = 1;
			cr_assert_eq(pm_plan_time(&it, &p, 0, &nf), PM_OK);
			cr_assert_leq(nf.t_iter, shi.t_iter * (1 + 1e-12));
			cr_assert_geq(nf.t_iter, nf.t_comp * (1 - 1e-12));
		}
		/* FIFO, one in flight: eqs. 6-8 directly */
		double ready = it.tf, prev = 0, last = 0;
		for (int g = 0, k = 0; g < p.n; g++) {
			double m = 0;
			for (; k < p.end[g]; k++) {
				ready += tb[L - 1 - k];
				m += bytes[L - 1 - k];
			}
			prev = fmax(ready, prev) + it.a + it.b * m;
			last = prev;
		}
		it.lifo = 0;
		it.next_forward = 0;
		cr_assert_eq(pm_plan_time(&it, &p, 0, &shi), PM_OK);
		cr_assert(fabs(shi.t_iter - fmax(shi.t_comp, last)) <= 1e-12 * shi.t_iter);
		pm_plan_release(&p);
		free(bytes);
		free(tb);
	}
	gsl_rng_free(r);
}

/* A hybrid profile split (DLRM-like): rows in forward order bottom
 * (data), emb0, emb1 (model), top0, top1 (data).  The model rows leave
 * the timeline: 3 data rows remain, in order; their parameters and
 * backward are summed; two data rows lie above the last embedding, so
 * the backward all-to-all is ready after two backward positions. */
Test(hybrid, profile_split)
{
	char path[128];
	snprintf(path, sizeof path, "/tmp/pm_hyb_%d.csv", (int)getpid());
	FILE *f = fopen(path, "w");
	fputs("# alltoall_values: 1000\nname,params,backward_us,forward_us,parallel\n"
	      "bottom,10,1,0.5,data\nemb0,100,2,0,model\nemb1,200,3,0,model\n"
	      "top0,20,4,2,\ntop1,30,5,2.5,data\n", f);
	fclose(f);
	struct pm_profile p;
	struct pm_hybrid h;
	struct pm_err err;
	cr_assert_eq(pm_profile_load(path, &p, &err), PM_OK, "%s", err.msg);
	remove(path);
	cr_assert_float_eq(p.a2a_values, 1000, 0);
	assert_rel(p.tf_s, 5e-6, 1e-12);	/* every row's forward */
	pm_profile_split(&p, &h);
	cr_assert_eq(p.L, 3);
	cr_assert_str_eq(p.names[0], "bottom");
	cr_assert_str_eq(p.names[1], "top0");
	cr_assert_str_eq(p.names[2], "top1");
	cr_assert_float_eq(p.params[1], 20, 0);
	cr_assert_eq(h.rows, 2);
	cr_assert_float_eq(h.params, 300, 0);
	assert_rel(h.tb_s, 5e-6, 1e-12);
	cr_assert_eq(h.a2a_pos, 2);
	pm_profile_release(&p);
}

/* The hybrid timeline by hand.  Three data layers (forward order 0, 1,
 * 2), backward 1 s each, forward 3 s, one all-reduce per layer of 1 s
 * (a = 0, b = 1 s/B, 1 byte each); one layer above the embeddings
 * (a2a_pos = 1); all-to-all of 2 bytes at 0.5 s + 1 s/B: 2.5 s; the
 * embeddings' update 2 s.
 * Backward: layer 2 ready at 4, the all-to-all too (once position 0,
 * layer 2, is done), layer 1 at 5, layer 0 at 6; compute ends at 6.
 * FIFO (by ready time, the all-to-all after groups ready no later):
 *   layer 2 4-5; all-to-all 5: startup to 5.5, bandwidth to 7.5;
 *   layer 1 7.5-8.5; layer 0 8.5-9.5.  Update: max(6, 7.5) + 2 = 9.5.
 *   t_iter = max(9.5, 9.5) + the forward's all-to-all 2.5 = 12;
 *   t_comp = 6 + 2 = 8; t_comm = 3 + 2 x 2.5 = 8.
 * LIFO: at 4 layer 2's group and the all-to-all are both ready, the
 *   all-to-all queued after it, so it goes first: 4-6.5; at 6.5 layers 2,
 *   1 and 0 wait (ready 4, 5, 6) and go last ready first: layer 0
 *   6.5-7.5, layer 1 7.5-8.5, layer 2 8.5-9.5.  Update max(6, 6.5) + 2 =
 *   8.5; t_iter = max(8.5, 9.5) + 2.5 = 12, the same total by another
 *   route.
 * Without the all-to-all: 4-5, 5-6, 6-7 and t_iter = max(6, 7) = 7. */
Test(hybrid, timeline_by_hand)
{
	double bytes[3] = {1, 1, 1}, tb[3] = {1, 1, 1};
	struct pm_iter it = {.L = 3, .bytes = bytes, .tb = tb, .tf = 3, .a = 0, .b = 1, .inflight = 1,
			     .a2a_B = 2, .a2a_a = 0.5, .a2a_b = 1, .a2a_pos = 1, .emb_tb = 2};
	struct pm_plan p;
	struct pm_timing t;
	double start[3], end[3];

	cr_assert_eq(pm_plan_each(3, &p), 0);
	cr_assert_eq(pm_plan_time(&it, &p, 0, &t), PM_OK);
	cr_assert_float_eq(t.t_iter, 12, 1e-12);
	cr_assert_float_eq(t.t_comp, 8, 1e-12);
	cr_assert_float_eq(t.t_c_no, 4, 1e-12);
	cr_assert_float_eq(t.t_comm, 8, 1e-12);
	cr_assert_eq(t.calls, 3);
	cr_assert_eq(pm_plan_detail(&it, &p, 0, NULL, start, end), PM_OK);
	cr_assert_float_eq(start[1], 7.5, 1e-12);	/* layer 1 waits for the all-to-all */
	cr_assert_float_eq(end[2], 9.5, 1e-12);
	it.lifo = 1;
	cr_assert_eq(pm_plan_time(&it, &p, 0, &t), PM_OK);
	cr_assert_float_eq(t.t_iter, 12, 1e-12);
	cr_assert_eq(pm_plan_detail(&it, &p, 0, NULL, start, end), PM_OK);
	cr_assert_float_eq(start[2], 6.5, 1e-12);	/* layer 0 first after the all-to-all */
	cr_assert_float_eq(end[0], 9.5, 1e-12);		/* layer 2 last */
	/* no all-to-all: the data-parallel timeline, unchanged */
	it.a2a_B = 0;
	it.emb_tb = 0;
	it.lifo = 0;
	cr_assert_eq(pm_plan_time(&it, &p, 0, &t), PM_OK);
	cr_assert_float_eq(t.t_iter, 7, 1e-12);
	pm_plan_release(&p);
}

/* The shipped DLRM profile (scripts/make-models), checked against its
 * architecture by hand: bottom MLP 13-512-256-128 has 13x512+512 +
 * 512x256+256 + 256x128+128 = 171,392 parameters; top MLP
 * 479-1024-1024-512-256-1 has 479x1024+1024 + 1024x1024+1024 +
 * 1024x512+512 + 512x256+256 + 256+1 = 2,197,505; 26 tables of 10^6 x 128
 * (assumed rows) are model parallel; the all-to-all carries batch 512 x
 * 26 tables x 128 = 1,703,936 values; 10 data rows (the top MLP's) lie
 * above the embeddings. */
Test(hybrid, dlrm_profile)
{
	struct pm_profile p;
	struct pm_hybrid h;
	struct pm_err err;
	double dense = 0;

	cr_assert_eq(pm_profile_load("dlrm", &p, &err), PM_OK, "%s", err.msg);
	cr_assert_float_eq(p.a2a_values, 1703936, 0);
	pm_profile_split(&p, &h);
	for (int l = 0; l < p.L; l++)
		dense += p.params[l];
	cr_assert_float_eq(dense, 171392 + 2197505, 0);
	cr_assert_eq(h.rows, 26);
	cr_assert_float_eq(h.params, 26 * 128e6, 0);
	cr_assert_eq(h.a2a_pos, 10);
	pm_profile_release(&p);
}

/* The H100 profiles are the measured timelines: each profile's backward
 * is the last gradient's ready time and its forward the step's measured
 * forward, as its note line states them from the timeline's header
 * (gpt2-small-h100: 39.122 ms and 28.049 ms; llama-1b-h100: 110.551 and
 * 57.525), and it says it is measured, on an H100. */
Test(train, measured_h100_profiles)
{
	static const struct { const char *name; double bwd_ms, fwd_ms; } want[] = {
		{"gpt2-small-h100", 39.122, 28.049}, {"llama-1b-h100", 110.551, 57.525}, {"resnet50-h100", 16.220, 11.829},
	};
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		struct pm_profile p;
		struct pm_err err;
		double tb = 0;
		cr_assert_eq(pm_profile_load(want[k].name, &p, &err), PM_OK, "%s", err.msg);
		for (int i = 0; i < p.L; i++)
			tb += p.tb_s[i];
		assert_rel(tb * 1e3, want[k].bwd_ms, 1e-3);
		assert_rel(p.tf_s * 1e3, want[k].fwd_ms, 1e-3);
		cr_assert(strstr(p.kind, "measured"), "%s", p.kind);
		cr_assert(strstr(p.device, "H100"), "%s", p.device);
		pm_profile_release(&p);
	}
}
