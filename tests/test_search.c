/* test_search.c: hierarchy search, machine model and calibration.
 * Expected values: Ueno & Yokota 2019's equations (1) and (2) worked by hand, OEIS
 * A074206, the enumeration and the dynamic programme checked against each
 * other, and least-squares fits checked against the normal equations
 * computed here from scratch. */
#include "helpers.h"
#include "model/machine.h"
#include "model/preset.h"
#include "model/text.h"
#include "search/fit.h"
#include "search/hier.h"
#include "search/pricer.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

static struct pm_machine abci(void)
{
	struct pm_machine m;
	struct pm_err err;
	cr_assert_eq(pm_machine_load("abci", &m, &err), PM_OK, "%s", err.msg);
	return m;
}

/* Seed 001 eqs. (1) and (2) at alpha = 4.80 us, B_IB = 1/(9301.19 MB/s),
 * s = 2, n = 128 MiB, for P nodes of 4 GPUs:
 *   (1) 4 x P:  T = 2 s alpha (2 + P) + 2 n B_IB (9/16 - 1/(2P))
 *   (2) flat:   T = 2 s alpha (4P - 1) + 2 n B_IB (1/2 - 1/(8P)). */
Test(hier, seed001_equations_1_and_2)
{
	struct pm_machine m = abci();
	double alpha = 4.80e-6, B = 1 / 9301.19e6, n = 128.0 * 1048576;
	int Ps[] = {2, 3, 7, 8, 17, 32};
	for (size_t i = 0; i < sizeof Ps / sizeof Ps[0]; i++) {
		int P = Ps[i], two[2] = {4, P}, flat[1] = {4 * P};
		double t1, t2;
		struct pm_err err;
		cr_assert_eq(pm_hier_time(&m, two, 2, n, alpha, 2, &t1, NULL, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(pm_hier_time(&m, flat, 1, n, alpha, 2, &t2, NULL, &err), PM_OK);
		assert_rel(t1, 2 * 2 * alpha * (2 + P) + 2 * n * B * (9.0 / 16 - 1.0 / (2 * P)), 1e-12);
		assert_rel(t2, 2 * 2 * alpha * (4 * P - 1) + 2 * n * B * (0.5 - 1.0 / (8 * P)), 1e-12);
	}
}

/* Seed 001 SIV-D: "for the B (inverse bandwidth) term Ring-AllReduce is
 * smaller for P > 6": 9/16 - 1/(2P) > 1/2 - 1/(8P) <=> P > 6, equal at 6. */
Test(hier, bandwidth_term_crossover_at_six)
{
	struct pm_machine m = abci();
	for (int P = 2; P <= 32; P++) {
		int two[2] = {4, P}, flat[1] = {4 * P};
		double t1, t2;
		struct pm_err err;
		pm_hier_time(&m, two, 2, 1e9, 0, 2, &t1, NULL, &err);
		pm_hier_time(&m, flat, 1, 1e9, 0, 2, &t2, NULL, &err);
		if (P > 6)
			cr_assert_gt(t1, t2 * (1 + 1e-12), "P = %d", P);
		else if (P < 6)
			cr_assert_lt(t1, t2 * (1 - 1e-12), "P = %d", P);
		else
			assert_rel(t1, t2, 1e-12);
	}
}

/* OEIS A074206, the number of ordered factorizations: a(1..30) =
 * 1,1,1,2,1,3,1,4,2,3,1,8,1,3,3,8,1,8,1,8,3,3,1,20,2,3,4,8,1,13; a(2^k) =
 * 2^(k-1); for k distinct primes the Fubini numbers 1, 3, 13, 75, 541. */
Test(hier, ordered_factorization_counts)
{
	const double a[] = {1, 1, 1, 2, 1, 3, 1, 4, 2, 3, 1, 8, 1, 3, 3, 8, 1, 8, 1, 8,
			    3, 3, 1, 20, 2, 3, 4, 8, 1, 13};
	for (int n = 1; n <= 30; n++)
		cr_assert_eq(pm_hier_count(n), a[n - 1], "a(%d) = %g", n, pm_hier_count(n));
	for (int k = 1; k <= 40; k++)
		cr_assert_eq(pm_hier_count(1LL << k), ldexp(1, k - 1), "k = %d", k);
	cr_assert_eq(pm_hier_count(210), 75);	/* 2*3*5*7 */
	cr_assert_eq(pm_hier_count(2310), 541);	/* 2*3*5*7*11 */
	cr_assert_eq(pm_hier_count(1000003), 1);	/* prime */
}

static struct pm_hier_query query(const struct pm_machine *m, long long P,
				  int K, enum pm_hier_method method)
{
	return (struct pm_hier_query){.m = m, .P = P, .n = 128.0 * 1048576,
				      .alpha_s = 4.80e-6, .s = 2, .top = K,
				      .method = method, .enum_limit = 1e6};
}

/* Listing every factorization and the dynamic programme over divisors are
 * independent searches: they must agree on the best hierarchy (and its
 * time, bit for bit) for every P up to 4096, and on the top 5 for a few. */
Test(hier, enumeration_equals_dynamic_programme)
{
	struct pm_machine m = abci();
	for (long long P = 1; P <= 4096; P++) {
		struct pm_hier a, b;
		struct pm_hier_stats sa, sb;
		struct pm_err err;
		int na, nb;
		struct pm_hier_query qa = query(&m, P, 1, PM_HIER_ENUM), qb = query(&m, P, 1, PM_HIER_DP);
		cr_assert_eq(pm_hier_search(&qa, &a, &na, &sa, &err), PM_OK, "P=%lld: %s", P, err.msg);
		cr_assert_eq(pm_hier_search(&qb, &b, &nb, &sb, &err), PM_OK);
		cr_assert_eq(sa.priced, sa.factorizations, "P=%lld listed %g of %g", P, sa.priced, sa.factorizations);
		cr_assert_eq(a.time_s, b.time_s, "P=%lld: %.17g vs %.17g", P, a.time_s, b.time_s);
		cr_assert_eq(a.h, b.h, "P=%lld", P);
		for (int i = 0; i < a.h; i++)
			cr_assert_eq(a.layers[i], b.layers[i], "P=%lld", P);
	}
	long long some[] = {128, 256, 720, 1024, 2048, 3072};
	for (size_t k = 0; k < sizeof some / sizeof some[0]; k++) {
		struct pm_hier a[5], b[5];
		struct pm_hier_stats s;
		struct pm_err err;
		int na, nb;
		struct pm_hier_query qa = query(&m, some[k], 5, PM_HIER_ENUM), qb = query(&m, some[k], 5, PM_HIER_DP);
		pm_hier_search(&qa, a, &na, &s, &err);
		pm_hier_search(&qb, b, &nb, &s, &err);
		cr_assert_eq(na, nb);
		for (int i = 0; i < na; i++)
			cr_assert_eq(a[i].time_s, b[i].time_s, "P=%lld rank %d", some[k], i);
	}
}

/* The dynamic programme on P with many divisors or many factors. */
Test(hier, large_process_counts)
{
	struct pm_machine m;
	struct pm_err err;
	struct pm_hier h[3];
	struct pm_hier_stats st;
	int n;
	const char *path = "/tmp/pm_big_machine.csv";
	FILE *f = fopen(path, "w");
	fputs("kind,name,count,inner_bw,egress_bw,flow_bw,value,source\n"
	      "level,node,8,450GB/s,400GB/s,,,\nlevel,pod,1024,,,,,\nlevel,world,1024,,,,,\n", f);
	fclose(f);
	cr_assert_eq(pm_machine_load(path, &m, &err), PM_OK, "%s", err.msg);
	long long Ps[] = {720720, 1LL << 20, 999983};
	for (size_t i = 0; i < 3; i++) {
		struct pm_hier_query q = query(&m, Ps[i], 3, PM_HIER_DP);
		cr_assert_eq(pm_hier_search(&q, h, &n, &st, &err), PM_OK, "%s", err.msg);
		long long prod = 1;
		for (int j = 0; j < h[0].h; j++)
			prod *= h[0].layers[j];
		cr_assert_eq(prod, Ps[i]);
	}
	/* AUTO lists factorizations only up to the limit */
	struct pm_hier_query q = query(&m, 720720, 1, PM_HIER_AUTO);
	cr_assert_eq(pm_hier_search(&q, h, &n, &st, &err), PM_OK);
	cr_assert_eq(st.method, PM_HIER_DP);
	cr_assert_gt(st.factorizations, 1e6);
	remove(path);
}

/* Edge cases: one process, a prime count (only the flat ring), a count
 * the machine cannot hold, --aligned on a count that cannot align. */
Test(hier, edge_cases)
{
	struct pm_machine m = abci();
	struct pm_hier h[5];
	struct pm_hier_stats st;
	struct pm_err err;
	int n;
	struct pm_hier_query q = query(&m, 1, 5, PM_HIER_AUTO);
	cr_assert_eq(pm_hier_search(&q, h, &n, &st, &err), PM_OK);
	cr_assert_eq(n, 1);
	cr_assert_eq(h[0].h, 0);
	cr_assert_eq(h[0].time_s, 0);
	q = query(&m, 1031, 5, PM_HIER_AUTO);
	cr_assert_eq(pm_hier_search(&q, h, &n, &st, &err), PM_OK);
	cr_assert_eq(n, 1);
	cr_assert_eq(h[0].h, 1);
	cr_assert_eq(h[0].layers[0], 1031);
	q = query(&m, 5000, 5, PM_HIER_AUTO);
	cr_assert_eq(pm_hier_search(&q, h, &n, &st, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "holds 4096 accelerators"), "%s", err.msg);
	q = query(&m, 6, 5, PM_HIER_AUTO);
	q.aligned = 1;
	cr_assert_eq(pm_hier_search(&q, h, &n, &st, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "a node holds 4"), "%s", err.msg);
}

/* With --aligned every machine unit below P is a layer boundary: for 512
 * processes on ABCI the prefix products include 4 (node) and 128 (rack). */
Test(hier, aligned_hierarchies_cut_at_every_level)
{
	struct pm_machine m = abci();
	struct pm_hier h[20];
	struct pm_hier_stats st;
	struct pm_err err;
	int n;
	struct pm_hier_query q = query(&m, 512, 20, PM_HIER_ENUM);
	q.aligned = 1;
	cr_assert_eq(pm_hier_search(&q, h, &n, &st, &err), PM_OK);
	for (int i = 0; i < n; i++) {
		int has4 = 0, has128 = 0;
		long long prod = 1;
		for (int j = 0; j < h[i].h; j++) {
			prod *= h[i].layers[j];
			has4 |= prod == 4;
			has128 |= prod == 128;
		}
		cr_assert(has4 && has128, "hierarchy %d does not cut at node and rack", i);
	}
}

/* The layer bandwidth rule on ABCI by hand: a ring inside a node runs at
 * NVLink's 12 x IB; a layer of stride 4 crossing nodes has 4 rings
 * leaving each node over 2 HCAs: 2 x 9301.19 / 4 MB/s; the flat ring one
 * flow: 2 x 9301.19; a layer crossing racks at stride 128 has 128 flows
 * out of a rack's 32 x 18602.38 / 3 MB/s = 1550.2 MB/s each, below the
 * node share. */
Test(hier, abci_layer_bandwidths)
{
	struct pm_machine m = abci();
	struct pm_layer_bw w;
	struct pm_err err;
	pm_machine_layer(&m, 1, 4, &w, &err);
	assert_rel(w.bw_Bps, 12 * 9301.19e6, 1e-9);
	cr_assert_eq(w.crossed, -1);
	pm_machine_layer(&m, 4, 32, &w, &err);
	assert_rel(w.bw_Bps, 2 * 9301.19e6 / 4, 1e-9);
	cr_assert_eq(w.flows, 4);
	pm_machine_layer(&m, 1, 128, &w, &err);
	assert_rel(w.bw_Bps, 2 * 9301.19e6, 1e-9);
	pm_machine_layer(&m, 128, 2, &w, &err);
	assert_rel(w.bw_Bps, 32 * 18602.38e6 / 3 / 128, 1e-6);
	cr_assert_str_eq(m.level[w.crossed].name, "rack");
}

/* Seed 001 SV-B5: 4x8x4x2 adds a layer to 4x8x4; 4x8x4x4 doubles the last
 * layer of 4x8x4x2; 4x8x8x4 doubles the third of 4x8x4x4; 4x32 is not an
 * extension of 4x8x4. */
Test(hier, extends)
{
	struct pm_hier a = {.layers = {4, 8, 4, 2}, .h = 4}, b = {.layers = {4, 8, 4}, .h = 3};
	struct pm_hier c = {.layers = {4, 8, 4, 4}, .h = 4}, d = {.layers = {4, 8, 8, 4}, .h = 4};
	struct pm_hier e = {.layers = {4, 32}, .h = 2};
	int where;
	cr_assert_eq(pm_hier_extends(&a, &b, &where), 1);
	cr_assert_eq(where, 3);
	cr_assert_eq(pm_hier_extends(&c, &a, &where), 2);
	cr_assert_eq(where, 3);
	cr_assert_eq(pm_hier_extends(&d, &c, &where), 2);
	cr_assert_eq(where, 2);
	cr_assert_eq(pm_hier_extends(&e, &b, &where), 0);
	char name[64];
	pm_hier_name(&a, name, sizeof name);
	cr_assert_str_eq(name, "4x8x4x2");
}

static const char *tmpfile_with(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof path, "/tmp/pm_search_%d_%s", (int)getpid(), name);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

Test(machine, bad_files)
{
	struct { const char *name, *text, *needle; } c[] = {
		{"m1.csv", "kind,name,count\nlevel,node,4\n", "no 'inner_bw' column"},
		{"m2.csv", "kind,name,count,inner_bw,egress_bw,flow_bw,value,source\nlevel,node,four,1GB/s,,,,\n", "invalid count 'four'"},
		{"m3.csv", "kind,name,count,inner_bw,egress_bw,flow_bw,value,source\nlevel,node,4,fast,,,,\n", "invalid inner_bw 'fast'"},
		{"m4.csv", "kind,name,count,inner_bw,egress_bw,flow_bw,value,source\nparam,alpha,,,,,5,\n", "invalid alpha '5'"},
		{"m5.csv", "kind,name,count,inner_bw,egress_bw,flow_bw,value,source\nparam,alpha,,,,,5us,\n", "no level rows"},
		{"m6.csv", "kind,name,count,inner_bw,egress_bw,flow_bw,value,source\nshelf,node,4,1GB/s,,,,\n", "invalid kind 'shelf'"},
		{"m7.csv", "kind,name,count,inner_bw,egress_bw,flow_bw,value,source\nlevel,node,4,,,,,\n", "neither inner_bw nor egress_bw"},
		/* JSON values of the wrong type (hostile input, round three) */
		{"j1.json", "{\"pipeline\": \"2\", \"levels\": [{\"name\": \"node\", \"count\": 8, \"inner_bw\": \"450GB/s\"}]}", "key 'pipeline': invalid pipeline '2' (expected an integer"},
		{"j2.json", "{\"description\": 5, \"levels\": [{\"name\": \"node\", \"count\": 8, \"inner_bw\": \"450GB/s\"}]}", "key 'description': invalid description 'a number' (expected text"},
		{"j3.json", "{\"levels\": [{\"name\": \"node\", \"count\": \"8\", \"inner_bw\": \"450GB/s\"}]}", "invalid count '8' (expected an integer"},
		{"j4.json", "{\"levels\": [{\"name\": \"node\", \"count\": 8, \"inner_bw\": 450}]}", "invalid inner_bw 'a number' (expected text"},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct pm_machine m;
		struct pm_err err;
		const char *p = tmpfile_with(c[i].name, c[i].text);
		cr_assert_eq(pm_machine_load(p, &m, &err), PM_EINPUT, "%s accepted", c[i].name);
		cr_assert(strstr(err.msg, c[i].needle), "'%s' lacks '%s'", err.msg, c[i].needle);
		remove(p);
	}
	struct pm_machine m;
	struct pm_err err;
	cr_assert_eq(pm_machine_load("abcj", &m, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "did you mean 'abci'"), "%s", err.msg);
	cr_assert_eq(pm_machine_load("/nonexistent/x.csv", &m, &err), PM_EINPUT);
	cr_assert_eq(pm_machine_load("../etc", &m, &err), PM_EINPUT);
}

/* Every preset loads and names a source for every level. */
Test(machine, presets)
{
	char **names;
	int n;
	cr_assert_eq(pm_preset_names("machines", &names, &n), PM_OK);
	cr_assert_geq(n, 3);
	for (int i = 0; i < n; i++) {
		struct pm_machine m;
		struct pm_err err;
		cr_assert_eq(pm_machine_load(names[i], &m, &err), PM_OK, "%s: %s", names[i], err.msg);
		cr_assert(m.description[0], "%s has no description", names[i]);
		for (int k = 0; k < m.nlevels; k++)
			cr_assert(m.level[k].source[0], "%s level %s has no source", names[i], m.level[k].name);
	}
	pm_free_strings(names, n);
}

/* Ordinary least squares from the normal equations, written out here
 * independently of GSL: beta = (n Sxy - Sx Sy) / (n Sxx - Sx^2). */
static void normal_equations(const struct pm_points *p, double *a, double *b)
{
	long double n = p->n, sx = 0, sy = 0, sxy = 0, sxx = 0;
	for (int i = 0; i < p->n; i++) {
		sx += p->size_B[i];
		sy += p->time_s[i];
		sxy += (long double)p->size_B[i] * p->time_s[i];
		sxx += (long double)p->size_B[i] * p->size_B[i];
	}
	*b = (double)((n * sxy - sx * sy) / (n * sxx - sx * sx));
	*a = (double)((sy - *b * sx) / n);
}

/* Synthetic points time = 4.385 us + size / 9.30119 GB/s plus Gaussian
 * noise of 0.7 us (GSL mt19937, seed 2024): the fit recovers both within
 * four of its own standard errors, and exactly without noise. */
Test(fit, recovers_synthetic_parameters)
{
	const double alpha = 4.385e-6, beta = 1 / 9.30119e9;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 2024);
	struct pm_points exact = {0}, noisy = {0};
	for (double s = 1024; s <= 64.0 * 1048576; s *= 1.5) {
		pm_points_add(&exact, s, alpha + s * beta);
		pm_points_add(&noisy, s, alpha + s * beta + gsl_ran_gaussian(r, 0.7e-6));
	}
	gsl_rng_free(r);
	struct pm_fit f;
	struct pm_err err;
	cr_assert_eq(pm_fit_line(&exact, 0, 0, &f, &err), PM_OK);
	assert_rel(f.alpha_s, alpha, 1e-6);
	assert_rel(f.beta_spB, beta, 1e-9);
	assert_rel(f.r2, 1, 1e-12);
	cr_assert_eq(pm_fit_line(&noisy, 0, 0, &f, &err), PM_OK);
	cr_assert_lt(fabs(f.alpha_s - alpha), 4 * f.se_alpha_s, "alpha %g +- %g", f.alpha_s, f.se_alpha_s);
	cr_assert_lt(fabs(f.beta_spB - beta), 4 * f.se_beta_spB, "beta %g +- %g", f.beta_spB, f.se_beta_spB);
	cr_assert_gt(f.se_alpha_s, 0);
	pm_points_release(&exact);
	pm_points_release(&noisy);
}

/* The shared OSU logs (10GbE cluster, Shi et al. (MG-WFBP)'s authors): 266 points
 * each; the fit equals the normal equations computed above. */
Test(fit, shared_osu_logs)
{
	const char *logs[] = {"osu_allreduce_2nodes.log", "osu_allreduce_4nodes.log",
			      "osu_allreduce_8nodes.log"};
	for (int i = 0; i < 3; i++) {
		char path[512];
		struct pm_points p;
		struct pm_fit f;
		struct pm_err err;
		double a, b;
		snprintf(path, sizeof path, "%s/data/measurements/%s", getenv("PM_SRCDIR"), logs[i]);
		cr_assert_eq(pm_points_read(path, PM_POINTS_AUTO, &p, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(p.format, PM_POINTS_OSU);
		cr_assert_eq(p.n, 266, "%s: %d points", logs[i], p.n);
		cr_assert_eq(pm_fit_line(&p, 0, 0, &f, &err), PM_OK);
		normal_equations(&p, &a, &b);
		assert_rel(f.alpha_s, a, 1e-9);
		assert_rel(f.beta_spB, b, 1e-9);
		cr_assert(f.r2 > 0.9 && f.r2 <= 1, "%s: R^2 %g", logs[i], f.r2);
		pm_points_release(&p);
	}
}

/* nccl-tests output with and without the root column (the out-of-place
 * time is used: 21.88 us at 8 B, 145.2 us at 1 MiB). */
Test(fit, nccl_tests_and_csv_inputs)
{
	const char *nccl =
		"# nThread 1 nGpus 8 minBytes 8 maxBytes 1048576 step: 2(factor)\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
		"           8             2     float     sum      -1    21.88    0.00    0.00      0    21.56    0.00    0.00      0\n"
		"       65536         16384     float     sum      -1    30.10    2.18    3.81      0    29.90    2.19    3.84      0\n"
		"     1048576        262144     float     sum      -1   145.20    7.22   12.64      0   144.10    7.28   12.73      0\n"
		"# Avg bus bandwidth    : 5.48\n";
	const char *old =
		"#  size  count  type redop  time algbw busbw error  time algbw busbw error\n"
		"      8      2 float   sum  21.88  0.00  0.00  0e+00  21.56  0.00  0.00  0e+00\n"
		"  65536  16384 float   sum  30.10  2.18  3.81  0e+00  29.90  2.19  3.84  0e+00\n"
		"1048576 262144 float   sum 145.20  7.22 12.64  0e+00 144.10  7.28 12.73  0e+00\n";
	const char *csv = "size,time\n8,21.88us\n64K,30.10us\n1M,145.2us\n";
	const char *csv2 = "size_B,time_us\n8,21.88\n65536,30.10\n1048576,145.2\n";
	const char *texts[] = {nccl, old, csv, csv2};
	enum pm_points_format want[] = {PM_POINTS_NCCL, PM_POINTS_NCCL, PM_POINTS_CSV, PM_POINTS_CSV};
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof name, "in%d.txt", i);
		const char *path = tmpfile_with(name, texts[i]);
		struct pm_points p;
		struct pm_err err;
		cr_assert_eq(pm_points_read(path, i == 1 ? PM_POINTS_NCCL : PM_POINTS_AUTO, &p, &err), PM_OK,
			     "%d: %s", i, err.msg);
		cr_assert_eq(p.format, want[i]);
		cr_assert_eq(p.n, 3);
		assert_rel(p.time_s[0], 21.88e-6, 1e-12);
		assert_rel(p.size_B[2], 1048576, 1e-12);
		assert_rel(p.time_s[2], 145.2e-6, 1e-12);
		pm_points_release(&p);
		remove(path);
	}
}

Test(fit, bad_inputs)
{
	struct { const char *name, *text, *needle; int fmt; } c[] = {
		{"b1.csv", "size,latency\n1,2us\n", "no time column", PM_POINTS_CSV},
		{"b2.csv", "size,time\nbig,2us\n", "invalid size 'big'", PM_POINTS_CSV},
		{"b3.csv", "size,time\n8,2\n", "invalid time '2'", PM_POINTS_CSV},
		{"b4.txt", "# OSU\n8 abc\n", "line 2", PM_POINTS_OSU},
		{"b5.txt", "8 1 float sum -1 2\n", "nccl-tests result row", PM_POINTS_NCCL},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct pm_points p;
		struct pm_err err;
		const char *path = tmpfile_with(c[i].name, c[i].text);
		cr_assert_eq(pm_points_read(path, (enum pm_points_format)c[i].fmt, &p, &err), PM_EINPUT, "%s", c[i].name);
		cr_assert(strstr(err.msg, c[i].needle), "'%s' lacks '%s'", err.msg, c[i].needle);
		remove(path);
	}
	struct pm_points p = {0};
	struct pm_fit f;
	struct pm_err err;
	pm_points_add(&p, 8, 1e-6);
	pm_points_add(&p, 16, 2e-6);
	cr_assert_eq(pm_fit_line(&p, 0, 0, &f, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "too few points"));
	pm_points_add(&p, 16, 3e-6);
	pm_points_release(&p);
	pm_points_add(&p, 8, 1e-6);
	pm_points_add(&p, 8, 2e-6);
	pm_points_add(&p, 8, 3e-6);
	cr_assert_eq(pm_fit_line(&p, 0, 0, &f, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "same size"), "%s", err.msg);
	pm_points_release(&p);
	cr_assert_eq(pm_points_read("/nonexistent.log", PM_POINTS_AUTO, &p, &err), PM_EINPUT);
}

/* The pricing order of a command's algorithms (pm_pricer_chains).  A ring
 * all-reduce stores one reduce-scatter and one all-gather step of P
 * transfers a channel: 2P (8 on ring:4, 32 on ring:16).  Two rings on
 * ring:4 build the same schedule, so they form one chain (16 transfers);
 * an instance that did not resolve (NULL) is a chain of its own with
 * none; the ring on ring:16 (32) goes first, then ring:4's chain, then
 * the empty one.  Equal chains keep their given order. */
Test(pricer, chains_by_schedule_largest_first)
{
	struct pm_topo *t4 = topo_or_die("ring:4"), *t8 = topo_or_die("ring:8"), *t16 = topo_or_die("ring:16");
	struct pm_inst a, b, c, d;
	int chain[5], order[4];

	resolve_or_die("ring", t4, 0, &a);
	resolve_or_die("ring", t4, 0, &b);
	resolve_or_die("ring", t16, 0, &c);
	resolve_or_die("ring", t8, 0, &d);
	const struct pm_inst *ins[] = {&a, &b, NULL, &c};
	cr_assert_eq(pm_pricer_chains(ins, 4, chain, order), 3);
	cr_assert(chain[0] == 0 && chain[1] == 2 && chain[2] == 3 && chain[3] == 4, "%d %d %d %d", chain[0],
		  chain[1], chain[2], chain[3]);
	cr_assert(order[0] == 2 && order[1] == 0 && order[2] == 1, "%d %d %d", order[0], order[1], order[2]);
	const struct pm_inst *tie[] = {&d, &a, &b};	/* 16 and 8 + 8 */
	cr_assert_eq(pm_pricer_chains(tie, 3, chain, order), 2);
	cr_assert(order[0] == 0 && order[1] == 1, "%d %d", order[0], order[1]);
	pm_topo_free(t4);
	pm_topo_free(t8);
	pm_topo_free(t16);
}
