/* plot.h: figures for papers, drawn with PLplot (Debian libplplot-dev;
 * SVG through PLplot's own svg driver, PNG and PDF through its cairo
 * drivers, plplot-driver-cairo).  One kind of figure: lines of y against
 * x, one line per series, each with its own colour and marker (the same
 * in the legend), labelled axes with units, the legend beside the data,
 * a reference curve (a bound, the ideal) dashed in black, and y on a
 * logarithmic axis when it spans more than two decades. */
#ifndef PM_CLI_PLOT_H
#define PM_CLI_PLOT_H

#include "model/err.h"

struct cli_plot {
	const char *path;	/* .svg, .png or .pdf */
	const char *title, *xlabel, *ylabel;
	int logx;		/* x on a log2 axis: 1 labelled as sizes (32K), 2 as counts (4096) */
	int nseries, npts;
	const char *const *names;	/* per series */
	const double *x;		/* npts */
	const double *y;		/* nseries x npts, row-major; NaN: no point */
	const char *ref_name;		/* the reference curve's legend, or NULL */
	const double *ref;		/* npts: the reference curve (NaN: no point) */
	const char *const *labels;	/* npts or NULL: text by series 0's points ("" none) */
};

/* PM_EINPUT when the file name's extension is not one PLplot can write
 * here or the file cannot be written. */
int cli_plot_check_path(const char *path, const char *input, struct pm_err *err);
int cli_plot_write(const struct cli_plot *pl, struct pm_err *err);

#endif
