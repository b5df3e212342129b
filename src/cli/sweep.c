/* sweep.c: checking a study and running its points (sweep.h). */
#include "cli/sweep.h"
#include "cli/cli.h"
#include "model/llm.h"
#include "model/grow.h"
#include "model/text.h"
#include "model/topo.h"
#include "model/units.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The commands whose output is one table a sweep can key. */
static const char *const table_commands[] = {"allreduce", "reducescatter", "allgather", "reduce", "broadcast",
					     "alltoall", "best", "hier", "train", "plan", "topo"};

/* ---- checking ---- */

/* The options a command takes, from its own --help (cli_print_opts). */
static int command_options(const char *cmd, char **text)
{
	size_t len;
	FILE *f = open_memstream(text, &len);
	char *argv[] = {(char *)cmd, "--help", NULL};
	struct pm_err e;
	if (!f)
		return PM_EINTERNAL;
	int rc = cli_run_cmd(2, argv, f, &e);
	fclose(f);
	return rc;
}

static int has_option(const char *help, const char *name)
{
	char want[96];
	snprintf(want, sizeof want, "\n  --%s ", name);
	if (strstr(help, want))
		return 1;
	snprintf(want, sizeof want, "\n  --%s\n", name);
	return strstr(help, want) != NULL;
}

/* Values whose kind is known are parsed before any work. */
static int check_int(const char *v, struct pm_err *e)
{
	long x;
	return pm_parse_int(v, 0, 1L << 40, "value", &x, e);
}

static int check_size(const char *v, struct pm_err *e)
{
	double *s = NULL;
	int n, rc = pm_parse_size_range(v, &s, &n, e);
	free(s);
	return rc;
}

static int check_llm(const char *v, struct pm_err *e)
{
	struct pm_llm m;
	return pm_llm_load(v, &m, e);
}

static const struct {
	const char *axis, *command;	/* command NULL: any */
	int (*check)(const char *, struct pm_err *);
} checks[] = {
	{"size", NULL, check_size},
	{"model", "plan", check_llm},
	{"global-batch", NULL, check_int}, {"seq", NULL, check_int}, {"tp", NULL, check_int},
	{"pp", NULL, check_int}, {"cp", NULL, check_int}, {"ep", NULL, check_int}, {"vpp", NULL, check_int},
	{"micro-batch", NULL, check_int}, {"zero", NULL, check_int}, {"procs", NULL, check_int},
	{"workers", NULL, check_int}, {"top", NULL, check_int},
};

static int check_values(const struct study *st, const struct study_axis *a, struct pm_err *err)
{
	for (size_t c = 0; c < sizeof checks / sizeof checks[0]; c++) {
		if (strcmp(checks[c].axis, a->name) || (checks[c].command && strcmp(checks[c].command, st->command)))
			continue;
		for (int j = 0; j < a->n; j++) {
			struct pm_err e;
			if (checks[c].check(a->values[j], &e))
				return pm_fail(err, PM_EINPUT, "study '%s' line %d: axis %s, value '%s': %s", st->path, a->line,
					       a->name, a->values[j], e.msg);
		}
	}
	return PM_OK;
}

/* The topo axis: every network is built once here (which checks it) and
 * its GPU count kept for the gpus column. */
static int topo_values(const struct study *st, struct sweep *w, struct pm_err *err)
{
	const struct study_axis *a;

	w->topo_axis = study_axis_find(st, "topo");
	if (w->topo_axis < 0)
		return PM_OK;
	a = &st->axis[w->topo_axis];
	if (!(w->gpus = malloc(sizeof *w->gpus * (size_t)a->n)))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int j = 0; j < a->n; j++) {
		struct pm_topo *t = NULL;
		struct pm_err e;
		if (pm_topo_parse(a->values[j], NULL, &t, &e))
			return pm_fail(err, PM_EINPUT, "study '%s' line %d: axis topo, value '%s': %s", st->path, a->line,
				       a->values[j], e.msg);
		w->gpus[j] = pm_topo_endpoints(t);
		pm_topo_free(t);
	}
	return PM_OK;
}

/* Options a point may not take: the sweep's own (format, help) and those
 * that write files (one file for every point at once; PLplot is not
 * thread-safe). */
static int reserved(const char *name)
{
	static const char *const names[] = {"format", "help", "plot", "trace", "write-machine"};
	for (size_t k = 0; k < sizeof names / sizeof *names; k++)
		if (!strcmp(names[k], name))
			return 1;
	return 0;
}

int sweep_check(const struct study *st, struct sweep *w, struct pm_err *err)
{
	char *help = NULL;
	int known = 0, rc;

	memset(w, 0, sizeof *w);
	w->st = st;
	w->n = (long)st->npoints;
	w->topo_axis = -1;
	for (size_t c = 0; c < sizeof table_commands / sizeof *table_commands; c++)
		known |= strcmp(table_commands[c], st->command) == 0;
	if (!known)
		return pm_fail(err, PM_EINPUT,
			       "study '%s': command '%s' cannot be swept (expected one that prints a table: allreduce, reducescatter, allgather, reduce, broadcast, alltoall, best, hier, train, plan or topo)",
			       st->path, st->command);
	if (command_options(st->command, &help)) {
		free(help);
		return pm_fail(err, PM_EINTERNAL, "could not read the options of %s", st->command);
	}
	for (int k = 0; k < st->naxes; k++) {
		const struct study_axis *a = &st->axis[k];
		if (reserved(a->name) || !has_option(help, a->name)) {
			rc = pm_fail(err, PM_EINPUT, "study '%s' line %d: '%s' is not an option %s takes in a sweep (see perfmodel %s --help; format, help, plot, trace and write-machine are not taken)",
				     st->path, a->line, a->name, st->command, st->command);
			free(help);
			return rc;
		}
		if ((rc = check_values(st, a, err))) {
			free(help);
			return rc;
		}
	}
	for (int k = 0; k < st->nfixed; k++)
		if (!has_option(help, st->fixed_opt[k] + 2) || reserved(st->fixed_opt[k] + 2)) {
			rc = pm_fail(err, PM_EINPUT, "study '%s': fixed option '%s' is not one %s takes in a sweep (see perfmodel %s --help; format, help, plot, trace and write-machine are not taken)",
				     st->path, st->fixed_opt[k] + 2, st->command, st->command);
			free(help);
			return rc;
		}
	free(help);
	if ((rc = topo_values(st, w, err)))
		return rc;
	if (!(w->skip = calloc((size_t)w->n, 1)) || !(w->res = calloc((size_t)w->n, sizeof *w->res)))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	return PM_OK;
}

/* ---- one point ---- */

void sweep_point(const struct study *st, long i, struct sweep_result *r)
{
	char *argv[STUDY_MAX_ARGV], *text = NULL;
	size_t len = 0;
	struct pm_err err = {""};
	int argc = study_argv(st, i, argv);
	FILE *f = open_memstream(&text, &len);

	r->status = f ? cli_run_cmd(argc, argv, f, &err) : pm_fail(&err, PM_EINTERNAL, "out of memory");
	if (f)
		fclose(f);
	if (r->status) {
		r->error = strdup(err.msg[0] ? err.msg : "failed");
		free(text);
	} else {
		r->raw = text, r->rawlen = len;
	}
	r->done = 1;
}

int sweep_parse(struct sweep_result *r)
{
	struct pm_err err;
	if (!r->raw)
		return 0;
	int rc = sweep_table_parse(r->raw, r->rawlen, &r->out, &err);
	free(r->raw);
	r->raw = NULL;
	if (rc) {
		r->status = PM_EINTERNAL;
		r->error = strdup(err.msg);
	}
	return rc;
}

static void result_release(struct sweep_result *r)
{
	sweep_table_release(&r->out);
	free(r->error);
	free(r->text);
	free(r->raw);
	r->error = r->text = r->raw = NULL;
}

/* ---- the written table ---- */

struct buf {
	char *p;
	size_t n, cap;
	int oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (pm_grow(&b->p, &b->cap, b->n + n + 1, 1, 256)) {
		b->oom = 1;
		return;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static int needs_quotes(const char *s)
{
	return strpbrk(s, ",\"\n\r") || *s == ' ' || (*s && s[strlen(s) - 1] == ' ');
}

/* A CSV cell, quoted where it must be. */
static void cell(struct buf *b, const char *s, int first)
{
	if (!first)
		put(b, ",", 1);
	if (!needs_quotes(s)) {
		put(b, s, strlen(s));
		return;
	}
	put(b, "\"", 1);
	for (const char *c = s; *c; c++)
		put(b, *c == '"' ? "\"\"" : c, *c == '"' ? 2 : 1);
	put(b, "\"", 1);
}

void sweep_write_row(FILE *f, char *const *cells, int n, const char *lead)
{
	struct buf b = {0};
	if (lead)
		cell(&b, lead, 1);
	for (int c = 0; c < n; c++)
		cell(&b, cells[c], !lead && c == 0);
	put(&b, "\n", 1);
	if (b.p)
		fwrite(b.p, 1, b.n, f);	/* errors show in ferror(f), which the callers check */
	free(b.p);
}

static double time_unit(const char *col)
{
	size_t n = strlen(col);
	if (n > 3 && !strcmp(col + n - 3, "_us"))
		return 1e-6;
	if (n > 3 && !strcmp(col + n - 3, "_ms"))
		return 1e-3;
	return 1;
}

static int with_cost(const struct sweep *w)
{
	return w->st->cost_per_gpu_hour > 0 && w->st->pareto && w->gpus;
}

int sweep_set_columns(struct sweep *w, struct pm_err *err)
{
	const struct study *st = w->st;
	const struct sweep_table *first = NULL;

	for (long i = 0; i < w->n && !first; i++) {
		struct sweep_result *r = &w->res[i];
		if (!r->done || r->status)
			continue;
		if (r->raw && !w->raw_header) {
			const char *nl = memchr(r->raw, '\n', r->rawlen);
			w->raw_header = strndup(r->raw, nl ? (size_t)(nl - r->raw) : r->rawlen);
		}
		if (!sweep_parse(r))
			first = &r->out;
	}
	if (!first)
		return PM_OK;	/* no result yet: point, key, axes, error */
	char *const *from = first->cols;
	w->ncmd = first->ncols;
	if (st->noutputs) {
		for (int k = 0; k < st->noutputs; k++)
			if (sweep_table_col(first, st->outputs[k]) < 0) {
				char cols[400];
				size_t len = 0;
				cols[0] = '\0';
				for (int c = 0; c < first->ncols && len + 40 < sizeof cols; c++)
					len += (size_t)snprintf(cols + len, sizeof cols - len, "%s%s", c ? ", " : "", first->cols[c]);
				return pm_fail(err, PM_EINPUT, "study '%s': output '%s' is not a column of %s (expected one of %s)",
					       st->path, st->outputs[k], st->command, cols);
			}
		w->ncmd = st->noutputs;
		from = st->outputs;
	}
	if (st->pareto && st->cost_per_gpu_hour > 0 && sweep_table_col(first, st->pareto) < 0)
		return pm_fail(err, PM_EINPUT, "study '%s': pareto column '%s' is not a column of %s", st->path, st->pareto,
			       st->command);
	/* keep the column names: the first result is freed once written */
	char **names = calloc((size_t)w->ncmd, sizeof *names);
	if (!names)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int k = 0; k < w->ncmd; k++)
		names[k] = strdup(from[k]);
	w->cmd_cols = names;
	w->fast = !st->noutputs && !with_cost(w) && w->raw_header;
	return PM_OK;
}

/* A command column named as a column of the key (an axis, point, key,
 * gpus, cost, error) is written as COMMAND_NAME: JSON objects need
 * distinct names. */
static int clashes(const struct sweep *w, const char *name)
{
	static const char *const own[] = {"point", "key", "gpus", "cost", "error"};
	for (size_t k = 0; k < sizeof own / sizeof *own; k++)
		if (!strcmp(own[k], name))
			return 1;
	return study_axis_find(w->st, name) >= 0;
}

char *sweep_header_text(const struct sweep *w, size_t *len)
{
	struct buf b = {0};
	cell(&b, "point", 1);
	cell(&b, "key", 0);
	for (int k = 0; k < w->st->naxes; k++)
		cell(&b, w->st->axis[k].name, 0);
	if (w->gpus)
		cell(&b, "gpus", 0);
	for (int k = 0; k < w->ncmd; k++) {
		char name[160];
		snprintf(name, sizeof name, "%s%s%s", clashes(w, w->cmd_cols[k]) ? w->st->command : "",
			 clashes(w, w->cmd_cols[k]) ? "_" : "", w->cmd_cols[k]);
		cell(&b, name, 0);
	}
	if (with_cost(w))
		cell(&b, "cost", 0);
	cell(&b, "error", 0);
	put(&b, "\n", 1);
	*len = b.n;
	return b.oom ? (free(b.p), NULL) : b.p;
}

static void row_text(const struct sweep *w, long i, const struct sweep_result *r, long row, struct buf *b)
{
	const struct study *st = w->st;
	int idx[STUDY_MAX_AXES];
	char num[64], key[2048];
	double time_s = NAN;

	study_point(st, i, idx);
	snprintf(num, sizeof num, "%ld", i);
	cell(b, num, 1);
	study_key(st, i, key, sizeof key);
	cell(b, key, 0);
	for (int k = 0; k < st->naxes; k++)
		cell(b, st->axis[k].values[idx[k]], 0);
	if (w->gpus) {
		snprintf(num, sizeof num, "%.0f", w->gpus[idx[w->topo_axis]]);
		cell(b, num, 0);
	}
	if (row == -2)
		return;
	for (int k = 0; k < w->ncmd; k++) {
		int c = row >= 0 ? sweep_table_col(&r->out, w->cmd_cols[k]) : -1;	/* -1: an error row */
		const char *v = c >= 0 ? r->out.rows[row][c] : "";
		cell(b, v, 0);
		if (st->pareto && !strcmp(w->cmd_cols[k], st->pareto) && *v)
			time_s = strtod(v, NULL) * time_unit(st->pareto);
	}
	if (with_cost(w)) {
		num[0] = '\0';
		if (isfinite(time_s))
			snprintf(num, sizeof num, "%.6g", w->gpus[idx[w->topo_axis]] * time_s * st->cost_per_gpu_hour / 3600);
		cell(b, num, 0);
	}
	cell(b, r->status ? r->error : "", 0);
	put(b, "\n", 1);
}

/* The fast way: the command's lines behind the point's key cells, when
 * its header is the first success's and nothing needs quoting again. */
static int format_raw(const struct sweep *w, long i, struct sweep_result *r, struct buf *b)
{
	const char *p = r->raw, *end = r->raw + r->rawlen, *nl = memchr(p, '\n', r->rawlen);
	size_t hl = strlen(w->raw_header);
	struct buf key = {0};
	int rows = 0;

	if (!nl || (size_t)(nl - p) != hl || memcmp(p, w->raw_header, hl) || memchr(p, '"', r->rawlen))
		return -1;
	row_text(w, i, r, -2, &key);	/* the key cells alone */
	for (p = nl + 1; p < end && !key.oom; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			nl = end;
		if (nl == p || *p == '#')
			continue;
		put(b, key.p, key.n);
		put(b, ",", 1);
		put(b, p, (size_t)(nl - p));
		put(b, ",\n", 2);
		rows++;
	}
	free(key.p);
	if (!rows || key.oom) {
		free(b->p);
		*b = (struct buf){0};
		return -1;
	}
	return 0;
}

int sweep_format(const struct sweep *w, long i, struct sweep_result *r)
{
	struct buf b = {0};

	if (r->text)
		return 0;
	if (w->fast && r->raw && !r->status && format_raw(w, i, r, &b) == 0) {
		free(r->raw);
		r->raw = NULL;
		r->text = b.p, r->len = b.n;
		return 0;
	}
	sweep_parse(r);
	if (r->status || r->out.nrows == 0)
		row_text(w, i, r, -1, &b);
	else
		for (long row = 0; row < r->out.nrows; row++)
			row_text(w, i, r, row, &b);
	sweep_table_release(&r->out);
	free(r->error);
	r->error = NULL;
	if (b.oom) {
		free(b.p);
		return -1;
	}
	r->text = b.p, r->len = b.n;
	return 0;
}

void sweep_release(struct sweep *w)
{
	if (w->res)
		for (long i = 0; i < w->n; i++)
			result_release(&w->res[i]);
	pm_free_strings(w->cmd_cols, w->ncmd);
	void *own[] = {&w->raw_header, &w->res, &w->skip, &w->gpus};
	pm_free_each(own, sizeof own / sizeof *own);
	memset(w, 0, sizeof *w);
}
