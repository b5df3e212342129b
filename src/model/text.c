/* text.c: edit-distance suggestions and string joining. */
#include "model/text.h"
#include "model/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pm_fail(struct pm_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return code;
}

/* Levenshtein distance, capped at 64 characters of input. */
static int edit_distance(const char *a, const char *b)
{
	int la = (int)strnlen(a, 64), lb = (int)strnlen(b, 64);
	int row[65];

	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int up = row[j];
			int cost = a[i - 1] == b[j - 1] ? 0 : 1;
			int best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

int pm_nearest(const char *s, const char *const *names, int n)
{
	int best = -1, best_d = 1 << 30;
	int limit = (int)strlen(s) / 3;

	if (limit < 2)
		limit = 2;
	for (int i = 0; i < n; i++) {
		int d = edit_distance(s, names[i]);
		if (d < best_d) {
			best_d = d;
			best = i;
		}
	}
	return best_d <= limit ? best : -1;
}

int pm_pick(const char *s, const char *const *names, int n)
{
	for (int k = 0; k < n; k++)
		if (!strcmp(s, names[k]))
			return k;
	return -1;
}

void pm_join(char *buf, size_t size, const char *const *names, int n)
{
	size_t used = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	for (int i = 0; i < n && used < size; i++) {
		int w = snprintf(buf + used, size - used, "%s%s",
				 i ? ", " : "", names[i]);
		if (w < 0)
			return;
		used += (size_t)w;
	}
}

void pm_strlcpy(char *dst, const char *src, size_t size)
{
	if (size == 0)
		return;
	strncpy(dst, src, size - 1);
	dst[size - 1] = '\0';
}

void pm_unknown_text(char *buf, size_t size, const char *what, const char *name,
		     const char *const *names, int n, const char *tail)
{
	char list[1024];
	int near = pm_nearest(name, names, n);

	pm_join(list, sizeof list, names, n);
	if (near >= 0)
		snprintf(buf, size, "unknown %s '%s' (expected one of %s; did you mean '%s'?)", what, name, list, names[near]);
	else
		snprintf(buf, size, "unknown %s '%s' (expected one of %s%s)", what, name, list, tail ? tail : "");
}

int pm_pick_word(const char *what, const char *s, const char *const *words, struct pm_err *err)
{
	char list[512] = "";
	size_t used = 0;
	int n = 0;

	while (words[n])
		n++;
	int k = s ? pm_pick(s, words, n) : -1;
	if (k >= 0)
		return k;
	for (int i = 0; i < n && used < sizeof list; i++) {
		int w = snprintf(list + used, sizeof list - used, "%s%s",
				 i == 0 ? "" : i == n - 1 ? " or " : ", ", words[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	pm_fail(err, PM_EINPUT, "invalid %s '%s' (expected %s)", what, s ? s : "", list);
	return -1;
}

int pm_check_list(const char *opt, const char *s, char sep,
		  const char *example, struct pm_err *err)
{
	size_t n = strlen(s);
	char twice[3] = {sep, sep, '\0'};

	if (n == 0 || s[0] == sep || s[n - 1] == sep || strstr(s, twice))
		return pm_fail(err, PM_EINPUT,
			       "invalid --%s '%s': an empty item (expected items joined by '%c', such as %s)",
			       opt, s, sep, example);
	return PM_OK;
}

void pm_free_strings(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}
