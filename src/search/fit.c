/* fit.c: reading measurement logs and fitting alpha and beta. */
#include "search/fit.h"
#include "model/grow.h"
#include "model/csvread.h"
#include "model/text.h"
#include "model/units.h"

#include <ctype.h>
#include <errno.h>
#include <gsl/gsl_fit.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pm_points_add(struct pm_points *pts, double size_B, double time_s)
{
	if ((size_t)pts->n == pts->cap) {
		size_t cap = pm_grow_cap(pts->cap, pts->cap + 1, 64);
		if (pm_resize(&pts->size_B, cap, sizeof(double)) || pm_resize(&pts->time_s, cap, sizeof(double)))
			return -1;
		pts->cap = cap;
	}
	pts->size_B[pts->n] = size_B;
	pts->time_s[pts->n++] = time_s;
	return 0;
}

void pm_points_release(struct pm_points *pts)
{
	free(pts->size_B);
	free(pts->time_s);
	memset(pts, 0, sizeof *pts);
}

/* Split a line into at most max whitespace-separated fields, in place. */
static int fields(char *line, char **f, int max)
{
	int n = 0;
	for (char *save, *t = strtok_r(line, " \t\r\n", &save); t && n < max;
	     t = strtok_r(NULL, " \t\r\n", &save))
		f[n++] = t;
	return n;
}

static int number(const char *s, double *v)
{
	char *end;
	if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	*v = strtod(s, &end);
	return errno || *end || !isfinite(*v) ? -1 : 0;
}

static int line_error(const char *path, int line, const char *what, struct pm_err *err)
{
	return pm_fail(err, PM_EINPUT, "measurement file '%s' line %d: %s", path, line, what);
}

/* A measured point outside what any network does: sizes past 1 PiB,
 * times past an hour or below a picosecond (a typo or a unit slip). */
static int out_of_range(const char *path, const char *where, int line,
			double size, double t, struct pm_err *err)
{
	if (size <= PM_MAX_SIZE_B && t <= PM_MAX_TIME_S && t >= 1e-12)
		return PM_OK;
	return pm_fail(err, PM_EINPUT,
		       "measurement file '%s' %s %d: size %g B and time %g s (expected sizes up to 1 PiB and times from 1 ps to 3600 s)",
		       path, where, line, size, t);
}

/* OSU micro-benchmarks: "# OSU ..." headers, then "SIZE LATENCY_US [...]".
 * Some logs prefix the size with the process count ("8,4096"); the part
 * after the last comma is the size. */
/* Logs as they come: what launchers and notes wrap around each line.
 * mpirun --tag-output puts "[1,0]<stdout>:" before it, srun -l "0: ",
 * a Markdown note "> " (a quote), "12. " (a numbered list) or "| ... |"
 * (a table row, its pipes read as spaces); a Markdown fence line ("```")
 * and a table's rule ("|---|---|") say nothing. */
static char *strip_tag(char *line)
{
	char *p = line;
	if (*p != '[')
		return line;
	p += strspn(p + 1, "0123456789,") + 1;
	if (*p != ']' || p[1] != '<')
		return line;
	p = strchr(p, '>');
	return p && p[1] == ':' ? p + 2 : line;
}

static char *strip_srun(char *line)
{
	char *p = line + strspn(line, " ");
	size_t d = strspn(p, "0123456789");
	return d > 0 && d < 8 && p[d] == ':' && (p[d + 1] == ' ' || p[d + 1] == '\t') ? p + d + 2 : line;
}

/* One wrapper off the front of l: a launcher's prefix, indentation, a
 * Markdown quote or list number; l itself when there is none. */
static char *peel(char *l)
{
	char *p = strip_srun(strip_tag(l));
	size_t d;

	if (p != l)
		return p;
	if (*l == ' ' || *l == '\t' || *l == '>')
		return l + 1;
	d = strspn(l, "0123456789");	/* a Markdown numbered list: "12. " */
	if (d > 0 && d < 6 && l[d] == '.' && (l[d + 1] == ' ' || l[d + 1] == '\t'))
		return l + d + 2;
	return l;
}

static char *unwrap(char *line)
{
	char *l = line, *p;

	while ((p = peel(l)) != l)
		l = p;
	if (strncmp(l, "```", 3) == 0 || strncmp(l, "~~~", 3) == 0) {
		*l = '\0';
		return l;
	}
	if (*l == '|') {
		for (p = l; *p; p++)
			if (*p == '|')
				*p = ' ';
		if (strspn(l, " -:\t\r\n") == strlen(l))
			*l = '\0';
	}
	return l;
}

/* "# OSU MPI Allreduce Latency Test v5.4.0" names the benchmark:
 * collective "osu_allreduce" (lower case, as the program is named). */
static void osu_header(const char *line, struct pm_points *pts)
{
	const char *c = strstr(line, "OSU MPI ");
	size_t n = 4;

	if (!c || pts->collective[0])
		return;
	c += strlen("OSU MPI ");
	memcpy(pts->collective, "osu_", 4);
	while (c[0] && !strchr(" \t\r\n", c[0]) && n < sizeof pts->collective - 1)
		pts->collective[n++] = (char)tolower((unsigned char)*c++);
	pts->collective[n] = '\0';
}

static int parse_osu(char *line, int lineno, const char *path,
		     struct pm_points *pts, struct pm_err *err)
{
	char *f[16];
	double size, us;
	int n = fields(line, f, 16);

	if (n == 0)
		return PM_OK;
	const char *sz = strrchr(f[0], ',') ? strrchr(f[0], ',') + 1 : f[0];
	if (n < 2 || number(sz, &size) || number(f[1], &us))
		return line_error(path, lineno, "expected SIZE and AVG_LATENCY_US (osu_allreduce or osu_latency output)", err);
	if (size <= 0 || us <= 0)
		return PM_OK;	/* OSU lists size 0 for some collectives: skip */
	if (out_of_range(path, "line", lineno, size, us * 1e-6, err))
		return PM_EINPUT;
	return pm_points_add(pts, size, us * 1e-6) ? PM_EINTERNAL : PM_OK;
}

/* nccl-tests output as it comes: "#" header lines, then result rows
 * "size count type [redop] [root] time algbw busbw #wrong time ...", the
 * columns named by the header line that starts "#  size  count" (redop
 * and root come and go between versions and collectives: all_reduce_perf
 * of 2.10 and later has both, broadcast_perf of 2.9 root alone, 2.6 none).
 * The out-of-place time, the first "time" column, in microseconds, is
 * used.  Lines that are not result rows (NCCL INFO, "NCCL version", mpirun
 * warnings) are skipped and counted; mpirun's --tag-output prefix
 * "[1,0]<stdout>:" is removed first. */
struct nccl_state {
	int time_col;		/* index of the out-of-place time; -1 unknown */
	int run, want;		/* the run being read (1, 2, ...), the one kept (0 any) */
	int rows_in_run;	/* result rows read since the run began */
	int second_at;		/* line where the second run begins; 0 none */
	int lineno;
};

/* A column header (nccl-tests) or benchmark header (OSU) after result
 * rows begins another run of the benchmark in the same file. */
static void new_run(struct nccl_state *st)
{
	if (st->run > 0 && st->rows_in_run == 0)
		return;
	st->run++;
	st->rows_in_run = 0;
	if (st->run == 2)
		st->second_at = st->lineno;
}

/* "all_reduce_perf_mpi" (a build with a suffix) is all_reduce_perf. */
static void test_name(char *name)
{
	char *p = strstr(name, "_perf");
	if (p)
		p[5] = '\0';
}

/* The NCCL release a log ran: nccl-tests' header says nccl-library=22403
 * (2.24.3), NCCL's own line "NCCL version 2.24.3+cuda12.6". */
static void nccl_release(const char *line, struct pm_points *pts)
{
	const char *v = strstr(line, "nccl-library=");
	int code, maj, min, patch;

	if (v && sscanf(v + 13, "%d", &code) == 1 && code >= 20000 && code < 100000)
		snprintf(pts->nccl_release, sizeof pts->nccl_release, "%d.%d.%d", code / 10000, code / 100 % 100,
			 code % 100);
	else if ((v = strstr(line, "NCCL version ")) && sscanf(v + 13, "%d.%d.%d", &maj, &min, &patch) == 3 &&
		 !pts->nccl_release[0] && maj == 2 && min >= 0 && min < 100 && patch >= 0 && patch < 100)
		snprintf(pts->nccl_release, sizeof pts->nccl_release, "%d.%d.%d", maj, min, patch);
}

static void nccl_header(char *line, struct nccl_state *st, struct pm_points *pts)
{
	char copy[4096], *f[32];
	const char *key = "Collective test starting:";
	char *c = strstr(line, key);
	int n;

	if (c) {
		int len = 0;
		c += strlen(key);
		while (*c == ' ')
			c++;
		while (c[len] && !strchr(" \t\r\n", c[len]) && len < (int)sizeof pts->collective - 1)
			len++;
		memcpy(pts->collective, c, (size_t)len);
		pts->collective[len] = '\0';
		test_name(pts->collective);
	}
	pm_strlcpy(copy, line + 1, sizeof copy);
	n = fields(copy, f, 32);
	if (n >= 2 && strcmp(f[0], "Rank") == 0 && st->run <= 1)
		pts->ranks++;
	if (n >= 4 && strcmp(f[0], "nThread") == 0 && strcmp(f[2], "nGpus") == 0 && st->run <= 1) {
		long g = strtol(f[3], NULL, 10);	/* one process drove g GPUs (-g) */
		pts->gpus_per_proc = g >= 1 && g <= 1024 ? (int)g : 0;
	}
	if (n >= 3 && strcmp(f[0], "size") == 0 && strcmp(f[1], "count") == 0) {
		new_run(st);
		for (int i = 2; i < n; i++)
			if (strcmp(f[i], "time") == 0) {
				st->time_col = i;
				break;
			}
	}
}

/* busbw / algbw of a row, which names the collective when no header does
 * (all-reduce's alone exceeds 1: 2(P-1)/P); 0 when the row is too small
 * to tell (rates printed to two decimals). */
static void bus_factor(char **f, int n, int tc, struct pm_points *pts)
{
	double alg, bus;
	if (pts->bus_factor > 0 || tc + 2 >= n || number(f[tc + 1], &alg) || number(f[tc + 2], &bus) || alg < 1)
		return;
	pts->bus_factor = bus / alg;
}

static int parse_nccl(char *line, int lineno, const char *path,
		      struct pm_points *pts, struct nccl_state *st,
		      struct pm_err *err)
{
	char *f[32];
	double size, us;
	int n = fields(line, f, 32), tc;

	if (n == 0)
		return PM_OK;
	if (number(f[0], &size)) {
		pts->skipped++;	/* not a result row: NCCL INFO, NCCL version, ... */
		return PM_OK;
	}
	/* without a header: 13 fields from 2.10 (redop, root), 12 before, 11
	 * in the oldest (neither) */
	tc = st->time_col >= 0 ? st->time_col : n >= 13 ? 5 : n == 12 ? 4 : 3;
	if (tc >= n || number(f[tc], &us))
		return line_error(path, lineno, "expected an nccl-tests result row (size count type [redop] [root] time algbw busbw ...)", err);
	if (st->run == 0)
		st->run = 1;
	st->rows_in_run++;
	if (st->want && st->run != st->want)
		return PM_OK;
	bus_factor(f, n, tc, pts);
	if (size <= 0 || us <= 0)
		return PM_OK;
	if (out_of_range(path, "line", lineno, size, us * 1e-6, err))
		return PM_EINPUT;
	return pm_points_add(pts, size, us * 1e-6) ? PM_EINTERNAL : PM_OK;
}

struct creader {
	const char *path;
	int col_size, col_time, time_unit_us, time_unit_s;
	struct pm_points *pts;
};

static int csv_header(struct creader *r, char *const *cell, int n, struct pm_err *err)
{
	static const char *size_names[] = {"size", "size_B", "bytes"};
	static const char *time_names[] = {"time", "time_us", "time_s"};

	r->col_size = r->col_time = -1;
	for (int k = 0; k < 3 && r->col_size < 0; k++)
		r->col_size = pm_csv_column(cell, n, size_names[k]);
	for (int k = 0; k < 3 && r->col_time < 0; k++) {
		r->col_time = pm_csv_column(cell, n, time_names[k]);
		r->time_unit_us = k == 1;
		r->time_unit_s = k == 2;
	}
	if (r->col_size < 0 || r->col_time < 0)
		return pm_fail(err, PM_EINPUT,
			       "measurement file '%s' has no %s column (expected a header with size (or size_B) and time_us, time_s or time)",
			       r->path, r->col_size < 0 ? "size" : "time");
	return PM_OK;
}

static int csv_row(void *ctx, int row, char *const *cell, int n, struct pm_err *err)
{
	struct creader *r = ctx;
	struct pm_err sub;
	double size, t;

	if (row == 0)
		return csv_header(r, cell, n, err);
	const char *sz = r->col_size < n ? cell[r->col_size] : "";
	const char *tm = r->col_time < n ? cell[r->col_time] : "";
	int plain = r->time_unit_us || r->time_unit_s;
	if (number(sz, &size) && pm_parse_size(sz, &size, &sub))
		return pm_fail(err, PM_EINPUT, "measurement file '%s' row %d: invalid size '%s' (expected bytes such as 4096 or 64M)",
			       r->path, row, sz);
	if (plain ? number(tm, &t) : pm_parse_time(tm, &t, &sub))
		return pm_fail(err, PM_EINPUT, "measurement file '%s' row %d: invalid time '%s' (expected %s)",
			       r->path, row, tm, plain ? "a number" : "a time with a unit such as 31.9us");
	if (r->time_unit_us)
		t *= 1e-6;
	if (size <= 0 || t <= 0)
		return pm_fail(err, PM_EINPUT, "measurement file '%s' row %d: size and time must be positive (got %s, %s)",
			       r->path, row, sz, tm);
	if (out_of_range(r->path, "row", row, size, t, err))
		return PM_EINPUT;
	if (pm_points_add(r->pts, size, t))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	return PM_OK;
}

/* nccl-tests -J FILE.json (its src/util.cu writes it): "results", one
 * object per size with "size" and "out_of_place" {"time" (or "cpu_time")
 * in us}, or "in_place" where the out-of-place run is null; the program
 * (args[0]) names the test, the "devices" list the ranks. */
static int json_time(const json_t *r, double *us)
{
	static const char *const place[] = {"out_of_place", "in_place"};

	for (int k = 0; k < 2; k++) {
		const json_t *o = json_object_get(r, place[k]), *t;
		if (!json_is_object(o))
			continue;
		t = json_object_get(o, "time");
		if (!t)
			t = json_object_get(o, "cpu_time");
		if (json_is_number(t)) {
			*us = json_number_value(t);
			return 0;
		}
	}
	return -1;
}

static void json_header(const json_t *root, struct pm_points *pts)
{
	const json_t *args = json_object_get(root, "args"), *cfg = json_object_get(root, "config");
	const json_t *dev = json_object_get(root, "devices");
	const char *prog = json_string_value(json_array_get(args, 0));

	if (!json_is_array(dev) && json_is_object(cfg))
		dev = json_object_get(cfg, "devices");
	pts->ranks = json_is_array(dev) ? (int)json_array_size(dev) : 0;
	if (prog) {
		const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
		pm_strlcpy(pts->collective, base, sizeof pts->collective);
		test_name(pts->collective);
	}
}

static int read_nccl_json(FILE *f, const char *path, struct pm_points *pts, struct pm_err *err)
{
	json_error_t je;
	json_t *root = json_loadf(f, 0, &je), *res;
	size_t i;
	int rc = PM_OK;

	if (!root)
		return pm_fail(err, PM_EINPUT, "measurement file '%s' line %d: %s (expected nccl-tests -J JSON output)",
			       path, je.line, je.text);
	res = json_object_get(root, "results");
	if (!json_is_array(res)) {
		json_decref(root);
		return pm_fail(err, PM_EINPUT, "measurement file '%s' has no \"results\" list (expected nccl-tests -J JSON output)", path);
	}
	json_header(root, pts);
	for (i = 0; i < json_array_size(res) && !rc; i++) {
		const json_t *r = json_array_get(res, i), *sz = json_object_get(r, "size");
		double us;
		if (!json_is_number(sz) || json_time(r, &us)) {
			pts->skipped++;
			continue;
		}
		double size = json_number_value(sz);
		if (size <= 0 || us <= 0) {
			pts->skipped++;
			continue;
		}
		if (out_of_range(path, "result", (int)i + 1, size, us * 1e-6, err))
			rc = PM_EINPUT;
		else if (pm_points_add(pts, size, us * 1e-6))
			rc = PM_EINTERNAL;
	}
	json_decref(root);
	return rc;
}

static enum pm_points_format guess(FILE *f)
{
	char line[1024] = "";
	enum pm_points_format g = PM_POINTS_OSU;
	int seen = 0, c;

	while ((c = fgetc(f)) == ' ' || c == '\t' || c == '\r' || c == '\n')
		;
	if (c == '{')
		return PM_POINTS_NCCL_JSON;
	ungetc(c, f);
	/* a CSV's header is its first line that is not a comment */
	while (fgets(line, sizeof line, f) && (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line)))
		;
	if (strchr(line, ',') && (strstr(line, "size") || strstr(line, "time")))
		return PM_POINTS_CSV;
	rewind(f);
	while (fgets(line, sizeof line, f) && seen < 50) {
		if (strstr(line, "OSU"))
			return PM_POINTS_OSU;
		if (strstr(line, "nccl") || strstr(line, "out-of-place") || strstr(line, "busbw"))
			return PM_POINTS_NCCL;
		if (line[0] != '#' && line[0] != '\n')
			seen++;
	}
	return g;
}

int pm_points_read(const char *path, enum pm_points_format fmt,
		   struct pm_points *pts, struct pm_err *err)
{
	return pm_points_read_run(path, fmt, 0, pts, err);
}

/* nccl-tests' and OSU's text logs, line by line: run (0: the only one)
 * is the run kept. */
static int read_text_log(FILE *f, const char *path, enum pm_points_format fmt, int run,
			 struct pm_points *pts, struct pm_err *err)
{
	struct nccl_state st = {.time_col = -1, .want = run};
	char line[4096];
	int rc = PM_OK, lineno = 0;
	long total = 0;

	while (!rc && fgets(line, sizeof line, f)) {
		char *l = unwrap(line);
		st.lineno = ++lineno;
		if ((total += (long)strlen(line)) > PM_INPUT_MAX_BYTES)
			return pm_fail(err, PM_EINPUT, "measurement file '%s' is larger than %ld bytes (expected a smaller file)",
				       path, PM_INPUT_MAX_BYTES);
		if (fmt == PM_POINTS_NCCL)
			nccl_release(l, pts);
		if (l[0] == '#' && fmt == PM_POINTS_NCCL)
			nccl_header(l, &st, pts);
		if (l[0] == '#' && fmt == PM_POINTS_OSU && strstr(l, "OSU"))
			new_run(&st), osu_header(l, pts);
		if (l[0] == '#' || strspn(l, " \t\r\n") == strlen(l))
			continue;
		if (fmt == PM_POINTS_NCCL) {
			rc = parse_nccl(l, lineno, path, pts, &st, err);
		} else {
			st.run += st.run == 0;
			st.rows_in_run++;
			if (!st.want || st.run == st.want)
				rc = parse_osu(l, lineno, path, pts, err);
		}
	}
	pts->runs = st.run;
	if (!rc && st.run > 1 && !run)
		rc = pm_fail(err, PM_EINPUT,
			     "measurement file '%s' holds %d runs of the benchmark (the second begins at line %d; expected one: choose one with --run N)",
			     path, st.run, st.second_at);
	else if (!rc && run > st.run)
		rc = pm_fail(err, PM_EINPUT, "no run %d in measurement file '%s' (expected --run 1 to %d)",
			     run, path, st.run ? st.run : 1);
	return rc;
}

int pm_points_read_run(const char *path, enum pm_points_format fmt, int run,
		       struct pm_points *pts, struct pm_err *err)
{
	FILE *f;
	int rc = PM_OK;

	memset(pts, 0, sizeof *pts);
	if (!(f = pm_input_open(path, "measurement file", err)))
		return PM_EINPUT;
	if (fmt == PM_POINTS_AUTO) {
		fmt = guess(f);
		rewind(f);
	}
	pts->format = fmt;
	if (fmt == PM_POINTS_NCCL_JSON) {
		if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > PM_INPUT_MAX_BYTES)
			rc = pm_fail(err, PM_EINPUT, "measurement file '%s' is larger than %ld bytes (expected a smaller file)",
				     path, PM_INPUT_MAX_BYTES);
		else if (fseek(f, 0, SEEK_SET) == 0)
			rc = read_nccl_json(f, path, pts, err);
	} else if (fmt == PM_POINTS_CSV) {
		struct creader r = {.path = path, .pts = pts};
		rc = pm_csv_read(path, "measurement file", csv_row, NULL, &r, err);
	} else {
		rc = read_text_log(f, path, fmt, run, pts, err);
	}
	fclose(f);
	if (rc == PM_EINTERNAL)
		pm_fail(err, PM_EINTERNAL, "out of memory");
	if (rc)
		pm_points_release(pts);
	return rc;
}

int pm_fit_line(const struct pm_points *pts, double min_B, double max_B,
		struct pm_fit *fit, struct pm_err *err)
{
	double *x = malloc(sizeof(double) * (size_t)(pts->n + 1));
	double *y = malloc(sizeof(double) * (size_t)(pts->n + 1));
	double c0, c1, cov00, cov01, cov11, sumsq, mean = 0, sstot = 0;
	int n = 0, rc = PM_OK;

	memset(fit, 0, sizeof *fit);
	if (!x || !y) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		goto out;
	}
	for (int i = 0; i < pts->n; i++)
		if (pts->size_B[i] >= min_B && (max_B <= 0 || pts->size_B[i] <= max_B)) {
			x[n] = pts->size_B[i];
			y[n] = pts->time_s[i];
			n++;
		}
	if (n < 3) {
		rc = pm_fail(err, PM_EINPUT,
			     "too few points to fit: %d in the size range (expected at least 3 (size, time) points)", n);
		goto out;
	}
	fit->min_B = fit->max_B = x[0];
	for (int i = 0; i < n; i++) {
		fit->min_B = fmin(fit->min_B, x[i]);
		fit->max_B = fmax(fit->max_B, x[i]);
		mean += y[i] / n;
	}
	if (fit->min_B == fit->max_B) {
		rc = pm_fail(err, PM_EINPUT, "all %d points have the same size %.0f B (expected several sizes to fit a slope)",
			     n, fit->min_B);
		goto out;
	}
	if (gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq)) {
		rc = pm_fail(err, PM_EINTERNAL, "the least-squares fit failed");
		goto out;
	}
	for (int i = 0; i < n; i++)
		sstot += (y[i] - mean) * (y[i] - mean);
	fit->n = n;
	fit->alpha_s = c0;
	fit->beta_spB = c1;
	fit->se_alpha_s = sqrt(cov00);
	fit->se_beta_spB = sqrt(cov11);
	fit->r2 = sstot > 0 ? 1 - sumsq / sstot : 1;
	fit->rms_s = sqrt(sumsq / n);
out:
	free(x);
	free(y);
	return rc;
}
