/* units.c: parsing and printing of sizes, times and bandwidths.
 * Suffixes are tables so --help, the docs and the parser say the same. */
#include "model/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct suffix {
	const char *text;
	double factor;
};

static const struct suffix size_suffixes[] = {
	{"", 1}, {"B", 1},
	{"K", 1024.0}, {"KiB", 1024.0}, {"k", 1024.0},
	{"M", 1048576.0}, {"MiB", 1048576.0},
	{"G", 1073741824.0}, {"GiB", 1073741824.0},
	{"T", 1099511627776.0}, {"TiB", 1099511627776.0},
	{"P", 1125899906842624.0}, {"PiB", 1125899906842624.0},
	{"KB", 1e3}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15},
	{NULL, 0},
};

static const struct suffix time_suffixes[] = {
	{"ns", 1e-9}, {"us", 1e-6}, {"\xc2\xb5s", 1e-6}, {"ms", 1e-3},
	{"s", 1.0}, {NULL, 0},
};

static const struct suffix bw_suffixes[] = {
	{"B/s", 1}, {"Bps", 1},
	{"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}, {"TB/s", 1e12},
	{"KBps", 1e3}, {"MBps", 1e6}, {"GBps", 1e9}, {"TBps", 1e12},
	{"KiB/s", 1024.0}, {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
	{"bps", 0.125}, {"b/s", 0.125},
	{"Kbps", 125.0}, {"Mbps", 125e3}, {"Gbps", 125e6}, {"Tbps", 125e9},
	{"Kb/s", 125.0}, {"Mb/s", 125e3}, {"Gb/s", 125e6}, {"Tb/s", 125e9},
	{NULL, 0},
};

/* Split s into a plain decimal number and a suffix looked up in table.
 * Rejects signs, hex, inf and nan, which strtod would accept. */
static int parse_quantity(const char *s, const struct suffix *table,
			  double *value)
{
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	if (memchr(s, 'x', (size_t)(end - s)) || memchr(s, 'X', (size_t)(end - s)))
		return -1;	/* strtod would read hexadecimal */
	for (const struct suffix *x = table; x->text; x++) {
		if (strcmp(end, x->text) == 0) {
			*value = v * x->factor;
			return 0;
		}
	}
	return -1;
}

/* A kind of quantity the options take: its suffixes, whether zero is a
 * value (a time) or an error (a size, a rate), its range, and the two
 * messages (the second may print the largest value accepted). */
struct quantity {
	const struct suffix *suffixes;
	int zero_ok;
	double least, most;
	const char *invalid, *out_of_range;
};

static const struct quantity sizes = {
	size_suffixes, 0, 0, PM_MAX_SIZE_B,
	"invalid size '%s' (expected a positive byte count such as 64M, 1.5GB or 4096)",
	"size '%s' is too large (expected at most 1 PiB)",
};

static const struct quantity times = {
	time_suffixes, 1, 0, PM_MAX_TIME_S,
	"invalid time '%s' (expected a non-negative duration with a unit such as 150ns, 4.8us or 2ms)",
	"time '%s' is too long (expected at most %.0f s)",
};

static const struct quantity rates = {
	bw_suffixes, 0, PM_MIN_BW_Bps, PM_MAX_BW_Bps,
	"invalid bandwidth '%s' (expected a positive rate such as 16GB/s, 16GiB/s or 100Gbps)",
	"bandwidth '%s' is out of range (expected 1 B/s to 1 PB/s)",
};

static int parse_kind(const struct quantity *q, const char *s, double *out, struct pm_err *err)
{
	double v = 0;

	if (!(q->zero_ok && s && strcmp(s, "0") == 0) &&
	    (parse_quantity(s, q->suffixes, &v) < 0 || v < 0 || (v == 0 && !q->zero_ok)))
		return pm_fail(err, PM_EINPUT, q->invalid, s ? s : "");
	if (v < q->least || v > q->most)
		return pm_fail(err, PM_EINPUT, q->out_of_range, s, q->most);
	*out = v;
	return PM_OK;
}

int pm_parse_size(const char *s, double *bytes, struct pm_err *err)
{
	return parse_kind(&sizes, s, bytes, err);
}

int pm_parse_time(const char *s, double *seconds, struct pm_err *err)
{
	return parse_kind(&times, s, seconds, err);
}

int pm_parse_bw(const char *s, double *Bps, struct pm_err *err)
{
	return parse_kind(&rates, s, Bps, err);
}

int pm_parse_per_byte(const char *s, const char *what, double *spB,
		      struct pm_err *err)
{
	double v;

	if (s && strcmp(s, "0") == 0) {
		*spB = 0;
		return PM_OK;
	}
	if (parse_quantity(s, time_suffixes, &v) == 0 && v >= 0 &&
	    v <= 1 / PM_MIN_BW_Bps) {
		*spB = v;
		return PM_OK;
	}
	if (parse_quantity(s, bw_suffixes, &v) == 0 && v >= PM_MIN_BW_Bps &&
	    v <= PM_MAX_BW_Bps) {
		*spB = 1.0 / v;
		return PM_OK;
	}
	return pm_fail(err, PM_EINPUT,
		       "invalid %s '%s' (expected seconds per byte from 0 to 1s, such as 0.05ns, or a rate from 1 B/s to 1 PB/s, such as 20GB/s)",
		       what, s ? s : "");
}

int pm_parse_int(const char *s, long lo, long hi, const char *what,
		 long *out, struct pm_err *err)
{
	char *end;
	long v;

	errno = 0;
	v = s && isdigit((unsigned char)s[0]) ? strtol(s, &end, 10) : 0;
	if (!s || !isdigit((unsigned char)s[0]) || errno || *end || v < lo ||
	    v > hi)
		return pm_fail(err, PM_EINPUT,
			       "invalid %s '%s' (expected an integer from %ld to %ld)",
			       what, s ? s : "", lo, hi);
	*out = v;
	return PM_OK;
}

static int range_error(const char *s, struct pm_err *err)
{
	return pm_fail(err, PM_EINPUT,
		       "invalid size range '%s' (expected SIZE, START:END:xFACTOR such as 32K:64M:x2, or START:END:+STEP such as 1M:8M:+1M)",
		       s);
}

/* "START:END:STEP" into its three parts (each under 64 bytes). */
static int split_range(const char *s, char a[64], char b[64], char c[64], struct pm_err *err)
{
	const char *p1 = strchr(s, ':'), *p2 = strchr(p1 + 1, ':');

	if (!p2 || strchr(p2 + 1, ':') || p1 - s >= 64 || p2 - p1 >= 64 || strlen(p2) >= 64)
		return range_error(s, err);
	memcpy(a, s, (size_t)(p1 - s));
	a[p1 - s] = '\0';
	memcpy(b, p1 + 1, (size_t)(p2 - p1 - 1));
	b[p2 - p1 - 1] = '\0';
	strcpy(c, p2 + 1);
	return PM_OK;
}

/* The step of a range ("x2": a factor, *geometric; "+1M": an
 * increment) and how many points it gives from start to end. */
static int range_step(const char *s, const char *c, double start, double end, double *step,
		      int *geometric, int *count, struct pm_err *err)
{
	double k;

	*geometric = c[0] == 'x';
	if (*geometric) {
		char *e;
		errno = 0;
		*step = strtod(c + 1, &e);
		if (errno || *e || !(*step > 1.0) || !isdigit((unsigned char)c[1]))
			return pm_fail(err, PM_EINPUT,
				       "invalid range factor '%s' (expected x followed by a number above 1, such as x2)",
				       c);
		k = floor(log(end / start) / log(*step) + 1e-9) + 1;
	} else {
		if (c[0] != '+' || pm_parse_size(c + 1, step, err))
			return range_error(s, err);
		k = floor((end - start) / *step + 1e-9) + 1;
	}
	*count = k > PM_MAX_RANGE ? PM_MAX_RANGE + 1 : (int)k;
	if (*count > PM_MAX_RANGE)
		return pm_fail(err, PM_EINPUT,
			       "size range '%s' has too many points (expected at most %d)",
			       s, PM_MAX_RANGE);
	return PM_OK;
}

int pm_parse_size_range(const char *s, double **sizes, int *n,
			struct pm_err *err)
{
	char a[64], b[64], c[64];
	double start, end, step = 1;
	int geometric = 0, count = 0;
	double *out;

	if (!strchr(s, ':')) {
		if (pm_parse_size(s, &start, err))
			return PM_EINPUT;
		if (!(*sizes = malloc(sizeof(double))))
			return pm_fail(err, PM_EINTERNAL, "out of memory");
		(*sizes)[0] = start;
		*n = 1;
		return PM_OK;
	}
	if (split_range(s, a, b, c, err))
		return PM_EINPUT;
	if (pm_parse_size(a, &start, err) || pm_parse_size(b, &end, err))
		return PM_EINPUT;
	if (end < start)
		return pm_fail(err, PM_EINPUT,
			       "invalid size range '%s' (expected END >= START)", s);
	if (range_step(s, c, start, end, &step, &geometric, &count, err))
		return PM_EINPUT;
	if (!(out = malloc(sizeof(double) * (size_t)count)))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	for (int i = 0; i < count; i++)
		out[i] = geometric ? start * pow(step, i) : start + step * i;
	*sizes = out;
	*n = count;
	return PM_OK;
}

void pm_fmt_size(double bytes, char *buf, size_t n)
{
	static const char *const names[] = {"", "K", "M", "G", "T", "P"};
	double v = bytes;
	int i = 0;

	while (v >= 1024.0 && i < 5) {
		v /= 1024.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, n, "%.4gB", bytes);
	else
		snprintf(buf, n, "%.4g%s", v, names[i]);
}

void pm_fmt_time(double s, char *buf, size_t n)
{
	static const struct { double below, scale; const char *unit; } u[] = {
		{1e-6, 1e9, "ns"}, {1e-3, 1e6, "us"}, {1, 1e3, "ms"}, {0, 1, "s"},
	};
	int i = s == 0 ? 3 : 0;

	while (i < 3 && !(s < u[i].below))
		i++;
	snprintf(buf, n, "%.4g %s", s * u[i].scale, u[i].unit);
}

void pm_fmt_bw(double Bps, char *buf, size_t n)
{
	snprintf(buf, n, "%.4g GB/s", Bps / 1e9);
}
