/* fit.h: calibration, turning measured (size, time) points into the alpha
 * and beta (time = alpha + size x beta) the models take.  Points come from
 * osu_allreduce / osu_latency output, nccl-tests (all_reduce_perf and
 * friends) output as text or as its -J JSON file, or a CSV; the fit is
 * GSL's least squares. */
#ifndef PM_FIT_H
#define PM_FIT_H

#include "model/coll.h"
#include "model/err.h"

enum pm_points_format {
	PM_POINTS_AUTO,
	PM_POINTS_OSU,
	PM_POINTS_NCCL,
	PM_POINTS_CSV,
	PM_POINTS_NCCL_JSON,	/* nccl-tests -J FILE.json */
};

struct pm_points {
	double *size_B;
	double *time_s;
	int n;
	size_t cap;
	enum pm_points_format format;	/* the one read */
	int skipped;		/* lines that were not result rows (NCCL INFO ...) */
	int ranks;		/* nccl-tests: "#  Rank N" lines in the header; 0 unknown */
	int gpus_per_proc;	/* nccl-tests: the header's "nGpus G", GPUs one process
				 * drove (-g G); 0 unknown */
	char collective[32];	/* the test the header names: nccl-tests'
				 * (all_reduce_perf; a build's suffix, as in
				 * all_reduce_perf_mpi, dropped), OSU's
				 * (osu_allreduce), or "" */
	double bus_factor;	/* nccl-tests: busbw / algbw of the first row
				 * large enough to tell; 0 unknown */
	int runs;		/* runs of the benchmark the file holds */
	char nccl_release[16];	/* nccl-tests: the NCCL release that ran ("2.24.3":
				 * the header's nccl-library=, or NCCL's own
				 * "NCCL version" line); "" unknown */
};

/* Read points from path (format AUTO guesses from the content).  A file
 * that holds several runs of the benchmark (a column header after result
 * rows) is refused naming where the second begins, unless run >= 1 picks
 * one (pm_points_read: run 0). */
int pm_points_read(const char *path, enum pm_points_format fmt,
		   struct pm_points *pts, struct pm_err *err);
int pm_points_read_run(const char *path, enum pm_points_format fmt, int run,
		       struct pm_points *pts, struct pm_err *err);
void pm_points_release(struct pm_points *pts);
int pm_points_add(struct pm_points *pts, double size_B, double time_s);

struct pm_fit {
	int n;			/* points used */
	double min_B, max_B;	/* their size range */
	double alpha_s, beta_spB;
	double se_alpha_s, se_beta_spB;	/* standard errors */
	double r2;
	double rms_s;		/* root mean square residual */
};

/* Least-squares line through the points with min_B <= size <= max_B
 * (max_B <= 0: no upper limit); at least 3 points. */
int pm_fit_line(const struct pm_points *pts, double min_B, double max_B,
		struct pm_fit *f, struct pm_err *err);

/* The curve as up to PM_FIT_MAX_REGIMES lines over contiguous size
 * ranges (a protocol each, in NCCL), fitted for the relative residual;
 * the number of lines by the Bayesian information criterion
 * (regimes.c).  Each r[i].rms_s is the relative RMS residual. */
#define PM_FIT_MAX_REGIMES 3
#define PM_FIT_MAX_POINTS 4096
struct pm_regimes {
	int n;
	struct pm_fit r[PM_FIT_MAX_REGIMES];
};
int pm_fit_regimes(const struct pm_points *pts, double min_B, double max_B,
		   struct pm_regimes *out, struct pm_err *err);
/* The slope of the line through (x, t) weighted 1/t^2, as the regimes are
 * fitted; NaN for fewer than two points or one x. */
double pm_fit_slope(const double *x, const double *t, int n);

/* A machine's NCCL rates fitted to measured times of one collective on
 * P ranks (fit_machine.c): on one node its launch latency and NVLink rate
 * (ring_busbw, or nvls_busbw where NCCL runs NVLS at the largest size),
 * across nodes its net_latency and nic_bw; the rest of base stays.  out
 * is base with the fitted rows (value and source) replaced. */
struct pm_machine;
struct pm_nccl_fit {
	int points, ranks, nodes;
	double min_B, max_B;
	const char *rate_name, *lat_name;	/* the parameters fitted */
	double rate_Bps, lat_s;			/* their fitted values */
	char rate_was[32], lat_was[32];		/* the preset's, as text */
	double error_before, error_after;	/* exp(mean |ln(model/measured)|) - 1 */
	int kept;				/* the fit priced the log worse, so the
						 * description's rate was kept (1) and its
						 * latency too (2) */
	int ll128_net_off;			/* the log is priced better with LL128 off
						 * across the nodes (ll128_net 0) */
	double error_ll128_on;			/* then the error with it on, fitted alike */
	char release[16];			/* the NCCL release whose constants priced
						 * the log: the log's own where it names
						 * one perfmodel holds, else the machine's */
};
int pm_fit_nccl(const struct pm_points *pts, double lo, double hi, enum pm_coll coll, int P,
		const struct pm_machine *base, const char *file, struct pm_machine *out,
		struct pm_nccl_fit *f, struct pm_err *err);

#endif
