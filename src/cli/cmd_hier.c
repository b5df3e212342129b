/* cmd_hier.c: perfmodel hier, the best hierarchical decompositions of P
 * processes on a machine (Ueno & Yokota 2019), next to the flat ring and
 * Rabenseifner, layer by layer. */
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/plot.h"
#include "model/text.h"
#include "search/hier.h"
#include "model/preset.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { H_SIZE, H_SIZE_B, H_RANK, H_HIER, H_TIME, H_SPEEDUP, H_EXTENDS, H_LAYER, H_PROCS,
	H_MSG, H_MSG_B, H_CROSSES, H_FLOWS, H_BW, H_RS, H_AG, NH };

static const char *const hcols[NH] = {"size", "size_B", "rank", "hierarchy", "time_us",
	"speedup_vs_flat", "extends_best_half", "layer", "procs", "msg", "msg_B",
	"crosses", "flows", "bw_GBps", "reduce_scatter_us", "all_gather_us"};
static const unsigned hflags[NH] = {COL_TABLE, COL_DATA | COL_NUM, 0, 0, COL_NUM, COL_NUM, 0, COL_NUM, COL_NUM,
	COL_TABLE, COL_DATA | COL_NUM, COL_USER, COL_NUM, COL_NUM, COL_NUM, COL_NUM};

#define HIER_PLOT_GIVEN 12	/* --layers hierarchies drawn */

/* --help: usage, what the command does, examples (cli_help adds the options) */
static const char help_text[] =
	"usage: perfmodel hier --machine M --procs P --size SIZE [--top K] [options]\n\n"
	"Finds the fastest hierarchical ring all-reduce of P processes on a machine:\n"
	"every ordered factorization p1 x p2 x ... (p1 innermost, each >= 2) from the\n"
	"flat ring P to Rabenseifner 2 x 2 x ..., priced with Ueno & Yokota 2019's model\n"
	"  T = 2 s alpha (sum p_i - h) + 2 n sum_i (p_i - 1)/(p1...p_i) / bw_i\n"
	"where bw_i is what a ring of layer i gets on the machine (docs/model.md).\n"
	"Prints the best K, layer by layer (processes, message size, the machine\n"
	"level the rings cross, flows sharing it, bandwidth, reduce-scatter and\n"
	"all-gather time), the flat ring and Rabenseifner, and whether each best\n"
	"hierarchy extends the best one for P/2 by a layer of 2 or a doubled layer\n"
	"(Ueno & Yokota 2019 SV-B5).  Lists every factorization when there are at most a\n"
	"million, else runs an exact dynamic programme over the divisors of P.\n\n"
	"Examples:\n"
	"  perfmodel hier --machine abci --procs 512 --size 128M\n"
	"  perfmodel hier --machine dgx-h100 --procs 1024 --size 1G --aligned\n"
	"  perfmodel hier --machine data/machines/abci.csv --procs 2520 --size 64M --method dp\n"
	"  perfmodel hier --machine abci --procs 256 --size 1M:1G:x4 --layers 4x64 --plot hier.svg\n\n"
	"Options:\n";

static void usage(const struct cli_opt *opts, int n)
{
	cli_help(cli_out(), help_text, opts, n);
	fputc('\n', cli_out());
	cli_print_presets("Machines", "machines");
}

/* Layer i's cells: processes, message, the machine level its rings
 * cross, the flows sharing it, bandwidth and the two phases' times. */
static void layer_cells(struct cli_table *t, int i, const struct pm_hier_layer *l, const struct pm_machine *m)
{
	const double v[] = {l->where.bw_Bps / 1e9, l->rs_s * 1e6, l->ag_s * 1e6};

	cli_table_set(t, H_LAYER, "%d", i + 1);
	cli_table_set(t, H_PROCS, "%d", l->p);
	cli_table_bytes(t, H_MSG, H_MSG_B, l->msg_B);
	if (l->where.crossed >= 0)
		cli_table_set(t, H_CROSSES, "%s", m->level[l->where.crossed].name);
	else
		cli_table_set(t, H_CROSSES, "inside %s", m->level[0].name);
	cli_table_set(t, H_FLOWS, "%lld", l->where.flows);
	cli_table_nums(t, H_BW, v, 3, "%.6g");
}

/* A row's hierarchy cells: size, rank, name, time, speedup, extends. */
static void hier_cells(struct cli_table *t, const struct pm_hier_query *q, const char *rank, const char *name,
		       double time_s, double flat_s, const char *extends)
{
	cli_table_row(t);
	cli_table_bytes(t, H_SIZE, H_SIZE_B, q->n);
	cli_table_set(t, H_RANK, "%s", rank);
	cli_table_set(t, H_HIER, "%s", name);
	cli_table_set(t, H_TIME, "%.6g", time_s * 1e6);
	if (time_s > 0)
		cli_table_set(t, H_SPEEDUP, "%.4g", flat_s / time_s);
	cli_table_set(t, H_EXTENDS, "%s", extends);
}

/* Rows of one hierarchy, one per layer; returns its time (NaN if it
 * cannot be priced). */
static double add_rows(struct cli_table *t, const char *rank,
		       const struct pm_hier *hr, const struct pm_hier_query *q,
		       double flat_s, const char *extends, struct pm_err *err)
{
	struct pm_hier_layer lay[PM_HIER_MAX_LAYERS];
	char name[256];
	double time_s;

	pm_hier_name(hr, name, sizeof name);
	if (pm_hier_time(q->m, hr->layers, hr->h, q->n, q->alpha_s, q->s, &time_s, lay, err))
		return NAN;
	for (int i = 0; i < (hr->h ? hr->h : 1); i++) {
		hier_cells(t, q, rank, name, time_s, flat_s, extends);
		if (hr->h)
			layer_cells(t, i, &lay[i], q->m);
	}
	return time_s;
}

/* One --layers hierarchy, "4x8x4", into hr: factors of at least 2 that
 * multiply to P (list, the whole option, for the message). */
static int parse_hier(char *h, const char *list, long long P, struct pm_hier *hr, struct pm_err *err)
{
	long long prod = 1;

	if (pm_check_list("layers", h, 'x', "4x8x4", err))
		return PM_EINPUT;
	for (char *save, *f = strtok_r(h, "x", &save); f; f = strtok_r(NULL, "x", &save)) {
		long v;
		if (hr->h == PM_HIER_MAX_LAYERS || pm_parse_int(f, 2, 1L << 30, "layer size", &v, err))
			return pm_fail(err, PM_EINPUT,
				       "invalid hierarchy in --layers '%s' (expected factors of at least 2 joined by x, such as 4x8x4)",
				       list);
		hr->layers[hr->h++] = (int)v;
		if (prod <= P)	/* past P it can only be wrong: stop before overflow */
			prod *= v;
	}
	if (prod != P)
		return pm_fail(err, PM_EINPUT, "a hierarchy in --layers '%s' multiplies to %s%lld (expected the %lld processes)",
			       list, prod > P ? "more than " : "", prod > P ? P : prod, P);
	return PM_OK;
}

/* --layers: "4x8x4,4x32", each a product equal to P.  times (may be
 * NULL) gets each one's time, ngiven how many there are. */
static int add_given(struct cli_table *t, const char *list,
		     const struct pm_hier_query *q, double flat_s, double *times,
		     int *ngiven, struct pm_err *err)
{
	char buf[1024];

	*ngiven = 0;
	if (pm_check_list("layers", list, ',', "4x8x4,4x32", err))
		return PM_EINPUT;
	if (strlen(list) >= sizeof buf)
		return pm_fail(err, PM_EINPUT, "--layers list too long (expected at most %zu characters)", sizeof buf - 1);
	strcpy(buf, list);
	for (char *save, *h = strtok_r(buf, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
		struct pm_hier hr = {.h = 0};
		if (parse_hier(h, list, q->P, &hr, err))
			return PM_EINPUT;
		double ts = add_rows(t, "given", &hr, q, flat_s, "-", err);
		if (times && *ngiven < HIER_PLOT_GIVEN)
			times[*ngiven] = ts;
		++*ngiven;
	}
	return PM_OK;
}

/* The best hierarchy for P/2 into hb; false if P is odd or below 4, or
 * the search finds none. */
static int half_best(const struct pm_hier_query *q, struct pm_hier *hb)
{
	struct pm_hier_query half = *q;
	struct pm_hier_stats st;
	struct pm_err e;
	int n;

	half.P = q->P / 2;
	half.top = 1;
	half.method = PM_HIER_DP;
	return q->P >= 4 && q->P % 2 == 0 && !pm_hier_search(&half, hb, &n, &st, &e) && n >= 1;
}

/* Does best (for P) extend the best hierarchy for P/2? */
static void extends_text(const struct pm_hier_query *q, const struct pm_hier *best,
			 char *buf, size_t size)
{
	struct pm_hier hb;
	char name[256];
	int where;

	if (!half_best(q, &hb)) {
		snprintf(buf, size, "-");
		return;
	}
	pm_hier_name(&hb, name, sizeof name);
	int k = pm_hier_extends(best, &hb, &where);
	if (k == 1)
		snprintf(buf, size, "yes: %s plus a layer of 2 at %d", name, where + 1);
	else if (k == 2)
		snprintf(buf, size, "yes: %s with layer %d doubled", name, where + 1);
	else
		snprintf(buf, size, "no (best for %lld: %s)", q->P / 2, name);
}

#define HIER_SERIES (3 + HIER_PLOT_GIVEN)

/* The best K's rows; *best_s gets the best one's time, best_name its
 * name. */
static void best_rows(struct cli_table *t, const struct pm_hier_query *q, const struct pm_hier *best, int nout,
		      double flat_s, double *best_s, char best_name[64], struct pm_err *err)
{
	char rank[16], ext[320];

	for (int i = 0; i < nout; i++) {
		snprintf(rank, sizeof rank, "%d", i + 1);
		extends_text(q, &best[i], ext, sizeof ext);
		double ts = add_rows(t, rank, &best[i], q, flat_s, ext, err);
		if (i == 0)
			*best_s = ts;
	}
	if (nout > 0)
		pm_hier_name(&best[0], best_name, 64);
}

/* Rabenseifner's 2 x 2 x ... rows where P is a power of two; its time, or
 * NaN. */
static double rab_rows(struct cli_table *t, const struct pm_hier_query *q, double flat_s, struct pm_err *err)
{
	struct pm_hier rab = {.h = 0};

	if (q->P <= 2 || (q->P & (q->P - 1)))
		return NAN;
	for (long long v = q->P; v > 1; v /= 2)
		rab.layers[rab.h++] = 2;
	return add_rows(t, "rabenseifner", &rab, q, flat_s, "-", err);
}

/* Everything hier prints for one size: the best K, --layers, the flat
 * ring and Rabenseifner.  ys gets the times drawn, *nser of them: the
 * best, the flat ring, Rabenseifner (NaN unless P is a power of two) and
 * each --layers hierarchy. */
static int hier_size(struct cli_table *t, struct pm_hier_query *q,
		     const char *given, struct pm_hier_stats *st, double *ys, int *nser,
		     char best_name[64], struct pm_err *err)
{
	struct pm_hier best[PM_HIER_MAX_TOP];
	struct pm_hier flat = {.h = q->P > 1, .layers = {(int)q->P}};
	int nout, ng = 0, rc;
	double flat_s;

	ys[0] = NAN;
	if ((rc = pm_hier_search(q, best, &nout, st, err)) ||
	    (rc = pm_hier_time(q->m, flat.layers, flat.h, q->n, q->alpha_s, q->s, &flat_s, NULL, err)))
		return rc;
	best_rows(t, q, best, nout, flat_s, &ys[0], best_name, err);
	if (given && (rc = add_given(t, given, q, flat_s, ys + 3, &ng, err)))
		return rc;
	ys[1] = add_rows(t, "flat", &flat, q, flat_s, "-", err);
	ys[2] = rab_rows(t, q, flat_s, err);
	*nser = 3 + (ng < HIER_PLOT_GIVEN ? ng : HIER_PLOT_GIVEN);
	return PM_OK;
}

/* The lines above the table: processes, sizes, machine, model, search. */
static void hier_meta(struct cli_table *t, const struct pm_hier_query *q, const double *sizes,
		      int nsizes, const char *alpha_src, const struct pm_hier_stats *st)
{
	char a[32], b[32];

	pm_fmt_size(sizes[0], a, sizeof a);
	pm_fmt_size(sizes[nsizes - 1], b, sizeof b);
	if (nsizes == 1)
		cli_table_meta(t, "perfmodel hier: %lld processes on %s, %s per process", q->P, q->m->name, a);
	else
		cli_table_meta(t, "perfmodel hier: %lld processes on %s, %s to %s per process (%d sizes)",
			       q->P, q->m->name, a, b, nsizes);
	cli_table_meta(t, "machine: %s (%lld accelerators; %s)", q->m->name, q->m->capacity, q->m->description);
	cli_table_meta(t, "alpha %.4g us%s%s%s, s = %d; T = 2 s alpha (sum p_i - h) + 2 n sum_i (p_i-1)/(p1...p_i) / bw_i (Ueno & Yokota 2019 SIV-C)",
		       q->alpha_s * 1e6, alpha_src ? " (" : "", alpha_src ? alpha_src : "", alpha_src ? ")" : "", q->s);
	cli_table_meta(t, "bw_i: the rings of a layer that leave a unit share its egress, min(unit, stride) of them, each spread over all the unit's NICs as NCCL's channels spread a ring over the rails; allreduce --algo hring runs one ring per GPU over its own NIC, so a layer whose stride is below the GPUs of a node (4x32 on 8-GPU nodes) is slower there by up to the rails it leaves idle");
	cli_table_meta(t, "%.0f ordered factorizations of %lld (OEIS A074206), %d divisors; searched by %s%s",
		       st->factorizations, q->P, st->divisors,
		       st->method == PM_HIER_ENUM ? "listing every one" : "dynamic programme over divisors",
		       q->aligned ? "; layer boundaries at every machine level" : "");
}

/* --plot: bus bandwidth 2(P-1)/P n / T of each series against n. */
static int plot_hier(const char *path, const struct pm_hier_query *q,
		     const char *given, const double *sizes, int ns,
		     double *y, int nser, char (*best)[64], struct pm_err *err)
{
	const char *names[HIER_SERIES] = {"best hierarchy (named where it changes)", "flat ring", "Rabenseifner (2x2x...)"};
	const char **labels = calloc((size_t)ns, sizeof *labels);
	char buf[1024], title[160];
	int k = 3;

	for (int i = 0; labels && i < ns; i++)	/* the winner, where it changes */
		labels[i] = !i || strcmp(best[i], best[i - 1]) ? best[i] : "";
	if (given && strlen(given) < sizeof buf) {
		strcpy(buf, given);
		for (char *save, *h = strtok_r(buf, ",", &save); h && k < nser; h = strtok_r(NULL, ",", &save))
			names[k++] = h;
	}
	for (int i = 0; i < nser * ns; i++)
		y[i] = isfinite(y[i]) && y[i] > 0 ? 2.0 * (q->P - 1) / q->P * sizes[i % ns] / y[i] / 1e9 : NAN;
	snprintf(title, sizeof title, "hierarchical ring all-reduce, %lld processes on %s", q->P, q->m->name);
	struct cli_plot pl = {path, title, "size per process (log scale)",
			      "bus bandwidth (GB/s): 2(P-1)/P n / T", 1, nser, ns, names, sizes, y, NULL, NULL, labels};
	int rc = cli_plot_write(&pl, err);
	free(labels);
	return rc;
}

/* --topo machine:M[:NODES]: the machine, and --procs from NODES when
 * not given. */
static int machine_from_topo(const char *topo, const char *machine, const char **procs, char *name, size_t size,
			     char pbuf[32], struct pm_err *err)
{
	struct pm_machine m;
	const char *c;

	if (machine)
		return pm_fail(err, PM_EINPUT, "--topo %s and --machine %s both given (expected one: they name the same thing)", topo, machine);
	if (strncmp(topo, "machine:", 8) || !topo[8] || strlen(topo + 8) >= size)
		return pm_fail(err, PM_EINPUT, "invalid --topo '%s' for hier (expected machine:NAME or machine:NAME:NODES, such as machine:dgx-h100:128)", topo);
	snprintf(name, size, "%s", topo + 8);
	c = strrchr(name, ':');
	if (!c || !c[1] || strspn(c + 1, "0123456789") != strlen(c + 1))
		return PM_OK;	/* no NODES */
	long nodes;
	if (pm_parse_int(c + 1, 1, 1L << 30, "node count", &nodes, err))
		return PM_EINPUT;
	name[c - name] = '\0';
	if (*procs)
		return PM_OK;
	if (pm_machine_load(name, &m, err))
		return PM_EINPUT;
	snprintf(pbuf, 32, "%lld", (long long)nodes * m.level[0].count);
	*procs = pbuf;
	return PM_OK;
}

/* The query's options as given. */
struct query_args {
	const char *procs, *top, *method, *alpha, *pipeline;
	int aligned;
};

/* --alpha and --pipeline, where given, over the machine's. */
static int query_overrides(const struct query_args *a, struct pm_hier_query *q, struct pm_err *err)
{
	long s = q->s;

	if ((a->alpha && pm_parse_time(a->alpha, &q->alpha_s, err)) ||
	    cli_opt_long(a->pipeline, 1, 1 << 20, "pipelining factor", &s, err))
		return PM_EINPUT;
	q->s = (int)s;
	return PM_OK;
}

/* Load the machine and fill the query: P, how many to print, the search
 * method, and alpha and s (the machine's unless given). */
static int make_query(const struct query_args *a, const char *machine, struct pm_machine *m,
		      struct pm_hier_query *q, struct pm_err *err)
{
	static const char *const methods[] = {"auto", "enum", "dp", NULL};	/* enum pm_hier_method */
	long P, K;
	int k, rc;

	if (pm_parse_int(a->procs, 1, 1L << 30, "process count", &P, err) ||
	    pm_parse_int(a->top, 1, PM_HIER_MAX_TOP, "--top", &K, err) ||
	    (k = pm_pick_word("method", a->method, methods, err)) < 0)
		return PM_EINPUT;
	if ((rc = pm_machine_load(machine, m, err)))
		return rc;
	*q = (struct pm_hier_query){.m = m, .P = P, .top = (int)K, .method = (enum pm_hier_method)k,
				    .aligned = a->aligned, .alpha_s = m->alpha_s, .s = m->pipeline_s, .enum_limit = 1e6};
	return query_overrides(a, q, err);
}

/* What hier was asked. */
struct hier_args {
	const char *machine, *procs, *size, *top, *alpha, *pipeline, *method, *format, *given, *topo, *plot;
	int help, aligned;
};

static int option_rows(struct hier_args *h, struct cli_opt *opts)
{
	int n = 0;

	const struct cli_opt rows[] = {
		{"machine", "M", "a preset (listed below) or a machine file, .csv or .json (required)", &h->machine, NULL},
		{"topo", "machine:M[:NODES]", "the same machine spelled as the other commands spell it; NODES gives --procs as NODES x the accelerators of a node", &h->topo, NULL},
		{"procs", "P", "number of processes, one per accelerator (required unless --topo gives NODES)", &h->procs, NULL},
		{"size", "SIZE", "all-reduce size per process, e.g. 128M, or a range such as 1M:1G:x4 (one set of rows per size) (required)", &h->size, NULL},
		{"top", "K", "how many of the best to print (default 5)", &h->top, NULL},
		{"layers", "LIST", "also price these hierarchies, e.g. 4x8x4,4x32 (each must multiply to P)", &h->given, NULL},
		{"aligned", NULL, "only hierarchies with a layer boundary at every machine level", NULL, &h->aligned},
		{"method", "M", "auto (default), enum (list every factorization) or dp", &h->method, NULL},
		{"alpha", "T", "per-message startup (default: the machine's)", &h->alpha, NULL},
		{"pipeline", "S", "pipelining factor s (default: the machine's)", &h->pipeline, NULL},
		{"plot", "FILE", "with a --size range: draw each hierarchy's bus bandwidth (the best at each size, the flat ring, Rabenseifner, --layers) against the size to FILE.svg (.png, .pdf with plplot-driver-cairo)", &h->plot, NULL},
		cli_format_opt(&h->format),
		{"help", NULL, "show this help", NULL, &h->help},
	};
	n = cli_opt_add(opts, n, rows, (int)(sizeof rows / sizeof rows[0]));
	return n;
}

/* The sizes, and for --plot (which needs a range) the series' times
 * and each size's best name. */
static int size_buffers(const struct hier_args *h, double **sizes, int *nsizes, double **y, char (**best)[64],
			struct pm_err *err)
{
	int rc;

	if (pm_parse_size_range(h->size, sizes, nsizes, err))
		return PM_EINPUT;
	if (!h->plot)
		return PM_OK;
	if ((rc = cli_plot_check_path(h->plot, NULL, err)))
		return rc;
	if (*nsizes < 2)
		return pm_fail(err, PM_EINPUT, "--plot draws against the size: give --size a range such as 1M:1G:x2 (got '%s')", h->size);
	if (!(*y = malloc(sizeof(double) * HIER_SERIES * (size_t)*nsizes)) || !(*best = calloc((size_t)*nsizes, sizeof **best)))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	return PM_OK;
}

/* Every size's rows (and, for the plot, each series' bus bandwidth and
 * the best hierarchy's name), then the table and the plot. */
static int search_and_print(const struct hier_args *h, struct pm_hier_query *q, const struct pm_machine *m,
			    enum cli_format fmt, struct pm_err *err)
{
	struct cli_table t = {0};
	double *sizes = NULL, *y = NULL;
	char (*best)[64] = NULL;
	int nsizes = 0, nser = 0, rc = size_buffers(h, &sizes, &nsizes, &y, &best, err);

	cli_table_init(&t, NH, hcols, hflags);
	for (int i = 0; !rc && i < nsizes; i++) {
		double ys[HIER_SERIES];
		struct pm_hier_stats st;
		char name[64];
		q->n = sizes[i];
		rc = hier_size(&t, q, h->given, &st, ys, &nser, name, err);
		if (best)
			memcpy(best[i], name, sizeof name);
		if (!rc && i == 0)
			hier_meta(&t, q, sizes, nsizes, h->alpha ? NULL : m->alpha_source, &st);
		for (int k = 0; y && k < nser; k++)
			y[k * nsizes + i] = ys[k];
	}
	if (!rc)
		rc = cli_table_write(cli_out(), &t, fmt, err);
	if (!rc && h->plot)
		rc = plot_hier(h->plot, q, h->given, sizes, nsizes, y, nser, best, err);
	cli_table_release(&t);
	free(sizes);
	free(y);
	free(best);
	return rc;
}

int cmd_hier(int argc, char **argv, struct pm_err *err)
{
	struct hier_args h = {.top = "5", .method = "auto", .format = "table"};
	const char *pos[1];
	int npos, rc;
	struct cli_opt opts[17];
	char mname[512], pbuf[32];
	enum cli_format fmt;
	struct pm_machine m;
	struct pm_hier_query q = {0};
	int n = option_rows(&h, opts);

	if (cli_parse("hier", argc, argv, opts, n, pos, &npos, 0, err))
		return PM_EINPUT;
	if (h.help) {
		usage(opts, n);
		return 0;
	}
	if (h.topo && (rc = machine_from_topo(h.topo, h.machine, &h.procs, mname, sizeof mname, pbuf, err)))
		return rc;
	if (h.topo)
		h.machine = mname;
	if (!h.machine)
		return pm_fail(err, PM_EINPUT, "missing --machine (expected a preset such as abci or a machine .csv)");
	if (!h.procs)
		return pm_fail(err, PM_EINPUT, "missing --procs (expected the number of processes, such as 512)");
	if (!h.size)
		return pm_fail(err, PM_EINPUT, "missing --size (expected the all-reduce size per process, such as 128M)");
	if (cli_parse_format(h.format, &fmt, err))
		return PM_EINPUT;
	struct query_args qa = {h.procs, h.top, h.method, h.alpha, h.pipeline, h.aligned};
	if ((rc = make_query(&qa, h.machine, &m, &q, err)))
		return rc;
	return search_and_print(&h, &q, &m, fmt, err);
}
