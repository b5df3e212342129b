/* kvfile.c: key,value,source descriptions (kvfile.h), read with libcsv
 * through csvread.c. */
#include "model/kvfile.h"
#include "model/csvread.h"
#include "model/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct kvreader {
	const char *path, *what;
	const struct pm_kv_key *keys;
	int nkeys;
	void *dst;
	struct pm_kv_src *src;
	unsigned char seen[64];
	int col[3];		/* key, value, source */
};

static int take(struct kvreader *r, int row, const struct pm_kv_key *k, const char *v, struct pm_err *err)
{
	char *end;
	double x;

	if (k->type == PM_KV_TEXT) {
		if (strlen(v) >= k->size)
			return pm_fail(err, PM_EINPUT, "%s '%s' line %d: %s is %zu characters (expected at most %zu)",
				       r->what, r->path, row + 1, k->name, strlen(v), k->size - 1);
		pm_strlcpy((char *)r->dst + k->off, v, k->size);
		return PM_OK;
	}
	x = strtod(v, &end);
	if (end == v || *end || !isfinite(x) || x < k->lo || x > k->hi || (k->type == PM_KV_INT && x != floor(x)))
		return pm_fail(err, PM_EINPUT, "%s '%s' line %d: invalid %s '%s' (expected %s %g to %g: %s)", r->what,
			       r->path, row + 1, k->name, v, k->type == PM_KV_INT ? "an integer" : "a number", k->lo,
			       k->hi, k->doc);
	*(double *)((char *)r->dst + k->off) = x;
	return PM_OK;
}

static int on_row(void *ctx, int row, char *const *cells, int n, struct pm_err *err)
{
	struct kvreader *r = ctx;
	static const char *const names[3] = {"key", "value", "source"};

	if (row == 0) {
		for (int c = 0; c < 3; c++)
			if ((r->col[c] = pm_csv_column(cells, n, names[c])) < 0 && c < 2)
				return pm_fail(err, PM_EINPUT, "%s '%s' has no '%s' column (expected the header key,value,source)",
					       r->what, r->path, names[c]);
		return PM_OK;
	}
	const char *key = r->col[0] < n ? cells[r->col[0]] : "", *v = r->col[1] < n ? cells[r->col[1]] : "";
	const char *s = r->col[2] >= 0 && r->col[2] < n ? cells[r->col[2]] : "";
	for (int i = 0; i < r->nkeys; i++) {
		if (strcmp(key, r->keys[i].name))
			continue;
		if (r->seen[i])
			return pm_fail(err, PM_EINPUT, "%s '%s' line %d: '%s' given twice (expected each key once)", r->what,
				       r->path, row + 1, key);
		r->seen[i] = 1;
		if (r->src && r->src->n < PM_KV_MAX_ROWS) {
			char (*o)[200] = r->src->row[r->src->n++];
			pm_strlcpy(o[0], key, 200), pm_strlcpy(o[1], v, 200), pm_strlcpy(o[2], s, 200);
		}
		return take(r, row, &r->keys[i], v, err);
	}
	char known[1024];
	size_t len = 0;
	known[0] = '\0';
	for (int i = 0; i < r->nkeys && len + 40 < sizeof known; i++)
		len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", r->keys[i].name);
	return pm_fail(err, PM_EINPUT, "%s '%s' line %d: unknown key '%s' (expected one of %s)", r->what, r->path,
		       row + 1, key, known);
}

int pm_kv_read(const char *path, const char *what, const struct pm_kv_key *keys, int n, void *dst,
	       struct pm_kv_src *src, struct pm_err *err)
{
	struct kvreader r = {path, what, keys, n, dst, src, {0}, {-1, -1, -1}};
	int rc;

	if (n > (int)sizeof r.seen)
		return pm_fail(err, PM_EINTERNAL, "%s: %d keys (at most %zu)", what, n, sizeof r.seen);
	if (src)
		src->n = 0;
	for (int i = 0; i < n; i++)
		if (keys[i].type != PM_KV_TEXT)
			*(double *)((char *)dst + keys[i].off) = keys[i].dflt;
	if ((rc = pm_csv_read(path, what, on_row, NULL, &r, err)))
		return rc;
	for (int i = 0; i < n; i++)
		if (keys[i].required && !r.seen[i])
			return pm_fail(err, PM_EINPUT, "%s '%s' has no '%s' row (expected %s)", what, path, keys[i].name,
				       keys[i].doc);
	return PM_OK;
}

const char *pm_kv_source(const struct pm_kv_src *src, const char *key)
{
	for (int i = 0; i < src->n; i++)
		if (strcmp(src->row[i][0], key) == 0)
			return src->row[i][2];
	return "";
}
