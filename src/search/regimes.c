/* regimes.c: a measured curve as up to three straight lines (fit.h).
 *
 * NCCL and MPI switch protocol with the size (NCCL: LL for small
 * messages, LL128 in the middle, Simple for large ones), so one line
 * through a whole curve fits neither end.  Each regime is a contiguous run
 * of sizes fitted by weighted least squares with weights 1/t^2 (GSL
 * gsl_fit_wlinear), which minimises the relative residual: every point
 * counts alike whether it took 10 us or 10 s.  The breakpoints are
 * searched exhaustively (each of several regimes spanning a factor of 4 in
 * size at least); the number of regimes is the one with the lowest
 * Bayesian information criterion, n ln(RSS/n) + (3k - 1) ln n (two
 * parameters per line and k - 1 breakpoints), the relative RSS floored at
 * 1e-12 per point (a 1e-6 relative residual, below what a benchmark
 * prints) so that an exact line is one regime, not three.
 */
#include "search/fit.h"

#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_POINTS 3		/* per regime */
#define RSS_FLOOR 1e-12		/* relative residual squared, per point */
#define MIN_SPAN 4.0		/* a regime of several spans two doublings at least */

struct pt {
	double x, y;
};

static int by_size(const void *a, const void *b)
{
	const struct pt *p = a, *q = b;
	return (p->x > q->x) - (p->x < q->x);
}

/* Running sums of the weighted normal equations (w = 1/t^2), so that any
 * run's relative RSS costs O(1) in the breakpoint search; sizes scaled to
 * the largest to keep the sums in range. */
struct sums {
	double w, x, y, xx, xy, yy;
};

static struct sums run(const struct sums *c, int i, int j)
{
	return (struct sums){c[j].w - c[i].w, c[j].x - c[i].x, c[j].y - c[i].y,
			     c[j].xx - c[i].xx, c[j].xy - c[i].xy, c[j].yy - c[i].yy};
}

/* The relative RSS of the line through pts[i..j), or HUGE_VAL when the run
 * cannot hold one (too few points, one size) or, being one of several,
 * spans less than MIN_SPAN (a protocol holds over doublings; a cut inside
 * a doubling fits noise). */
static double rss(const struct pt *p, const struct sums *c, int i, int j, int several)
{
	if (j - i < MIN_POINTS || p[i].x == p[j - 1].x || (several && p[j - 1].x < MIN_SPAN * p[i].x))
		return HUGE_VAL;
	struct sums s = run(c, i, j);
	double d = s.w * s.xx - s.x * s.x;
	if (!(d > 0))
		return HUGE_VAL;
	double b = (s.w * s.xy - s.x * s.y) / d, a = (s.y - b * s.x) / s.w;
	return fmax(s.yy - a * s.y - b * s.xy, 0);
}

/* The reported line of a regime, by GSL from the points themselves. */
static void line(const struct pt *p, int i, int j, double scale, struct pm_fit *f)
{
	int n = j - i;
	double *x = malloc(sizeof(double) * 3 * (size_t)n), *y = x + n, *w = x + 2 * n;
	double c0, c1, c00, c01, c11, chisq;

	memset(f, 0, sizeof *f);
	if (!x)
		return;
	for (int k = 0; k < n; k++) {
		x[k] = p[i + k].x * scale;
		y[k] = p[i + k].y;
		w[k] = 1 / (y[k] * y[k]);
	}
	if (!gsl_fit_wlinear(x, 1, w, 1, y, 1, (size_t)n, &c0, &c1, &c00, &c01, &c11, &chisq)) {
		f->n = n;
		f->min_B = p[i].x;
		f->max_B = p[j - 1].x;
		f->alpha_s = c0;
		f->beta_spB = c1 * scale;
		f->se_alpha_s = sqrt(c00);
		f->se_beta_spB = sqrt(c11) * scale;
		f->rms_s = sqrt(chisq / n);	/* relative here */
		f->r2 = NAN;
	}
	free(x);
}

/* The best split of pts[0..n) into k regimes: breakpoints in cut[]. */
static double best_split(const struct pt *p, const struct sums *c, int n, int k,
			 int cut[PM_FIT_MAX_REGIMES + 1])
{
	double best = HUGE_VAL;

	cut[0] = 0, cut[k] = n;
	if (k == 1)
		return rss(p, c, 0, n, 0);
	for (int a = MIN_POINTS; a <= n - MIN_POINTS; a++) {
		if (p[a].x == p[a - 1].x)
			continue;	/* one size stays in one regime */
		double left = rss(p, c, 0, a, 1);
		int b0 = k == 3 ? a + MIN_POINTS : n, b1 = k == 3 ? n - MIN_POINTS : n;
		for (int b = b0; b <= b1; b++) {
			if (k == 3 && p[b].x == p[b - 1].x)
				continue;
			double r = left + rss(p, c, a, b, 1) + (k == 3 ? rss(p, c, b, n, 1) : 0);
			if (r < best) {
				best = r;
				cut[1] = a;
				if (k == 3)
					cut[2] = b;
			}
		}
	}
	return best;
}

int pm_fit_regimes(const struct pm_points *pts, double min_B, double max_B,
		   struct pm_regimes *out, struct pm_err *err)
{
	struct pt *p = malloc(sizeof *p * (size_t)(pts->n + 1));
	struct sums *c = calloc((size_t)pts->n + 1, sizeof *c);
	double best_bic = HUGE_VAL, scale;
	int n = 0, rc = PM_OK;

	memset(out, 0, sizeof *out);
	if (!p || !c) {
		rc = pm_fail(err, PM_EINTERNAL, "out of memory");
		goto done;
	}
	for (int i = 0; i < pts->n; i++)
		if (pts->size_B[i] >= min_B && (max_B <= 0 || pts->size_B[i] <= max_B))
			p[n++] = (struct pt){pts->size_B[i], pts->time_s[i]};
	if (n > PM_FIT_MAX_POINTS) {
		rc = pm_fail(err, PM_EINPUT, "%d points in the size range (expected at most %d: a benchmark's sizes)",
			     n, PM_FIT_MAX_POINTS);
		goto done;
	}
	qsort(p, (size_t)n, sizeof *p, by_size);
	scale = n ? 1 / p[n - 1].x : 1;
	for (int i = 0; i < n; i++) {
		double x = p[i].x * scale, w = 1 / (p[i].y * p[i].y);
		c[i + 1] = (struct sums){c[i].w + w, c[i].x + w * x, c[i].y + w * p[i].y,
					 c[i].xx + w * x * x, c[i].xy + w * x * p[i].y, c[i].yy + 1};
	}
	for (int k = 1; k <= PM_FIT_MAX_REGIMES && k * MIN_POINTS <= n; k++) {
		int cut[PM_FIT_MAX_REGIMES + 1];
		double r = best_split(p, c, n, k, cut);
		if (!isfinite(r))
			continue;
		double bic = n * log(fmax(r / n, RSS_FLOOR)) + (3 * k - 1) * log((double)n);
		if (bic >= best_bic)
			continue;
		best_bic = bic;
		out->n = k;
		for (int i = 0; i < k; i++)
			line(p, cut[i], cut[i + 1], scale, &out->r[i]);
	}
	if (out->n == 0)
		rc = pm_fail(err, PM_EINPUT,
			     "too few points to fit: %d in the size range (expected at least %d points of at least two sizes)",
			     n, MIN_POINTS);
done:
	free(p);
	free(c);
	return rc;
}

double pm_fit_slope(const double *x, const double *t, int n)
{
	double *w = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	double c0, c1 = NAN, c00, c01, c11, chisq;

	if (!w)
		return NAN;
	for (int i = 0; i < n; i++)
		w[i] = 1 / (t[i] * t[i]);
	if (n < 2 || gsl_fit_wlinear(x, 1, w, 1, t, 1, (size_t)n, &c0, &c1, &c00, &c01, &c11, &chisq))
		c1 = NAN;
	free(w);
	return c1;
}
