/* test_sweep.c: perfmodel sweep end to end: a study's table is the same
 * byte for byte on one thread and on several, resumed after a killed run,
 * and joined from shards; each point's row is what the command prints for
 * that point alone; bad studies are refused before any work with the key
 * and line. */
#include "helpers.h"

static char dir[256];

static const char *scratch(const char *name)
{
	static char path[4][512];
	static int k;
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/pm_sweep_%d", (int)getpid());
		mkdir(dir, 0700);
	}
	k = (k + 1) % 4;
	snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
	return path[k];
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

/* 3 networks x 4 sizes x 2 algorithms, one of them refused on a ring of 6
 * (2d-ring needs a 2-D torus or mesh): its error is a row, not a failure. */
static const char *study(void)
{
	const char *p = scratch("s.yml");
	write_text(p, "command: allreduce\n"
		      "fixed:\n  model: closed\n"
		      "axes:\n"
		      "  topo: [ring:8, ring:6, torus:4x4]\n"
		      "  size: [1K, 64K, 1M, 64M]\n"
		      "  algo: [ring, 2d-ring]\n"
		      "outputs: [algo, time_us]\n"
		      "best:\n  by: [topo, size]\n  minimize: time_us\n");
	return p;
}

static char *run_ok(const char *args)
{
	struct run r = run_perfmodel(args);
	cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
	free(r.err);
	return r.out;
}

Test(sweep, threads_shards_and_resume_give_the_same_table)
{
	char cmd[1024], s[512];
	snprintf(s, sizeof s, "%s", study());

	snprintf(cmd, sizeof cmd, "sweep %s --jobs 1", s);
	char *one = run_ok(cmd);
	snprintf(cmd, sizeof cmd, "sweep %s --jobs 3", s);
	char *three = run_ok(cmd);
	cr_assert_str_eq(one, three);
	/* 24 points, one row each, and the header */
	int lines = 0;
	for (char *c = one; *c; c++)
		lines += *c == '\n';
	cr_assert_eq(lines, 25, "%s", one);
	/* the command's algo column is renamed: the axis has the name */
	const char *head = "point,key,topo,size,algo,gpus,allreduce_algo,time_us,error\n";
	cr_assert(!strncmp(one, head, strlen(head)), "%s", one);

	/* shards joined in point order */
	const char *a = scratch("a.csv"), *b = scratch("b.csv"), *m = scratch("m.csv");
	remove(a), remove(b), remove(m);
	snprintf(cmd, sizeof cmd, "sweep %s --out %s --shard 0/2", s, a);
	free(run_ok(cmd));
	snprintf(cmd, sizeof cmd, "sweep %s --out %s --shard 1/2", s, b);
	free(run_ok(cmd));
	snprintf(cmd, sizeof cmd, "sweep --merge %s %s %s", m, b, a);
	free(run_ok(cmd));
	char *merged = slurp(m);
	cr_assert_str_eq(merged, one);
	free(merged);

	/* a run killed in the middle of a line: the rerun finishes the table */
	const char *r = scratch("r.csv");
	size_t cut = (size_t)(strstr(strstr(one, "\n10,"), ",") - one) + 5;
	FILE *f = fopen(r, "w");
	fwrite(one, 1, cut, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "sweep %s --out %s --jobs 2", s, r);
	free(run_ok(cmd));
	char *resumed = slurp(r);
	cr_assert_str_eq(resumed, one);
	free(resumed);
	free(one), free(three);
}

/* Each row is what the command prints for that point alone. */
Test(sweep, a_row_is_the_command_alone)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "sweep %s --jobs 2", study());
	char *table = run_ok(cmd);
	char *alone = run_ok("allreduce --topo torus:4x4 --size 1M --algo ring --model closed --format csv");
	/* the row: ...,ring,TIME, (error empty); its time is in the command's own output */
	char *row = strstr(table, "topo=torus:4x4;size=1M;algo=ring,");
	cr_assert(row, "%s", table);
	char line[512];
	snprintf(line, sizeof line, "%.*s", (int)(strchr(row, '\n') - row), row);
	cr_assert(line[strlen(line) - 1] == ',', "no error on this row: %s", line);
	line[strlen(line) - 1] = '\0';
	const char *t = strrchr(line, ',') + 1;
	char want[64];
	snprintf(want, sizeof want, ",%s,", t);
	cr_assert(strstr(alone, want), "sweep time %s not in the command's own output:\n%s", t, alone);
	/* the refused point is a row with the command's reason */
	row = strstr(table, "topo=ring:6;size=1K;algo=2d-ring,");
	cr_assert(row, "%s", table);
	snprintf(line, sizeof line, "%.*s", (int)(strchr(row, '\n') - row), row);
	cr_assert(strstr(line, "2-D torus"), "%s", line);
	free(table), free(alone);
}

Test(sweep, summaries_and_json)
{
	char cmd[512];
	const char *out = scratch("o.csv"), *sum = scratch("sum.csv");
	remove(out);
	snprintf(cmd, sizeof cmd, "sweep %s --out %s --summary %s", study(), out, sum);
	free(run_ok(cmd));
	char *s = slurp(sum);
	/* 12 groups of (topo, size): the fastest of ring and 2d-ring each */
	int best = 0;
	for (char *c = s; (c = strstr(c, "\nbest,")); c++)
		best++;
	cr_assert_eq(best, 12, "%s", s);
	free(s);
	snprintf(cmd, sizeof cmd, "sweep %s --format json", study());
	char *j = run_ok(cmd);
	cr_assert(j[0] == '[' || j[0] == '{', "%s", j);
	cr_assert(strstr(j, "\"time_us\""), "%s", j);
	free(j);
}

/* Refused before any work, naming the key and its line. */
Test(sweep, bad_studies_exit_2)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{"command: allreduce\naxes:\n  topo: [ring:4]\n  bogus: [1]\n", "line 4: 'bogus' is not an option"},
		{"command: allreduce\naxes:\n  topo: [ring:4, torus:0x3]\n  size: [1M]\n", "line 3: axis topo, value 'torus:0x3'"},
		{"command: allreduce\naxes:\n  topo: [ring:4]\n  size: [1M, -3]\n", "value '-3'"},
		{"command: allreduce\naxes:\n  topo: []\n", "line 3: 'topo' is an empty list"},
		{"command: allreduce\naxes: {}\n", "no 'axes'"},
		{"axes:\n  topo: [ring:4]\n", "no 'command'"},
		{"command: list\naxes:\n  topo: [ring:4]\n", "cannot be swept"},
		{"command: allreduce\naxes:\n  topo: [ring:4]\ncolour: blue\n", "line 4: unknown key"},
		{"command: allreduce\naxes:\n  topo: [ring:4\n", "expected YAML"},
		{"command: plan\naxes:\n  model: [llama3-70b, llama99]\n", "llama99"},
		{"command: allreduce\nfixed:\n  plot: x.svg\naxes:\n  topo: [ring:4]\n", "fixed option 'plot'"},
		{"command: allreduce\naxes:\n  topo: [ring:4]\ncommand: plan\n", "line 4: a key given twice"},
		{"command: allreduce\naxes:\n  topo: [ring:4]\n  size: [1M]\noutputs: [colour]\n", "output 'colour' is not a column of allreduce (expected one of size_B"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *p = scratch("bad.yml");
		char cmd[600];
		write_text(p, bad[i].text);
		snprintf(cmd, sizeof cmd, "sweep %s", p);
		struct run r = run_perfmodel(cmd);
		cr_assert_eq(r.status, 2, "%s: status %d (%s)", bad[i].text, r.status, r.err);
		cr_assert(strstr(r.err, bad[i].says), "%s: %s", bad[i].text, r.err);
		cr_assert_eq(r.out[0], '\0', "no table for a refused study: %s", r.out);
		run_free(&r);
	}
	/* a grid past the limit: 16 axes of 4 values (4^16 > 1e7) */
	const char *p = scratch("big.yml");
	FILE *f = fopen(p, "w");
	fprintf(f, "command: allreduce\naxes:\n");
	const char *opts[] = {"topo", "size", "algo", "model", "alpha", "gamma", "link-bw", "link-lat",
			      "inj-bw", "flow", "dim-bw", "dim-lat", "pipeline", "endpoint", "mem-bw", "sms"};
	for (int k = 0; k < 16; k++)
		fprintf(f, "  %s: [a, b, c, d]\n", opts[k]);
	fclose(f);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "sweep %s", p);
	struct run r = run_perfmodel(cmd);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "4294967296 points"), "%s", r.err);
	run_free(&r);
}

/* Where nothing is filtered a row is the command's line as printed; with
 * outputs: naming every column in order the rows are parsed and written
 * again: the two must be the same bytes. */
Test(sweep, printed_lines_and_parsed_cells_agree)
{
	const char *axes = "axes:\n  topo: [ring:8, torus:4x4, \"fattree:4,2\"]\n  size: [1K, 1M, 1G]\n"
			   "  algo: [ring, 2d-ring, dbtree]\n";
	char a[512], b[512], text[2048], cmd[600];
	snprintf(a, sizeof a, "%s", scratch("fast.yml"));
	snprintf(b, sizeof b, "%s", scratch("slow.yml"));
	snprintf(text, sizeof text, "command: allreduce\nfixed:\n  model: closed\n%s", axes);
	write_text(a, text);
	snprintf(text, sizeof text,
		 "command: allreduce\nfixed:\n  model: closed\n%soutputs: [size_B, algo, model, time_us, algbw_GBps, "
		 "busbw_GBps, steps, sent_per_node_B, max_link_B, links_used_pct, util_avg_pct, alpha_us, latency_us, "
		 "bandwidth_us, reduction_us, bound_us, note]\n",
		 axes);
	write_text(b, text);
	snprintf(cmd, sizeof cmd, "sweep %s --jobs 2", a);
	char *fast = run_ok(cmd);
	snprintf(cmd, sizeof cmd, "sweep %s --jobs 2", b);
	char *slow = run_ok(cmd);
	cr_assert_str_eq(fast, slow);
	free(fast), free(slow);
}

/* --plot draws a column against an axis, a curve per value of another:
 * the SVG names each curve; a wrong axis is refused. */
Test(sweep, plot_two_axes)
{
	char cmd[700], s[512];
	const char *svg = scratch("p.svg");
	snprintf(s, sizeof s, "%s", study());
	remove(svg);
	snprintf(cmd, sizeof cmd, "sweep %s --plot %s --plot-x size --plot-y time_us --plot-series topo", s, svg);
	char *out = run_ok(cmd);
	free(out);
	char *text = svg_text(svg);
	cr_assert(strstr(text, "<svg") && strstr(text, "torus:4x4") && strstr(text, "ring:6"), "%.300s", text);
	free(text);
	snprintf(cmd, sizeof cmd, "sweep %s --plot %s --plot-x colour --plot-y time_us", s, svg);
	struct run r = run_perfmodel(cmd);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "colour"), "%s", r.err);
	run_free(&r);
}
