/* cmd_sweep.c: perfmodel sweep, a study's grid of command lines priced on
 * every core (and MPI ranks), one keyed table, resumable, summarised. */
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/out.h"
#include "model/text.h"
#include "cli/plot.h"
#include "cli/sweep.h"
#include "model/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --help: usage, what the command does, examples (cli_help adds the options) */
static const char help_text[] =
	"usage: perfmodel sweep STUDY.yml [--out FILE] [--jobs N] [--shard I/N] [--summary FILE] [--format csv|json]\n"
	"       perfmodel sweep --merge OUT SHARD.csv...\n\n"
	"Runs a study: every combination of the values of its axes is one command line\n"
	"of its command (allreduce, plan, hier, ...), priced in-process by that command's\n"
	"own code, on N threads (default: every core), and written as one CSV table:\n"
	"point, key, the axes, gpus (with a topo axis), the command's columns, cost\n"
	"(with cost_per_gpu_hour), error.  Rows stay in point order whatever finishes\n"
	"first.  With --out, a rerun skips the points the file already holds (a killed\n"
	"run loses nothing finished).  --shard I/N runs every N-th point from I (a Slurm\n"
	"array task each); --merge joins the shards in point order.  Under mpirun (built\n"
	"with Open MPI) the points are spread over the ranks as they free up and rank 0\n"
	"writes the table.  The study's best: and pareto: keys add summaries (to\n"
	"--summary FILE, or stdout after an --out run).  docs/cli.md gives the format.\n\n"
	"Examples:\n"
	"  perfmodel sweep data/studies/nccl-dgx-h100.yml --out nccl.csv\n"
	"  perfmodel sweep data/studies/llama3-70b-cluster.yml --out plan.csv --jobs 2\n"
	"  perfmodel sweep data/studies/nccl-dgx-h100.yml --out part0.csv --shard 0/4\n"
	"  perfmodel sweep --merge nccl.csv part0.csv part1.csv part2.csv part3.csv\n"
	"  mpirun -n 64 perfmodel sweep data/studies/nccl-dgx-h100.yml --out nccl.csv\n"
	"  perfmodel sweep data/studies/nccl-dgx-h100.yml --out nccl.csv --plot nccl.svg \\\n"
	"      --plot-x size --plot-y busbw_GBps --plot-series algo --plot-best most\n\n"
	"Options:\n";

static int parse_shard(const char *s, struct sweep_opts *o, struct pm_err *err)
{
	char *slash;
	long i, n;
	if (!s)
		return PM_OK;
	if (!(slash = strchr(s, '/')))
		return pm_fail(err, PM_EINPUT, "invalid --shard '%s' (expected I/N, such as 0/4)", s);
	char head[32];
	snprintf(head, sizeof head, "%.*s", (int)(slash - s), s);
	if (pm_parse_int(slash + 1, 1, 1L << 20, "--shard count", &n, err) ||
	    pm_parse_int(head, 0, n - 1, "--shard index", &i, err))
		return PM_EINPUT;
	o->shard = (int)i, o->nshards = (int)n;
	return PM_OK;
}

/* The table (a file) to stdout as CSV or JSON. */
static int emit(FILE *src, enum cli_format fmt, struct sweep_table *t, struct pm_err *err)
{
	char buf[65536];
	size_t got;
	if (fmt != FMT_JSON) {
		rewind(src);
		while ((got = fread(buf, 1, sizeof buf, src)) > 0)
			if (fwrite(buf, 1, got, cli_out()) != got)
				return pm_fail(err, PM_EINTERNAL, "could not write the table");
		return PM_OK;
	}
	unsigned *flags = calloc((size_t)t->ncols + 1, sizeof *flags);
	struct cli_table ct;
	int rc;
	if (!flags)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int c = 0; c < t->ncols; c++)
		flags[c] = COL_AUTO;
	cli_table_init(&ct, t->ncols, (const char *const *)t->cols, flags);
	for (long r = 0; r < t->nrows; r++) {
		cli_table_row(&ct);
		for (int c = 0; c < t->ncols; c++)
			cli_table_set(&ct, c, "%s", t->rows[r][c]);
	}
	rc = cli_table_write(cli_out(), &ct, FMT_JSON, err);
	cli_table_release(&ct);
	free(flags);
	return rc;
}

static int summarise(const struct study *st, const struct sweep_table *t, const char *path, struct pm_err *err)
{
	FILE *f = path ? fopen(path, "w") : cli_out();
	int rc;
	if (!f)
		return pm_fail(err, PM_EINPUT, "cannot write '%s' (expected a writable path for --summary)", path);
	rc = sweep_summaries(st, t, f, err);
	if (path && fclose(f) && !rc)
		rc = pm_fail(err, PM_EINTERNAL, "could not write '%s'", path);
	return rc;
}

/* Run the study: threads, or MPI ranks when started by mpirun; the table
 * to --out or, through a scratch file, to stdout; then the summaries. */
struct plot_args {
	const char *path, *x, *y, *series, *best;
};

static int run_study(const char *path, struct sweep_opts *o, enum cli_format fmt, const char *summary,
		     const struct plot_args *pa, struct pm_err *err)
{
	struct study st;
	struct sweep w;
	struct sweep_table t = {0};
	FILE *scratch = NULL;
	char scratch_path[] = "/tmp/perfmodel-sweep-XXXXXX";
	int rc, fd = -1;

	if ((rc = study_load(path, &st, err))) {
		study_release(&st);	/* what was read before the error */
		return rc;
	}
	if ((rc = sweep_check(&st, &w, err)))
		goto out;
	if (!o->out) {	/* a scratch file the table is read back from */
		if ((fd = mkstemp(scratch_path)) < 0) {
			rc = pm_fail(err, PM_EINTERNAL, "cannot make a scratch file");
			goto out;
		}
		close(fd);
		o->out = scratch_path;
	}
	rc = sweep_mpi(&w, o, err);
	if (rc < 0)	/* not under mpirun */
		rc = sweep_run(&w, o, err);
	if (rc > 0 || o->rank > 0)
		goto out;	/* ranks other than 0 leave the table to it */
	/* the table is read back for stdout and for the summaries only */
	int summaries = (st.nby || st.pareto) && (summary || o->out != scratch_path);
	if (((o->out == scratch_path && fmt == FMT_JSON) || summaries || pa->path) &&
	    (rc = sweep_table_read(o->out, &t, err)))
		goto out;
	if (o->out == scratch_path) {
		if (!(scratch = fopen(scratch_path, "r")))
			rc = pm_fail(err, PM_EINTERNAL, "cannot read the scratch file back");
		else
			rc = emit(scratch, fmt, &t, err);
	}
	if (!rc && summaries)
		rc = summarise(&st, &t, summary, err);
	if (!rc && pa->path)
		rc = sweep_plot(&st, &t, pa->path, pa->x, pa->y, pa->series, pa->best && !strcmp(pa->best, "most"), err);
out:
	if (scratch)
		fclose(scratch);
	if (o->out == scratch_path)
		remove(scratch_path);
	sweep_table_release(&t);
	sweep_release(&w);
	study_release(&st);
	return rc;
}

int cmd_sweep(int argc, char **argv, struct pm_err *err)
{
	const char *out = NULL, *jobs = NULL, *shard = NULL, *merge = NULL, *summary = NULL, *format = "csv";
	const char *pos[256];
	int help = 0, n = 0, npos;
	struct plot_args pa = {0};
	struct sweep_opts o = {0};
	enum cli_format fmt;
	long nj;

	const struct cli_opt opts[] = {
		{"out", "FILE", "write the table to FILE (CSV), resuming what it holds", &out, NULL},
		{"jobs", "N", "threads (default: the cores online)", &jobs, NULL},
		{"shard", "I/N", "run only points I, I+N, I+2N, ... (0 <= I < N)", &shard, NULL},
		{"merge", "OUT", "join the shard files given after it into OUT, in point order", &merge, NULL},
		{"summary", "FILE", "write the study's summaries (best:, pareto:) to FILE", &summary, NULL},
		{"format", "F", "csv (default) or json for the table on stdout (--out files are CSV)", &format, NULL},
		{"plot", "FILE", "draw --plot-y against --plot-x to FILE.svg (.png, .pdf), a curve per --plot-series value, each point the least over the other axes", &pa.path, NULL},
		{"plot-x", "AXIS", "the axis along x (sizes and counts on a log scale)", &pa.x, NULL},
		{"plot-y", "COLUMN", "the column along y, such as time_us", &pa.y, NULL},
		{"plot-series", "AXIS", "one curve per value of this axis (at most 12)", &pa.series, NULL},
		{"plot-best", "least|most", "which value over the other axes a point shows (default least: times; most for bandwidths)", &pa.best, NULL},
		{"help", NULL, "show this help", NULL, &help},
	};
	n = (int)(sizeof opts / sizeof opts[0]);
	if (cli_parse("sweep", argc, argv, opts, n, pos, &npos, 256, err))
		return PM_EINPUT;
	if (help) {
		cli_help(cli_out(), help_text, opts, n);
		return 0;
	}
	if (merge) {
		if (npos < 1)
			return pm_fail(err, PM_EINPUT, "--merge %s needs the shard files after it (expected perfmodel sweep --merge OUT A.csv B.csv ...)", merge);
		return sweep_merge(merge, (char *const *)pos, npos, err);
	}
	if (npos != 1)
		return pm_fail(err, PM_EINPUT, "%s (expected one study file: perfmodel sweep STUDY.yml)",
			       npos ? "more than one study given" : "missing the study file");
	if (cli_parse_format(format, &fmt, err) || parse_shard(shard, &o, err))
		return PM_EINPUT;
	if (pa.path && (!pa.x || !pa.y))
		return pm_fail(err, PM_EINPUT, "--plot %s needs --plot-x AXIS and --plot-y COLUMN", pa.path);
	static const char *const bests[] = {"least", "most", NULL};
	if (pa.best && pm_pick_word("--plot-best", pa.best, bests, err) < 0)
		return PM_EINPUT;
	if (pa.path && cli_plot_check_path(pa.path, pos[0], err))
		return PM_EINPUT;
	if (fmt == FMT_TABLE)
		return pm_fail(err, PM_EINPUT, "invalid --format 'table' for sweep (expected csv or json)");
	if (out && fmt == FMT_JSON)
		return pm_fail(err, PM_EINPUT, "--format json writes the table to stdout; --out files are CSV (expected one of them)");
	nj = sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs && pm_parse_int(jobs, 1, 256, "--jobs", &nj, err))
		return PM_EINPUT;
	o.jobs = nj > 0 ? (int)nj : 1;
	o.out = out;
	o.progress = isatty(fileno(stderr));
	return run_study(pos[0], &o, fmt, summary, &pa, err);
}
