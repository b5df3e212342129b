/* cmd_fit.c: perfmodel fit, alpha and beta from measured (size, time)
 * points: osu_allreduce/osu_latency output, nccl-tests output or a CSV. */
#include "cli/cli.h"
#include "cli/common.h"
#include "search/fit.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *format_name(enum pm_points_format f)
{
	static const char *const names[] = {"auto", "osu", "nccl-tests", "csv"};
	return names[f];
}

int cmd_fit(int argc, char **argv, struct pm_err *err)
{
	const char *format = "auto", *range = NULL, *output = "table", *pos[2];
	int help = 0, npos, n = 0, rc;
	struct cli_opt opts[8];
	enum pm_points_format pf;
	enum cli_format fmt;
	struct pm_points pts;
	struct pm_fit f;
	double lo = 0, hi = 0;

	opts[n++] = (struct cli_opt){"format", "F", "input: auto (default), osu, nccl-tests or csv", &format, NULL};
	opts[n++] = (struct cli_opt){"range", "MIN:MAX", "fit only sizes in [MIN, MAX], e.g. 64K:1M", &range, NULL};
	opts[n++] = (struct cli_opt){"output", "F", "table, csv or json (default table)", &output, NULL};
	opts[n++] = (struct cli_opt){"help", NULL, "show this help", NULL, &help};
	if (cli_parse("fit", argc, argv, opts, n, pos, &npos, 1, err))
		return PM_EINPUT;
	if (help) {
		printf("usage: perfmodel fit FILE [--format F] [--range MIN:MAX] [--output F]\n\n"
		       "Fits time = alpha + size x beta by least squares (GSL) to measured points and\n"
		       "prints alpha and beta with standard errors, R^2, the size range used, and\n"
		       "the values as options of the other commands (--alpha, --link-bw).\n"
		       "Inputs: osu_allreduce or osu_latency output (SIZE LATENCY_US; a 'P,' prefix\n"
		       "on the size is ignored), nccl-tests output (the out-of-place time), or a CSV\n"
		       "with a header naming size (or size_B) and time_us, time_s or time (with units).\n"
		       "A single line rarely fits a whole OSU curve: small messages follow another\n"
		       "protocol than large ones, so fit the range you will model (--range).\n\n"
		       "Examples:\n"
		       "  perfmodel fit osu_allreduce.log\n"
		       "  perfmodel fit all_reduce_perf.txt --format nccl-tests --range 1M:1G\n\n"
		       "Options:\n");
		cli_print_opts(stdout, opts, n);
		return 0;
	}
	if (npos < 1)
		return pm_fail(err, PM_EINPUT, "missing measurement file (expected perfmodel fit FILE, see perfmodel fit --help)");
	if (strcmp(format, "auto") == 0)
		pf = PM_POINTS_AUTO;
	else if (strcmp(format, "osu") == 0)
		pf = PM_POINTS_OSU;
	else if (strcmp(format, "nccl-tests") == 0)
		pf = PM_POINTS_NCCL;
	else if (strcmp(format, "csv") == 0)
		pf = PM_POINTS_CSV;
	else
		return pm_fail(err, PM_EINPUT, "invalid input format '%s' (expected auto, osu, nccl-tests or csv)", format);
	if (cli_parse_format(output, &fmt, err))
		return PM_EINPUT;
	if (range) {
		char a[64], *colon = strchr(range, ':');
		if (!colon || (size_t)(colon - range) >= sizeof a)
			return pm_fail(err, PM_EINPUT, "invalid range '%s' (expected MIN:MAX such as 64K:1M)", range);
		memcpy(a, range, (size_t)(colon - range));
		a[colon - range] = '\0';
		if (pm_parse_size(a, &lo, err) || pm_parse_size(colon + 1, &hi, err))
			return PM_EINPUT;
		if (hi < lo)
			return pm_fail(err, PM_EINPUT, "invalid range '%s' (expected MIN <= MAX)", range);
	}
	if ((rc = pm_points_read(pos[0], pf, &pts, err)))
		return rc;
	rc = pm_fit_line(&pts, lo, hi, &f, err);
	if (rc) {
		pm_points_release(&pts);
		return rc;
	}
	static const char *const cols[] = {"property", "value"};
	static const unsigned flags[] = {0, 0};
	struct cli_table t;
	char a[32], b[32], bw[32];
	cli_table_init(&t, 2, cols, flags);
	cli_table_meta(&t, "perfmodel fit: time = alpha + size x beta, ordinary least squares (GSL gsl_fit_linear)");
	cli_table_kv(&t, "file", "%s", pos[0]);
	cli_table_kv(&t, "format", "%s", format_name(pts.format));
	cli_table_kv(&t, "points", "%d of %d", f.n, pts.n);
	pm_fmt_size(f.min_B, a, sizeof a);
	pm_fmt_size(f.max_B, b, sizeof b);
	cli_table_kv(&t, "size_range", "%s to %s", a, b);
	cli_table_kv(&t, "alpha_us", "%.6g", f.alpha_s * 1e6);
	cli_table_kv(&t, "alpha_stderr_us", "%.3g", f.se_alpha_s * 1e6);
	cli_table_kv(&t, "beta_ns_per_B", "%.6g", f.beta_spB * 1e9);
	cli_table_kv(&t, "beta_stderr_ns_per_B", "%.3g", f.se_beta_spB * 1e9);
	if (f.beta_spB > 0) {
		cli_table_kv(&t, "bandwidth_GBps", "%.6g", 1e-9 / f.beta_spB);
		cli_table_kv(&t, "bandwidth_MBps", "%.6g", 1e-6 / f.beta_spB);
	}
	cli_table_kv(&t, "r_squared", "%.6f", f.r2);
	cli_table_kv(&t, "rms_residual_us", "%.4g", f.rms_s * 1e6);
	if (f.beta_spB > 0 && f.alpha_s >= 0) {
		snprintf(bw, sizeof bw, "%.4gGB/s", 1e-9 / f.beta_spB);
		cli_table_kv(&t, "as_options", "--alpha %.4gus --link-bw %s", f.alpha_s * 1e6, bw);
	} else {
		cli_table_kv(&t, "as_options", "none: %s (expected a positive intercept and slope; try --range)",
			     f.beta_spB <= 0 ? "the slope is not positive" : "the intercept is negative");
	}
	rc = cli_table_write(stdout, &t, fmt, err);
	cli_table_release(&t);
	pm_points_release(&pts);
	return rc;
}
