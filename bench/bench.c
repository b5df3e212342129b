/* bench.c: the benchmark program behind the speed targets of the issues
 * (not part of the test suite: timings belong here, not in tests).
 *
 *   build/perfmodel-bench [all|allreduce|coll|large|scale|multitree|hier|sizes|train|sweep|plan|sim]
 *
 * Each case reports the best of several runs (wall clock, CLOCK_MONOTONIC)
 * and the process's peak resident memory at the end. */
#include "model/algo.h"
#include "model/eval.h"
#include "model/machine.h"
#include "search/hier.h"
#include "search/layout_search.h"
#include "cli/cli.h"
#include "search/pool.h"
#include "search/train.h"
#include "sim/psim.h"

#include <gsl/gsl_errno.h>
#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long peak_rss_kB(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Build every applicable algorithm's schedule on spec and price it once
 * with the contention evaluator at 64 MiB; return the total seconds, and
 * in *eval_s the part spent pricing (schedules already built). */
static double coll_once(enum pm_coll coll, const struct pm_topo *t, int verbose, double *eval_s)
{
	int n;
	const struct pm_algo *const *all = pm_algos(&n);
	struct pm_params p;
	double total = 0;

	pm_params_default(&p);
	*eval_s = 0;
	for (int i = 0; i < n; i++) {
		struct pm_inst in;
		struct pm_sched s;
		struct pm_cost c;
		struct pm_err err;
		double t0 = now();
		if (!pm_algo_does(all[i], coll) ||
		    pm_algo_resolve_coll(coll, all[i]->name, t, 0, &in, &err) != PM_OK ||
		    pm_algo_at_size(&in, 64.0 * 1048576, &in, &err) != PM_OK)
			continue;
		if (pm_algo_schedule(&in, &s, &err) != PM_OK) {
			if (verbose)
				printf("    %-14s skipped: %s\n", in.label, err.msg);
			continue;
		}
		double t1 = now();
		pm_algo_contention(&in, &s, 64.0 * 1048576, &p, &c, NULL, &err);
		double dt = now() - t0, de = now() - t1;
		total += dt;
		*eval_s += de;
		if (verbose)
			printf("    %-14s %9.3f ms, pricing %9.3f ms  (%zu transfers, %d steps)\n", in.label,
			       dt * 1e3, de * 1e3, s.nx, s.nsteps);
		pm_sched_release(&s);
	}
	return total;
}

static double allreduce_once(const struct pm_topo *t, int verbose, double *eval_s)
{
	return coll_once(PM_COLL_ALLREDUCE, t, verbose, eval_s);
}

/* Issue 12: every collective, all its algorithms, contention evaluator at
 * 64 MiB, each within the time the all-reduce takes on the network (best
 * of reps, a fresh network each time). */
static void bench_collectives(const char *spec, int reps)
{
	double ar = 0;

	printf("every collective on %s, all algorithms, contention evaluator, 64M (best of %d):\n", spec, reps);
	for (int c = 0; c < PM_NCOLL; c++) {
		double best = 1e30, e;
		for (int r = 0; r < reps; r++) {
			struct pm_topo *t;
			struct pm_err err;
			if (pm_topo_parse(spec, NULL, &t, &err)) {
				printf("%s: %s\n", spec, err.msg);
				return;
			}
			double s = coll_once((enum pm_coll)c, t, 0, &e);
			best = s < best ? s : best;
			pm_topo_free(t);
		}
		if (c == PM_COLL_ALLREDUCE)
			ar = best;
		printf("  %-14s %9.3f ms%s\n", pm_coll_info((enum pm_coll)c)->name, best * 1e3,
		       c == PM_COLL_ALLREDUCE ? " (the target for the others)" :
		       best <= ar ? "  OK" : "  MISSED");
	}
}

static void bench_allreduce(const char *spec, int reps, double target_s)
{
	struct pm_topo *t;
	struct pm_err err;
	double best = 1e30, best_eval = 1e30, build = 0;

	printf("allreduce --topo %s, all algorithms, contention evaluator, 64M:\n", spec);
	for (int r = 0; r < reps; r++) {
		/* a fresh network each time: what it memoizes (MULTITREE's
		 * trees) must not carry over, or later runs would be warm */
		double t0 = now();
		if (pm_topo_parse(spec, NULL, &t, &err)) {
			printf("%s: %s\n", spec, err.msg);
			return;
		}
		build = now() - t0;
		double e, s = allreduce_once(t, r == 0, &e);
		if (s < best)
			best = s;
		if (e < best_eval)
			best_eval = e;
		pm_topo_free(t);
	}
	/* the target is the whole evaluation: topology, every
	 * schedule and its pricing */
	printf("  topology build %.3f ms; best of %d: schedules + pricing %.3f ms, pricing alone %.3f ms (target %.0f ms for topology + schedules + pricing) %s\n",
	       build * 1e3, reps, best * 1e3, best_eval * 1e3, target_s * 1e3,
	       build + best <= target_s ? "OK" : "MISSED");
}

static void bench_multitree(const char *spec, const char *algo, double target_s)
{
	struct pm_topo *t;
	struct pm_inst in;
	struct pm_err err;

	if (pm_topo_parse(spec, NULL, &t, &err)) {
		printf("%s: %s\n", spec, err.msg);
		return;
	}
	double t0 = now();
	int rc = pm_algo_resolve(algo, t, 0, &in, &err);
	double dt = now() - t0;
	if (rc)
		printf("%s on %s: %s\n", algo, spec, err.msg);
	else
		printf("%s construction on %s: %d trees, %d steps per phase, %.3f s (target %.0f s) %s\n",
		       algo, spec, in.P, in.steps, dt, target_s, dt <= target_s ? "OK" : "MISSED");
	pm_topo_free(t);
}

/* Resolve, schedule and price one algorithm once (64 MiB, contention);
 * seconds, or -1 with the reason printed. */
static double one_algo(const struct pm_topo *t, const char *algo, size_t *stored)
{
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c;
	struct pm_params p;
	struct pm_err err;
	double t0 = now();

	pm_params_default(&p);
	if (pm_algo_resolve(algo, t, 0, &in, &err) || pm_algo_schedule(&in, &s, &err) ||
	    pm_algo_contention(&in, &s, 64.0 * 1048576, &p, &c, NULL, &err)) {
		printf("  %s on %s: %s\n", algo, pm_topo_spec(t), err.msg);
		return -1;
	}
	*stored = s.nx;
	pm_sched_release(&s);
	return now() - t0;
}

/* Issue 8's scale targets: the ring family on 65,536 endpoints, and the
 * cost against P with its growth exponent. */
static void bench_scale(void)
{
	static const char *const nets[] = {"torus:256x256", "machine:dgx-h100:8192"};
	static const char *const algos[] = {"ring", "bidir-ring", "hring", "2d-ring", "multiphase"};
	static const int sides[] = {16, 32, 64, 128, 256};
	struct pm_err err;
	size_t nx;

	for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++) {
		struct pm_topo *t;
		double t0 = now();
		if (pm_topo_parse(nets[i], NULL, &t, &err)) {
			printf("%s: %s\n", nets[i], err.msg);
			continue;
		}
		printf("scale: %s (%d endpoints), topology build %.3f s\n", nets[i],
		       pm_topo_endpoints(t), now() - t0);
		for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
			double dt = one_algo(t, algos[a], &nx);
			if (dt >= 0)
				printf("  %-11s %.3f s, %zu stored transfers (target 1 s) %s\n", algos[a], dt, nx,
				       dt <= 1.0 ? "OK" : "MISSED");
		}
		pm_topo_free(t);
	}
	printf("scale: cost against P on torus:NxN (schedule + contention pricing)\n");
	printf("  %-8s %-12s %-12s %-12s %-12s\n", "P", "ring_s", "exponent", "multiphase_s", "exponent");
	double prev_r = 0, prev_m = 0, prev_p = 0;
	for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
		char spec[32];
		struct pm_topo *t;
		snprintf(spec, sizeof spec, "torus:%dx%d", sides[i], sides[i]);
		if (pm_topo_parse(spec, NULL, &t, &err))
			continue;
		double P = pm_topo_endpoints(t), r = 1e30, m = 1e30;
		for (int k = 0; k < 3; k++) {	/* best of 3 */
			double a = one_algo(t, "ring", &nx), b = one_algo(t, "multiphase", &nx);
			r = a < r ? a : r;
			m = b < m ? b : m;
		}
		if (prev_p > 0)
			printf("  %-8.0f %-12.4f %-12.2f %-12.4f %-12.2f\n", P, r,
			       log(r / prev_r) / log(P / prev_p), m, log(m / prev_m) / log(P / prev_p));
		else
			printf("  %-8.0f %-12.4f %-12s %-12.4f %-12s\n", P, r, "-", m, "-");
		prev_r = r;
		prev_m = m;
		prev_p = P;
		pm_topo_free(t);
	}
}

/* The packet simulator on one schedule: lockstep and dataflow, with the
 * rate of simulated link traversals (no target in the issues; quoted so
 * the cost of the third evaluator is known). */
static void bench_sim(const char *spec, const char *algo, double n)
{
	struct pm_topo *t;
	struct pm_inst in;
	struct pm_sched s;
	struct pm_params p;
	struct pm_err err;

	pm_params_default(&p);
	if (pm_topo_parse(spec, NULL, &t, &err) || pm_algo_resolve(algo, t, 0, &in, &err) ||
	    pm_algo_schedule(&in, &s, &err)) {
		printf("%s on %s: %s\n", algo, spec, err.msg);
		return;
	}
	for (int dataflow = 0; dataflow < 2; dataflow++) {
		struct pm_sim_opts o = {.dataflow = dataflow};
		struct pm_sim_result r;
		double t0 = now();
		pm_sim_run(t, &s, n, &p, &o, &r, &err);
		double dt = now() - t0;
		printf("sim %s %s on %s, %.0f MiB: %.3g traversals in %.3f s (%.3g per s), simulated %.6g us\n",
		       dataflow ? "dataflow" : "lockstep", algo, spec, n / 1048576, r.events, dt,
		       r.events / dt, r.time_s * 1e6);
	}
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* The router network (issue 10's targets: 64 MiB ring and MULTITREE on
 * torus:8x8 under 10 s each; the artifact's BookSim needs about 50 s for
 * one 1 MiB MULTITREE run on torus:4x4).  Rates: packets through all
 * channels (injection, links, ejection) and the flit-hops they stand for. */
static void bench_rsim(const char *spec, const char *algo, double n)
{
	struct pm_topo *t;
	struct pm_inst in;
	struct pm_sched s;
	struct pm_params p;
	struct pm_err err;
	struct pm_sim_opts o = {.routers = 1};
	struct pm_sim_result r;

	pm_params_default(&p);
	pm_router_cfg_default(&o.router);
	if (pm_topo_parse(spec, NULL, &t, &err) || pm_algo_resolve(algo, t, 0, &in, &err) ||
	    pm_algo_schedule(&in, &s, &err)) {
		printf("%s on %s: %s\n", algo, spec, err.msg);
		return;
	}
	double t0 = now();
	int rc = pm_sim_run(t, &s, n, &p, &o, &r, &err);
	double dt = now() - t0;
	if (rc) {
		printf("routers %s on %s: %s\n", algo, spec, err.msg);
	} else {
		double crossings = r.events + 2 * r.segments;	/* links + injection + ejection */
		double flits = ceil((p.payload_B + p.flit_B) / p.flit_B);
		printf("routers lockstep %s on %s, %.3g MiB: %.3g packets, %.3g channel crossings in %.3f s (%.3g per s, %.3g flit-hops per s), simulated %.6g us (target 10 s)\n",
		       algo, spec, n / 1048576, r.segments, crossings, dt, crossings / dt,
		       crossings * flits / dt, r.time_s * 1e6);
	}
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* A machine large enough for millions of processes: 8-GPU nodes in pods
 * of 1024, 1024 pods (nominal rates as data/machines/dgx-h100.csv). */
static void big_machine(struct pm_machine *m)
{
	memset(m, 0, sizeof *m);
	strcpy(m->name, "bench-8M");
	m->nlevels = 3;
	m->level[0] = (struct pm_level){"node", 8, 8, 450e9, 400e9, 0, ""};
	m->level[1] = (struct pm_level){"pod", 1024, 8192, 0, 0, 0, ""};
	m->level[2] = (struct pm_level){"world", 1024, 8388608, 0, 0, 0, ""};
	m->capacity = 8388608;
	m->alpha_s = 5e-6;
	m->pipeline_s = 2;
}

static void bench_hier(const struct pm_machine *m, long long P,
		       enum pm_hier_method method, double target_s)
{
	struct pm_hier_query q = {.m = m, .P = P, .n = 128.0 * 1048576,
				  .alpha_s = m->alpha_s, .s = m->pipeline_s, .top = 5,
				  .method = method, .enum_limit = 1e6};
	struct pm_hier best[5];
	struct pm_hier_stats st;
	struct pm_err err;
	int n;
	double bestt = 1e30;
	for (int r = 0; r < 3; r++) {
		double t0 = now();
		if (pm_hier_search(&q, best, &n, &st, &err)) {
			printf("hier P=%lld: %s\n", P, err.msg);
			return;
		}
		double dt = now() - t0;
		if (dt < bestt)
			bestt = dt;
	}
	char name[256];
	pm_hier_name(&best[0], name, sizeof name);
	printf("hier on %s, P = %lld, %s (%.0f factorizations, %d divisors): best %s; %.3f ms (target %.0f ms) %s\n",
	       m->name, P, method == PM_HIER_ENUM ? "enumeration" : "dynamic programme",
	       st.factorizations, st.divisors, name, bestt * 1e3, target_s * 1e3,
	       bestt <= target_s ? "OK" : "MISSED");
}

/* Merge planning for L layers from a seeded generator (xorshift). */
static void bench_train(int L)
{
	double *bytes = malloc(sizeof(double) * (size_t)L), *tb = malloc(sizeof(double) * (size_t)L);
	unsigned long long x = 88172645463325252ULL;
	if (!bytes || !tb)
		return;
	for (int l = 0; l < L; l++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		bytes[l] = 64 * pow(1e6, (x % 100000) / 1e5);
		tb[l] = 1e-5 * pow(100, ((x >> 20) % 100000) / 1e5);
	}
	struct pm_iter it = {.L = L, .bytes = bytes, .tb = tb, .tf = 1e-2, .a = 2e-4, .b = 1e-9, .inflight = 1};
	struct { const char *name; int (*f)(const struct pm_iter *, struct pm_plan *); double target; } c[] = {
		{"MG-WFBP (O(L) pass)", pm_mgwfbp_fast, 0.05},
		{"optimum (O(L) dynamic programme)", pm_optimal_plan, 0.05},
		{"MG-WFBP (Algorithm 1, O(L^2))", pm_mgwfbp_alg1, 0},
		{"optimum (O(L^2) dynamic programme)", pm_optimal_plan_quadratic, 0},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		double best = 1e30;
		struct pm_timing tm;
		for (int r = 0; r < 3; r++) {
			struct pm_plan p;
			double t0 = now();
			c[i].f(&it, &p);
			double dt = now() - t0;
			pm_plan_time(&it, &p, 0, &tm);
			pm_plan_release(&p);
			if (dt < best)
				best = dt;
		}
		if (c[i].target > 0)
			printf("train, L = %d: %-36s %8.3f ms (target %.0f ms) %s; t_iter %.4g s\n", L, c[i].name,
			       best * 1e3, c[i].target * 1e3, best <= c[i].target ? "OK" : "MISSED", tm.t_iter);
		else
			printf("train, L = %d: %-36s %8.3f ms (reference); t_iter %.4g s\n", L, c[i].name, best * 1e3, tm.t_iter);
	}
	free(bytes);
	free(tb);
}

/* Issue 33: plan over every layout of a 405B model on 16,384 GPUs,
 * target 10 s. */
static void bench_plan(const char *model, const char *machine, long long nodes, double batch, double seq,
		       double target_s)
{
	struct pm_llm m;
	struct pm_device d;
	struct pm_machine mach;
	struct pm_err err;
	struct pm_lsearch_req r = {0};
	struct pm_lsearch_out o;
	double best = 1e30;

	if (pm_llm_load(model, &m, &err) || pm_machine_load(machine, &mach, &err) || pm_device_load(mach.device, &d, &err)) {
		printf("plan: %s\n", err.msg);
		return;
	}
	r.job = (struct pm_job){&m, &d, &mach, nodes * mach.level[0].count, batch, seq, 4};
	r.fix = (struct pm_layout){-1, -1, -1, -1, -1, -1, -1, -1, -1};
	r.top = 10;
	for (int k = 0; k < 3; k++) {
		double t0 = now();
		if (pm_lsearch(&r, &o, &err)) {
			printf("plan: %s\n", err.msg);
			return;
		}
		double dt = now() - t0;
		if (dt < best)
			best = dt;
		if (k < 2)
			pm_lsearch_release(&o);
	}
	printf("plan %s on %s:%lld (%lld GPUs): %.0f layouts, %.0f fit, best %.4g s a step: %.1f ms (target %.0f s) %s\n",
	       model, machine, nodes, r.job.gpus, o.candidates, o.fits, o.best[0].s.step_s, best * 1e3, target_s,
	       best <= target_s ? "OK" : "MISSED");
	pm_lsearch_release(&o);
}

/* Issue 34: 100,000 closed-form points.  (a) The command's own cost: every
 * point's command line run in-process one after another; (b) the sweep
 * of the same points on one thread and (c) on two.  Targets: (b) within
 * 10% of (a) a point, (c) at least 1.8x (b). */
static void bench_sweep(void)
{
	const char *study = "/tmp/perfmodel-bench-study.yml", *out = "/tmp/perfmodel-bench-sweep.csv";
	FILE *f = fopen(study, "w"), *devnull = fopen("/dev/null", "w");
	char topo[64], size[64];
	struct pm_err err;
	if (!f || !devnull)
		return;
	gsl_set_error_handler_off();	/* as cli_run does */
	fprintf(f, "command: allreduce\nfixed:\n  algo: ring\n  model: closed\naxes:\n  topo: [");
	for (int p = 2; p <= 101; p++)
		fprintf(f, "%sring:%d", p > 2 ? ", " : "", p);
	fprintf(f, "]\n  size: [");
	for (int k = 1; k <= 1000; k++)
		fprintf(f, "%s%dK", k > 1 ? ", " : "", k);
	fprintf(f, "]\n");
	fclose(f);
	double t0 = now();
	for (int p = 2; p <= 101; p++)
		for (int k = 1; k <= 1000; k++) {
			snprintf(topo, sizeof topo, "ring:%d", p);
			snprintf(size, sizeof size, "%dK", k);
			char *argv[] = {"allreduce", "--algo", "ring", "--model", "closed", "--topo", topo, "--size", size,
					"--format", "csv", NULL};
			cli_run_cmd(11, argv, devnull, &err);
		}
	double ta = now() - t0, tj[2];
	fclose(devnull);
	for (int j = 0; j < 2; j++) {
		char *argv[] = {"sweep", (char *)study, "--out", (char *)out, "--jobs", j ? "2" : "1", NULL};
		remove(out);
		t0 = now();
		if (cli_run_cmd(6, argv, stdout, &err))
			printf("sweep: %s\n", err.msg);
		tj[j] = now() - t0;
	}
	remove(out);
	remove(study);
	printf("sweep, 100000 closed-form points: the command alone %.2f s (%.1f us a point); sweep --jobs 1 %.2f s "
	       "(%.1f us a point, %.3f of the command's: target <= 1.10 %s); --jobs 2 %.2f s (%.2fx: target >= 1.8 %s)\n",
	       ta, ta * 10, tj[0], tj[0] * 10, tj[0] / ta, tj[0] / ta <= 1.10 ? "OK" : "MISSED", tj[1], tj[0] / tj[1],
	       tj[0] / tj[1] >= 1.8 ? "OK" : "MISSED");
}

/* One command at one size and over 1K-8G (24 sizes): a sweep of sizes
 * prices each from the schedules' profiles (eval.h), so it should cost
 * less than twice one size (issue 32's target for best). */
static void bench_sizes(const char *cmd, const char *topo)
{
	FILE *devnull = fopen("/dev/null", "w");
	struct pm_err err;
	double t[2] = {1e30, 1e30};
	if (!devnull)
		return;
	gsl_set_error_handler_off();
	for (int rep = 0; rep < 2; rep++)
		for (int k = 0; k < 2; k++) {
			char *argv[] = {(char *)cmd, "--topo", (char *)topo, "--size", k ? "1K:8G:x2" : "1M",
					"--model", "contention", NULL};
			double t0 = now();
			if (cli_run_cmd(7, argv, devnull, &err))
				printf("%s: %s\n", cmd, err.msg);
			t[k] = fmin(t[k], now() - t0);
		}
	fclose(devnull);
	printf("%s --topo %s: one size %.3f s, 24 sizes (1K:8G:x2) %.3f s: %.2fx one size (target < 2 %s)\n", cmd, topo,
	       t[0], t[1], t[1] / t[0], t[1] / t[0] < 2 ? "OK" : "MISSED");
}

/* Every algorithm of one command on a large network, contention, 64 MiB
 * (issue 32's targets: under 1 s each), best of two runs, on one thread
 * and on the cores online (--jobs; the command's default off a sweep). */
static void bench_every_algo(const char *topo, double target_s)
{
	FILE *devnull = fopen("/dev/null", "w");
	struct pm_err err;
	double best[2] = {1e30, 1e30};
	char cores[16];
	if (!devnull)
		return;
	snprintf(cores, sizeof cores, "%d", pm_pool_threads_online());
	gsl_set_error_handler_off();
	for (int rep = 0; rep < 2; rep++)
		for (int k = 0; k < 2; k++) {
			char *argv[] = {"allreduce", "--topo", (char *)topo, "--size", "64M", "--model", "contention",
					"--jobs", k ? cores : "1", NULL};
			double t0 = now();
			if (cli_run_cmd(9, argv, devnull, &err))
				printf("allreduce --topo %s: %s\n", topo, err.msg);
			best[k] = fmin(best[k], now() - t0);
		}
	fclose(devnull);
	printf("allreduce --topo %s --size 64M --model contention (every algorithm): %.3f s on 1 thread, %.3f s on %s (target %.0f s %s)\n",
	       topo, best[0], best[1], cores, target_s, best[1] < target_s ? "OK" : "MISSED");
}

static const char *const cases[] = {"all", "allreduce", "coll", "large", "huge", "scale", "multitree",
				     "hier", "sizes", "train", "sweep", "plan", "sim", NULL};

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	int all = strcmp(what, "all") == 0, known = 0;

	for (int i = 0; cases[i]; i++)
		known |= strcmp(what, cases[i]) == 0;
	if (!known) {
		printf("usage: perfmodel-bench [CASE]\n\nTimes perfmodel's work against its targets, each case printing its figures.\nCases:");
		for (int i = 0; cases[i]; i++)
			printf(" %s", cases[i]);
		printf("\n");
		return strcmp(what, "--help") == 0 ? 0 : 2;
	}

	if (all || strcmp(what, "allreduce") == 0) {
		bench_allreduce("torus:8x8", 5, 10e-3);
		bench_allreduce("torus:32x32", 3, 1.0);
	}
	if (all || strcmp(what, "coll") == 0)
		bench_collectives("torus:32x32", 3);
	if (all || strcmp(what, "large") == 0) {	/* issue 8: 4,096 endpoints */
		bench_allreduce("fattree:16,3", 1, 10.0);
		bench_allreduce("switch:4096", 1, 10.0);
		bench_allreduce("torus:64x64", 1, 10.0);
	}
	if (all || strcmp(what, "huge") == 0) {	/* issue 32: 65,536 to 100,000 endpoints */
		bench_every_algo("machine:dgx-h100:2048", 1.0);
		bench_every_algo("machine:dgx-h100:8192", 1.0);
		bench_every_algo("machine:dgx-h100:12500", 1.0);
		bench_every_algo("torus:256x256", 1.0);
		bench_every_algo("torus:250x400", 1.0);
	}
	if (all || strcmp(what, "scale") == 0)
		bench_scale();
	if (all || strcmp(what, "multitree") == 0) {
		bench_multitree("torus:32x32", "multitree", 1.0);
		bench_multitree("fattree:8,3", "multitree", 30.0);
		bench_multitree("machine:dgx-h100:64", "multitree", 30.0);
		bench_multitree("fattree:32,2", "multitree", 30.0);
		bench_multitree("fattree:10,3", "multitree", 30.0);
		bench_multitree("machine:dgx-h100:128", "multitree", 30.0);
		bench_multitree("torus:64x64", "multitree", 60.0);
		/* the fabric construction (docs/model.md) at 4,096 endpoints */
		bench_multitree("fattree:16,3", "multitree:fabric", 30.0);
		bench_multitree("machine:dgx-h100:256", "multitree:fabric", 30.0);
		bench_multitree("machine:dgx-h100:512", "multitree:fabric", 30.0);
		/* the fabric construction counting the links between switches
		 * (multitree_mid.c), under the same 30 s MULTITREE target */
		bench_multitree("bigraph:16x64", "multitree:fabric", 30.0);
		bench_multitree("machine:abci:256", "multitree:fabric", 30.0);
	}
	if (all || strcmp(what, "hier") == 0) {
		struct pm_machine abci, big;
		struct pm_err err;
		if (pm_machine_load("abci", &abci, &err) == PM_OK)
			bench_hier(&abci, 2048, PM_HIER_ENUM, 0.1);
		else
			printf("abci: %s\n", err.msg);
		big_machine(&big);
		bench_hier(&big, 720720, PM_HIER_DP, 1.0);
		bench_hier(&big, 1LL << 20, PM_HIER_DP, 1.0);
	}
	if (all || strcmp(what, "sizes") == 0) {
		bench_sizes("best", "machine:dgx-h100:8192");
		bench_sizes("allreduce", "machine:dgx-h100:8192");
		bench_sizes("best", "torus:256x256");
	}
	if (all || strcmp(what, "train") == 0)
		bench_train(10000);
	if (all || strcmp(what, "sweep") == 0)
		bench_sweep();
	if (all || strcmp(what, "plan") == 0) {
		bench_plan("llama3-405b", "dgx-h100", 2048, 2048, 8192, 10.0);
		bench_plan("deepseek-v3-like", "dgx-h100", 256, 4096, 4096, 10.0);
	}
	if (all || strcmp(what, "sim") == 0) {
		bench_sim("torus:8x8", "multitree", 64.0 * 1048576);
		bench_sim("torus:4x4x4", "multiphase", 64.0 * 1048576);
		bench_sim("fattree:8,2", "dbtree:P", 64.0 * 1048576);
		bench_rsim("torus:4x4", "multitree", 1048576);
		bench_rsim("torus:8x8", "ring", 64.0 * 1048576);
		bench_rsim("torus:8x8", "multitree", 64.0 * 1048576);
	}
	printf("peak resident memory: %ld MiB\n", peak_rss_kB() / 1024);
	return 0;
}
