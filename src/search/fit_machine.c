/* fit_machine.c: a machine's NCCL rates fitted to nccl-tests output
 * (fit.h, pm_fit_nccl).
 *
 * NCCL's own model (model/nccl.c) prices every measured size on the base
 * description, and two of the description's parameters are moved to meet
 * the measurements:
 *   one node:   launch (the latency every size pays) and the intra-node
 *               rate of the algorithm NCCL runs at the largest size
 *               (nvls_busbw when that is NVLS or NVLSTree, else ring_busbw);
 *   more nodes: net_latency (per inter-node step) and nic_bw, or the
 *               intra-node rate where the largest size does not move
 *               with nic_bw in the preset's figures, moved the way the
 *               log asks (on two nodes NVLSTree can be bound by NVLS,
 *               not the NICs; a log slower than the preset on rings that
 *               the preset's NVLink binds asks for slower NICs).
 * Each parameter is fitted on its own regime of the curve (pm_fit_regimes):
 *   the rate so that the model's slope over the largest regime (its
 *   weighted least-squares line, the algorithm held at NCCL's choice)
 *   equals the measured slope there: the asymptotic rate, whatever
 *   fixed cost the regime's intercept carries;
 *   the latency so that the model's times over the smallest regime meet
 *   the measured ones, sum ln^2(model / measured) least.
 * The middle, where NCCL's protocols switch and its model is least exact
 * (docs/validation.md), bends neither.  Each is a scan of 41 values (the
 * rate on its logarithm, 1/20 to 20 times the preset's; the latency from
 * 0 to the smallest measured time) refined by golden-section search around
 * the best, the two in turn for a few rounds (they barely interact).
 * Protocols, channel counts and choices stay NCCL's: only a rate and a
 * latency are fitted, so the file prices sizes and node counts the log did
 * not measure by the same model.
 */
#include "search/fit.h"
#include "model/machine.h"
#include "model/nccl.h"
#include "model/text.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 4
#define SCAN 41
#define GOLDEN_STEPS 50

struct job {
	const struct pm_points *pts;
	enum pm_coll coll;
	int P;
	const struct pm_machine *base;	/* the description before the fit */
	struct pm_machine m;	/* being fitted */
	double lo, hi;		/* the sizes the cost looks at */
	unsigned mask;		/* algorithms NCCL may choose there */
	double slope;		/* measured slope to meet; 0: meet the times */
	double *x, *t, *y;	/* scratch: sizes, measured, model */
};

/* The model's times at the measured sizes in [lo, hi] into y; the count,
 * or -1 when it prices one of them not. */
static int model_times(struct job *j, unsigned mask)
{
	struct pm_nccl_sys s;
	struct pm_nccl_cost c;
	struct pm_err e;
	int n = 0;

	if (pm_nccl_sys_of(&j->m, j->P, &s, &e))
		return -1;
	s.host_gpus = j->pts->gpus_per_proc > 1 ? j->pts->gpus_per_proc : 1;	/* the log's -g */
	for (int i = 0; i < j->pts->n; i++) {
		double x = j->pts->size_B[i];
		if (x < j->lo || (j->hi > 0 && x > j->hi))
			continue;
		if (pm_nccl_select(&s, j->coll, mask, ~0u, x, &c, &e))
			return -1;
		j->x[n] = x;
		j->t[n] = j->pts->time_s[i];
		j->y[n++] = c.time_s;
	}
	return n;
}

/* What the search lowers: the squared log error of the slope, or of the
 * times. */
static double cost(struct job *j)
{
	int n = model_times(j, j->mask);
	double sq = 0;

	if (n < 1)
		return HUGE_VAL;
	if (j->slope > 0) {
		double l = log(pm_fit_slope(j->x, j->y, n) / j->slope);
		return isfinite(l) ? l * l : HUGE_VAL;
	}
	for (int i = 0; i < n; i++)
		sq += log(j->y[i] / j->t[i]) * log(j->y[i] / j->t[i]);
	return sq;
}

static double cost_at(struct job *j, double *param, double v, int logscale)
{
	*param = logscale ? exp(v) : v;
	return cost(j);
}

/* *param over [a, b] (its logarithm when logscale): the best of a scan,
 * refined by golden-section search between the scan's neighbours. */
static void search(struct job *j, double *param, double a, double b, int logscale)
{
	const double g = (sqrt(5.0) - 1) / 2, h = (b - a) / (SCAN - 1);
	double best = HUGE_VAL, at = a;

	for (int k = 0; k < SCAN; k++) {
		double f = cost_at(j, param, a + k * h, logscale);
		if (f < best)
			best = f, at = a + k * h;
	}
	a = fmax(a, at - h), b = fmin(b, at + h);
	double c = b - g * (b - a), d = a + g * (b - a);
	double fc = cost_at(j, param, c, logscale), fd = cost_at(j, param, d, logscale);
	for (int k = 0; k < GOLDEN_STEPS; k++) {
		if (fc <= fd) {
			b = d, d = c, fd = fc;
			c = b - g * (b - a);
			fc = cost_at(j, param, c, logscale);
		} else {
			a = c, c = d, fc = fd;
			d = a + g * (b - a);
			fd = cost_at(j, param, d, logscale);
		}
	}
	double v = fc <= fd ? c : d;
	cost_at(j, param, fmin(fc, fd) <= best ? v : at, logscale);
}

/* exp(mean |ln(model / measured)|) - 1 over [lo, hi]. */
static double error(struct job *j, double lo, double hi)
{
	double sum = 0;
	int n;

	j->lo = lo, j->hi = hi;
	n = model_times(j, ~0u);
	for (int i = 0; i < n; i++)
		sum += fabs(log(j->y[i] / j->t[i]));
	return n > 0 ? exp(sum / n) - 1 : HUGE_VAL;
}

/* Record a fitted value in the description's parameter rows. */
static void set_row(struct pm_machine *m, const char *name, const char *value, const char *source)
{
	struct pm_machine_nccl *nc = &m->nccl;
	int i = 0;

	while (i < nc->nsrc && strcmp(nc->src[i][0], name))
		i++;
	if (i == nc->nsrc) {
		if (nc->nsrc == PM_MACHINE_NCCL_PARAMS)
			return;
		nc->nsrc++;
	}
	pm_strlcpy(nc->src[i][0], name, sizeof nc->src[i][0]);
	pm_strlcpy(nc->src[i][1], value, sizeof nc->src[i][1]);
	pm_strlcpy(nc->src[i][2], source, sizeof nc->src[i][2]);
}

static void record(const struct pm_nccl_fit *f, struct pm_machine *m, const char *file)
{
	char v[2][48], a[32], b[32], src[320], d[sizeof m->description];
	size_t len;

	snprintf(v[0], sizeof v[0], "%.4gGB/s", f->rate_Bps / 1e9);
	snprintf(v[1], sizeof v[1], "%.4gus", f->lat_s * 1e6);
	pm_fmt_size(f->min_B, a, sizeof a);
	pm_fmt_size(f->max_B, b, sizeof b);
	for (int k = f->kept; k < 2; k++) {	/* a kept value keeps its row */
		snprintf(src, sizeof src,
			 "fitted by perfmodel fit to %s (%d sizes, %s to %s, %d ranks): NCCL's model then misses by %.1f%% (%.1f%% with the preset's %s)",
			 file, f->points, a, b, f->ranks, f->error_after * 100, f->error_before * 100,
			 k ? f->lat_was : f->rate_was);
		set_row(m, k ? f->lat_name : f->rate_name, v[k], src);
	}
	if (f->ll128_net_off) {
		snprintf(src, sizeof src,
			 "fitted by perfmodel fit to %s: NCCL's model misses it by %.1f%% with LL128 off across the nodes, %.1f%% with it on (NCCL runs LL128 across nodes only where the GPUs reach their NICs through PCIe switches, or another GPU on Hopper: tuning.cc)",
			 file, f->error_after * 100, f->error_ll128_on * 100);
		set_row(m, "ll128_net", "0", src);
	}
	snprintf(d, sizeof d, "NCCL %s%s%s%s fitted to %s; ", f->kept < 1 ? f->rate_name : "",
		 f->kept < 1 ? " and " : "", f->kept < 2 ? f->lat_name : "",
		 f->ll128_net_off ? (f->kept < 2 ? ", LL128 across nodes" : "LL128 across nodes") : "", file);
	len = strlen(d);
	pm_strlcpy(d + len, m->description, sizeof d - len);
	memcpy(m->description, d, sizeof d);
}

/* Does the time at size top move when the NICs' rate moves 10% the way
 * the log asks (down when the log is slower than the description, else
 * up), or is that size bound inside the node either way? */
static int nic_binds(const struct pm_nccl_sys *s, enum pm_coll coll, unsigned mask, double top, int slower)
{
	struct pm_nccl_sys moved = *s;
	struct pm_nccl_cost a, b;
	struct pm_err e;

	moved.net_Bps *= slower ? 0.9 : 1.1;
	return !pm_nccl_select(s, coll, mask, ~0u, top, &a, &e) &&
	       !pm_nccl_select(&moved, coll, mask, ~0u, top, &b, &e) && fabs(b.time_s - a.time_s) > a.time_s * 1e-6;
}

/* Is the log's largest regime slower than the description prices it
 * (the measured slope there steeper than the model's)? */
static int log_slower(struct job *j, const struct pm_regimes *g, double lo, double hi)
{
	const struct pm_fit *big = &g->r[g->n - 1];
	int n;

	j->lo = g->n > 1 ? big->min_B : lo, j->hi = hi;
	n = model_times(j, ~0u);
	return n >= 2 && big->beta_spB > pm_fit_slope(j->x, j->y, n);
}

/* The parameters a log of this many nodes calibrates, and the algorithm
 * NCCL runs at the largest size (held while the rate is fitted): across
 * nodes the NICs' rate, unless that size is bound inside the node in the
 * preset's figures (then the intra-node rate, as for one node). */
static void choose(struct job *j, const struct pm_nccl_sys *s, double top, int slower, struct pm_nccl_fit *f,
		   double **rate, double **lat)
{
	struct pm_nccl_cost c;
	struct pm_err e;
	int nvls = !pm_nccl_select(s, j->coll, ~0u, ~0u, top, &c, &e) &&
		   (c.algo == PM_NCCL_NVLS || c.algo == PM_NCCL_NVLS_TREE);

	j->mask = 1u << c.algo;
	f->rate_name = nvls ? "nvls_busbw" : "ring_busbw";
	*rate = nvls ? &j->m.nccl.nvls_Bps : &j->m.nccl.ring_Bps;
	if (s->nodes > 1 && nic_binds(s, j->coll, j->mask, top, slower))
		f->rate_name = "nic_bw", *rate = &j->m.nccl.nic_Bps;
	if (s->nodes > 1)
		f->lat_name = "net_latency", *lat = &j->m.nccl.net_lat_s;
	else
		f->lat_name = "launch", *lat = &j->m.nccl.launch_s;
	if (!(**rate > 0))	/* not given: start from what NCCL is fed instead */
		**rate = *rate == &j->m.nccl.nic_Bps ? s->net_Bps / (j->m.nics > 0 ? j->m.nics : s->ppn) : s->ring_Bps;
	pm_fmt_bw(**rate, f->rate_was, sizeof f->rate_was);
	pm_fmt_time(**lat, f->lat_was, sizeof f->lat_was);
}

/* The latency that meets the times of the smallest regime's sizes. */
static void fit_latency(struct job *j, const struct pm_regimes *g, double lo, double hi, double tmin,
			double *lat)
{
	j->lo = lo, j->hi = g->n > 1 ? g->r[0].max_B : hi;
	j->slope = 0, j->mask = ~0u;
	search(j, lat, 0, tmin, 0);
}

static void calibrate(struct job *j, const struct pm_regimes *g, double lo, double hi, double tmin,
		      double *rate, double *lat)
{
	const struct pm_fit *big = &g->r[g->n - 1];
	double rate0 = *rate;
	unsigned mask = j->mask;

	for (int r = 0; r < ROUNDS; r++) {
		j->lo = g->n > 1 ? big->min_B : lo, j->hi = hi;
		j->slope = big->beta_spB, j->mask = mask;
		search(j, rate, log(rate0 / 20), log(rate0 * 20), 1);
		fit_latency(j, g, lo, hi, tmin, lat);
	}
}

/* The rate and latency fitted on j->m as it stands (s its sys), with
 * f->error_before the description's error; a fit that prices the log
 * worse keeps the description's rate (kept 1) or both (kept 2). */
static void fit_rate_latency(struct job *j, const struct pm_nccl_sys *s, const struct pm_regimes *g, double lo,
			     double hi, double tmin, struct pm_nccl_fit *f)
{
	double *rate, *lat;

	choose(j, s, f->max_B, log_slower(j, g, lo, hi), f, &rate, &lat);
	double rate0 = *rate, lat0 = *lat;
	calibrate(j, g, lo, hi, tmin, rate, lat);
	f->kept = 0;
	f->error_after = error(j, lo, hi);
	/* a rate the model cannot reach in its regime (the log's slope past
	 * what the node's own links allow) can pull the search to its bound
	 * and price the log worse: then keep the given rate and fit the
	 * latency alone, and keep that too if no better */
	if (f->error_after > f->error_before) {
		*rate = rate0, *lat = lat0;
		fit_latency(j, g, lo, hi, tmin, lat);
		f->kept = 1;
		if ((f->error_after = error(j, lo, hi)) > f->error_before) {
			*lat = lat0;
			f->kept = 2;
			f->error_after = error(j, lo, hi);
		}
	}
	if (*lat < 1e-9)	/* the search's floor, 0 give or take rounding */
		*lat = 0;
	f->rate_Bps = *rate;
	f->lat_s = *lat;
}

/* Across nodes, whether LL128 runs there is the log's to say: NCCL
 * enables it across nodes only where the GPUs reach their NICs through
 * PCIe switches (or another GPU, on Hopper; tuning.cc), which a
 * description does not know.  The fit without it replaces *j and *f
 * where it prices the log better. */
static void fit_ll128_net(struct job *j, const struct pm_regimes *g, double lo, double hi, double tmin,
			  struct pm_nccl_fit *f)
{
	struct job off = *j;
	struct pm_nccl_fit h = *f;
	struct pm_nccl_sys s;
	struct pm_err e;

	off.m = *j->base;
	off.m.nccl.ll128_net = 0;
	if (pm_nccl_sys_of(&off.m, j->P, &s, &e))
		return;
	fit_rate_latency(&off, &s, g, lo, hi, tmin, &h);
	if (!(h.error_after < f->error_after))
		return;
	h.ll128_net_off = 1;
	h.error_ll128_on = f->error_after;
	*j = off;
	*f = h;
}

/* The log's NCCL release prices it where the log names one that
 * perfmodel holds constants for (and the library is NCCL's), and the
 * fitted description carries it as its nccl_version. */
static void log_release(const struct pm_points *pts, struct pm_machine *m, const char *file,
			struct pm_nccl_fit *f)
{
	int e = pts->nccl_release[0] && m->nccl.library == 0 ? pm_nccl_version_find(pts->nccl_release) : -1;
	char src[320];

	if (e < 0) {
		if (m->nccl.version)
			pm_nccl_epoch_name(m->nccl.version, f->release, sizeof f->release);
		else
			pm_strlcpy(f->release, pm_nccl_version, sizeof f->release);
		return;
	}
	m->nccl.version = e;
	pm_strlcpy(f->release, pts->nccl_release, sizeof f->release);
	snprintf(src, sizeof src, "the NCCL release %s names (its nccl-tests header), whose constants priced it for perfmodel fit",
		 file);
	set_row(m, "nccl_version", pts->nccl_release, src);
}

int pm_fit_nccl(const struct pm_points *pts, double lo, double hi, enum pm_coll coll, int P,
		const struct pm_machine *base, const char *file, struct pm_machine *out,
		struct pm_nccl_fit *f, struct pm_err *err)
{
	struct job j = {.pts = pts, .coll = coll, .P = P, .m = *base};
	struct pm_machine start;
	struct pm_nccl_sys s;
	struct pm_regimes g;
	double tmin = HUGE_VAL;
	int rc = PM_OK;

	memset(f, 0, sizeof *f);
	log_release(pts, &j.m, file, f);
	start = j.m;
	j.base = &start;
	if (pm_nccl_sys_of(&j.m, P, &s, err) || pm_fit_regimes(pts, lo, hi, &g, err))
		return PM_EINPUT;
	if (!(g.r[g.n - 1].beta_spB > 0))
		return pm_fail(err, PM_EINPUT, "the largest sizes measured do not take longer as they grow (expected a positive slope to fit a rate; try --range)");
	j.x = malloc(sizeof(double) * 3 * (size_t)pts->n);
	if (!j.x)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	j.t = j.x + pts->n, j.y = j.x + 2 * pts->n;
	for (int i = 0; i < pts->n; i++)
		if (pts->size_B[i] >= lo && (hi <= 0 || pts->size_B[i] <= hi)) {
			tmin = fmin(tmin, pts->time_s[i]);
			f->min_B = f->points ? fmin(f->min_B, pts->size_B[i]) : pts->size_B[i];
			f->max_B = fmax(f->max_B, pts->size_B[i]);
			f->points++;
		}
	f->ranks = P;
	f->nodes = s.nodes;
	f->error_before = error(&j, lo, hi);
	if (!isfinite(f->error_before)) {
		rc = pm_fail(err, PM_EINPUT, "NCCL's model does not price %s on %d ranks of '%s' (expected a collective NCCL runs there)",
			     pm_coll_info(coll)->title, P, base->name);
	} else {
		fit_rate_latency(&j, &s, &g, lo, hi, tmin, f);
		if (s.nodes > 1 && s.ll128 && !s.ll128_local)
			fit_ll128_net(&j, &g, lo, hi, tmin, f);
		*out = j.m;
		if (f->kept < 2 || f->ll128_net_off)
			record(f, out, file);
	}
	free(j.x);
	return rc;
}
