/* plot.c: figures with PLplot (see plot.h). */
#include "cli/plot.h"
#include "cli/file.h"

#include "model/units.h"

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
	const char *dot = strrchr(path, '.');
	if (!dot)
		return NULL;
	if (!strcmp(dot, ".svg"))
		return "svg";
	if (!strcmp(dot, ".png"))
		return "pngcairo";
	if (!strcmp(dot, ".pdf"))
		return "pdfcairo";
	return NULL;
}

/* The directory a path is in, writable? (Nothing is created or cut: the
 * plot goes to a temporary name renamed over the path when whole.) */
static int writable_dir(const char *path)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return access(".", W_OK) == 0;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return access(dir, W_OK) == 0;
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
	if (strcmp(dev, "svg")) {	/* the cairo drivers are a separate package */
		const char *menu_a[64], *devs_a[64];
		const char **menu = menu_a, **devs = devs_a;
		int n = 64;
		plgDevs(&menu, &devs, &n);
		for (int i = 0; i < n; i++)
			if (!strcmp(devs[i], dev))
				return PM_OK;
		return pm_fail(err, PM_EINPUT, "cannot write '%s': PLplot has no %s driver here (expected .svg, or install plplot-driver-cairo)",
			       path, dev);
	}
	return PM_OK;
}

int cli_plot_write(const struct cli_plot *pl, struct pm_err *err)
{
	double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
	double xs[1024], ys[1024];
	PLINT opt[16], lcol[16], lsty[16], scol[16], snum[16];
	PLFLT lw[16], ssc[16];
	const char *text[16], *sym[16];
	int ns = pl->nseries < 16 ? pl->nseries : 16;

	if (cli_plot_check_path(pl->path, NULL, err))
		return PM_EINPUT;
	if (pl->npts < 2 || pl->npts > 1024)
		return pm_fail(err, PM_EINPUT, "a plot needs 2 to 1024 points along x (got %d: give a range such as 32K:64M:x2)", pl->npts);
	for (int i = 0; i < pl->npts; i++) {
		double x = pl->logx ? log2(pl->x[i]) : pl->x[i];
		xmin = x < xmin ? x : xmin;
		xmax = x > xmax ? x : xmax;
		for (int s = 0; s < ns; s++) {
			double y = pl->y[s * pl->npts + i];
			if (isfinite(y) && y > ymax)
				ymax = y;
		}
	}
	if (!(ymax > 0))
		ymax = 1;
	/* white paper, black ink, lines in the Okabe-Ito colours (readable by
	 * the colour-blind and in greyscale print) */
	static const int pal[9][3] = {{0, 0, 0}, {230, 159, 0}, {86, 180, 233}, {0, 158, 115},
				      {240, 228, 66}, {0, 114, 178}, {213, 94, 0}, {204, 121, 167}, {0, 0, 0}};
	/* drawn under a temporary name with the same extension, renamed when
	 * whole; a device or pipe (not a regular file) is written as it is */
	char tmp[4200];
	struct stat st;
	int direct = stat(pl->path, &st) == 0 && !S_ISREG(st.st_mode);
	snprintf(tmp, sizeof tmp, "%s.tmp-%ld%s", pl->path, (long)getpid(), strrchr(pl->path, '.'));
	plsdev(device_for(pl->path));
	plsfnam(direct ? pl->path : tmp);
	plscolbg(255, 255, 255);
	for (int k = 1; k < 9; k++)
		plscol0(k, pal[k][0], pal[k][1], pal[k][2]);
	plscol0(15, 0, 0, 0);
	plinit();
	plcol0(15);
	pladv(0);
	plvsta();
	plwind(xmin, xmax, 0, ymax * 1.05);
	if (pl->logx) {	/* ticks at powers of two, labelled as sizes */
		double step = ceil((xmax - xmin) / 10);
		plslabelfunc(size_label, (PLPointer)&pl->logx);
		plbox("bcnost", step > 1 ? step : 1, 0, "bcnstv", 0, 0);
	} else {
		plbox("bcnst", 0, 0, "bcnstv", 0, 0);
	}
	pllab(pl->xlabel, pl->ylabel, pl->title);
	for (int s = 0; s < ns; s++) {
		int n = 0;
		for (int i = 0; i < pl->npts; i++) {
			double y = pl->y[s * pl->npts + i];
			if (!isfinite(y))
				continue;
			xs[n] = pl->logx ? log2(pl->x[i]) : pl->x[i];
			ys[n++] = y;
		}
		plcol0(1 + s % 8);
		pllsty(1 + (s / 8) % 8);
		plwidth(2);
		if (n > 0) {
			plline(n, xs, ys);
			plpoin(n, xs, ys, 17);
		}
		opt[s] = PL_LEGEND_LINE | PL_LEGEND_SYMBOL;
		lcol[s] = scol[s] = 1 + s % 8;
		lsty[s] = 1 + (s / 8) % 8;	/* dashes once the colours repeat */
		lw[s] = 2;
		ssc[s] = 1;
		snum[s] = 1;
		text[s] = pl->names[s];
		sym[s] = "#(728)";
	}
	PLFLT w, h;
	plcol0(15);
	pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX, PL_POSITION_LEFT | PL_POSITION_TOP | PL_POSITION_INSIDE,
		 0.02, 0.02, 0.1, 0, 15, 1, 0, 0, ns, opt, 1.0, 0.8, 2.0, 0.0, lcol, text,
		 NULL, NULL, NULL, NULL, lcol, lsty, lw, scol, ssc, snum, sym);
	plend();
	if (direct)
		return PM_OK;
	FILE *f = fopen(tmp, "r");
	int ok = f && fgetc(f) != EOF;
	if (f)
		fclose(f);
	if (ok && rename(tmp, pl->path) == 0)
		return PM_OK;
	remove(tmp);
	return pm_fail(err, PM_EINPUT, "could not write plot file '%s' (PLplot wrote nothing, or the disk is full)", pl->path);
}
