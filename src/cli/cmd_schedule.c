/* cmd_schedule.c: perfmodel schedule, an algorithm's schedule on a network
 * seen per step, per transfer, per node (Huang et al. 2021 Fig. 5's tables) or as
 * Graphviz trees (the MULTITREE supplement Fig. 1). */
#include "cli/cli.h"
#include "cli/common.h"
#include "model/msccl.h"
#include "model/text.h"
#include "model/algo.h"
#include "model/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum view { V_STEPS, V_TRANSFERS, V_NODES };

static const char *step_kind(const struct pm_sched *s, int k)
{
	int red = 0, copy = 0;
	for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++)
		if (s->x[i].op == PM_REDUCE)
			red++;
		else
			copy++;
	return red && copy ? "mixed" : red ? "reduce" : copy ? "gather" : "idle";
}

/* Step k's row: its kind, transfers, longest route, busy links, busiest
 * link and its time's terms. */
static void step_row(struct cli_table *tab, const struct pm_sched *s, int k, const struct pm_step_cost *c)
{
	const double v[] = {(double)c->xfers, c->hops_max, c->busy_links, c->max_link_B};
	const double us[] = {c->time_s * 1e6, c->alpha_s * 1e6, c->lat_s * 1e6, c->bw_s * 1e6, c->red_s * 1e6};

	cli_table_row(tab);
	cli_table_set(tab, 0, "%d", k + 1);
	cli_table_set(tab, 1, "%s", step_kind(s, k));
	cli_table_nums(tab, 2, v, 4, "%.0f");
	cli_table_nums(tab, 6, us, 5, "%.6g");
}

static int view_steps(struct cli_table *tab, const struct pm_inst *in,
		      const struct pm_sched *s, double n,
		      const struct pm_params *p, struct pm_err *err)
{
	static const char *const cols[] = {"step", "op", "transfers", "max_hops",
		"busy_links", "max_link_B", "time_us", "alpha_us", "latency_us",
		"bandwidth_us", "reduction_us"};
	static const unsigned flags[] = {COL_NUM, 0, COL_NUM, COL_NUM, COL_NUM,
		COL_NUM, COL_NUM, COL_NUM, COL_NUM, COL_NUM, COL_NUM};
	struct pm_step_cost *sc = calloc((size_t)s->nsteps + 1, sizeof *sc);
	struct pm_cost c;
	int rc = sc ? pm_algo_contention(in, s, n, p, &c, sc, err) : pm_fail(err, PM_EINTERNAL, "out of memory");

	if (!rc) {
		cli_table_init(tab, 11, cols, flags);
		for (int k = 0; k < s->nsteps; k++)
			step_row(tab, s, k, &sc[k]);
		cli_table_meta(tab, "total %.6g us over %d steps (contention evaluator); links used %.4g%%, time-weighted busy %.4g%%",
			       c.time_s * 1e6, s->nsteps, 100 * c.links_used, 100 * c.util_avg);
	}
	free(sc);
	return rc;
}

/* "a->b->c": the vertices a transfer crosses; route is scratch for
 * pm_topo_max_hops links. */
static void path_text(const struct pm_topo *t, const struct pm_sched *s,
		      size_t i, int *route, char *buf, size_t size)
{
	const struct pm_xfer *x = &s->x[i];
	const int *links;
	int h = pm_eval_route(t, s, i, route, &links), E = pm_topo_endpoints(t);

	size_t used = (size_t)snprintf(buf, size, "%d", s->map[x->src]);
	for (int j = 0; j < h && used < size; j++) {
		int v = pm_topo_link(t, links[j])->dst;
		if (v >= E)
			used += (size_t)snprintf(buf + used, size - used, "->s%d", v - E);
		else
			used += (size_t)snprintf(buf + used, size - used, "->%d", v);
	}
}

/* Transfer i (of step k)'s row: flow, ranks, operation, chunks, bytes and
 * the vertices it crosses. */
static void transfer_row(struct cli_table *tab, const struct pm_sched *s, int k, size_t i, double n, const char *path)
{
	const struct pm_xfer *x = &s->x[i];

	cli_table_row(tab);
	cli_table_set(tab, 0, "%d", k + 1);
	cli_table_set(tab, 1, "%d", x->flow);
	cli_table_set(tab, 2, "%d", x->src);
	cli_table_set(tab, 3, "%d", x->dst);
	cli_table_set(tab, 4, "%s", x->op == PM_REDUCE ? "reduce" : "copy");
	cli_table_set(tab, 5, "%u-%u/%u", x->lo, x->lo + x->cnt - 1, s->nchunks);
	cli_table_set(tab, 6, "%.0f", n / s->nchunks * x->cnt);
	cli_table_set(tab, 7, "%s", path);
}

static int view_transfers(struct cli_table *tab, const struct pm_inst *in,
			  const struct pm_sched *s, double n, struct pm_err *err)
{
	static const char *const cols[] = {"step", "flow", "src_rank", "dst_rank",
		"op", "chunks", "bytes_B", "path"};
	static const unsigned flags[] = {COL_NUM, COL_NUM, COL_NUM, COL_NUM, 0, 0,
		COL_NUM, 0};
	/* a route has at most max_hops links (source routes too: they are
	 * walks over links, at most one per vertex), each "->sN" */
	size_t hops = (size_t)pm_topo_max_hops(in->topo) + (size_t)pm_topo_vertices(in->topo) + 1;
	int *route = malloc(sizeof(int) * hops);
	char *path = malloc(16 * hops);

	cli_table_init(tab, 8, cols, flags);
	for (int k = 0; route && path && k < s->nsteps; k++)
		for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
			path_text(in->topo, s, i, route, path, 16 * hops);
			transfer_row(tab, s, k, i, n, path);
		}
	free(route);
	free(path);
	return route && path ? PM_OK : pm_fail(err, PM_EINTERNAL, "out of memory");
}

/* Huang et al. 2021 Fig. 5: per node, per flow and step, the operation, the flow
 * (tree), the parent and the children.  A Reduce row is a send to Parent
 * after reducing what Children sent; a Gather row forwards what Parent
 * sent to Children; the root of a flow has no parent. */
/* A transfer as view_nodes looks it up: ordered by (dst, flow, op,
 * index), each (rank, flow, op) is one contiguous run. */
struct key {
	int32_t dst, src;
	uint16_t flow, op;
	size_t i;
};

static int key_cmp(const struct key *x, const struct key *y)
{
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->flow != y->flow)
		return x->flow < y->flow ? -1 : 1;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int by_key(const void *a, const void *b)
{
	return key_cmp(a, b);
}

/* First position in keys[0..n) at or after probe. */
static size_t lower(const struct key *keys, size_t n, struct key probe)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (key_cmp(&keys[mid], &probe) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The indexes view_nodes reads: transfers sorted by (dst, src, flow, op,
 * index), each rank's transfers in index order, each transfer's step. */
struct node_ix {
	const struct pm_sched *s;
	size_t X;
	struct key *idx;
	size_t *src_off, *by_src;	/* rank r sends by_src[src_off[r] .. src_off[r+1]) */
	int *step_of;
};

static void node_ix_free(struct node_ix *n)
{
	free(n->idx), free(n->src_off), free(n->by_src), free(n->step_of);
}

static int node_ix_make(struct node_ix *n, const struct pm_sched *s)
{
	size_t X = s->nx, *fill = malloc(sizeof(size_t) * ((size_t)s->nranks + 1));

	*n = (struct node_ix){.s = s, .X = X};
	n->idx = malloc(sizeof *n->idx * (X + 1));
	n->src_off = calloc((size_t)s->nranks + 1, sizeof(size_t));
	n->by_src = malloc(sizeof(size_t) * (X + 1));
	n->step_of = malloc(sizeof(int) * (X + 1));
	if (!n->idx || !n->src_off || !n->by_src || !n->step_of || !fill) {
		free(fill);
		node_ix_free(n);
		return -1;
	}
	for (int k = 0; k < s->nsteps; k++)
		for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++)
			n->step_of[i] = k;
	for (size_t i = 0; i < X; i++) {
		const struct pm_xfer *x = &s->x[i];
		n->idx[i] = (struct key){x->dst, x->src, x->flow, x->op, i};
		n->src_off[x->src + 1]++;
	}
	for (int r = 0; r < s->nranks; r++)
		n->src_off[r + 1] += n->src_off[r];
	memcpy(fill, n->src_off, sizeof(size_t) * (size_t)s->nranks);
	for (size_t i = 0; i < X; i++)
		n->by_src[fill[s->x[i].src]++] = i;	/* index order within a rank */
	free(fill);
	qsort(n->idx, X, sizeof *n->idx, by_key);
	return 0;
}

/* Rank r's a-th send x in step k: its parent (-1: none) and children, as
 * text in kids; the number of characters written. */
static size_t node_links(const struct node_ix *n, int r, size_t a, int k, int *parent, char *kids, size_t size)
{
	const struct pm_sched *s = n->s;
	const struct pm_xfer *x = &s->x[n->by_src[a]];
	size_t used = 0, k0 = s->step_off[k];

	*parent = -1;
	if (x->op == PM_REDUCE) {
		*parent = x->dst;
		for (size_t b = lower(n->idx, n->X, (struct key){r, 0, x->flow, PM_REDUCE, 0});
		     b < n->X && n->idx[b].dst == r && n->idx[b].flow == x->flow && n->idx[b].op == PM_REDUCE &&
		     n->idx[b].i < k0 && used < size; b++)
			used += (size_t)snprintf(kids + used, size - used, "%s%d", used ? " " : "", n->idx[b].src);
		return used;
	}
	size_t b = lower(n->idx, n->X, (struct key){r, 0, x->flow, PM_COPY, k0});
	if (b > 0 && n->idx[b - 1].dst == r && n->idx[b - 1].flow == x->flow && n->idx[b - 1].op == PM_COPY)
		*parent = n->idx[b - 1].src;
	for (size_t c = a; c < n->src_off[r + 1] && n->step_of[n->by_src[c]] == k; c++) {
		const struct pm_xfer *y = &s->x[n->by_src[c]];
		if (y->flow == x->flow && y->op == PM_COPY && used < size)
			used += (size_t)snprintf(kids + used, size - used, "%s%d", used ? " " : "", y->dst);
	}
	return used;
}

/* Is rank r's a-th send a copy of a flow it already sent in this step? */
static int gather_seen(const struct node_ix *n, int r, size_t a, int k)
{
	const struct pm_xfer *x = &n->s->x[n->by_src[a]];
	int dup = 0;

	for (size_t b = a; b > n->src_off[r] && n->step_of[n->by_src[b - 1]] == k && x->op == PM_COPY; b--)
		dup |= n->s->x[n->by_src[b - 1]].flow == x->flow && n->s->x[n->by_src[b - 1]].op == PM_COPY;
	return dup;
}

/* Rank r's row for transfer x in step k: Reduce or Gather, its flow,
 * parent (nil: none), children and step. */
static void node_row(struct cli_table *tab, int r, const struct pm_xfer *x, int parent, const char *kids, int k)
{
	cli_table_row(tab);
	cli_table_set(tab, 0, "%d", r);
	cli_table_set(tab, 1, "%s", x->op == PM_REDUCE ? "Reduce" : "Gather");
	cli_table_set(tab, 2, "%d", x->flow);
	if (parent >= 0)
		cli_table_set(tab, 3, "%d", parent);
	else
		cli_table_set(tab, 3, "nil");
	cli_table_set(tab, 4, "%s", kids);
	cli_table_set(tab, 5, "%d", k + 1);
}

/* One row per (rank, step, flow) the rank sends in: its parent and
 * children in that flow's tree, as the MULTITREE supplement's tables list them.  Reduce
 * rows: the parent is where the rank sends, the children those that sent
 * to it in earlier steps.  Gather rows: the parent is who last sent it
 * the flow, the children those it sends to in this step.  O(X log X) for
 * X transfers. */
static int view_nodes(struct cli_table *tab, const struct pm_sched *s, struct pm_err *err)
{
	static const char *const cols[] = {"node", "op", "flow", "parent",
		"children", "step"};
	static const unsigned flags[] = {COL_NUM, 0, COL_NUM, 0, 0, COL_NUM};
	struct node_ix n;

	cli_table_init(tab, 6, cols, flags);
	if (node_ix_make(&n, s))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int r = 0; r < s->nranks; r++)
		for (size_t a = n.src_off[r]; a < n.src_off[r + 1]; a++) {
			const struct pm_xfer *x = &s->x[n.by_src[a]];
			int k = n.step_of[n.by_src[a]], parent;
			char kids[512] = "";
			if (gather_seen(&n, r, a, k))
				continue;	/* one Gather row per (step, flow) */
			size_t used = node_links(&n, r, a, k, &parent, kids, sizeof kids);
			node_row(tab, r, x, parent, used ? kids : "nil", k);
		}
	node_ix_free(&n);
	return PM_OK;
}

/* Graphviz: the all-gather (broadcast) half, one cluster per flow, node
 * "T-n" as the MULTITREE supplement names them, edges labelled with their step. */
/* Flow T's cluster: its vertices, each declared once, and its edges from
 * step first on. */
static void dot_cluster(FILE *f, const struct pm_sched *s, int T, int first, char *declared)
{
	fprintf(f, "  subgraph cluster_%d {\n    label=\"flow %d\";\n", T, T);
	memset(declared, 0, (size_t)s->nranks);
	for (int k = first; k < s->nsteps; k++)
		for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
			const struct pm_xfer *x = &s->x[i];
			for (int e = 0; e < 2 && x->flow == T; e++) {
				int r = e ? x->dst : x->src;
				if (!declared[r])
					fprintf(f, "    \"%d-%d\" [label=\"%d\"];\n", T, r, r);
				declared[r] = 1;
			}
			if (x->flow == T)
				fprintf(f, "    \"%d-%d\" -> \"%d-%d\" [label=\"%d\"];\n", T, x->src, T, x->dst, k - first + 1);
		}
	fprintf(f, "  }\n");
}

/* Graphviz: the all-gather (broadcast) half, one cluster per flow, node
 * "T-n" as the MULTITREE supplement names them, edges labelled with their step. */
static void write_dot(FILE *f, const struct pm_inst *in, const struct pm_sched *s)
{
	int first = s->second_phase >= 0 ? s->second_phase : 0, nflows = 0;
	char *declared = calloc((size_t)s->nranks + 1, 1);

	for (size_t i = 0; i < s->nx; i++)
		if (s->x[i].flow + 1 > nflows)
			nflows = s->x[i].flow + 1;
	fprintf(f, "digraph \"%s on %s\" {\n  label=\"%s on %s: %s, edge labels = its step (1 to %d; schedule steps %d to %d)\";\n",
		in->label, pm_topo_spec(in->topo), in->label, pm_topo_spec(in->topo),
		first ? "the all-gather half" : "every step", s->nsteps - first, first + 1, s->nsteps);
	fprintf(f, "  node [shape=circle, fontsize=10];\n");
	for (int T = 0; T < nflows && declared; T++)
		dot_cluster(f, s, T, first, declared);
	free(declared);
	fprintf(f, "}\n");
}

/* Replace a compact schedule by its played-out form. */
static int play_out(struct pm_sched *s, struct pm_err *err)
{
	struct pm_sched e;

	if (!pm_sched_is_compact(s))
		return PM_OK;
	int rc = pm_sched_expand(s, &e, PM_SCHED_MAX_XFERS, err);
	pm_sched_release(s);
	if (rc == PM_OK)
		*s = e;
	return rc;
}

/* Transfers a listing (the transfers and nodes views, DOT, MSCCL) may
 * hold: about 100 MB of text. */
#define MAX_LISTED (1 << 20)

/* What to write: a view as a table (or CSV, JSON), the trees as DOT,
 * or MSCCL's XML. */
struct output {
	enum cli_format fmt;
	enum view v;
	int dot, msccl;
	struct pm_msccl_opts mo;
};

/* --msccl-proto, --msccl-min-bytes, --msccl-max-bytes, --msccl-max-steps */
struct msccl_args {
	const char *proto, *min, *max, *steps;
};

static int parse_msccl(const struct msccl_args *a, struct pm_msccl_opts *o, struct pm_err *err)
{
	static const char *const protos[] = {"Simple", "LL128", "LL", NULL};
	long steps = 64;
	int k = a->proto ? pm_pick_word("MSCCL protocol", a->proto, protos, err) : 0;

	*o = (struct pm_msccl_opts){"Simple", 0, 1099511627776.0, 64};
	if (k < 0)
		return PM_EINPUT;
	o->proto = protos[k];
	if ((a->min && strcmp(a->min, "0") && pm_parse_size(a->min, &o->min_B, err)) ||
	    (a->max && pm_parse_size(a->max, &o->max_B, err)) ||
	    (a->steps && pm_parse_int(a->steps, 2, 1 << 20, "thread block step limit", &steps, err)))
		return PM_EINPUT;
	if (o->max_B <= o->min_B)
		return pm_fail(err, PM_EINPUT, "--msccl-max-bytes %.0f is not above --msccl-min-bytes %.0f (expected MIN < MAX)",
			       o->max_B, o->min_B);
	o->max_steps = (int)steps;
	return PM_OK;
}

static int parse_output(const char *format, const char *view, struct output *o,
			struct pm_err *err)
{
	static const char *const views[] = {"steps", "transfers", "nodes", NULL};	/* enum view */
	int k;

	o->fmt = FMT_TABLE;
	o->dot = strcmp(format, "dot") == 0;
	o->msccl = strcmp(format, "msccl") == 0;
	if (!o->dot && !o->msccl && cli_parse_format(format, &o->fmt, err))
		return pm_fail(err, PM_EINPUT, "invalid format '%s' (expected table, csv, json, dot or msccl)", format);
	if ((k = pm_pick_word("view", view, views, err)) < 0)
		return PM_EINPUT;
	o->v = (enum view)k;
	return PM_OK;
}

static int write_view(const struct output *o, const struct pm_inst *in, const struct pm_sched *s,
		      const struct pm_topo *t, double bytes, const struct pm_params *p,
		      struct pm_err *err)
{
	struct cli_table tab = {0};
	int rc;

	/* output counts as work: a listing of every transfer is refused
	 * before it starts when it could not be read (or opened) anyway */
	if ((o->dot || o->v != V_STEPS || o->msccl) && s->nx > MAX_LISTED)
		return pm_fail(err, PM_EINPUT,
			       "the %s would list %zu transfers (expected at most %d: --view steps summarises any schedule, or a smaller network)",
			       o->dot ? "DOT trees" : o->msccl ? "MSCCL XML" : o->v == V_NODES ? "nodes view" : "transfers view",
			       s->nx, MAX_LISTED);
	if (o->dot) {
		write_dot(cli_out(), in, s);
		return PM_OK;
	}
	if (o->msccl) {
		size_t sw = pm_sched_switch_xfers(s);
		if (sw)	/* MSCCL's programs run GPU to GPU */
			fprintf(stderr, "perfmodel: warning: %s: its %zu transfers that a switch reduces or multicasts are written as GPU-to-GPU sends, which MSCCL runs as copies over the links, not in the switch\n",
				in->label, sw);
		return pm_msccl_write(cli_out(), s, in->label, "allreduce", &o->mo, err);
	}
	if (o->v == V_STEPS)
		rc = view_steps(&tab, in, s, bytes, p, err);
	else if (o->v == V_TRANSFERS)
		rc = view_transfers(&tab, in, s, bytes, err);
	else
		rc = view_nodes(&tab, s, err);
	if (!rc) {
		int view_meta = tab.nmeta;
		char phase[64] = "";
		if (s->second_phase >= 0)
			snprintf(phase, sizeof phase, " (all-gather/broadcast from step %d)", s->second_phase + 1);
		cli_table_meta(&tab, "perfmodel schedule: %s on %s, %d ranks, %d steps%s, %zu transfers, message cut in %u units",
			       in->label, pm_topo_spec(t), in->P, s->nsteps, phase, s->nx, s->nchunks);
		cli_table_meta(&tab, "ranks on endpoints: %s", s->mapping);
		cli_net_meta(&tab, t, p);
		cli_table_meta_to_front(&tab, view_meta);
		rc = cli_table_write(cli_out(), &tab, o->fmt, err);
	}
	cli_table_release(&tab);
	return rc;
}

/* --help: usage, what the command does, examples (cli_help adds the options) */
static const char help_text[] =
	"usage: perfmodel schedule --topo SPEC --algo NAME [--size SIZE] [--view V] [--format F]\n\n"
	"Shows an algorithm's schedule on a network: per step (transfers, longest\n"
	"route, busy links, busiest link, time), per transfer (flow, ranks, chunks,\n"
	"bytes, the vertices crossed; sN is switch N), per node (Op, FlowID, Parent,\n"
	"Children, Step, as Huang et al. 2021 Fig. 5), or as Graphviz trees of the all-gather\n"
	"half (--format dot | dot -Tpdf, with Graphviz installed), one cluster per tree as the\n"
	"MULTITREE supplement Fig. 1.\n\n"
	"Examples:\n"
	"  perfmodel schedule --topo torus:3x3 --algo multitree --view nodes\n"
	"  perfmodel schedule --topo torus:3x3 --algo multitree --format dot > trees.dot\n"
	"  perfmodel schedule --topo torus:8x8 --algo dbtree --size 64M\n"
	"  perfmodel schedule --topo torus:4x4 --algo multitree --format msccl > multitree.xml\n\n"
	"--format msccl writes the schedule as msccl-tools' algorithm XML (Cowan et al.,\n"
	"ASPLOS 2023) that the MSCCL executor (Azure/msccl-executor-nccl) loads: one\n"
	"<gpu> per rank, a thread block per peer, direction and channel, a send and a\n"
	"receive (rrc: receive-reduce-copy, or r) step per transfer, in place on buffer\n"
	"i.  Every hazard on a chunk is a wait: a send waits for the receives that wrote\n"
	"its chunks, a receive for the receive before it into the same chunk and for\n"
	"the sends that read it since.  Counts above 71 are cut into several steps, and\n"
	"a thread block past --msccl-max-steps continues on the next channel; a schedule\n"
	"past the executor's other limits (32 channels, 32 thread blocks a channel,\n"
	"4096 elements a GPU) is refused.\n\nOptions:\n";

/* The algorithm's schedule as made for bytes, every step played out, in
 * the view asked for. */
static int show(const char *algo, double bytes, const struct pm_topo *t, const struct pm_params *p,
		const struct output *out, struct pm_err *err)
{
	struct pm_inst in;
	struct pm_sched s = {0};
	int rc = pm_algo_resolve(algo, t, 0, &in, err);

	if (!rc)	/* the schedule as made for --size */
		rc = pm_algo_at_size(&in, bytes, &in, err);
	if (rc == PM_ENOTAPPLICABLE)
		rc = PM_EINPUT;	/* asked for this one algorithm: an input error */
	if (!rc)
		rc = pm_algo_schedule(&in, &s, err);
	if (!rc)
		rc = play_out(&s, err);	/* the views show every step */
	if (!rc)
		rc = write_view(out, &in, &s, t, bytes, p, err);
	if (s.map)
		pm_sched_release(&s);
	return rc;
}

int cmd_schedule(int argc, char **argv, struct pm_err *err)
{
	struct cli_net_opts net = {0};
	const char *algo = NULL, *size = "1M", *format = "table", *view = "steps", *pos[1];
	int help = 0, npos, n, rc;
	struct cli_opt opts[28];
	struct msccl_args ma = {0};
	struct output out;
	struct pm_params p;
	struct pm_topo *t = NULL;
	double bytes;

	n = cli_net_opt_rows(&net, opts);
	const struct cli_opt rows[] = {
		{"algo", "NAME", "the algorithm (required; see perfmodel list)", &algo, NULL},
		{"size", "SIZE", "message size the steps are priced at (default 1M)", &size, NULL},
		{"view", "V", "steps (default), transfers or nodes (Huang et al. 2021 Fig. 5 tables)", &view, NULL},
		{"format", "F", "table, csv, json, dot (Graphviz trees) or msccl (MSCCL algorithm XML for MSCCL-enabled NCCL)", &format, NULL},
		{"msccl-proto", "P", "--format msccl: the protocol the executor runs it with, Simple (default), LL128 or LL", &ma.proto, NULL},
		{"msccl-min-bytes", "SIZE", "--format msccl: the smallest size MSCCL runs it for (default 0)", &ma.min, NULL},
		{"msccl-max-bytes", "SIZE", "--format msccl: sizes below this (default 1T)", &ma.max, NULL},
		{"msccl-max-steps", "N", "--format msccl: steps a thread block holds, the executor's MSCCL_MAX_NUM_STEPS (default 64, its default build)", &ma.steps, NULL},
		{"help", NULL, "show this help", NULL, &help},
	};
	n = cli_opt_add(opts, n, rows, (int)(sizeof rows / sizeof rows[0]));
	if (cli_parse("schedule", argc, argv, opts, n, pos, &npos, 0, err))
		return PM_EINPUT;
	if (help) {
		cli_help(cli_out(), help_text, opts, n);
		return 0;
	}
	if (!net.topo)
		return pm_fail(err, PM_EINPUT, "missing --topo (expected a network such as torus:3x3)");
	if (!algo)
		return pm_fail(err, PM_EINPUT, "missing --algo (expected one algorithm such as multitree; see perfmodel list)");
	if (parse_output(format, view, &out, err) || pm_parse_size(size, &bytes, err) ||
	    parse_msccl(&ma, &out.mo, err))
		return PM_EINPUT;
	if ((rc = cli_net_build(&net, &p, &t, err)))
		return rc;
	if ((rc = cli_need_two(t, err))) {
		pm_topo_free(t);
		return rc;
	}
	rc = show(algo, bytes, t, &p, &out, err);
	pm_topo_free(t);
	return rc;
}
