/* plot.c: figures with PLplot (see plot.h). */
#include "cli/plot.h"
#include "cli/file.h"

#include "model/units.h"

#include <libgen.h>
#include <math.h>
#include <plplot.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tick labels of a log2 x axis: the size 2^v (32K, 1M, ...). */
static void size_label(PLINT axis, PLFLT v, char *label, PLINT len, PLPointer data)
{
	(void)axis;
	if (*(const int *)data == 1)
		pm_fmt_size(pow(2, v), label, (size_t)len);
	else
		snprintf(label, (size_t)len, "%.0f", pow(2, v));
}

/* The PLplot device for a file name, or NULL. */
static const char *device_for(const char *path)
{
	static const char *const devices[][2] = {{".svg", "svg"}, {".png", "pngcairo"}, {".pdf", "pdfcairo"}};
	const char *dot = strrchr(path, '.');

	for (size_t i = 0; dot && i < sizeof devices / sizeof devices[0]; i++)
		if (!strcmp(dot, devices[i][0]))
			return devices[i][1];
	return NULL;
}

/* The directory a path is in, writable? (Nothing is created or cut: the
 * plot goes to a temporary name renamed over the path when whole.) */
static int writable_dir(const char *path)
{
	char dir[4096];

	snprintf(dir, sizeof dir, "%s", path);
	return access(dirname(dir), W_OK) == 0;
}

/* Does PLplot have the driver dev here? */
static int has_driver(const char *dev)
{
	const char *menu_a[64], *devs_a[64];
	const char **menu = menu_a, **devs = devs_a;
	int n = 64;

	plgDevs(&menu, &devs, &n);
	for (int i = 0; i < n; i++)
		if (!strcmp(devs[i], dev))
			return 1;
	return 0;
}

int cli_plot_check_path(const char *path, const char *input, struct pm_err *err)
{
	const char *dev = device_for(path);
	if (!dev)
		return pm_fail(err, PM_EINPUT, "invalid plot file '%s' (expected a name ending in .svg, .png or .pdf)", path);
	if (input && cli_same_file(path, input))
		return pm_fail(err, PM_EINPUT, "plot file '%s' is the input file '%s' (expected another path: it would be overwritten)",
			       path, input);
	if (!writable_dir(path) || strlen(path) > 4000)
		return pm_fail(err, PM_EINPUT, "cannot write plot file '%s' (expected a path in a writable directory)", path);
	if (strcmp(dev, "svg") && !has_driver(dev))	/* the cairo drivers are a separate package */
		return pm_fail(err, PM_EINPUT, "cannot write '%s': PLplot has no %s driver here (expected .svg, or install plplot-driver-cairo)",
			       path, dev);
	return PM_OK;
}

/* Series styles: colour (Okabe-Ito, readable by the colour-blind; the
 * yellow left out, unreadable on white) and Hershey marker, the same
 * glyph drawn on the curve and in the legend. */
static const int pal[8][3] = {{255, 255, 255}, {0, 0, 0}, {230, 159, 0}, {86, 180, 233},
			      {0, 158, 115}, {0, 114, 178}, {213, 94, 0}, {204, 121, 167}};
#define NCOLOURS 7	/* colour map 1..7 */
static const char *const markers[] = {"#(840)", "#(851)", "#(842)", "#(854)", "#(841)", "#(852)",
				      "#(843)", "#(846)", "#(855)", "#(845)", "#(853)", "#(847)"};
#define NMARKERS 12
#define MAX_SERIES 24

/* Log y when the positive values span more than two decades. */
static void y_range(const struct cli_plot *pl, int ns, double *lo, double *hi, int *logy)
{
	*lo = INFINITY, *hi = 0;
	for (int s = -1; s < ns; s++)
		for (int i = 0; i < pl->npts; i++) {
			double y = s < 0 ? (pl->ref ? pl->ref[i] : NAN) : pl->y[s * pl->npts + i];
			if (isfinite(y) && y > 0)
				*lo = fmin(*lo, y), *hi = fmax(*hi, y);
		}
	if (!(*hi > 0))
		*lo = 0.1, *hi = 1;
	*logy = *hi / *lo > 100;
	if (*logy)
		*lo = floor(log10(*lo)), *hi = ceil(log10(*hi));
	else
		*lo = 0, *hi *= 1.05;
}

/* One curve: its points where y is a positive number. */
static int points(const struct cli_plot *pl, const double *y, int logy, double *xs, double *ys)
{
	int n = 0;
	for (int i = 0; i < pl->npts; i++) {
		if (!isfinite(y[i]) || (logy && y[i] <= 0))
			continue;
		xs[n] = pl->logx ? log2(pl->x[i]) : pl->x[i];
		ys[n++] = logy ? log10(y[i]) : y[i];
	}
	return n;
}

static void axes(const struct cli_plot *pl, double xmin, double xmax, double ylo, double yhi, int logy)
{
	plcol0(1);
	plschr(0, 0.8);
	plwind(xmin, xmax, ylo, yhi);
	if (pl->logx) {	/* ticks at powers of two, labelled as sizes */
		double step = ceil((xmax - xmin) / 8);
		plslabelfunc(size_label, (PLPointer)&pl->logx);
		plbox("bcnost", step > 1 ? step : 1, 0, logy ? "bcnstvl" : "bcnstv", 0, 0);
	} else {
		plbox("bcnst", 0, 0, logy ? "bcnstvl" : "bcnstv", 0, 0);
	}
	plslabelfunc(NULL, NULL);
	pllab(pl->xlabel, pl->ylabel, "");
	plmtex("t", 1.5, 0.5, 0.5, pl->title);
}

/* The legend right of the data, black text, each entry as drawn. */
static void legend(const struct cli_plot *pl, int ns)
{
	PLINT opt[MAX_SERIES + 1], lcol[MAX_SERIES + 1], lsty[MAX_SERIES + 1], tcol[MAX_SERIES + 1];
	PLINT snum[MAX_SERIES + 1];
	PLFLT lw[MAX_SERIES + 1], ssc[MAX_SERIES + 1], w, h;
	const char *text[MAX_SERIES + 1], *sym[MAX_SERIES + 1];
	int n = 0;

	for (int s = 0; s < ns; s++, n++) {
		opt[n] = PL_LEGEND_LINE | PL_LEGEND_SYMBOL;
		lcol[n] = 1 + s % NCOLOURS;
		lsty[n] = 1 + (s / NCOLOURS) % 4;
		lw[n] = 1.5;
		ssc[n] = 0.9;
		snum[n] = 1;
		tcol[n] = 1;
		text[n] = pl->names[s];
		sym[n] = markers[s % NMARKERS];
	}
	if (pl->ref) {
		opt[n] = PL_LEGEND_LINE;
		lcol[n] = 1, lsty[n] = 2, lw[n] = 1, ssc[n] = 0, snum[n] = 0, tcol[n] = 1;
		text[n] = pl->ref_name;
		sym[n++] = "";
	}
	plschr(0, 1.0);
	pllegend(&w, &h, PL_LEGEND_BOUNDING_BOX, PL_POSITION_RIGHT | PL_POSITION_OUTSIDE,
		 0.02, 0.0, 0.06, 0, 1, 1, 0, 0, n, opt, 0.6, 0.65, 1.6, 0.0, tcol, text,
		 NULL, NULL, NULL, NULL, lcol, lsty, lw, lcol, ssc, snum, sym);
}

/* Series s's n points: its line, in its colour and dashes, and its
 * markers. */
static void draw_one(int s, int n, const double *xs, const double *ys)
{
	plcol0(1 + s % NCOLOURS);
	pllsty(1 + (s / NCOLOURS) % 4);
	plwidth(1.5);
	if (n > 1)
		plline(n, xs, ys);
	plschr(0, 0.9);
	if (n > 0)
		plstring(n, xs, ys, markers[s % NMARKERS]);
}

/* Each series' line and markers, then the reference line on top. */
static void draw_series(const struct cli_plot *pl, int ns, int logy)
{
	double xs[1024], ys[1024];

	for (int s = 0; s < ns; s++)
		draw_one(s, points(pl, pl->y + (size_t)s * pl->npts, logy, xs, ys), xs, ys);
	if (pl->ref && points(pl, pl->ref, logy, xs, ys) > 1) {	/* on top, thin */
		plcol0(1);
		pllsty(2);
		plwidth(1);
		plline(points(pl, pl->ref, logy, xs, ys), xs, ys);
	}
}

/* The first series' point labels (where the winner changes), inside the
 * frame: left-aligned at the left edge, right-aligned at the right,
 * below the point near the top. */
static void draw_labels(const struct cli_plot *pl, int ns, int logy, double xmin, double xmax, double ylo,
			double yhi)
{
	pllsty(1);
	plcol0(1);
	plschr(0, 0.65);
	for (int i = 0; pl->labels && ns > 0 && i < pl->npts; i++) {
		double y = pl->y[i];
		if (!pl->labels[i] || !pl->labels[i][0] || !isfinite(y) || (logy && y <= 0))
			continue;
		double x = pl->logx ? log2(pl->x[i]) : pl->x[i], yy = logy ? log10(y) : y;
		double f = xmax > xmin ? (x - xmin) / (xmax - xmin) : 0.5, dy = (yhi - ylo) * 0.035;
		plptex(x, yy + dy > yhi - dy ? yy - 1.6 * dy : yy + dy, 1, 0, f < 0.15 ? 0 : f > 0.85 ? 1 : 0.5,
		       pl->labels[i]);
	}
}

/* The drawing under tmp made whole: renamed to the path, or removed. */
static int finish_file(const char *tmp, const char *path, struct pm_err *err)
{
	FILE *f = fopen(tmp, "r");
	int ok = f && fgetc(f) != EOF;

	if (f)
		fclose(f);
	if (ok && rename(tmp, path) == 0)
		return PM_OK;
	remove(tmp);
	return pm_fail(err, PM_EINPUT, "could not write plot file '%s' (PLplot wrote nothing, or the disk is full)", path);
}

/* A 900 x 540 page with the palette, drawn to fname by the path's
 * device; the plot's viewport leaves room on the right for the legend. */
static void start_page(const char *path, const char *fname)
{
	plsdev(device_for(path));
	plsfnam(fname);
	plspage(0, 0, 900, 540, 0, 0);
	plscolbg(255, 255, 255);
	for (int k = 1; k < 8; k++)
		plscol0(k, pal[k][0], pal[k][1], pal[k][2]);
	plinit();
	pladv(0);
	plvpor(0.08, 0.62, 0.12, 0.90);
}

int cli_plot_write(const struct cli_plot *pl, struct pm_err *err)
{
	double xmin = INFINITY, xmax = -INFINITY, ylo, yhi;
	int ns = pl->nseries < MAX_SERIES ? pl->nseries : MAX_SERIES, logy;

	if (cli_plot_check_path(pl->path, NULL, err))
		return PM_EINPUT;
	if (pl->npts < 2 || pl->npts > 1024)
		return pm_fail(err, PM_EINPUT, "a plot needs 2 to 1024 points along x (got %d: give a range such as 32K:64M:x2)", pl->npts);
	for (int i = 0; i < pl->npts; i++) {
		double x = pl->logx ? log2(pl->x[i]) : pl->x[i];
		xmin = fmin(xmin, x), xmax = fmax(xmax, x);
	}
	y_range(pl, ns, &ylo, &yhi, &logy);
	/* drawn under a temporary name with the same extension, renamed when
	 * whole; a device or pipe (not a regular file) is written as it is */
	char tmp[4200];
	struct stat st;
	int direct = stat(pl->path, &st) == 0 && !S_ISREG(st.st_mode);
	snprintf(tmp, sizeof tmp, "%s.tmp-%ld%s", pl->path, (long)getpid(), strrchr(pl->path, '.'));
	start_page(pl->path, direct ? pl->path : tmp);
	axes(pl, xmin, xmax, ylo, yhi, logy);
	draw_series(pl, ns, logy);
	draw_labels(pl, ns, logy, xmin, xmax, ylo, yhi);
	legend(pl, ns);
	plend();
	return direct ? PM_OK : finish_file(tmp, pl->path, err);
}
