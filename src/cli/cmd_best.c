/* cmd_best.c: perfmodel best, the fastest algorithm of a collective per size on
 * a network and the sizes where the winner changes. */
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/file.h"
#include "cli/plot.h"
#include "search/best.h"
#include "search/pool.h"
#include "model/text.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ALGOS 64

enum { B_KIND, B_SIZE, B_SIZE_B, B_BEST, B_TIME, B_BUSBW, B_SECOND, B_SECOND_T, B_MARGIN, NB };
static const char *const cols[NB] = {"kind", "size", "size_B", "best", "time_us", "busbw_GBps",
				     "runner_up", "runner_up_us", "margin_pct"};
static const unsigned flags[NB] = {0, COL_TABLE, COL_DATA | COL_NUM, 0, COL_NUM, COL_NUM, 0,
				   COL_NUM, COL_NUM};

/* --help: usage, what the command does, examples (cli_help adds the options) */
static const char help_text[] =
	"usage: perfmodel best --topo SPEC [--op COLL] [--size RANGE] [--algo LIST] [--model closed|contention]\n"
	"                      [network options] [--format F]\n\n"
	"Which algorithm of a collective (--op: allreduce, the default, reducescatter,\n"
	"allgather, reduce, broadcast or alltoall) wins where: every applicable algorithm priced at\n"
	"every size of the sweep by one evaluator (contention by default, closed with\n"
	"--model closed).  One 'size' row per size (the fastest, its time and bus\n"
	"bandwidth, the runner-up and by how much it loses) and a 'crossover' row\n"
	"wherever the winner changes between two sweep points: the size where the\n"
	"two cost the same, found by bisection to 0.01% (as NCCL's tuner keeps a\n"
	"size threshold between algorithms).  A third algorithm winning only inside\n"
	"such an interval is missed: sweep finer (x1.25) to see it.  A 'limit' row\n"
	"is where the winner stops fitting instead (multiphase's sram=: the largest\n"
	"size its SRAM holds; or its schedule for larger sizes is too large for the\n"
	"contention evaluator), and the next one takes over; a comment line says why.\n\n"
	"Examples:\n"
	"  perfmodel best --topo torus:8x8 --size 1K:1G:x2\n"
	"  perfmodel best --topo full:8 --size 4K:64M:x2 --alpha 5us --model closed --format csv\n"
	"  perfmodel best --topo fattree:8,2 --op alltoall --size 1K:64M:x4\n"
	"  perfmodel best --topo torus:8x8 --size 1K:1G:x4 --plot best.svg\n\n"
	"Options:\n";

/* A named algorithm that cannot run here: left out, with the reason. */
struct left_out {
	char label[64];
	char why[512];
};

/* The --algo list, resolved on threads: every applicable algorithm, or
 * the named ones.  A named one that cannot run on the network is left
 * out with the reason (in left), as allreduce keeps its row with the
 * reason; one that is not an algorithm (or a bad argument) is an input
 * error, the first in the list's order; the command fails only when
 * nothing asked for applies. */
static int resolve(enum pm_coll coll, const char *list, const struct pm_topo *t, int threads,
		   struct pm_inst *in, int *n, struct left_out *left, int *nleft, struct pm_err *err)
{
	char buf[1024], *names[MAX_ALGOS];
	int all = strcmp(list, "all") == 0, rc[MAX_ALGOS];
	int nn = cli_algo_names(coll, list, buf, sizeof buf, names, MAX_ALGOS, err);
	struct pm_err *errs = nn > 0 ? calloc((size_t)nn, sizeof *errs) : NULL;

	*n = *nleft = 0;
	if (nn < 0)
		return PM_EINPUT;
	if (nn > 0 && !errs)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	pm_pool_resolve(coll, names, nn, t, threads, in, rc, errs);
	int r = cli_first_refusal(rc, errs, nn, all, err);
	for (int k = 0; k < nn && !r; k++) {
		if (rc[k] == PM_OK) {
			in[(*n)++] = in[k];
		} else if (!all) {	/* cannot run on this network */
			snprintf(left[*nleft].label, sizeof left[*nleft].label, "%s", names[k]);
			snprintf(left[(*nleft)++].why, sizeof left->why, "%s", errs[k].msg);
		}
	}
	free(errs);
	if (r)
		return r;
	if (*n)
		return PM_OK;
	if (*nleft)
		return pm_fail(err, PM_EINPUT, "none of the algorithms asked for applies: %s: %s", left[0].label,
			       left[0].why);
	return pm_fail(err, PM_EINPUT, "no algorithm applies to %s", pm_topo_spec(t));
}

static void size_row(struct cli_table *tab, const char *kind, double size)
{
	cli_table_row(tab);
	cli_table_set(tab, B_KIND, "%s", kind);
	cli_table_bytes(tab, B_SIZE, B_SIZE_B, size);
}

/* The fastest algorithm's columns: name, time and bus bandwidth. */
static void put_fastest(struct cli_table *tab, const struct pm_inst *in, double size, double time_s, int P)
{
	cli_table_set(tab, B_BEST, "%s", in->label);
	cli_table_set(tab, B_TIME, "%.6g", time_s * 1e6);
	cli_table_set(tab, B_BUSBW, "%.6g", pm_coll_busbw(in->coll, size, time_s, P) / 1e9);
}

/* A crossover row (the two cost the same there) or a limit row (the
 * winner stops fitting). */
static void cross_row(struct cli_table *tab, const struct pm_best_cross *x, const struct pm_inst *in, int P)
{
	size_row(tab, x->limit ? "limit" : "crossover", x->size_B);
	put_fastest(tab, &in[x->to], x->size_B, x->time_s, P);
	cli_table_set(tab, B_SECOND, "%s", in[x->from].label);
	if (!x->limit) {
		cli_table_set(tab, B_SECOND_T, "%.6g", x->time_s * 1e6);
		cli_table_set(tab, B_MARGIN, "0");
	}
}

/* A size row: the fastest and the runner-up, or why none runs it. */
static void point_row(struct cli_table *tab, const struct pm_best_point *pt, const struct pm_inst *in, int P)
{
	size_row(tab, "size", pt->size_B);
	if (pt->winner < 0) {	/* none runs it: say why, price nothing */
		cli_table_set(tab, B_BEST, "none (%s)", pt->why);
		return;
	}
	put_fastest(tab, &in[pt->winner], pt->size_B, pt->time_s, P);
	if (pt->second < 0)
		return;
	cli_table_set(tab, B_SECOND, "%s", in[pt->second].label);
	cli_table_set(tab, B_SECOND_T, "%.6g", pt->second_s * 1e6);
	cli_table_set(tab, B_MARGIN, "%.4g", 100 * (pt->second_s / pt->time_s - 1));
}

/* The size rows, each after the crossovers below it. */
static void put_rows(struct cli_table *tab, const struct pm_best *b, const struct pm_inst *in, int P)
{
	for (int i = 0, c = 0; i < b->npts; i++) {
		for (; c < b->ncross && b->cross[c].size_B <= b->pts[i].size_B; c++)
			cross_row(tab, &b->cross[c], in, P);
		point_row(tab, &b->pts[i], in, P);
	}
}

/* --plot: the winner's bus bandwidth at each size, named where it
 * changes, the runner-up's, and the network's bound. */
static int plot_best(const char *path, const struct pm_best *b, const struct pm_inst *in, const struct pm_topo *t,
		     double inj_Bps, const char *model, struct pm_err *err)
{
	int n = b->npts, P = pm_topo_endpoints(t), rc;
	double *y = malloc(sizeof(double) * 3 * (size_t)n + 1), *x = malloc(sizeof(double) * (size_t)n + 1);
	const char **labels = calloc((size_t)n + 1, sizeof *labels);
	const char *names[2] = {"fastest (named where it changes)", "runner-up"};
	char title[200];
	enum pm_coll c = in[0].coll;

	if (!y || !x || !labels) {
		free(y), free(x), free(labels);
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	for (int i = 0; i < n; i++) {
		const struct pm_best_point *pt = &b->pts[i];
		double tb = pm_coll_bound(c, pt->size_B, t, inj_Bps);
		x[i] = pt->size_B;
		y[i] = pt->winner >= 0 ? pm_coll_busbw(c, pt->size_B, pt->time_s, P) / 1e9 : NAN;
		y[n + i] = pt->second >= 0 ? pm_coll_busbw(c, pt->size_B, pt->second_s, P) / 1e9 : NAN;
		y[2 * n + i] = tb > 0 ? pm_coll_busbw(c, pt->size_B, tb, P) / 1e9 : NAN;
		labels[i] = pt->winner >= 0 && (!i || pt->winner != b->pts[i - 1].winner) ? in[pt->winner].label : "";
	}
	snprintf(title, sizeof title, "fastest %s on %s, %d endpoints (%s evaluator)", pm_coll_info(c)->title,
		 pm_topo_spec(t), P, model);
	struct cli_plot pl = {path, title, "message size per rank (bytes, log scale)", "bus bandwidth (GB/s)", 1, 2, n,
			      names, x, y, "bound: the network's links", y + 2 * n, labels};
	rc = cli_plot_write(&pl, err);
	free(y), free(x), free(labels);
	return rc;
}

/* What best was asked. */
struct best_args {
	struct cli_net_opts net;
	const char *size, *algo, *model, *format, *op, *plot, *jobs;
	int help;
	int threads;		/* from jobs; 0: chosen by the work */
};

static int option_rows(struct best_args *q, struct cli_opt *opts)
{
	int n = cli_net_opt_rows(&q->net, opts);

	const struct cli_opt rows[] = {
		{"size", "RANGE", "sizes per rank to compare, e.g. 1K:1G:x2 (the default)", &q->size, NULL},
		{"algo", "LIST", "all applicable (default) or names from perfmodel list, comma separated, with arguments as in allreduce --algo", &q->algo, NULL},
		{"op", "COLL", "the collective: allreduce (default), reducescatter, allgather, reduce, broadcast or alltoall", &q->op, NULL},
		{"model", "M", "contention (default) or closed", &q->model, NULL},
		cli_format_opt(&q->format),
		{"plot", "FILE", "draw the fastest algorithm's bus bandwidth against the size, named where the winner changes, with the runner-up and the network's bound, to FILE.svg (.png, .pdf with plplot-driver-cairo)", &q->plot, NULL},
		{"jobs", "N", "build the algorithms' schedules on N threads, 1-16 (default: the cores online where the contention evaluator prices 1,024 endpoints or more, else 1); the output is the same", &q->jobs, NULL},
		{"help", NULL, "show this help", NULL, &q->help},
	};
	n = cli_opt_add(opts, n, rows, (int)(sizeof rows / sizeof rows[0]));
	return n;
}

/* The table's header lines: what was compared, the network, what was
 * left out and where an algorithm stops. */
static void best_meta(struct cli_table *tab, const struct best_args *q, enum pm_coll coll,
		      const struct pm_topo *t, const struct pm_params *p, const struct pm_inst *in,
		      int nalgo, const struct pm_best *b, const struct left_out *left, int nleft)
{
	cli_table_meta(tab, "perfmodel best: the fastest %s per size on %s (%d ranks), %s evaluator",
		       pm_coll_info(coll)->title, pm_topo_spec(t), pm_topo_endpoints(t), q->model);
	cli_net_meta(tab, t, p);
	for (int a = 0; a < nalgo; a++)
		if (in[a].algo->flags & PM_ALGO_EVERY_COLL) {	/* NCCL's own choice */
			cli_nccl_meta(tab, t, 0);
			if (nalgo > 1)
				cli_table_meta(tab, "the other rows are schedules priced at the alpha above a step, not at NCCL's launch and per-hop latency: where latency dominates, their lead over nccl is that alpha's, not a faster algorithm's (fit alpha to your nccl-tests log: perfmodel fit)");
			break;
		}
	for (int a = 0; a < nleft; a++)
		cli_table_meta(tab, "left out: %s: %s", left[a].label, left[a].why);
	for (int a = 0; a < nalgo; a++)
		if (!b->usable[a])
			cli_table_meta(tab, "left out: %s: %s", in[a].label, b->why[a]);
	for (int c = 0; c < b->ncross; c++)
		if (b->cross[c].limit) {
			char z[32];
			pm_fmt_size(b->cross[c].size_B, z, sizeof z);
			cli_table_meta(tab, "limit at %s: %s beyond it: %s", z,
				       in[b->cross[c].from].label, b->cross[c].why);
		}
}

/* Rank the algorithms over the sizes on the network and print (and
 * plot) the result. */
static int rank_and_print(const struct best_args *q, enum cli_format fmt, const double *sizes, int nsizes,
			  struct pm_err *err)
{
	struct cli_net_opts net = q->net;
	struct pm_params p;
	struct pm_topo *t = NULL;
	struct pm_inst *in = NULL;
	struct left_out *left = NULL;
	struct pm_best b = {0};
	struct cli_table tab = {0};
	struct cli_progress pr;
	int rc, nalgo = 0, nleft = 0, coll;

	if ((rc = cli_net_build(&net, &p, &t, err)) || (rc = cli_need_two(t, err)))
		goto out;
	if (!(in = calloc(MAX_ALGOS, sizeof *in)) || !(left = calloc(MAX_ALGOS, sizeof *left))) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		goto out;
	}
	if ((coll = pm_coll_pick("--op", q->op, err)) < 0) {
		rc = PM_EINPUT;
		goto out;
	}
	int contention = strcmp(q->model, "contention") == 0;
	int threads = pm_pool_pricing_threads(q->threads, contention, pm_topo_endpoints(t));
	if ((rc = resolve((enum pm_coll)coll, q->algo, t, threads, in, &nalgo, left, &nleft, err)))
		goto out;
	cli_progress_start(&pr);
	cli_progress_step(&pr, "best", 0, 1);
	rc = pm_best_run(in, nalgo, sizes, nsizes, &p, contention, threads, &b, err);
	cli_progress_end(&pr);
	if (rc)
		goto out;
	cli_table_init(&tab, NB, cols, flags);
	best_meta(&tab, q, (enum pm_coll)coll, t, &p, in, nalgo, &b, left, nleft);
	put_rows(&tab, &b, in, pm_topo_endpoints(t));
	rc = cli_table_write(cli_out(), &tab, fmt, err);
	if (!rc && q->plot)
		rc = plot_best(q->plot, &b, in, t, p.inj_bw_Bps, q->model, err);
out:
	cli_table_release(&tab);
	pm_best_release(&b);
	free(in);
	free(left);
	pm_topo_free(t);
	return rc;
}

int cmd_best(int argc, char **argv, struct pm_err *err)
{
	struct best_args q = {.size = "1K:1G:x2", .algo = "all", .model = "contention", .format = "table",
			      .op = "allreduce"};
	const char *pos[1];
	struct cli_opt opts[32];
	enum cli_format fmt;
	double *sizes = NULL;
	int npos, rc, nsizes = 0, n = option_rows(&q, opts);

	if (cli_parse("best", argc, argv, opts, n, pos, &npos, 0, err))
		return PM_EINPUT;
	if (q.help) {
		cli_help(cli_out(), help_text, opts, n);
		return 0;
	}
	if (!q.net.topo)
		return pm_fail(err, PM_EINPUT, "missing --topo (expected a network such as torus:8x8; see perfmodel list)");
	static const char *const models[] = {"closed", "contention", NULL};
	if (pm_pick_word("model", q.model, models, err) < 0)
		return PM_EINPUT;
	long jobs = 0;
	if (cli_parse_format(q.format, &fmt, err) || (q.jobs && pm_parse_int(q.jobs, 1, 16, "--jobs", &jobs, err)) ||
	    pm_parse_size_range(q.size, &sizes, &nsizes, err))
		return PM_EINPUT;
	q.threads = (int)jobs;
	if (q.plot && nsizes < 2)
		rc = pm_fail(err, PM_EINPUT, "--plot draws against the size: give --size a range such as 1K:1G:x2 (got '%s')", q.size);
	else if (q.plot)
		rc = cli_plot_check_path(q.plot, cli_topo_file(q.net.topo), err);
	else
		rc = PM_OK;
	if (!rc)
		rc = rank_and_print(&q, fmt, sizes, nsizes, err);
	free(sizes);
	return rc;
}
