/* units.h: the quantities perfmodel reads and prints, with explicit units.
 *
 * Inside the library everything is SI base units held in doubles: bytes,
 * seconds, bytes per second.  These functions are the only place where
 * text becomes a number or a number becomes text:
 *   sizes      64M = 64 MiB (binary, as the papers use), 64MiB the same,
 *              1.5GB = 1.5e9 bytes (decimal), 512 or 512B = 512 bytes;
 *   times      150ns, 4.8us, 2ms, 1s (a unit is required except for 0);
 *   bandwidth  16GB/s (decimal bytes), 16GiB/s (binary), 100Gbps or
 *              100Gb/s (bits), 9301.19MB/s.
 */
#ifndef PM_UNITS_H
#define PM_UNITS_H

#include <stddef.h>

#include "model/err.h"

#define PM_MAX_SIZE_B 1.125899906842624e15	/* 1 PiB: larger is a typo */
#define PM_MAX_RANGE 10000
/* Plausibility bounds: beyond them a value is a typo, and products of
 * them stay finite (no inf or nan reaches an output). */
#define PM_MAX_TIME_S 3600.0		/* one hour per message or hop */
#define PM_MIN_BW_Bps 1.0		/* 1 B/s */
#define PM_MAX_BW_Bps 1e15		/* 1 PB/s */

/* A positive byte count such as 64M, 1.5GB or 4096. */
int pm_parse_size(const char *s, double *bytes, struct pm_err *err);

/* A non-negative duration such as 150ns or 4.8us. */
int pm_parse_time(const char *s, double *seconds, struct pm_err *err);

/* A positive bandwidth such as 16GB/s or 100Gbps. */
int pm_parse_bw(const char *s, double *Bps, struct pm_err *err);

/* Seconds per byte, written either as a time per byte ("0.05ns", meaning
 * per byte) or as a rate ("20GB/s", inverted). 0 is allowed. */
/* what names the quantity in the message. */
int pm_parse_per_byte(const char *s, const char *what, double *spB,
		      struct pm_err *err);

/* An integer in [lo, hi]; what names the quantity for the message. */
int pm_parse_int(const char *s, long lo, long hi, const char *what,
		 long *out, struct pm_err *err);

/* One size, or a range START:END:xF (geometric) or START:END:+STEP
 * (arithmetic), END included when hit.  *sizes is malloc'd. */
int pm_parse_size_range(const char *s, double **sizes, int *n,
			struct pm_err *err);

/* Human formats: "64M", "1.5K", "1000B"; "12.3 us"; "16 GB/s". */
void pm_fmt_size(double bytes, char *buf, size_t n);
void pm_fmt_time(double seconds, char *buf, size_t n);
void pm_fmt_bw(double Bps, char *buf, size_t n);

#endif
