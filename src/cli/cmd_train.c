/* cmd_train.c: perfmodel train, one training iteration of a DNN under the
 * gradient-communication policies of Shi et al. (MG-WFBP) (and the frameworks'
 * buckets), with the all-reduce cost from any source perfmodel has. */
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/plot.h"
#include "search/cost.h"
#include "search/parallel.h"
#include "search/policy.h"
#include "search/system.h"
#include "search/train.h"
#include "model/preset.h"
#include "model/text.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_WORKERS, T_POLICY, T_ITER, T_COMP, T_CNO, T_COMM, T_CALLS, T_MERGED,
	T_SPEEDUP, T_EFF, T_A, T_B, NT };
static const char *const tcols[NT] = {"workers", "policy", "t_iter_ms", "t_comp_ms",
	"t_c_no_ms", "t_comm_ms", "allreduce_calls", "merged_layers", "speedup",
	"efficiency", "a_us", "b_ns_per_B"};
static const unsigned tflags[NT] = {COL_NUM, 0, COL_NUM, COL_NUM, COL_NUM, COL_NUM,
	COL_NUM, COL_NUM, COL_NUM, COL_NUM, COL_NUM, COL_NUM};

enum { G_POLICY, G_GROUP, G_FIRST, G_LAST, G_TENSORS, G_BYTES, G_READY, G_START, G_END, NG };
static const char *const gcols[NG] = {"policy", "group", "first_layer", "last_layer",
	"tensors", "bytes_B", "ready_ms", "start_ms", "end_ms"};
static const unsigned gflags[NG] = {0, COL_NUM, COL_USER, COL_USER, COL_NUM, COL_NUM, COL_NUM, COL_NUM, COL_NUM};

static void group_rows(struct cli_table *t, const struct pm_policy *p,
		       const struct pm_profile *prof, const struct pm_iter *it,
		       const struct pm_plan *plan)
{
	double *ready = malloc(sizeof(double) * (size_t)(plan->n + 1));
	double *start = malloc(sizeof(double) * (size_t)(plan->n + 1));
	double *end = malloc(sizeof(double) * (size_t)(plan->n + 1));

	if (ready && start && end) {
		pm_plan_detail(it, plan, pm_policy_after_backward(p), ready, start, end);
		for (int g = 0, k = 0; g < plan->n; g++) {
			double bytes = 0;
			int first = it->L - 1 - k, n = plan->end[g] - k;
			for (; k < plan->end[g]; k++)
				bytes += it->bytes[it->L - 1 - k];
			cli_table_row(t);
			cli_table_set(t, G_POLICY, "%s", p->label);
			cli_table_set(t, G_GROUP, "%d", g + 1);
			cli_table_set(t, G_FIRST, "%s", prof->names[first]);
			cli_table_set(t, G_LAST, "%s", prof->names[it->L - k]);
			cli_table_set(t, G_TENSORS, "%d", n);
			cli_table_set(t, G_BYTES, "%.0f", bytes);
			cli_table_set(t, G_READY, "%.6g", ready[g] * 1e3);
			cli_table_set(t, G_START, "%.6g", start[g] * 1e3);
			cli_table_set(t, G_END, "%.6g", end[g] * 1e3);
		}
	}
	free(ready);
	free(start);
	free(end);
}

/* --parallel: one row per scheme (and per policy for those that merge
 * gradients into buckets). */
enum { P_WORKERS, P_SCHEME, P_POLICY, P_ITER, P_COMP, P_CNO, P_COMM, P_CALLS, P_STATE, P_A, P_B, NP };
static const char *const pcols[NP] = {"workers", "scheme", "policy", "t_iter_ms", "t_comp_ms",
				      "t_comm_exposed_ms", "t_comm_ms", "collectives",
				      "model_states_GB", "a_us", "b_ns_per_B"};
static const unsigned pflags[NP] = {COL_NUM, 0, 0, COL_NUM, COL_NUM, COL_NUM, COL_NUM, COL_NUM,
				    COL_NUM, COL_NUM, COL_NUM};

static int parse_schemes(const char *list, int *out, int *n, struct pm_err *err)
{
	char buf[256];

	*n = 0;
	if (strcmp(list, "all") == 0) {
		for (int s = 0; s < PM_NPAR; s++)
			out[(*n)++] = s;
		return PM_OK;
	}
	if (pm_check_list("parallel", list, ',', "ddp,zero3", err))
		return PM_EINPUT;
	pm_strlcpy(buf, list, sizeof buf);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int s = pm_parallel_find(tok);
		if (s < 0)
			return pm_fail(err, PM_EINPUT, "invalid --parallel '%s' (expected ddp, zero1, zero2, zero3, fsdp, all or a comma list)", tok);
		if (*n < PM_NPAR)
			out[(*n)++] = s;
	}
	return PM_OK;
}

static int parallel_rows(struct cli_table *t, const int *schemes, int nsch, const struct pm_policy *pol,
			 int npol, const struct pm_iter *it, double params, int N, struct pm_err *err)
{
	for (int i = 0; i < nsch; i++)
		for (int k = 0; k < (schemes[i] == PM_PAR_ZERO3 ? 1 : npol); k++) {
			struct pm_plan plan;
			struct pm_par_result r;
			int rc = pm_policy_plan(&pol[k], it, &plan);
			if (!rc)
				rc = pm_parallel_time((enum pm_parallel)schemes[i], it, &plan, params, N, &r);
			pm_plan_release(&plan);
			if (rc)
				return pm_fail(err, rc, "out of memory");
			cli_table_row(t);
			cli_table_set(t, P_WORKERS, "%d", N);
			cli_table_set(t, P_SCHEME, "%s", pm_parallel_name((enum pm_parallel)schemes[i]));
			cli_table_set(t, P_POLICY, "%s", schemes[i] == PM_PAR_ZERO3 ? "per-layer" : pol[k].label);
			cli_table_set(t, P_ITER, "%.6g", r.tm.t_iter * 1e3);
			cli_table_set(t, P_COMP, "%.6g", r.tm.t_comp * 1e3);
			cli_table_set(t, P_CNO, "%.6g", r.tm.t_c_no * 1e3);
			cli_table_set(t, P_COMM, "%.6g", r.tm.t_comm * 1e3);
			cli_table_set(t, P_CALLS, "%d", r.tm.calls);
			cli_table_set(t, P_STATE, "%.6g", r.state_B / 1e9);
			cli_table_set(t, P_A, "%.6g", it->a * 1e6);
			cli_table_set(t, P_B, "%.6g", it->b * 1e9);
		}
	return PM_OK;
}

/* --plot: speedup against workers, one line per policy. */
static int plot_speedup(const char *path, const struct pm_profile *prof, const char *net,
			const struct pm_policy *pol, int npol, const double *wl, int nw, const double *speed,
			struct pm_err *err)
{
	const char *names[24];
	char title[200];
	double ideal[1024];

	for (int k = 0; k < npol && k < 24; k++)
		names[k] = pol[k].label;
	for (int i = 0; i < nw && i < 1024; i++)
		ideal[i] = wl[i];	/* S(N) = N: no communication at all */
	snprintf(title, sizeof title, "S-SGD speedup of %s, %s", prof->name, net);
	struct cli_plot pl = {path, title, "workers (log scale)", "speedup (N t_comp / t_iter)", 2,
			      npol < 24 ? npol : 24, nw, names, wl, speed, "ideal: S(N) = N", ideal, NULL};
	return cli_plot_write(&pl, err);
}

/* --help: usage, what the command does, examples (cli_help adds the options) */
static const char help_text[] =
	"usage: perfmodel train --profile NAME (--workers N | --topo SPEC) COST [--policy LIST] [options]\n\n"
	"Times one training iteration of a DNN on N data-parallel workers: forward,\n"
	"backward, and the gradient all-reduces under each policy, with the all-reduce\n"
	"cost T(M) = a + b M (Shi et al. (MG-WFBP) eq. 10).  Per policy: iteration time, compute\n"
	"(forward + backward), non-overlapped communication t_c^no, all communication,\n"
	"number of all-reduces, merged layers, speedup S(N) = N t_comp / t_iter and\n"
	"scaling efficiency S(N) / N (Shi et al. (MG-WFBP) eqs. 4-5).\n\n"
	"COST, one of:\n"
	"  --a T --b T|BW              a and b directly (b as time per byte or a rate)\n"
	"  --fit FILE [--fit-range R]  a and b fitted to osu, nccl-tests or CSV measurements\n"
	"  --topo SPEC --algo NAME     a line fitted to an algorithm's closed form on a network\n"
	"                              over the sizes the layers span (--cost-model contention\n"
	"                              fits the contention evaluator instead)\n"
	"  --algo NAME --workers N     the same on N ranks without a network\n"
	"  --table2 NAME --workers N   Shi et al. (MG-WFBP) Table 2 (ring, dbtree, halving-doubling,\n"
	"                              recursive-doubling, binary-tree) with --alpha,\n"
	"                              --link-bw (1/beta) and --gamma\n\n"
	"Policies: naive, wfbp, synceasgd, ddp, horovod, horovod-0.21, bucket:SIZE[/FIRST],\n"
	"mgwfbp, mgwfbp-alg1, optimal; all = the first seven.  --groups prints the\n"
	"merge plan (which layers each all-reduce carries) instead.  --workers-sweep\n"
	"4:2048:x2 repeats the table per worker count (--table2 or --algo without a\n"
	"network), as Shi et al. (MG-WFBP) SS6.4 does.\n\n"
	"The endpoint (Rashidi et al., ISCA 2021 (ACE), Table VI): --endpoint ideal, ace,\n"
	"baseline-commopt (collectives hold 450 GB/s + 6 SMs), baseline-compopt (128 GB/s\n"
	"+ 2 SMs) or baseline-nooverlap (the whole NPU, one all-reduce after the\n"
	"backward); ace holds 128 GB/s and no SM.  Compute slows by (1-f) S/(S-s) +\n"
	"f M/(M-m) for what the collectives hold (s SMs, m of memory bandwidth) of\n"
	"--npu-sms S and --npu-mem-bw M, f = --mem-bound; the all-reduces are priced\n"
	"with the endpoint in the loop (needs --algo).\n\n"
	"The timeline: --in-flight N all-reduces at once, --order lifo (the last ready\n"
	"first) and --overlap next-forward (all-reduces hidden behind the next forward,\n"
	"whose layer l waits only for its own): Rashidi et al. 2021 SV.  Hybrid profiles\n"
	"(dlrm: sharded embedding tables) add an all-to-all each way, priced by\n"
	"--a2a-algo (direct) on the same network.\n\n"
	"Examples:\n"
	"  perfmodel train --profile googlenet-k80 --workers 8 --table2 ring --alpha 69.4us --link-bw 0.888GB/s\n"
	"  perfmodel train --profile resnet50 --topo torus:8x8 --algo ring --groups --policy mgwfbp\n"
	"  perfmodel train --profile resnet50 --a 236us --b 0.406ns --workers 16\n"
	"  perfmodel train --profile resnet50 --workers 64 --algo ring --link-bw 12.5GB/s --parallel all\n"
	"  perfmodel train --profile resnet50 --topo ace:4x8x4 --algo multiphase --bytes-per-param 2 --endpoint baseline-commopt\n"
	"  perfmodel train --profile resnet50 --workers 64 --algo ring --order lifo --overlap next-forward\n"
	"  perfmodel train --profile dlrm --topo ace:4x8x4 --algo multiphase --bytes-per-param 2 --endpoint ace\n\n"
	"Options:\n";

static void usage(const struct cli_opt *opts, int n)
{
	cli_help(cli_out(), help_text, opts, n);
	fputc('\n', cli_out());
	cli_print_presets("Models", "models");
}

/* The command's options, as given and as parsed. */
struct targs {
	const char *model, *model_old, *workers, *procs, *sweep, *a, *b, *fit, *fit_range, *algo, *table2;
	const char *policy, *bpp, *scale, *format, *cmodel, *parallel, *plot;
	const char *npu_sms, *npu_mem, *mem_bound, *inflight, *order, *overlap, *a2a_algo;
	int help, groups;
	/* parsed */
	enum cli_format fmt;
	struct pm_policy pol[PM_POLICY_MAX];
	int npol, schemes[PM_NPAR], nsch;
	long bp, nin;
	double cs;
	int lifo, nextf;
};

/* The endpoint in the iteration (search/system.h): a Table VI row of
 * Rashidi et al. 2021 fills the --mem-bw and --sms it does not give; after
 * the parameters are built, compute's slowdown follows from what the
 * collectives hold. */
struct train_end {
	const struct pm_system *sys;	/* NULL: ideal, baseline or ace by hand */
	struct pm_npu npu;
	char mem[40], sms[16];
	double comm_sms;		/* SMs the collectives hold */
	double factor;			/* compute slowdown */
	int overlap;
};

/* --npu-sms, --npu-mem-bw and --mem-bound: the NPU the collectives
 * share with compute. */
static int npu_opts(const struct targs *g, struct pm_npu *npu, struct pm_err *err)
{
	long sms = 0;
	char *end;

	pm_npu_default(npu);
	if (cli_opt_long(g->npu_sms, 1, 100000, "NPU SM count", &sms, err) ||
	    (g->npu_mem && pm_parse_bw(g->npu_mem, &npu->mem_bw_Bps, err)))
		return PM_EINPUT;
	if (sms)
		npu->sms = (double)sms;
	if (!g->mem_bound)
		return PM_OK;
	npu->mem_bound = strtod(g->mem_bound, &end);
	if (*end || end == g->mem_bound || !(npu->mem_bound >= 0 && npu->mem_bound <= 1))
		return pm_fail(err, PM_EINPUT, "invalid --mem-bound '%s' (expected the share of compute time bound by memory bandwidth, from 0 to 1)", g->mem_bound);
	return PM_OK;
}

/* What a Table VI row gives the network options that --mem-bw and --sms
 * do not. */
static void end_fill(struct cli_net_opts *net, struct train_end *te)
{
	static const char *kinds[] = {"ideal", "baseline", "ace"};

	te->overlap = te->sys->overlap;
	net->endpoint = kinds[te->sys->endpoint];
	if (!net->mem_bw && te->sys->endpoint != PM_END_IDEAL) {
		snprintf(te->mem, sizeof te->mem, "%.17gGB/s", te->npu.mem_bw_Bps / 1e9);
		net->mem_bw = te->sys->mem_bw ? te->sys->mem_bw : te->mem;
	}
	if (!net->sms && te->sys->endpoint == PM_END_BASELINE) {
		snprintf(te->sms, sizeof te->sms, "%.0f", te->sys->sms < 0 ? te->npu.sms : te->sys->sms);
		net->sms = te->sms;
	}
}

static int end_presets(struct cli_net_opts *net, const struct targs *g, struct train_end *te, struct pm_err *err)
{
	te->overlap = 1;
	te->factor = 1;
	te->comm_sms = 0;
	if (npu_opts(g, &te->npu, err))
		return PM_EINPUT;
	if ((te->sys = pm_system_find(net->endpoint)))
		end_fill(net, te);
	else if (net->endpoint && strcmp(net->endpoint, "baseline"))
		return pm_fail(err, PM_EINPUT, "invalid endpoint '%s' (expected ideal, ace, baseline-commopt, baseline-compopt, baseline-nooverlap (Rashidi et al. 2021 Table VI), or baseline with --mem-bw/--sms)",
			       net->endpoint);
	return PM_OK;
}

/* Compute's slowdown once the parameters are known: 1 without overlap
 * (compute and communication never run together) or with an ideal
 * endpoint. */
static int end_factor(const struct cli_net_opts *net, const struct pm_params *p,
		      struct train_end *te, struct pm_err *err)
{
	long v = 0;

	if (p->endpoint == PM_END_BASELINE && net->sms && !pm_parse_int(net->sms, 1, 100000, "SM count", &v, err))
		te->comm_sms = (double)v;
	if (!te->overlap || p->endpoint == PM_END_IDEAL)
		return PM_OK;
	return pm_compute_factor(&te->npu, p->mem_bw_Bps, te->comm_sms, &te->factor, err);
}

/* The worker counts: a --workers-sweep, the network's endpoints, or
 * --workers.  fixed: the cost does not depend on the count. */
/* --workers-sweep: whole worker counts from 1 to 10^7. */
static int sweep_counts(const char *sweep, const char *workers, int fixed, double **wl, int *nw,
			struct pm_err *err)
{
	if (fixed)
		return pm_fail(err, PM_EINPUT, "--workers-sweep needs a cost that depends on the worker count (expected --table2 or --algo without --topo)");
	if (workers)
		return pm_fail(err, PM_EINPUT, "give --workers or --workers-sweep, not both");
	if (pm_parse_size_range(sweep, wl, nw, err))
		return pm_fail(err, PM_EINPUT,
			       "invalid --workers-sweep '%s' (expected worker counts START:END:xF or START:END:+STEP from 1, such as 4:2048:x2)",
			       sweep);
	for (int i = 0; i < *nw; i++)
		if ((*wl)[i] != floor((*wl)[i]) || (*wl)[i] < 1 || (*wl)[i] > 1e7)
			return pm_fail(err, PM_EINPUT, "invalid worker count %g in '%s' (expected whole numbers from 1 to 10^7)",
				       (*wl)[i], sweep);
	return PM_OK;
}

/* One worker count: the network's endpoints (--workers, if given, must
 * agree) or --workers. */
static int one_count(const char *workers, const struct pm_topo *topo, double *w, struct pm_err *err)
{
	long v = 0;

	if (!topo && !workers)
		return pm_fail(err, PM_EINPUT, "missing --workers (expected the number of data-parallel workers, or --topo)");
	if (workers && pm_parse_int(workers, 1, 10000000, "worker count", &v, err) && !topo)
		return PM_EINPUT;
	*w = topo ? pm_topo_endpoints(topo) : (double)v;
	if (workers && v != *w)
		return pm_fail(err, PM_EINPUT, "--workers %s does not match the %d endpoints of %s (expected one worker per endpoint)",
			       workers, pm_topo_endpoints(topo), pm_topo_spec(topo));
	return PM_OK;
}

/* The worker counts: a --workers-sweep, the network's endpoints, or
 * --workers.  fixed: the cost does not depend on the count. */
static int worker_counts(const char *sweep, const char *workers, const struct pm_topo *topo,
			 int fixed, double **wl, int *nw, struct pm_err *err)
{
	if (sweep)
		return sweep_counts(sweep, workers, topo || fixed, wl, nw, err);
	*nw = 1;
	if (!(*wl = malloc(sizeof(double))))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	return one_count(workers, topo, *wl, err);
}

/* --fit-range MIN:MAX, or nothing. */
static int fit_range_of(const char *range, double *lo, double *hi, struct pm_err *err)
{
	char x[64], *colon = range ? strchr(range, ':') : NULL;

	*lo = *hi = 0;
	if (!range)
		return PM_OK;
	if (!colon || (size_t)(colon - range) >= sizeof x)
		return pm_fail(err, PM_EINPUT, "invalid --fit-range '%s' (expected MIN:MAX such as 64K:4M)", range);
	memcpy(x, range, (size_t)(colon - range));
	x[colon - range] = '\0';
	if (pm_parse_size(x, lo, err) || pm_parse_size(colon + 1, hi, err))
		return PM_EINPUT;
	return PM_OK;
}

/* The all-reduce cost source: --a/--b, --fit, --table2 or --algo (the
 * network and parameters are already in c). */
/* --a and --b: the cost given. */
static int cost_given(struct pm_cost_src *c, const char *a, const char *b, struct pm_err *err)
{
	c->kind = PM_COST_FIXED;
	if (!a || !b)
		return pm_fail(err, PM_EINPUT, "give both --a and --b (expected e.g. --a 236us --b 0.406ns)");
	if (pm_parse_time(a, &c->a, err) || pm_parse_per_byte(b, "all-reduce time per byte", &c->b, err))
		return PM_EINPUT;
	snprintf(c->desc, sizeof c->desc, "given: a = %s, b = %s per byte", a, b);
	return PM_OK;
}

/* --fit FILE [--fit-range MIN:MAX]: a line fitted to measurements. */
static int cost_fitted(struct pm_cost_src *c, const char *fit, const char *fit_range, struct pm_err *err)
{
	struct pm_points pts;
	struct pm_fit f;
	double flo, fhi;
	int rc;

	c->kind = PM_COST_FIT;
	if ((rc = fit_range_of(fit_range, &flo, &fhi, err)) || (rc = pm_points_read(fit, PM_POINTS_AUTO, &pts, err)))
		return rc;
	rc = pm_fit_line(&pts, flo, fhi, &f, err);
	pm_points_release(&pts);
	if (rc)
		return rc;
	c->a = f.alpha_s;
	c->b = f.beta_spB;
	snprintf(c->desc, sizeof c->desc, "fitted to %s (%d points, %.4g to %.4g bytes, R^2 %.4f)",
		 fit, f.n, f.min_B, f.max_B, f.r2);
	return PM_OK;
}

/* --table2 NAME: a row of Shi et al. (MG-WFBP) Table 2. */
static int cost_table2(struct pm_cost_src *c, const char *table2, const char *link_bw, struct pm_err *err)
{
	c->kind = PM_COST_TABLE2;
	if (!(c->t2 = pm_table2_find(table2)))
		return pm_fail(err, PM_EINPUT, "unknown --table2 '%s' (expected ring, dbtree, halving-doubling, recursive-doubling or binary-tree)", table2);
	if (!link_bw)
		return pm_fail(err, PM_EINPUT, "--table2 needs --link-bw (expected 1/beta, such as 0.888GB/s for 10GbE)");
	return PM_OK;
}

/* --algo NAME: the algorithm's cost, closed or on the network's schedule. */
static int cost_algo(struct pm_cost_src *c, const char *algo, const char *cmodel, struct pm_err *err)
{
	c->kind = PM_COST_ALGO;
	c->algo = algo;
	c->contention = strcmp(cmodel, "contention") == 0;
	if (c->contention && !c->topo)
		return pm_fail(err, PM_EINPUT, "--cost-model contention needs --topo (expected a network to route the schedule over, such as --topo torus:4x4)");
	return PM_OK;
}

/* The all-reduce cost source: --a/--b, --fit, --table2 or --algo (the
 * network and parameters are already in c). */
static int cost_source(struct pm_cost_src *c, const struct targs *g, const char *link_bw, struct pm_err *err)
{
	int rc = g->a || g->b ? cost_given(c, g->a, g->b, err)
		 : g->fit ? cost_fitted(c, g->fit, g->fit_range, err)
		 : g->table2 ? cost_table2(c, g->table2, link_bw, err)
		 : cost_algo(c, g->algo, g->cmodel, err);

	if (!rc && c->kind <= PM_COST_FIT && (c->a < 0 || c->b < 0))
		return pm_fail(err, PM_EINPUT, "negative all-reduce cost (a = %g s, b = %g s/B; expected non-negative values, try --fit-range)",
			       c->a, c->b);
	return rc;
}

/* One row per policy at N workers (or its merge plan with --groups);
 * speed, when drawing, gets each policy's speedup (stride nw). */
static int policy_rows(struct cli_table *t, const struct pm_policy *pol, int npol,
		       const struct pm_iter *it, const struct pm_profile *prof, int N,
		       int groups, double *speed, int nw)
{
	for (int k = 0; k < npol; k++) {
		struct pm_plan plan;
		struct pm_timing tm;
		int rc;
		if ((rc = pm_policy_plan(&pol[k], it, &plan)))
			return rc;
		if (groups) {
			group_rows(t, &pol[k], prof, it, &plan);
			pm_plan_release(&plan);
			continue;
		}
		pm_plan_time(it, &plan, pm_policy_after_backward(&pol[k]), &tm);
		double speedup = N * tm.t_comp / tm.t_iter;
		if (speed)
			speed[k * nw] = speedup;
		cli_table_row(t);
		cli_table_set(t, T_WORKERS, "%d", N);
		cli_table_set(t, T_POLICY, "%s", pol[k].label);
		cli_table_set(t, T_ITER, "%.6g", tm.t_iter * 1e3);
		cli_table_set(t, T_COMP, "%.6g", tm.t_comp * 1e3);
		cli_table_set(t, T_CNO, "%.6g", tm.t_c_no * 1e3);
		cli_table_set(t, T_COMM, "%.6g", tm.t_comm * 1e3);
		cli_table_set(t, T_CALLS, "%d", tm.calls);
		cli_table_set(t, T_MERGED, "%d", prof->L - tm.calls);
		cli_table_set(t, T_SPEEDUP, "%.5g", speedup);
		cli_table_set(t, T_EFF, "%.4g", speedup / N);
		cli_table_set(t, T_A, "%.6g", it->a * 1e6);
		cli_table_set(t, T_B, "%.6g", it->b * 1e9);
		pm_plan_release(&plan);
	}
	return PM_OK;
}

/* --order fifo|lifo and --overlap backward|next-forward. */
static int parse_timeline(const char *order, const char *overlap, int *lifo,
			  int *nextf, struct pm_err *err)
{
	static const char *const orders[] = {"fifo", "lifo", NULL};
	static const char *const overlaps[] = {"backward", "next-forward", NULL};

	if ((*lifo = pm_pick_word("order", order, orders, err)) < 0 ||
	    (*nextf = pm_pick_word("overlap", overlap, overlaps, err)) < 0)
		return PM_EINPUT;
	return PM_OK;
}


static int train_opt_rows(struct targs *g, struct cli_opt *opts)
{
	int n = 0;

	const struct cli_opt rows[] = {
		{"profile", "NAME", "DNN profile: a name from perfmodel models or a profile .csv (required)", &g->model, NULL},
		{"model", "NAME", "the old spelling of --profile, kept until the next release (--model means the evaluator in allreduce)", &g->model_old, NULL},
		{"procs", "N", "data-parallel workers, one process each (with --topo: its endpoints); as hier --procs and fit --procs", &g->procs, NULL},
		{"workers", "N", "the same as --procs (the MG-WFBP paper's word)", &g->workers, NULL},
		{"workers-sweep", "RANGE", "one table per worker count, e.g. 4:2048:x2", &g->sweep, NULL},
		{"a", "T", "all-reduce startup a", &g->a, NULL},
		{"b", "T|BW", "all-reduce time per byte b (or a rate)", &g->b, NULL},
		{"fit", "FILE", "fit a and b to these measurements", &g->fit, NULL},
		{"fit-range", "MIN:MAX", "sizes the fit uses", &g->fit_range, NULL},
		{"algo", "NAME", "fit a and b to this algorithm's cost", &g->algo, NULL},
		{"cost-model", "M", "closed (default) or contention, for --algo with --topo", &g->cmodel, NULL},
		{"table2", "NAME", "Shi et al. (MG-WFBP) Table 2 cost: ring, dbtree, halving-doubling, recursive-doubling, binary-tree", &g->table2, NULL},
		{"policy", "LIST", "all (default) or a comma-separated list", &g->policy, NULL},
		{"parallel", "LIST", "sharded data parallelism: ddp, zero1, zero2, zero3 (fsdp is zero3), all, or a comma list: the collectives each issues on the timeline, exposed communication and model-state memory per rank (ddp, zero1 and zero2 merge gradients by --policy, default ddp)", &g->parallel, NULL},
		{"bytes-per-param", "N", "gradient bytes per parameter (default 4, FP32; 2 for FP16)", &g->bpp, NULL},
		{"compute-scale", "F", "multiply every compute time by F (0.5: a twice faster device)", &g->scale, NULL},
		{"npu-sms", "N", "SMs of the NPU that collectives share with compute (default 80, Rashidi et al. 2021 SV)", &g->npu_sms, NULL},
		{"npu-mem-bw", "BW", "memory bandwidth of the NPU (default 900GB/s, assumed: a V100's; the paper does not state it)", &g->npu_mem, NULL},
		{"mem-bound", "F", "share of compute time that scales with the memory bandwidth left to it, the rest with the SMs (default 1)", &g->mem_bound, NULL},
		{"in-flight", "N", "all-reduces outstanding at once (default 1, Shi et al.'s timeline): their startups a overlap, their bandwidth terms b M queue; merge plans are still chosen for one at a time", &g->inflight, NULL},
		{"order", "O", "fifo (default, Shi et al.) or lifo: of the all-reduces waiting, the last ready goes first (Rashidi et al. 2021 SV), favouring the first layers", &g->order, NULL},
		{"overlap", "O", "backward (default, Shi et al.: the iteration ends with the last all-reduce) or next-forward: all-reduces run on into the next forward, whose layer l waits for its own (Rashidi et al. 2021 SV, exposed communication); per-layer forward time in proportion to backward", &g->overlap, NULL},
		{"a2a-algo", "NAME", "hybrid profiles (dlrm): the all-to-all algorithm whose cost on the network prices the embeddings' exchange (default direct; bruck)", &g->a2a_algo, NULL},
		{"groups", NULL, "print the merge plan of each policy", NULL, &g->groups},
		{"plot", "FILE", "with --workers-sweep: draw the speedup of each policy against the worker count to FILE.svg (.png, .pdf with plplot-driver-cairo)", &g->plot, NULL},
		cli_format_opt(&g->format),
		{"help", NULL, "show this help", NULL, &g->help},
	};
	n = cli_opt_add(opts, n, rows, (int)(sizeof rows / sizeof rows[0]));
	return n;
}

/* --procs and --workers, --profile and --model: one of each pair. */
static int check_aliases(struct targs *g, struct pm_err *err)
{
	if (g->procs && g->workers)
		return pm_fail(err, PM_EINPUT, "--procs %s and --workers %s both given (expected one: they are the same option)",
			       g->procs, g->workers);
	if (g->model && g->model_old)
		return pm_fail(err, PM_EINPUT, "two profiles: --profile %s and --model %s (expected one; --model is the old spelling of --profile)",
			       g->model, g->model_old);
	g->workers = g->workers ? g->workers : g->procs;
	g->model = g->model ? g->model : g->model_old;
	if (!g->model)
		return pm_fail(err, PM_EINPUT, "missing --profile (expected a DNN profile such as resnet50; see perfmodel models)");
	return PM_OK;
}

/* What the table shows: --plot, --groups and --parallel exclude each
 * other; one cost source. */
static int check_output(const struct targs *g, struct pm_err *err)
{
	int sources = !!(g->a || g->b) + !!g->fit + !!g->table2 + (!!g->algo && !g->table2), rc;

	if (g->plot && (g->groups || g->parallel || !g->sweep))
		return pm_fail(err, PM_EINPUT, "--plot draws a --workers-sweep of the policies (expected --workers-sweep, without --groups or --parallel)");
	if (g->plot && (rc = cli_plot_check_path(g->plot, NULL, err)))
		return rc;
	if (g->parallel && g->groups)
		return pm_fail(err, PM_EINPUT, "--groups shows merge plans; it does not combine with --parallel (expected one of them)");
	if (sources != 1)
		return pm_fail(err, PM_EINPUT, "%s all-reduce cost (expected exactly one of --a/--b, --fit FILE, --algo NAME or --table2 NAME)",
			       sources ? "more than one" : "missing");
	return PM_OK;
}

/* The timeline's options, which --parallel does not take. */
static int check_timeline(struct targs *g, struct pm_err *err)
{
	if (pm_parse_int(g->inflight, 1, PM_MAX_INFLIGHT, "all-reduces in flight", &g->nin, err) ||
	    parse_timeline(g->order, g->overlap, &g->lifo, &g->nextf, err))
		return PM_EINPUT;
	if ((g->nin > 1 || g->lifo || g->nextf) && g->parallel)
		return pm_fail(err, PM_EINPUT, "--in-flight, --order and --overlap apply to the all-reduce timeline, not to --parallel (expected one of them)");
	return PM_OK;
}

/* --compute-scale and --cost-model. */
static int check_scale(struct targs *g, struct pm_err *err)
{
	static const char *const cmodels[] = {"closed", "contention", NULL};
	char *end;

	g->cs = strtod(g->scale, &end);
	if (*end || !(g->cs > 0) || g->cs > 1e6)
		return pm_fail(err, PM_EINPUT, "invalid compute scale '%s' (expected a positive factor such as 0.5)", g->scale);
	return pm_pick_word("cost model", g->cmodel, cmodels, err) < 0 ? PM_EINPUT : PM_OK;
}

/* Check the options that need no network or profile, and parse them. */
static int check_args(struct targs *g, struct pm_err *err)
{
	if (check_aliases(g, err))
		return PM_EINPUT;
	if (cli_parse_format(g->format, &g->fmt, err) ||
	    pm_policy_parse(g->policy ? g->policy : g->parallel ? "ddp" : "all", g->pol, &g->npol, err) ||
	    (g->parallel && parse_schemes(g->parallel, g->schemes, &g->nsch, err)))
		return PM_EINPUT;
	int rc = check_output(g, err);

	if (rc || pm_parse_int(g->bpp, 1, 16, "bytes per parameter", &g->bp, err) ||
	    check_timeline(g, err) || check_scale(g, err))
		return rc ? rc : PM_EINPUT;
	return PM_OK;
}

/* The endpoint's presets, and what they allow. */
static int check_endpoint(struct targs *g, struct cli_net_opts *net, struct train_end *te,
			  struct pm_err *err)
{
	int rc;

	if ((rc = end_presets(net, g, te, err)))
		return rc;
	if (!te->overlap && ((g->policy && strcmp(g->policy, "synceasgd")) || g->parallel || g->groups))
		return pm_fail(err, PM_EINPUT, "--endpoint baseline-nooverlap issues every all-reduce after the backward in one kernel, policy synceasgd (expected no --policy, --parallel or --groups)");
	if (!te->overlap)
		pm_policy_parse("synceasgd", g->pol, &g->npol, err);
	if (net->endpoint && strcmp(net->endpoint, "ideal") && !g->algo)
		return pm_fail(err, PM_EINPUT, "--endpoint %s prices the all-reduces with the endpoint in the loop (expected --algo NAME as the cost)", net->endpoint);
	return PM_OK;
}

/* The table's header lines: the model, its compute, the timeline, the
 * endpoint. */
static void header_meta(struct cli_table *t, const struct targs *g, const struct pm_profile *prof,
			const struct train_end *te, const struct cli_net_opts *net,
			const struct pm_cost_src *cost, double tbsum, double grad_B)
{
	double psum = 0;

	for (int l = 0; l < prof->L; l++)
		psum += prof->params[l];
	cli_table_meta(t, "perfmodel train: model %s, %d gradient tensors, %.0f parameters, %ld bytes each (%.4g MB of gradients)",
		       prof->name, prof->L, psum, g->bp, grad_B / 1e6);
	cli_table_meta(t, "compute %s: %s; batch %s; backward %.4g ms, forward %.4g ms%s%s",
		       prof->kind, prof->device[0] ? prof->device : "device not stated", prof->batch[0] ? prof->batch : "?",
		       tbsum * 1e3, prof->tf_s * g->cs * te->factor * 1e3,
		       prof->forward_assumed ? " (forward not in the profile: assumed half the backward)" : "",
		       g->cs != 1 || te->factor != 1 ? " (compute scaled)" : "");
	if (g->nin > 1)
		cli_table_meta(t, "%ld all-reduces in flight: their startups a overlap, their bandwidth terms b M queue on the network; every plan (mgwfbp, optimal too) is chosen for one at a time and then timed so",
			       g->nin);
	if (g->lifo || g->nextf)
		cli_table_meta(t, "timeline: %s; %s; merge plans (mgwfbp, optimal) are chosen for Shi et al.'s timeline (fifo, backward) and then timed on this one",
			       g->lifo ? "lifo: of the all-reduces waiting, the last ready goes first" : "fifo",
			       g->nextf ? "next-forward: the next forward's layer l waits for its all-reduce, t_iter = compute + that wait" : "the iteration ends with the last all-reduce");
	if (te->sys || te->factor != 1)
		cli_table_meta(t, "endpoint: %s%s%s; collectives hold %.4g GB/s and %.0f SMs of the NPU's %.4g GB/s and %.0f; compute x%.4g (share %.3g bound by memory bandwidth)%s",
			       te->sys ? te->sys->paper : net->endpoint, te->sys ? ", Rashidi et al. 2021 Table VI: " : "",
			       te->sys ? te->sys->why : "", cost->params.mem_bw_Bps / 1e9, te->comm_sms,
			       te->npu.mem_bw_Bps / 1e9, te->npu.sms, te->factor, te->npu.mem_bound,
			       te->overlap ? "" : "; compute runs alone, then the one all-reduce");
}

/* A hybrid profile (model-parallel embeddings, Rashidi et al. 2021 §V):
 * what was split off and the all-to-all's cost. */
struct hybrid {
	struct pm_hybrid h;
	double bytes;		/* all-to-all bytes per worker, each way */
	double emb_tb;		/* the embeddings' update, scaled as all compute */
	struct pm_cost_src cost;
};

static int check_hybrid(const struct targs *g, const struct pm_profile *prof,
			struct hybrid *hy, const struct pm_cost_src *cost, struct pm_err *err)
{
	if (!g->algo || g->table2)
		return pm_fail(err, PM_EINPUT, "profile '%s' is hybrid parallel (model-parallel rows and an all-to-all): its all-to-all is priced by --a2a-algo on the network (expected --algo NAME as the all-reduce cost)", prof->name);
	if (g->nextf || g->parallel)
		return pm_fail(err, PM_EINPUT, "profile '%s' is hybrid parallel: --overlap next-forward and --parallel are for data-parallel profiles (expected neither)", prof->name);
	if (prof->L == 0)
		return pm_fail(err, PM_EINPUT, "profile '%s' has no data-parallel row (expected at least one row without parallel=model)", prof->name);
	hy->cost = *cost;
	hy->cost.coll = PM_COLL_ALLTOALL;
	hy->cost.algo = g->a2a_algo ? g->a2a_algo : "direct";
	hy->bytes = prof->a2a_values * (double)g->bp;
	return PM_OK;
}

/* Rows for every worker count: the policies' timelines or the sharding
 * schemes'. */
static int worker_rows(struct cli_table *t, struct targs *g, const struct pm_profile *prof,
		       struct pm_cost_src *cost, struct hybrid *hy, const double *bytes,
		       const double *tb, double tf, const double *wl, int nw, double lo,
		       double hi, double *speed, struct pm_err *err)
{
	double psum = 0;
	int rc = PM_OK;

	for (int l = 0; l < prof->L; l++)
		psum += prof->params[l];
	for (int w = 0; w < nw && !rc; w++) {
		struct pm_iter it = {.L = prof->L, .bytes = bytes, .tb = tb, .tf = tf,
				     .inflight = (int)g->nin, .lifo = g->lifo, .next_forward = g->nextf};
		int N = (int)wl[w];
		if ((rc = pm_cost_src_line(cost, N, lo, hi, &it.a, &it.b, err)))
			break;
		if (w == 0 || nw == 1)
			cli_table_meta(t, "all-reduce cost T(M) = a + b M: %s%s", cost->desc,
				       nw > 1 ? " (a and b per worker count in the a_us, b_ns_per_B columns)" : "");
		if (hy) {
			it.a2a_B = hy->bytes;
			it.a2a_pos = hy->h.a2a_pos;
			it.emb_tb = hy->emb_tb;
			if ((rc = pm_cost_src_line(&hy->cost, N, hy->bytes / 2, 2 * hy->bytes, &it.a2a_a, &it.a2a_b, err)))
				break;
			if (w == 0 || nw == 1)
				cli_table_meta(t, "all-to-all cost T(M) = a + b M: %s; %.4g MB each way per worker: %.4g ms%s",
					       hy->cost.desc, hy->bytes / 1e6, (it.a2a_a + it.a2a_b * hy->bytes) * 1e3,
					       nw > 1 ? " at the first worker count (refitted at each)" : "");
		}
		if (g->parallel) {
			if (w == 0)
				cli_table_meta(t, "reduce-scatter and all-gather: half an all-reduce, a/2 + (b/2) M (docs/model.md, Collectives); model states: mixed-precision Adam, ZeRO (Rajbhandari et al., SC 2020) section 3.1; zero3's forward spread over layers as their backward times");
			rc = parallel_rows(t, g->schemes, g->nsch, g->pol, g->npol, &it, psum, N, err);
			continue;
		}
		rc = policy_rows(t, g->pol, g->npol, &it, prof, N, g->groups, speed ? speed + w : NULL, nw);
	}
	return rc;
}

/* Each layer's gradient bytes and backward time (scaled as asked), the
 * smallest layer's bytes, the model's bytes and its backward in all. */
static void layer_loads(const struct pm_profile *prof, const struct targs *g, double factor, double *bytes,
			double *tb, double *lo, double *hi, double *tbsum)
{
	*lo = 1e300;
	*hi = *tbsum = 0;
	for (int l = 0; l < prof->L; l++) {
		bytes[l] = prof->params[l] * (double)g->bp;
		tb[l] = prof->tb_s[l] * g->cs * factor;
		*tbsum += tb[l];
		if (bytes[l] > 0 && bytes[l] < *lo)
			*lo = bytes[l];
		*hi += bytes[l];
	}
}

/* The table for the view asked (per worker count, groups or parallel
 * layouts) with its header lines. */
static void table_start(struct cli_table *t, const struct targs *g, const struct pm_profile *prof,
			const struct train_end *te, const struct cli_net_opts *net, const struct pm_cost_src *cost,
			const struct hybrid *hy, double tbsum, double hi)
{
	if (g->parallel)
		cli_table_init(t, NP, pcols, pflags);
	else
		cli_table_init(t, g->groups ? NG : NT, g->groups ? gcols : tcols, g->groups ? gflags : tflags);
	header_meta(t, g, prof, te, net, cost, tbsum, hi);
	if (hy->h.rows)
		cli_table_meta(t, "hybrid parallel (Rashidi et al. 2021 SV, DLRM): %d model-parallel rows (%.0f parameters, sharded over the workers, never all-reduced; their update, %.4g ms, after the backward's all-to-all); the forward's all-to-all blocks the forward; the backward's queues with the all-reduces once the %d layers above the embeddings are done; t_comm counts both",
			       hy->h.rows, hy->h.params, hy->emb_tb * 1e3, hy->h.a2a_pos);
}

/* Room for each layer's bytes and backward time, and for the plot's
 * speedups (policy x worker count) when one is asked for. */
static int alloc_loads(const struct pm_profile *prof, const struct targs *g, int nw, double **bytes, double **tb,
		       double **speed, struct pm_err *err)
{
	*bytes = malloc(sizeof(double) * (size_t)prof->L);
	*tb = malloc(sizeof(double) * (size_t)prof->L);
	if (!*bytes || !*tb || (g->plot && !(*speed = malloc(sizeof(double) * (size_t)g->npol * (size_t)nw))))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	return PM_OK;
}

int cmd_train(int argc, char **argv, struct pm_err *err)
{
	struct cli_net_opts net = {0};
	struct targs g = {.bpp = "4", .scale = "1", .format = "table", .cmodel = "closed",
			  .inflight = "1", .order = "fifo", .overlap = "backward"};
	struct train_end te;
	double *speed = NULL;	/* --plot: speedup of policy k at worker count w */
	const char *pos[1];
	int npos, n, rc, nw = 0;
	struct cli_opt opts[64];
	struct pm_profile prof = {0};
	struct pm_cost_src cost = {0};
	struct hybrid hy = {0};
	double *wl = NULL, *bytes = NULL, *tb = NULL;
	struct cli_table t = {0};

	n = cli_net_opt_rows(&net, opts);
	n += train_opt_rows(&g, opts + n);
	if (cli_parse("train", argc, argv, opts, n, pos, &npos, 0, err))
		return PM_EINPUT;
	if (g.help) {
		usage(opts, n);
		return 0;
	}
	if ((rc = check_args(&g, err)) || (rc = check_endpoint(&g, &net, &te, err)) ||
	    (rc = cli_net_build(&net, &cost.params, &cost.topo, err)))
		return rc;
	if ((rc = end_factor(&net, &cost.params, &te, err)) ||
	    (rc = worker_counts(g.sweep, g.workers, cost.topo, g.a || g.b || g.fit, &wl, &nw, err)) ||
	    (rc = pm_profile_load(g.model, &prof, err)))
		goto out;
	pm_profile_split(&prof, &hy.h);
	if ((rc = alloc_loads(&prof, &g, nw, &bytes, &tb, &speed, err)))
		goto out;
	double lo, hi, tbsum;
	layer_loads(&prof, &g, te.factor, bytes, tb, &lo, &hi, &tbsum);
	if ((rc = cost_source(&cost, &g, net.link_bw, err)) ||
	    (hy.h.rows && (rc = check_hybrid(&g, &prof, &hy, &cost, err))))
		goto out;
	hy.emb_tb = hy.h.tb_s * g.cs * te.factor;
	table_start(&t, &g, &prof, &te, &net, &cost, &hy, tbsum, hi);
	rc = worker_rows(&t, &g, &prof, &cost, hy.h.rows ? &hy : NULL, bytes, tb,
			 prof.tf_s * g.cs * te.factor, wl, nw, lo, hi, speed, err);
	if (!rc)
		rc = cli_table_write(cli_out(), &t, g.fmt, err);
	if (!rc && g.plot)
		rc = plot_speedup(g.plot, &prof, cost.topo ? pm_topo_spec(cost.topo) : "the all-reduce cost T(M) = a + b M",
				  g.pol, g.npol, wl, nw, speed, err);
out:
	free(speed);
	cli_table_release(&t);
	pm_profile_release(&prof);
	pm_topo_free(cost.topo);
	free(wl);
	free(bytes);
	free(tb);
	return rc;
}
