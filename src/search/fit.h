/* fit.h: calibration, turning measured (size, time) points into the alpha
 * and beta (time = alpha + size x beta) the models take.  Points come from
 * osu_allreduce / osu_latency output, nccl-tests (all_reduce_perf and
 * friends) output, or a CSV; the fit is GSL's ordinary least squares. */
#ifndef PM_FIT_H
#define PM_FIT_H

#include "model/err.h"

enum pm_points_format {
	PM_POINTS_AUTO,
	PM_POINTS_OSU,
	PM_POINTS_NCCL,
	PM_POINTS_CSV,
};

struct pm_points {
	double *size_B;
	double *time_s;
	int n, cap;
	enum pm_points_format format;	/* the one read */
	int skipped;		/* lines that were not result rows (NCCL INFO ...) */
	int ranks;		/* nccl-tests: "#  Rank N" lines in the header; 0 unknown */
	char collective[32];	/* the test the header names: nccl-tests'
				 * (all_reduce_perf), OSU's (osu_allreduce), or "" */
};

/* Read points from path (format AUTO guesses from the content). */
int pm_points_read(const char *path, enum pm_points_format fmt,
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

#endif
