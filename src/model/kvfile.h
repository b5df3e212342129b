/* kvfile.h: descriptions written as key,value,source rows (an accelerator,
 * a transformer): one figure a row, each with where it comes from, read
 * against a table of the keys a kind of file has. */
#ifndef PM_KVFILE_H
#define PM_KVFILE_H

#include "model/err.h"

#include <stddef.h>

enum pm_kv_type {
	PM_KV_TEXT,	/* into a char array of `size` bytes */
	PM_KV_NUM,	/* a double in [lo, hi] */
	PM_KV_INT,	/* an integer in [lo, hi], stored as a double */
};

struct pm_kv_key {
	const char *name;	/* with its unit: peak_TFLOPs, hidden */
	enum pm_kv_type type;
	size_t off, size;	/* where in the struct it goes; size for text */
	double lo, hi;		/* the range a number must lie in */
	int required;
	double dflt;		/* a number left out takes this */
	const char *doc;	/* what it is, for messages and docs */
};

#define PM_KV_MAX_ROWS 40

/* The rows as read, for --explain: key, value as written, source. */
struct pm_kv_src {
	int n;
	char row[PM_KV_MAX_ROWS][3][200];
};

/* Read path (a CSV with header key,value,source) into dst through keys
 * (n of them).  An unknown or repeated key, a value out of range or a
 * missing required key is refused naming the file, the line and what was
 * expected.  what names the kind of file ("device description"). */
int pm_kv_read(const char *path, const char *what, const struct pm_kv_key *keys, int n, void *dst,
	       struct pm_kv_src *src, struct pm_err *err);

/* The source written for key, or "" (src may hold fewer rows). */
const char *pm_kv_source(const struct pm_kv_src *src, const char *key);

#endif
