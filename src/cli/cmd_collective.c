/* cmd_collective.c: perfmodel allreduce, reducescatter, allgather, reduce,
 * broadcast and alltoall: one row per size, algorithm and evaluator, with
 * the algorithms that cannot run listed with the reason. */
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/file.h"
#include "cli/plot.h"
#include "cli/simopts.h"
#include "search/pool.h"
#include "model/algo.h"
#include "model/text.h"
#include "model/units.h"
#include "search/pricer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ALGOS 64

struct job {
	struct pm_inst in;
	int status;		/* PM_OK or PM_ENOTAPPLICABLE */
	char note[512];
	struct pm_pricer q;	/* open while its sizes are priced (status PM_OK) */
	int warned;		/* the missing schedule was noted (once, not per size) */
	char warning[700];	/* ... said on stderr once every job is priced */
	int rc;			/* how pricing it ended */
	struct cli_table rows;	/* this algorithm's rows, size by size ... */
	int *first;		/* ... size s in rows [first[s], first[s + 1]) */
	double *t;		/* time of size s, evaluator m: t[s * NMODEL + m] (NaN: none) */
	int z;			/* the size being priced */
	int explain;		/* --explain: its closed rows' note gives the terms */
	const struct pm_pricer_cfg *cfg;	/* the network and evaluators it is priced with
						 * (price_all's: valid only while pricing) */
	const int *on;		/* evaluator m asked: on[m] */
};

enum col {
	C_SIZE, C_SIZE_B, C_ALGO, C_MODEL, C_TIME, C_ALGBW, C_BUSBW, C_STEPS,
	C_SENT, C_SENT_B, C_MAXLINK, C_MAXLINK_B, C_USED, C_UTIL, C_MEM_B,
	C_ALPHA, C_LAT, C_BW, C_RED, C_BOUND, C_NOTE, NCOL
};

static const char *const col_names[NCOL] = {
	"size", "size_B", "algo", "model", "time_us", "algbw_GBps", "busbw_GBps",
	"steps", "sent/node", "sent_per_node_B", "max_link", "max_link_B",
	"links_used_pct", "util_avg_pct", "mem_read_per_node_B", "alpha_us", "latency_us",
	"bandwidth_us", "reduction_us", "bound_us", "note",
};

/* The evaluators (search/pricer.h), in the order their rows appear. */
enum { M_CLOSED = PM_EVAL_CLOSED, M_CONTENTION = PM_EVAL_CONTENTION, M_SIM = PM_EVAL_SIM,
       M_DATAFLOW = PM_EVAL_DATAFLOW, NMODEL = PM_NEVAL };

/* "both" (closed and contention, the default), "all", or a comma list. */
/* The evaluator named tok, or -1 (with the message). */
static int model_index(const char *tok, struct pm_err *err)
{
	for (int m = 0; m < NMODEL; m++)
		if (strcmp(tok, pm_evals[m].name) == 0)
			return m;
	pm_fail(err, PM_EINPUT,
		"invalid model '%s' (expected closed, contention, sim, dataflow, a comma list of them, both or all)", tok);
	return -1;
}

static int parse_models(const char *s, int on[NMODEL], struct pm_err *err)
{
	char buf[128];
	int both = strcmp(s, "both") == 0, all = strcmp(s, "all") == 0;

	for (int m = 0; m < NMODEL; m++)
		on[m] = (both && m < M_SIM) || all;
	if (both || all)
		return PM_OK;
	if (pm_check_list("model", s, ',', "closed,sim", err))
		return PM_EINPUT;
	pm_strlcpy(buf, s, sizeof buf);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int m = model_index(tok, err);
		if (m < 0)
			return PM_EINPUT;
		on[m] = 1;
	}
	return PM_OK;
}

/* The algorithms of collective c, and how their closed forms price it,
 * for its help. */
static void help_algos(enum pm_coll c)
{
	const struct pm_coll_info *ci = pm_coll_info(c);
	int na;
	const struct pm_algo *const *all = pm_algos(&na);

	fprintf(cli_out(), "Algorithms:");
	for (int a = 0; a < na; a++)
		if (pm_algo_does(all[a], c))
			fprintf(cli_out(), " %s", all[a]->name);
	if (ci->part)
		fprintf(cli_out(), "\n(the %s phase of their all-reduce: closed form = half its alpha, latency\nand bandwidth terms%s)",
		       ci->part == 1 ? "first" : "second",
		       c == PM_COLL_REDUCESCATTER || c == PM_COLL_REDUCE ? " and all of its reduction" : ", no reduction");
}

/* The help of a collective other than all-reduce. */
static void usage_other(enum pm_coll c, const struct cli_opt *opts, int n)
{
	const struct pm_coll_info *ci = pm_coll_info(c);

	fprintf(cli_out(), "usage: perfmodel %s --topo SPEC --size SIZE [options]\n\n"
	       "Predicts the time of %s %s of SIZE bytes on the network SPEC for every\n"
	       "algorithm that implements it, with the evaluators of perfmodel allreduce\n"
	       "(closed form, contention, sim, dataflow; see perfmodel allreduce --help).\n"
	       "%s.\nBandwidths follow nccl-tests (%s): algbw = size / time, %s.\n"
	       "bound_us: no algorithm can be faster on this network (the bytes an endpoint\n"
	       "must move over its links, Chan et al., CCPE 2007%s, + one link latency).\n",
	       ci->name, ci->title[0] == 'a' ? "an" : "a", ci->title, ci->size_doc, ci->nccl, ci->busbw_doc,
	       c == PM_COLL_ALLTOALL ? "; and half the data across the bisection" : "");
	help_algos(c);
	fprintf(cli_out(), "\n\nExamples:\n  perfmodel %s --topo torus:8x8 --size 64M\n"
	       "  perfmodel %s --topo fattree:8,2 --size 32K:64M:x4 --model contention --format csv\n\n"
	       "Options:\n", ci->name, ci->name);
	cli_print_opts(cli_out(), opts, n);
	fprintf(cli_out(), "\n%s", cli_units_help);
}

/* --help: usage, what the command does, examples (cli_help adds the options) */
static const char help_text[] =
	"usage: perfmodel allreduce --topo SPEC --size SIZE [options]\n"
	"\n"
	"Predicts the time of an all-reduce of SIZE bytes on the network SPEC for every\n"
	"algorithm that can run there, with two evaluators:\n"
	"  closed      the algorithm's alpha-beta-gamma formula (perfmodel list shows it);\n"
	"  contention  the algorithm's schedule routed over the network, each step priced\n"
	"              by alpha + longest route latency + busiest link load / bandwidth\n"
	"              + gamma x most bytes one rank reduces, steps summed;\n"
	"  sim         the same schedule in the packet simulator, steps in lockstep: by\n"
	"              default every vertex is an input-queued router (virtual\n"
	"              cut-through, credits, 4 VCs of 318 flits, a packet of an earlier\n"
	"              step wins an output), as BookSim2 runs the MULTITREE artifact\n"
	"              (Huang et al., ISCA 2021, Table III); --sim-net links moves\n"
	"              packet trains over first-come-first-served links instead\n"
	"              (util_avg_pct: time-weighted share of links busy);\n"
	"  dataflow    the packet simulator without step barriers: a transfer starts as\n"
	"              soon as its source holds the chunks it sends and one of its ports\n"
	"              (as many as the schedule sends at once) is free.\n"
	"Bandwidths follow nccl-tests: algbw = size / time, busbw = algbw x 2(P-1)/P.\n"
	"links_used_pct is the share of directed links that ever carry data;\n"
	"util_avg_pct the time-weighted share busy in each step.\n"
	"\n"
	"Examples:\n"
	"  perfmodel allreduce --topo torus:8x8 --size 64M\n"
	"  perfmodel allreduce --topo torus:4x4 --size 32K:64M:x2 --algo ring,2d-ring --format csv\n"
	"  perfmodel allreduce --topo full:16 --size 1M --alpha 5us --gamma 20GB/s --model closed\n"
	"  perfmodel allreduce --topo fattree:8,2 --size 16M --algo hring:8x8,dbtree:2\n"
	"  perfmodel allreduce --topo fattree:8,2 --size 4M --algo multitree,ring --model contention,sim\n"
	"  perfmodel allreduce --topo torus:4x4 --size 1M --algo multitree --model sim --arbitration fcfs\n"
	"\n"
	"Options:\n";

static void usage(const struct cli_opt *opts, int n)
{
	cli_help(cli_out(), help_text, opts, n);
	fprintf(cli_out(), "\n%s", cli_units_help);
}

/* Job j from one resolved name: an algorithm that cannot run here keeps
 * its row with the reason. */
static void take_job(struct job *j, const struct pm_inst *in, int status, const struct pm_err *e,
		     const char *name)
{
	memset(j, 0, sizeof *j);
	j->in = *in;
	j->status = status == PM_OK ? PM_OK : PM_ENOTAPPLICABLE;
	snprintf(j->note, sizeof j->note, "%s", status == PM_OK ? "" : e->msg);
	if (!j->in.algo || status != PM_OK)
		snprintf(j->in.label, sizeof j->in.label, "%s", name);
}

/* One rule for every command: it fails when nothing it was asked for can
 * be answered (a list of names with one that applies prints the others'
 * rows with the reason). */
static int any_applies(const struct job *jobs, int njobs, struct pm_err *err)
{
	for (int i = 0; i < njobs; i++)
		if (jobs[i].status == PM_OK)
			return PM_OK;
	return pm_fail(err, PM_EINPUT, "none of the algorithms asked for applies: %s: %s",
		       jobs[0].in.label, jobs[0].note);
}

/* Resolve the --algo list ("all" or comma separated) on threads; an
 * algorithm that cannot run here keeps a row with the reason, and the
 * first refusal in the list's order is the one returned. */
static int resolve_algos(enum pm_coll coll, const char *list, const struct pm_topo *t, int threads,
			 struct job *jobs, int *njobs, struct pm_err *err)
{
	char buf[1024], *names[MAX_ALGOS];
	int all = strcmp(list, "all") == 0, rc[MAX_ALGOS];
	int nn = cli_algo_names(coll, list, buf, sizeof buf, names, MAX_ALGOS, err);
	struct pm_err *errs = nn > 0 ? calloc((size_t)nn, sizeof *errs) : NULL;
	struct pm_inst *in = nn > 0 ? calloc((size_t)nn, sizeof *in) : NULL;
	int r = PM_OK;

	*njobs = 0;
	if (nn < 0)
		r = PM_EINPUT;
	else if (nn > 0 && (!errs || !in))
		r = pm_fail(err, PM_EINTERNAL, "out of memory");
	else
		pm_pool_resolve(coll, names, nn, t, threads, in, rc, errs);
	if (!r && !(r = cli_first_refusal(rc, errs, nn, all, err)))
		for (int k = 0; k < nn; k++)
			take_job(&jobs[(*njobs)++], &in[k], rc[k], &errs[k], names[k]);
	free(errs);
	free(in);
	return r || all ? r : any_applies(jobs, *njobs, err);
}

/* Time, bandwidths and steps: every evaluator's row has them. */
static void put_time(struct cli_table *tab, enum pm_coll coll, const struct pm_cost *c, double n, int P)
{
	cli_table_set(tab, C_TIME, "%.6g", c->time_s * 1e6);
	cli_table_set(tab, C_ALGBW, "%.6g", pm_algbw(n, c->time_s) / 1e9);
	cli_table_set(tab, C_BUSBW, "%.6g", pm_coll_busbw(coll, n, c->time_s, P) / 1e9);
	cli_table_set(tab, C_STEPS, "%.0f", c->steps);
}

/* A closed-form or contention row: time and what it is made of (the
 * busiest link and the links' use where there is a schedule; the memory
 * reads with an endpoint model). */
static void put_cost(struct cli_table *tab, enum pm_coll coll, const struct pm_cost *c,
		     double n, int P)
{
	const double terms[] = {c->alpha_s * 1e6, c->lat_s * 1e6, c->bw_s * 1e6, c->red_s * 1e6};
	const double use[] = {100 * c->links_used, 100 * c->util_avg};

	put_time(tab, coll, c, n, P);
	cli_table_bytes(tab, C_SENT, C_SENT_B, c->sent_B);
	if (c->mem_B > 0)
		cli_table_set(tab, C_MEM_B, "%.0f", c->mem_B);
	if (c->max_link_B >= 0) {
		cli_table_bytes(tab, C_MAXLINK, C_MAXLINK_B, c->max_link_B);
		cli_table_nums(tab, C_USED, use, 2, "%.4g");
	}
	cli_table_nums(tab, C_ALPHA, terms, 4, "%.6g");
}

/* The evaluator a plot draws: contention if asked, else sim, dataflow,
 * closed. */
static int drawn_model(const int on[NMODEL])
{
	static const int pref[NMODEL] = {M_CONTENTION, M_SIM, M_DATAFLOW, M_CLOSED};

	for (int k = 0; k < NMODEL; k++)
		if (on[pref[k]])
			return pref[k];
	return M_CLOSED;
}

/* Evaluator m's bus bandwidth (GB/s) at every size, a line for each
 * algorithm with numbers (at most 24) into y and names; returns how many. */
static int busbw_lines(enum pm_coll coll, int P, int m, const struct job *jobs, int njobs, const double *sizes,
		       int nsizes, double *y, const char **names)
{
	int ns = 0;

	for (int i = 0; i < njobs && ns < 24; i++) {
		if (jobs[i].status != PM_OK)
			continue;
		for (int z = 0; z < nsizes; z++) {
			double tm = jobs[i].t[z * NMODEL + m];
			y[ns * nsizes + z] = tm > 0 ? pm_coll_busbw(coll, sizes[z], tm, P) / 1e9 : NAN;
		}
		names[ns++] = jobs[i].in.label;
	}
	return ns;
}

/* The network's bound at every size, as bus bandwidth (GB/s). */
static void bound_line(enum pm_coll coll, const struct pm_topo *t, double inj_Bps, const double *sizes,
		       int nsizes, double *bound)
{
	for (int z = 0; z < nsizes; z++) {
		double tb = pm_coll_bound(coll, sizes[z], t, inj_Bps);
		bound[z] = tb > 0 ? pm_coll_busbw(coll, sizes[z], tb, pm_topo_endpoints(t)) / 1e9 : NAN;
	}
}

/* --plot: busbw against size, one line per algorithm that has numbers, of
 * the most detailed evaluator asked for (contention, sim, dataflow,
 * closed), as Huang et al. 2021 Fig. 9 draws its sweeps. */
static int draw(const char *path, enum pm_coll coll, const struct pm_topo *t, double inj_Bps,
		const struct job *jobs, int njobs, const double *sizes, int nsizes,
		const int on[NMODEL], struct pm_err *err)
{
	int m = drawn_model(on), P = pm_topo_endpoints(t);
	const char *names[24];
	double *y = malloc(sizeof(double) * 25 * (size_t)nsizes);
	char title[200];

	if (!y)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	int ns = busbw_lines(coll, P, m, jobs, njobs, sizes, nsizes, y, names);
	bound_line(coll, t, inj_Bps, sizes, nsizes, y + (size_t)24 * nsizes);
	snprintf(title, sizeof title, "%s on %s, %d endpoints (%s evaluator)", pm_coll_info(coll)->title, pm_topo_spec(t), P,
		 pm_evals[m].name);
	struct cli_plot pl = {path, title, "message size per rank (bytes, log scale)", "bus bandwidth (GB/s)", 1, ns, nsizes,
			      names, sizes, y, "bound: the network's links", y + (size_t)24 * nsizes, NULL};
	int rc = ns ? cli_plot_write(&pl, err) : pm_fail(err, PM_EINPUT, "nothing to plot: no algorithm has numbers");
	free(y);
	return rc;
}

/* --trace records one simulation: refuse anything that would run several. */
static int open_trace(const char *path, const int on[NMODEL], int nsizes, int njobs,
		      const char *algo, const char *topo, double size, struct pm_sim_opts *so,
		      struct pm_err *err)
{
	char title[512], sz[32];

	if (nsizes != 1 || njobs != 1 || on[M_SIM] + on[M_DATAFLOW] != 1)
		return pm_fail(err, PM_EINPUT,
			       "--trace records one simulation (expected one --algo, one --size and --model sim or dataflow)");
	pm_fmt_size(size, sz, sizeof sz);
	snprintf(title, sizeof title, "perfmodel allreduce --topo %s --size %s --algo %s --model %s",
		 topo, sz, algo, on[M_SIM] ? "sim" : "dataflow");
	const char *input = cli_topo_file(topo);
	if (input && cli_same_file(path, input))
		return pm_fail(err, PM_EINPUT, "trace file '%s' is the topology file '%s' (expected another path: it would be overwritten)",
			       path, input);
	return pm_trace_open(path, title, &so->trace, err);
}

/* A packet-simulator row: time, bandwidths, steps, link busy share. */
static void put_sim(struct cli_table *tab, enum pm_coll coll, const struct pm_cost *c, double n, int P)
{
	put_time(tab, coll, c, n, P);
	cli_table_set(tab, C_UTIL, "%.4g", 100 * c->util_avg);
}

/* The closed row's note: why the schedule evaluators have no row, or
 * (--explain) the terms of the closed form at size n. */
static void closed_note(struct cli_table *tab, const struct job *j, double n)
{
	if (!j->q.have_sched && (j->on[M_CONTENTION] || j->on[M_SIM] || j->on[M_DATAFLOW])) {
		cli_table_set(tab, C_NOTE, "no contention row: %s", j->q.no_sched);
	} else if (j->explain && j->in.algo->terms) {
		char terms[400];
		j->in.algo->terms(&j->q.at, n, j->cfg->p, terms, sizeof terms);
		cli_table_set(tab, C_NOTE, "%s", terms);
	}
}

/* Why evaluator m has no numbers here, in the row's note. */
static void no_numbers(struct cli_table *tab, const struct job *j, int m, const struct pm_err *e)
{
	if (m >= M_SIM && j->q.have_sched)
		cli_table_set(tab, C_NOTE, "no %s row: %s", pm_evals[m].name, e->msg);
	else
		cli_table_set(tab, C_NOTE, "no contention row: %s", j->q.no_sched);
}

/* Evaluator m's numbers at size n (and the closed row's note). */
static void put_numbers(struct cli_table *tab, struct job *j, int m, const struct pm_cost *c, double n)
{
	int P = pm_topo_endpoints(j->cfg->t);

	j->t[j->z * NMODEL + m] = c->time_s;
	if (m == M_CLOSED)
		closed_note(tab, j, n);
	if (m >= M_SIM)
		put_sim(tab, j->in.coll, c, n, P);
	else
		put_cost(tab, j->in.coll, c, n, P);
}

/* Evaluator m's row of the current size: its numbers, or the note that
 * says why it has none. */
static int put_model(struct cli_table *tab, struct job *j, int m, double n, struct pm_err *err)
{
	struct pm_cost c;
	int rc = pm_pricer_price(&j->q, (enum pm_evaluator)m, n, &c, NULL, err);

	cli_table_set(tab, C_MODEL, "%s", pm_evals[m].name);
	cli_table_set(tab, C_BOUND, "%.6g", pm_coll_bound(j->in.coll, n, j->cfg->t, j->cfg->p->inj_bw_Bps) * 1e6);
	if (rc == PM_ENOTAPPLICABLE)
		no_numbers(tab, j, m, err);
	if (rc == PM_OK)
		put_numbers(tab, j, m, &c, n);
	return rc == PM_ENOTAPPLICABLE ? PM_OK : rc;
}

/* A new row's first columns: size and algorithm. */
static int row_head(struct cli_table *tab, const struct job *j, double n)
{
	if (cli_table_row(tab))
		return 0;
	cli_table_bytes(tab, C_SIZE, C_SIZE_B, n);
	cli_table_set(tab, C_ALGO, "%s", j->status == PM_OK ? j->q.at.label : j->in.label);
	return 1;
}

/* The rows of one size: one an evaluator, or one with the note why
 * (not NULL: the algorithm cannot run here, or not this size). */
static int add_rows(struct cli_table *tab, struct job *j, double n, const char *why, struct pm_err *err)
{
	int rc = PM_OK;

	for (int m = 0; m < NMODEL && !rc; m++) {
		if (!j->on[m] || (m > M_CLOSED && !why && !j->q.have_sched && j->on[M_CLOSED]))
			continue;	/* the closed row carries the note */
		if (!row_head(tab, j, n))
			return pm_fail(err, PM_EINTERNAL, "out of memory");
		if (why) {
			cli_table_set(tab, C_NOTE, "%s", why);
			break;
		}
		rc = put_model(tab, j, m, n, err);
	}
	return rc;
}

/* A schedule the algorithm refuses is said once, not per size (kept
 * until every job is priced, so that threads keep the jobs' order). */
static void warn_no_schedule(struct job *j)
{
	if (j->q.no_sched[0] && !j->warned++)
		snprintf(j->warning, sizeof j->warning, "%s: %s", j->q.at.label, j->q.no_sched);
}

/* What the tasks of price_all share: a chain is a run of jobs where each
 * takes over the schedule of the one before (multitree then
 * multitree-msg), priced in order by one thread. */
struct pricing {
	struct job *jobs;
	int *chain;		/* chain c is jobs [chain[c], chain[c + 1]) */
	int nchains, njobs, nsizes;
	const double *sizes;
	const struct pm_pricer_cfg *cfg;
	const int *on;
	const unsigned *flags;
	struct cli_progress *pr;	/* the calling thread's (worker 0) */
};

/* The job's rows and times, before its first size. */
static int job_start(struct job *j, int nsizes, const unsigned *flags, struct pm_err *err)
{
	cli_table_init(&j->rows, NCOL, col_names, flags);
	if (!(j->first = malloc(sizeof(int) * ((size_t)nsizes + 1))) ||
	    !(j->t = malloc(sizeof(double) * (size_t)nsizes * NMODEL)))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int k = 0; k < nsizes * NMODEL; k++)
		j->t[k] = NAN;
	return PM_OK;
}

/* Size s of job j: its rows, or one that says the algorithm cannot run
 * here or at this size. */
static int price_size(struct job *j, const double *sizes, int s, struct pm_err *err)
{
	struct pm_err fe;	/* a size the algorithm cannot run */
	int fit = j->status == PM_OK ? pm_pricer_size(&j->q, sizes[s], &fe, err) : PM_OK;

	if (fit != PM_OK && fit != PM_ENOTAPPLICABLE)
		return fit;
	warn_no_schedule(j);
	j->first[s] = j->rows.nrows;
	j->z = s;
	return add_rows(&j->rows, j, sizes[s], j->status != PM_OK ? j->note : fit ? fe.msg : NULL, err);
}

/* One algorithm at every size, priced through its pricer (one schedule in
 * memory at a time on each thread: prev, the job before in its chain,
 * hands its schedule over, multitree then multitree-msg; a chain's last
 * pricer is closed when the chain ends). */
static int price_job(struct job *j, struct job *prev, const struct pricing *w, struct pm_err *err)
{
	int rc = job_start(j, w->nsizes, w->flags, err);

	j->cfg = w->cfg;
	j->on = w->on;
	if (!rc && j->status != PM_OK && prev)
		pm_pricer_close(&prev->q);
	if (!rc && j->status == PM_OK)
		rc = pm_pricer_open(&j->q, &j->in, w->cfg, prev ? &prev->q : NULL, err);
	if (rc)
		return rc;
	warn_no_schedule(j);
	for (int s = 0; s < w->nsizes && !rc; s++)
		rc = price_size(j, w->sizes, s, err);
	j->first[w->nsizes] = j->rows.nrows;
	return rc;
}

static void explain(struct cli_table *tab, const struct job *jobs, int njobs)
{
	cli_table_meta(tab, "closed forms: a = alpha, b = 1/link bandwidth, g = gamma, d = latency of the links between neighbours, w(m) = wire bytes of an m-byte message");
	for (int i = 0; i < njobs; i++)
		if (jobs[i].status == PM_OK)
			cli_table_meta(tab, "%s: T = %s  [%s]", jobs[i].in.label,
				       jobs[i].in.algo->formula, jobs[i].in.algo->reference);
}

/* Which columns each format shows: sizes and bytes as text in the table
 * and as numbers in CSV/JSON; the per-term columns with --explain; the
 * memory reads only with an endpoint model. */
static void column_flags(unsigned *flags, int explain_flag, const struct pm_params *p)
{
	for (int c = 0; c < NCOL; c++)
		flags[c] = 0;
	flags[C_SIZE] = flags[C_SENT] = flags[C_MAXLINK] = COL_TABLE;
	flags[C_SIZE_B] = flags[C_SENT_B] = flags[C_MAXLINK_B] = COL_DATA | COL_NUM;
	for (int c = C_TIME; c <= C_UTIL; c++)
		if (c != C_SENT && c != C_MAXLINK && c != C_SENT_B && c != C_MAXLINK_B)
			flags[c] = COL_NUM;
	for (int c = C_ALPHA; c <= C_RED; c++)
		flags[c] = COL_NUM | (explain_flag ? 0 : COL_DATA);
	flags[C_MEM_B] = p->endpoint != PM_END_IDEAL ? COL_NUM : COL_TABLE | COL_DATA;
	flags[C_BOUND] = COL_NUM;
	flags[C_SENT] |= COL_NUM;
	flags[C_MAXLINK] |= COL_NUM;
}

/* How NCCL's rows are priced, by each evaluator asked for. */
static void nccl_meta(struct cli_table *tab, const struct pm_topo *t, const int on[NMODEL], int explain_flag)
{
	cli_nccl_meta(tab, t, explain_flag);
	if (on[M_CONTENTION] || on[M_SIM] || on[M_DATAFLOW])
		cli_table_meta(tab, "nccl rows of the schedule evaluators: NCCL's launch and latency, then the schedule's busiest links at the machine's achieved rates; NCCL's own model (the closed row) charges NCCL's chunks their pipeline fill at the channels' share, LL's and LL128's rate caps and the tree correction factors, where a schedule pipelines its own chunks at the links' full rate, so the rows part most on pipelined trees and LL (docs/model.md, NCCL, Evaluators)");
}

static void table_meta(struct cli_table *tab, enum pm_coll coll, const struct pm_topo *t,
		       const struct pm_params *p, const int on[NMODEL],
		       const struct pm_sim_opts *so, int explain_flag,
		       const struct job *jobs, int njobs)
{
	const struct pm_coll_info *ci = pm_coll_info(coll);

	cli_table_meta(tab, "perfmodel %s: P = %d ranks, one per endpoint; %s = algbw x %.6g",
		       ci->name, pm_topo_endpoints(t), ci->busbw_doc,
		       pm_coll_busbw_factor(coll, pm_topo_endpoints(t)));
	if (coll != PM_COLL_ALLREDUCE)
		cli_table_meta(tab, "%s", ci->size_doc);
	cli_net_meta(tab, t, p);
	if (on[M_SIM] || on[M_DATAFLOW])
		cli_sim_meta(tab, so);
	for (int i = 0; i < njobs; i++)
		if (jobs[i].status == PM_OK && (jobs[i].in.algo->flags & PM_ALGO_EVERY_COLL)) {
			nccl_meta(tab, t, on, explain_flag);
			break;
		}
	if (explain_flag)
		explain(tab, jobs, njobs);
}

/* Chain c, its jobs in order up to the first that fails. */
static int price_chain(void *ctx, int c, int worker, struct pm_err *err)
{
	struct pricing *w = ctx;
	int first = w->chain[c], end = w->chain[c + 1], rc = PM_OK;

	if (worker == 0)
		cli_progress_step(w->pr, w->jobs[first].in.label, first, w->njobs);
	for (int i = first; i < end && !rc; i++) {
		struct job *j = &w->jobs[i];
		rc = j->rc = price_job(j, i > first ? &w->jobs[i - 1] : NULL, w, err);
	}
	pm_pricer_close(&w->jobs[end - 1].q);
	return rc;
}

/* Threads for pricing (pm_pool_pricing_threads); one with sim or
 * dataflow, whose runs share one budget of simulated events (and the
 * trace). */
static int pricing_threads(int asked, const int on[NMODEL], const struct pm_topo *t)
{
	if (on[M_SIM] || on[M_DATAFLOW])
		return 1;
	return pm_pool_pricing_threads(asked, on[M_CONTENTION], pm_topo_endpoints(t));
}

/* The jobs' warnings, said once every job is priced, up to the job that
 * failed. */
static void say_warnings(const struct job *jobs, int njobs)
{
	for (int i = 0; i < njobs; i++) {
		if (jobs[i].warning[0])
			fprintf(stderr, "perfmodel: warning: %s\n", jobs[i].warning);
		if (jobs[i].rc)
			break;
	}
}

/* The jobs' rows into the table size by size, as a sweep reads. */
static int rows_by_size(struct cli_table *tab, struct job *jobs, int njobs, int nsizes, struct pm_err *err)
{
	int rc = PM_OK;

	for (int s = 0; s < nsizes && !rc; s++)
		for (int i = 0; i < njobs && !rc; i++)
			rc = cli_table_move_rows(tab, &jobs[i].rows, jobs[i].first[s],
						 jobs[i].first[s + 1] - jobs[i].first[s], err);
	return rc;
}

/* Every algorithm at every size, then the rows size by size, as a sweep
 * reads; warnings and the first failure in the jobs' order. */
static int price_all(struct cli_table *tab, struct job *jobs, int njobs, const double *sizes,
		     int nsizes, const struct pm_topo *t, const struct pm_params *p,
		     const int on[NMODEL], const struct pm_sim_opts *so, const unsigned *flags,
		     int threads, struct pm_err *err)
{
	double spent = 0;	/* one command simulates at most one run's limit */
	struct pm_pricer_cfg cfg = {t, p, so, 0, nsizes, 0, &spent};
	struct cli_progress pr;
	int chain[MAX_ALGOS + 1], order[MAX_ALGOS];
	const struct pm_inst *ins[MAX_ALGOS];

	for (int i = 0; i < njobs; i++)
		ins[i] = jobs[i].status == PM_OK ? &jobs[i].in : NULL;
	struct pricing w = {jobs, chain, pm_pricer_chains(ins, njobs, chain, order), njobs, nsizes, sizes, &cfg,
			    on, flags, &pr};

	for (int m = 0; m < NMODEL; m++)
		cfg.evals |= (unsigned)(on[m] != 0) << m;
	cli_progress_start(&pr);
	int rc = pm_pool_run(w.nchains, pricing_threads(threads, on, t), order, price_chain, &w, err);
	cli_progress_end(&pr);
	say_warnings(jobs, njobs);
	return rc ? rc : rows_by_size(tab, jobs, njobs, nsizes, err);
}

/* What one collective command was asked, as parsed and checked. */
struct request {
	enum pm_coll coll;
	struct cli_net_opts net;
	const char *size, *algo, *model, *format, *plot, *jobs;
	struct cli_sim_args sa;
	int help, explain;
	int threads;			/* from jobs; 0: chosen by the work */
	struct pm_sim_opts so;		/* from sa */
	enum cli_format fmt;
	int on[NMODEL];
	double *sizes;
	int nsizes;
};

static int option_rows(struct request *q, struct cli_opt *opts)
{
	int n = cli_net_opt_rows(&q->net, opts);

	const struct cli_opt rows[] = {
		{"size", "SIZE", "message size per rank, or a range such as 32K:64M:x2 (required)", &q->size, NULL},
		{"algo", "LIST", "all (default) or names from perfmodel list, comma separated; NAME:ARG passes an argument, whose own options are comma separated too (ring,multitree:ports=1,priority,dbtree:4: a piece that names no algorithm continues the argument before it)", &q->algo, NULL},
		{"model", "M", "closed, contention, sim, dataflow (comma list), both (default: closed,contention) or all", &q->model, NULL},
	};
	n = cli_opt_add(opts, n, rows, (int)(sizeof rows / sizeof rows[0]));
	n += cli_sim_opt_rows(&q->sa, opts + n);
	const struct cli_opt tail[] = {
		cli_format_opt(&q->format),
		{"plot", "FILE", "also draw bus bandwidth against size, one line per algorithm, to FILE.svg (.png, .pdf with plplot-driver-cairo); needs a size range; the evaluator drawn is contention if asked, else sim, dataflow, closed", &q->plot, NULL},
		{"explain", NULL, "print each closed form and the per-term columns (nccl rows: their terms in the note)", NULL, &q->explain},
		{"jobs", "N", "price the algorithms on N threads, 1-16 (default: the cores online where the contention evaluator prices 1,024 endpoints or more, else 1; always 1 with sim or dataflow, whose runs share one budget); the output is the same", &q->jobs, NULL},
		{"help", NULL, "show this help", NULL, &q->help},
	};
	n = cli_opt_add(opts, n, tail, (int)(sizeof tail / sizeof tail[0]));
	return n;
}

/* --topo and --size are required. */
static int check_required(const struct request *q, struct pm_err *err)
{
	if (!q->net.topo)
		return pm_fail(err, PM_EINPUT, "missing --topo (expected a network such as torus:8x8; see perfmodel list)");
	if (!q->size)
		return pm_fail(err, PM_EINPUT, "missing --size (expected a message size such as 64M or a range such as 32K:64M:x2)");
	return PM_OK;
}

/* --plot draws a size sweep to a path that is not an input. */
static int check_plot(const struct request *q, struct pm_err *err)
{
	if (q->plot && q->nsizes < 2)
		return pm_fail(err, PM_EINPUT, "--plot draws a size sweep (expected --size as a range such as 32K:64M:x2)");
	return q->plot ? cli_plot_check_path(q->plot, cli_topo_file(q->net.topo), err) : PM_OK;
}

/* The parsed options checked and turned into what pricing reads; on
 * success q->sizes is allocated. */
static int check_request(struct request *q, struct pm_err *err)
{
	long jobs = 0;
	int rc;

	if ((rc = check_required(q, err)))
		return rc;
	if (cli_parse_format(q->format, &q->fmt, err) || parse_models(q->model, q->on, err) ||
	    cli_sim_parse(&q->sa, &q->so, err) || cli_opt_long(q->jobs, 1, 16, "--jobs", &jobs, err))
		return PM_EINPUT;
	q->threads = (int)jobs;
	if ((rc = pm_parse_size_range(q->size, &q->sizes, &q->nsizes, err)))
		return rc;
	if ((rc = check_plot(q, err))) {
		free(q->sizes);
		q->sizes = NULL;
	}
	return rc;
}

static void free_jobs(struct job *jobs, int njobs)
{
	for (int i = 0; jobs && i < njobs; i++) {
		pm_pricer_close(&jobs[i].q);
		cli_table_release(&jobs[i].rows);
		free(jobs[i].first);
		free(jobs[i].t);
	}
	free(jobs);
}

/* The network, the jobs of the --algo list and the trace, ready to price. */
static int prepare(struct request *q, struct pm_params *p, struct pm_topo **t, struct job **jobs, int *njobs,
		   struct pm_err *err)
{
	int rc;

	if ((rc = cli_net_build(&q->net, p, t, err)) || (rc = cli_need_two(*t, err)))
		return rc;
	if (!(*jobs = calloc(MAX_ALGOS, sizeof **jobs)))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	if ((q->on[M_SIM] || q->on[M_DATAFLOW]) && q->so.routers && (rc = pm_rnet_check(p, &q->so.router, err)))
		return rc;
	if ((rc = resolve_algos(q->coll, q->algo, *t, pricing_threads(q->threads, q->on, *t), *jobs, njobs, err)))
		return rc;
	for (int i = 0; i < *njobs; i++)
		(*jobs)[i].explain = q->explain;
	if (q->sa.trace)
		rc = open_trace(q->sa.trace, q->on, q->nsizes, *njobs, q->algo, q->net.topo, q->sizes[0], &q->so, err);
	return rc;
}

/* The table, then the plot and the trace asked for. */
static int print_all(struct request *q, const struct cli_table *tab, const struct pm_topo *t,
		     const struct pm_params *p, const struct job *jobs, int njobs, struct pm_err *err)
{
	int rc = cli_table_write(cli_out(), tab, q->fmt, err);

	if (!rc && q->plot)
		rc = draw(q->plot, q->coll, t, p->inj_bw_Bps, jobs, njobs, q->sizes, q->nsizes, q->on, err);
	if (q->so.trace && !rc) {
		rc = pm_trace_close(q->so.trace, err);
		q->so.trace = NULL;
	}
	return rc;
}

/* Price every algorithm asked at every size and print the table (and the
 * plot and trace asked for). */
static int price_and_print(struct request *q, struct pm_err *err)
{
	struct pm_params p;
	struct pm_topo *t = NULL;
	struct job *jobs = NULL;
	struct cli_table tab = {0};
	unsigned flags[NCOL];
	int njobs = 0, rc = prepare(q, &p, &t, &jobs, &njobs, err);

	if (!rc) {
		column_flags(flags, q->explain, &p);
		cli_table_init(&tab, NCOL, col_names, flags);
		table_meta(&tab, q->coll, t, &p, q->on, &q->so, q->explain, jobs, njobs);
		rc = price_all(&tab, jobs, njobs, q->sizes, q->nsizes, t, &p, q->on, &q->so, flags, q->threads, err);
	}
	if (!rc)
		rc = print_all(q, &tab, t, &p, jobs, njobs, err);
	pm_trace_discard(q->so.trace);
	free_jobs(jobs, njobs);
	cli_table_release(&tab);
	pm_topo_free(t);
	return rc;
}

int cmd_collective(enum pm_coll coll, int argc, char **argv, struct pm_err *err)
{
	struct request q = {.coll = coll, .algo = "all", .model = "both", .format = "table"};
	struct cli_opt opts[40];
	const char *pos[1];
	int npos, rc, n = option_rows(&q, opts);

	if (cli_parse(pm_coll_info(coll)->name, argc, argv, opts, n, pos, &npos, 0, err))
		return PM_EINPUT;
	if (q.help && coll == PM_COLL_ALLREDUCE)
		usage(opts, n);
	else if (q.help)
		usage_other(coll, opts, n);
	if (q.help)
		return 0;
	if ((rc = check_request(&q, err)))
		return rc;
	rc = price_and_print(&q, err);
	free(q.sizes);
	return rc;
}
