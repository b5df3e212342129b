/* cmd_fit.c: perfmodel fit, alpha and beta from measured (size, time)
 * points: osu_allreduce/osu_latency output, nccl-tests output or a CSV,
 * and the per-link options that make an algorithm reproduce them. */
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/file.h"
#include "model/text.h"
#include "model/machine.h"
#include "model/nccl.h"
#include "search/cost.h"
#include "search/fit.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const input_names[] = {"auto", "osu", "nccl-tests", "csv", "nccl-tests-json", NULL};	/* enum pm_points_format */

/* --help: usage, what the command does, examples (cli_help adds the options) */
static const char help_text[] =
	"usage: perfmodel fit FILE [--input-format F] [--range MIN:MAX] [--algo NAME]\n"
	"                     [--procs P] [--machine NAME [--write-machine OUT]] [--format F]\n\n"
	"Fits time = alpha + size x beta by least squares (GSL) to measured points and\n"
	"prints alpha and beta with standard errors, R^2 and the size range used.\n"
	"Inputs: osu_allreduce or osu_latency output (SIZE LATENCY_US; a 'P,' prefix\n"
	"on the size is ignored), nccl-tests output as it comes (the out-of-place\n"
	"time; NCCL INFO lines, the version line and mpirun --tag-output prefixes are\n"
	"skipped and counted), or a CSV with a header naming size (or size_B) and\n"
	"time_us, time_s or time (with units).\n\n"
	"The fitted alpha and beta describe the whole P-rank collective, not a link.\n"
	"as_options converts them with the closed form of --algo (default: what NCCL\n"
	"runs, ring; for broadcast and reduce its pipelined ring, chain:64P) on P\n"
	"ranks (--procs, or the ranks an nccl-tests header lists): ring takes\n"
	"2(P-1) alpha + 2(P-1)/P n / bw, so alpha_link = alpha / (2(P-1)) and\n"
	"bw_link = 2(P-1) / (P beta), with no link latency and no flow control; fed\n"
	"back to allreduce they give the measured line again.  A single line rarely\n"
	"fits a whole OSU curve: small messages follow another protocol than large\n"
	"ones, so fit the range you will model (--range).\n\n"
	"regimes: the curve is also cut into up to three straight lines (NCCL's LL,\n"
	"LL128 and Simple ranges, say), each fitted for the relative residual\n"
	"(weights 1/t^2), the cuts searched exhaustively and their number chosen by\n"
	"the Bayesian information criterion; each line prints its size range,\n"
	"alpha, beta and RMS relative residual.\n\n"
	"--machine NAME fits the NCCL parameters of a machine description (a preset\n"
	"or a file) to the log through NCCL's own model (perfmodel allreduce --algo\n"
	"nccl): a one-node log its launch latency and NVLink rate (ring_busbw, or\n"
	"nvls_busbw where NCCL runs NVLS at the largest size), a multi-node log its\n"
	"net_latency and nic_bw, and whether LL128 runs across the nodes (ll128_net:\n"
	"NCCL runs it there only where the GPUs reach their NICs through PCIe\n"
	"switches); ranks per node come from the description, the NCCL release from\n"
	"the log's header where it names one (else the description's).\n"
	"--write-machine OUT writes the description with the fitted rows (each\n"
	"source says what it was fitted to and the error before and after) for\n"
	"--topo machine:OUT:NODES and hier --machine OUT.\n\n"
	"Examples:\n"
	"  perfmodel fit data/measurements/osu_allreduce_8nodes.log --procs 8 --range 256K:1M\n"
	"  perfmodel fit data/measurements/nccl_azure_ndh100v5_allreduce.csv --range 8M:8G --procs 8 --format json\n"
	"  perfmodel fit data/measurements/nccl_azure_ndh100v5_allreduce.csv --procs 8 --machine azure-nd-h100-v5 --write-machine /tmp/my-ndh100.csv\n"
	"  perfmodel allreduce --topo machine:/tmp/my-ndh100.csv:2 --algo nccl --size 8:8G:x4 --model closed\n\n"
	"Options:\n";

static int parse_input(const char *s, enum pm_points_format *pf, struct pm_err *err)
{
	int k = pm_pick_word("input format", s, input_names, err);

	if (k < 0)
		return PM_EINPUT;
	*pf = (enum pm_points_format)k;
	return PM_OK;
}

static int parse_range(const char *range, double *lo, double *hi, struct pm_err *err)
{
	char a[64], *colon = strchr(range, ':');

	if (!colon || (size_t)(colon - range) >= sizeof a)
		return pm_fail(err, PM_EINPUT, "invalid range '%s' (expected MIN:MAX such as 64K:1M)", range);
	memcpy(a, range, (size_t)(colon - range));
	a[colon - range] = '\0';
	if (pm_parse_size(a, lo, err) || pm_parse_size(colon + 1, hi, err))
		return PM_EINPUT;
	if (*hi < *lo)
		return pm_fail(err, PM_EINPUT, "invalid range '%s' (expected MIN <= MAX)", range);
	return PM_OK;
}

/* The collective the file's header names (nccl-tests' test, or an OSU
 * benchmark whose SIZE means what perfmodel's does: the buffer each rank
 * reduces, or the root's; osu_allgather, osu_alltoall and
 * osu_reduce_scatter count per-process blocks), or -1. */
static int file_coll(const struct pm_points *pts)
{
	static const struct { const char *osu; enum pm_coll c; } osu[] = {
		{"osu_allreduce", PM_COLL_ALLREDUCE}, {"osu_reduce", PM_COLL_REDUCE},
		{"osu_bcast", PM_COLL_BROADCAST},
	};
	int from_file = -1;

	for (int k = 0; k < PM_NCOLL && pts->collective[0]; k++)
		if (strcmp(pts->collective, pm_coll_info((enum pm_coll)k)->nccl) == 0)
			from_file = k;
	for (size_t k = 0; k < sizeof osu / sizeof osu[0]; k++)
		if (strcmp(pts->collective, osu[k].osu) == 0)
			from_file = osu[k].c;
	return from_file;
}

/* --op, which must agree with the file's header where it names one. */
static int op_coll(const char *op, int from_file, const struct pm_points *pts, enum pm_coll *c, struct pm_err *err)
{
	int k = pm_coll_pick("--op", op, err);

	if (k < 0)
		return PM_EINPUT;
	if (from_file >= 0 && from_file != k)
		return pm_fail(err, PM_EINPUT, "--op %s, but the file measures %s (expected --op %s, or no --op)",
			       op, pts->collective, pm_coll_info((enum pm_coll)from_file)->name);
	*c = (enum pm_coll)k;
	return PM_OK;
}

/* Without --op or a header that names it: all-reduce, and why. */
static const char *all_reduce_why(const struct pm_points *pts)
{
	if (pts->collective[0])
		return NULL;	/* a test perfmodel does not convert */
	if (pts->bus_factor > 1.01)
		return "its busbw exceeds its algbw: only all-reduce's does";	/* 2(P-1)/P */
	return pts->bus_factor > 0 ? NULL : "assumed: the file does not say (give --op NAME)";
}

/* Which collective the measurements are: --op, else the header's test,
 * else all-reduce (said so).  *how tells which; NULL when the header
 * names a test perfmodel does not convert (then no as_options). */
static int which_coll(const char *op, const struct pm_points *pts, enum pm_coll *c,
		      const char **how, struct pm_err *err)
{
	int from_file = file_coll(pts);

	*c = from_file >= 0 ? (enum pm_coll)from_file : PM_COLL_ALLREDUCE;
	if (op) {
		*how = "--op";
		return op_coll(op, from_file, pts, c, err);
	}
	if (from_file >= 0)
		*how = pts->format == PM_POINTS_OSU ? "the OSU header" : "the nccl-tests header";
	else
		*how = all_reduce_why(pts);
	return PM_OK;
}

/* What NCCL runs for c, as the algorithm the fitted line is converted
 * through: broadcast and reduce are its pipelined ring, a chain cut into
 * 64 chunks a rank (NCCL moves 128-512 KiB chunks, so a message of tens
 * of MiB is hundreds of them): each link then carries the message about
 * once, and the link rate is about the measured algorithm bandwidth.
 * Otherwise the first algorithm of the table that implements c on ranks
 * alone (ring for all-reduce, reduce-scatter and all-gather). */
static const char *default_algo(enum pm_coll c, int P, char *buf, size_t size)
{
	int n;
	const struct pm_algo *const *a = pm_algos(&n);

	if ((c == PM_COLL_BROADCAST || c == PM_COLL_REDUCE) && P >= 2 && P <= 16384) {
		snprintf(buf, size, "chain:%d", 64 * P);
		return buf;
	}
	for (int i = 0; i < n; i++)
		if (pm_algo_does(a[i], c) && !(a[i]->flags & PM_ALGO_NEEDS_TOPO) &&
		    !(a[i]->flags & PM_ALGO_POW2))
			return a[i]->name;
	return "ring";
}

/* as_options: the fitted line as per-link options of algo on P ranks,
 * through the closed form of the collective measured. */
static void link_options(struct cli_table *t, const struct pm_fit *f,
			 const char *algo, enum pm_coll c, int P)
{
	double al, bw;
	struct pm_err e;

	if (!(f->beta_spB > 0) || f->alpha_s < 0) {
		cli_table_kv(t, "as_options", "none: %s (expected a positive intercept and slope; try --range)",
			     f->beta_spB <= 0 ? "the slope is not positive" : "the intercept is negative");
		return;
	}
	if (P < 2) {
		cli_table_kv(t, "as_options", "none: how many ranks ran is not known (expected --procs P; alpha and beta describe the whole P-rank collective)");
		return;
	}
	if (pm_fit_to_link(algo, c, P, f->alpha_s, f->beta_spB, &al, &bw, &e)) {
		cli_table_kv(t, "as_options", "none: %s", e.msg);
		return;
	}
	cli_table_kv(t, "as_options", "--alpha %.6gus --link-bw %.6gGB/s --link-lat 0 --flow none", al * 1e6, bw * 1e-9);
	cli_table_kv(t, "as_options_model", "%s %s on %d ranks, closed form with these options gives the fitted line",
		     algo, pm_coll_info(c)->title, P);
}

static void regime_rows(struct cli_table *t, const struct pm_points *pts, double lo, double hi)
{
	static const char *const names[3][3] = {{"all"}, {"small", "large"}, {"small", "middle", "large"}};
	struct pm_regimes g;
	struct pm_err e;

	if (pm_fit_regimes(pts, lo, hi, &g, &e)) {
		cli_table_kv(t, "regimes", "none: %s", e.msg);
		return;
	}
	cli_table_kv(t, "regimes", "%d (weighted least squares, relative residual; number by BIC)", g.n);
	for (int i = 0; i < g.n; i++) {
		const struct pm_fit *f = &g.r[i];
		char a[32], b[32], key[48];
		pm_fmt_size(f->min_B, a, sizeof a);
		pm_fmt_size(f->max_B, b, sizeof b);
		snprintf(key, sizeof key, "regime%d_%s", i + 1, names[g.n - 1][i]);
		cli_table_kv(t, key, "%s to %s, %d points: alpha %.4g us, beta %.4g ns/B (%.4g GB/s), rms %.2g%%",
			     a, b, f->n, f->alpha_s * 1e6, f->beta_spB * 1e9, f->beta_spB > 0 ? 1e-9 / f->beta_spB : 0,
			     f->rms_s * 100);
	}
}

static int write_machine(FILE *f, const void *m) { return pm_machine_write(f, m); }

/* The fitted rate and latency, with the error before and after. */
static void fit_rows(struct cli_table *t, const struct pm_nccl_fit *f, const struct pm_machine *m, int P)
{
	char a[32], b[32];
	int rccl = m->nccl.library == 1 && f->nodes == 1;

	pm_fmt_bw(f->rate_Bps, a, sizeof a);
	pm_fmt_time(f->lat_s, b, sizeof b);
	cli_table_kv_user(t, "machine", m->path);
	cli_table_kv(t, "machine_fit", "%d ranks on %d node%s: %s and %s through %s %s's model", P, f->nodes,
		     f->nodes > 1 ? "s" : "", f->rate_name, f->lat_name, rccl ? "RCCL" : "NCCL",
		     rccl ? pm_rccl_version : f->release);
	cli_table_kv(t, f->rate_name, "%s (was %s)", a, f->rate_was);
	cli_table_kv(t, f->lat_name, "%s (was %s)", b, f->lat_was);
	cli_table_kv(t, "nccl_error_before_pct", "%.3g", f->error_before * 100);
	cli_table_kv(t, "nccl_error_after_pct", "%.3g", f->error_after * 100);
	if (f->ll128_net_off)
		cli_table_kv(t, "ll128_net",
			     "0: the log is priced better with LL128 off across the nodes (%.3g%% with it on): NCCL runs LL128 across nodes only where the GPUs reach their NICs through PCIe switches, or another GPU on Hopper",
			     f->error_ll128_on * 100);
	if (f->kept)
		cli_table_kv(t, "machine_fit_kept",
			     "%s: fitted with %s, the log priced worse (the log's rate is not one NCCL's model reaches by changing %s alone)",
			     f->kept == 2 ? "both values the description's" : "the rate the description's, the latency fitted alone",
			     f->rate_name, f->rate_name);
}

/* --machine: the description's NCCL rates fitted to the log, printed and
 * (--write-machine) written. */
static int machine_rows(struct cli_table *t, const struct pm_points *pts, double lo, double hi,
			enum pm_coll c, int P, const char *name, const char *log, const char *out,
			struct pm_err *err)
{
	struct pm_machine base, *fitted = malloc(sizeof *fitted);
	struct pm_nccl_fit f;
	int rc;

	if (!fitted)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	if (P < 2)
		rc = pm_fail(err, PM_EINPUT, "--machine needs the ranks that ran (expected --procs P, or nccl-tests output that lists its ranks)");
	else if (!(rc = pm_machine_load(name, &base, err)) &&
		 !(rc = pm_fit_nccl(pts, lo, hi, c, P, &base, log, fitted, &f, err))) {
		const char *inputs[] = {log, base.path};
		fit_rows(t, &f, &base, P);
		if (pts->gpus_per_proc > 1)
			cli_table_kv(t, "machine_fit_host",
				     "the log's header says nGpus %d: one process drove %d GPUs, so its times were priced with the host's enqueue on the %d others (--gpus-per-process %d, host_enqueue); the fitted launch is without it",
				     pts->gpus_per_proc, pts->gpus_per_proc, pts->gpus_per_proc - 1, pts->gpus_per_proc);
		if (out && !(rc = cli_write_file(out, "machine file", inputs, 2, write_machine, fitted, err)))
			cli_table_kv_user(t, "machine_written", out);
	}
	free(fitted);
	return rc;
}

/* What fit was asked. */
struct fit_args {
	const char *input, *range, *fit_range, *format, *algo, *procs, *op, *machine, *write_to, *run;
	int help;
};

static int option_rows(struct fit_args *a, struct cli_opt *opts)
{
	int n = 0;

	const struct cli_opt rows[] = {
		{"input-format", "F", "auto (default), osu, nccl-tests, nccl-tests-json (its -J file) or csv", &a->input, NULL},
		{"range", "MIN:MAX", "fit only sizes in [MIN, MAX], e.g. 64K:1M", &a->range, NULL},
		{"fit-range", "MIN:MAX", "the same as --range (train's spelling of it)", &a->fit_range, NULL},
		{"op", "NAME", "the collective measured: allreduce, reducescatter, allgather, reduce, broadcast or alltoall (default: the nccl-tests header's, else allreduce)", &a->op, NULL},
		{"algo", "NAME", "algorithm the as_options are for (default: what NCCL runs: ring for all-reduce, reduce-scatter and all-gather; for broadcast and reduce its pipelined ring, chain with 64 chunks a rank)", &a->algo, NULL},
		{"run", "N", "the run to fit when the file holds several (a second column header after result rows begins one); default: refuse such a file", &a->run, NULL},
		{"procs", "P", "ranks that ran the measurement (default: the nccl-tests header's)", &a->procs, NULL},
		{"machine", "NAME", "fit this machine description's NCCL rates to the log (a preset such as dgx-h100, or a file)", &a->machine, NULL},
		{"write-machine", "OUT", "write the fitted description to OUT (needs --machine)", &a->write_to, NULL},
		cli_format_opt(&a->format),
		{"help", NULL, "show this help", NULL, &a->help},
	};
	n = cli_opt_add(opts, n, rows, (int)(sizeof rows / sizeof rows[0]));
	return n;
}

/* What was read: the file, its format and test, the rows used. */
static void read_rows(struct cli_table *t, const char *file, const struct pm_points *pts, enum pm_coll coll,
		      const char *how, long runs, const struct pm_fit *f)
{
	cli_table_meta(t, "perfmodel fit: time = alpha + size x beta, ordinary least squares (GSL gsl_fit_linear)");
	cli_table_kv_user(t, "file", file);
	cli_table_kv(t, "format", "%s", input_names[pts->format]);
	if (pts->collective[0])
		cli_table_kv_user(t, "test_in_header", pts->collective);
	if (how)
		cli_table_kv(t, "collective", "%s (%s)", pm_coll_info(coll)->title, how);
	else if (!pts->collective[0])
		cli_table_kv(t, "collective", "unknown: the file does not name its test (give --op NAME)");
	if (pts->ranks)
		cli_table_kv(t, "ranks_in_header", "%d", pts->ranks);
	if (runs)
		cli_table_kv(t, "run", "%ld of %d", runs, pts->runs);
	cli_table_kv(t, "rows_read", "%d", pts->n);
	if (pts->format == PM_POINTS_NCCL || pts->format == PM_POINTS_NCCL_JSON)
		cli_table_kv(t, pts->format == PM_POINTS_NCCL ? "lines_skipped" : "results_skipped", "%d", pts->skipped);
	cli_table_kv(t, "points_fitted", "%d", f->n);
}

/* The fitted line: its range, alpha and beta with their errors, fit. */
static void line_rows(struct cli_table *t, const struct pm_fit *f)
{
	char a[32], b[32];

	pm_fmt_size(f->min_B, a, sizeof a);
	pm_fmt_size(f->max_B, b, sizeof b);
	cli_table_kv(t, "size_range", "%s to %s", a, b);
	cli_table_kv(t, "alpha_us", "%.6g", f->alpha_s * 1e6);
	cli_table_kv(t, "alpha_stderr_us", "%.3g", f->se_alpha_s * 1e6);
	cli_table_kv(t, "beta_ns_per_B", "%.6g", f->beta_spB * 1e9);
	cli_table_kv(t, "beta_stderr_ns_per_B", "%.3g", f->se_beta_spB * 1e9);
	if (f->beta_spB > 0) {
		cli_table_kv(t, "bandwidth_GBps", "%.6g", 1e-9 / f->beta_spB);
		cli_table_kv(t, "bandwidth_MBps", "%.6g", 1e-6 / f->beta_spB);
	}
	cli_table_kv(t, "r_squared", "%.6f", f->r2);
	cli_table_kv(t, "rms_residual_us", "%.4g", f->rms_s * 1e6);
}

/* as_options, or why there are none. */
static void options_row(struct cli_table *t, const struct pm_points *pts, const struct pm_fit *f,
			const char *algo, enum pm_coll coll, const char *how, int P)
{
	char buf[32];

	if (how)
		link_options(t, f, algo ? algo : default_algo(coll, P, buf, sizeof buf), coll, P);
	else if (!pts->collective[0])
		cli_table_kv(t, "as_options", "none: the file does not name its test and its busbw equals %.3g x algbw (broadcast, reduce, all-gather or reduce-scatter; not all-reduce): give --op NAME",
			     pts->bus_factor);
	else
		cli_table_kv(t, "as_options", "none: the file measures %s, which perfmodel does not convert (expected nccl-tests output of a collective, osu_allreduce, osu_reduce or osu_bcast; or --op NAME with SIZE as that command's --help defines it)",
			     pts->collective);
}

/* The options that are not the file: one spelling of the range, the
 * machine a written description needs, and each value parsed. */
static int check_args(struct fit_args *q, enum pm_points_format *pf, enum cli_format *fmt, double *lo, double *hi,
		      long *P, long *runs, struct pm_err *err)
{
	if (q->range && q->fit_range)
		return pm_fail(err, PM_EINPUT, "--range %s and --fit-range %s both given (expected one: they are the same option)",
			       q->range, q->fit_range);
	if (!q->range)
		q->range = q->fit_range;
	if (q->write_to && !q->machine)
		return pm_fail(err, PM_EINPUT, "--write-machine needs --machine NAME (expected the description whose rates the log calibrates)");
	if (parse_input(q->input, pf, err) || cli_parse_format(q->format, fmt, err) ||
	    (q->range && parse_range(q->range, lo, hi, err)) ||
	    (q->procs && pm_parse_int(q->procs, 2, 1L << 30, "process count", P, err)) ||
	    (q->run && pm_parse_int(q->run, 1, 1000, "run", runs, err)))
		return PM_EINPUT;
	return PM_OK;
}

/* What fit works on: the options parsed, the file read, its line. */
struct fit_job {
	enum pm_points_format pf;
	enum cli_format fmt;
	double lo, hi;		/* --range */
	long P, runs;
	struct pm_points pts;
	struct pm_fit f;
	enum pm_coll coll;
	const char *how;	/* how coll is known (which_coll) */
};

/* The file read and its line fitted; which collective it measures.  On
 * success j->pts is held. */
static int fit_file(const struct fit_args *q, const char *path, struct fit_job *j, struct pm_err *err)
{
	int rc = pm_points_read_run(path, j->pf, (int)j->runs, &j->pts, err);

	if (rc)
		return rc;
	if (!(rc = which_coll(q->op, &j->pts, &j->coll, &j->how, err)))
		rc = pm_fit_line(&j->pts, j->lo, j->hi, &j->f, err);
	j->P = q->procs ? j->P : j->pts.ranks;
	if (!rc && q->machine && !j->how)
		rc = pm_fail(err, PM_EINPUT, "--machine needs to know the collective measured (expected --op NAME: the file does not say)");
	if (rc)
		pm_points_release(&j->pts);
	return rc;
}

/* The table: the file, the line, as_options, the regimes, the machine. */
static int print_fit(const struct fit_args *q, const char *path, struct fit_job *j, struct pm_err *err)
{
	static const char *const cols[] = {"property", "value"};
	static const unsigned flags[] = {0, COL_AUTO};
	struct cli_table t;
	int rc = PM_OK;

	cli_table_init(&t, 2, cols, flags);
	read_rows(&t, path, &j->pts, j->coll, j->how, j->runs, &j->f);
	line_rows(&t, &j->f);
	options_row(&t, &j->pts, &j->f, q->algo, j->coll, j->how, (int)j->P);
	regime_rows(&t, &j->pts, j->lo, j->hi);
	if (q->machine)
		rc = machine_rows(&t, &j->pts, j->lo, j->hi, j->coll, (int)j->P, q->machine, path, q->write_to, err);
	if (!rc)
		rc = cli_table_write(cli_out(), &t, j->fmt, err);
	cli_table_release(&t);
	return rc;
}

int cmd_fit(int argc, char **argv, struct pm_err *err)
{
	struct fit_args q = {.input = "auto", .format = "table"};
	struct fit_job j = {.pf = PM_POINTS_AUTO, .coll = PM_COLL_ALLREDUCE, .how = ""};
	const char *pos[2];
	struct cli_opt opts[13];
	int npos, rc, n = option_rows(&q, opts);

	if (cli_parse("fit", argc, argv, opts, n, pos, &npos, 1, err))
		return PM_EINPUT;
	if (q.help) {
		cli_help(cli_out(), help_text, opts, n);
		return 0;
	}
	if (npos < 1)
		return pm_fail(err, PM_EINPUT, "missing measurement file (expected perfmodel fit FILE, see perfmodel fit --help)");
	if (check_args(&q, &j.pf, &j.fmt, &j.lo, &j.hi, &j.P, &j.runs, err))
		return PM_EINPUT;
	if ((rc = fit_file(&q, pos[0], &j, err)))
		return rc;
	rc = print_fit(&q, pos[0], &j, err);
	pm_points_release(&j.pts);
	return rc;
}
