/* csvread.c: the shared CSV reader (see csvread.h). */
#include "model/csvread.h"
#include "model/grow.h"
#include "model/preset.h"

#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

struct state {
	const char *path, *what;
	pm_csv_row_fn on_row;
	void *ctx;
	char *cell[PM_CSV_MAX_CELLS];
	int ncell, row, rc;
	struct pm_err *err;
};

static void on_field(void *s, size_t len, void *data)
{
	struct state *st = data;
	char *v;

	if (st->ncell >= PM_CSV_MAX_CELLS) {
		st->ncell++;
		return;
	}
	v = malloc(len + 1);
	if (v) {
		memcpy(v, s, len);
		v[len] = '\0';
		/* trim surrounding blanks */
		while (len && (v[len - 1] == ' ' || v[len - 1] == '\t' || v[len - 1] == '\r'))
			v[--len] = '\0';
		size_t lead = strspn(v, " \t");
		memmove(v, v + lead, strlen(v + lead) + 1);
	} else if (!st->rc) {
		st->rc = pm_fail(st->err, PM_EINTERNAL, "out of memory reading '%s'", st->path);
	}
	st->cell[st->ncell++] = v;
}

static void on_row(int c, void *data)
{
	struct state *st = data;
	int n = st->ncell < PM_CSV_MAX_CELLS ? st->ncell : PM_CSV_MAX_CELLS;
	(void)c;
	if (!st->rc && !(n == 1 && st->cell[0] && !st->cell[0][0])) {
		int all = 1;
		for (int i = 0; i < n; i++)
			all &= st->cell[i] != NULL;
		if (all)
			st->rc = st->on_row(st->ctx, st->row++, st->cell, n, st->err);
	}
	for (int i = 0; i < n; i++)
		free(st->cell[i]);
	st->ncell = 0;
}

/* A pipe read whole into a temporary file, so that a writer that never
 * closes it (a terminal, `sleep | perfmodel fit /dev/stdin`) cannot hold
 * the command: silence longer than PM_INPUT_WAIT_S (or $PM_INPUT_WAIT_S)
 * and more than PM_INPUT_MAX_BYTES are errors. */
static FILE *slurp_pipe(const char *path, const char *what, struct pm_err *err)
{
	const char *env = getenv("PM_INPUT_WAIT_S");
	int wait_ms = (env && atoi(env) > 0 ? atoi(env) : PM_INPUT_WAIT_S) * 1000;
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	FILE *out = fd >= 0 ? tmpfile() : NULL;
	long total = 0;
	char buf[65536];

	if (fd < 0 || !out) {
		pm_fail(err, PM_EINPUT, "cannot read %s '%s': %s (expected a readable file)", what, path, strerror(errno));
		goto fail;
	}
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		int r = poll(&p, 1, wait_ms);
		if (r == 0) {
			pm_fail(err, PM_EINPUT, "%s '%s' is a pipe that sent nothing for %d s and did not end (expected a file, or a pipe whose writer finishes)",
				what, path, wait_ms / 1000);
			goto fail;
		}
		ssize_t n = r < 0 ? -1 : read(fd, buf, sizeof buf);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			pm_fail(err, PM_EINPUT, "cannot read %s '%s': %s", what, path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		if ((total += n) > PM_INPUT_MAX_BYTES) {
			pm_fail(err, PM_EINPUT, "%s '%s' sent more than %ld bytes (expected a smaller input)", what, path, PM_INPUT_MAX_BYTES);
			goto fail;
		}
		if (fwrite(buf, 1, (size_t)n, out) != (size_t)n) {
			pm_fail(err, PM_EINPUT, "cannot keep %s '%s': the temporary file could not be written", what, path);
			goto fail;
		}
	}
	close(fd);
	rewind(out);
	return out;
fail:
	if (fd >= 0)
		close(fd);
	if (out)
		fclose(out);
	return NULL;
}

FILE *pm_input_open(const char *path, const char *what, struct pm_err *err)
{
	struct stat sb;
	FILE *f;
	char shipped[4200];

	/* "data/..." not found here names the shipped data wherever it lives
	 * (an installed perfmodel run from another directory) */
	if (stat(path, &sb) != 0 && strncmp(path, "data/", 5) == 0 &&
	    snprintf(shipped, sizeof shipped, "%s/%s", pm_data_dir(), path + 5) < (int)sizeof shipped &&
	    stat(shipped, &sb) == 0)
		path = shipped;
	if (stat(path, &sb) != 0) {
		pm_fail(err, PM_EINPUT, "cannot read %s '%s': %s (expected a readable file)",
			what, path, strerror(errno));
		return NULL;
	}
	if (S_ISDIR(sb.st_mode)) {
		pm_fail(err, PM_EINPUT, "cannot read %s '%s': it is a directory (expected a file)", what, path);
		return NULL;
	}
	if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode)) {
		pm_fail(err, PM_EINPUT, "cannot read %s '%s': not a regular file (expected a file, not a device)", what, path);
		return NULL;
	}
	if (S_ISREG(sb.st_mode) && sb.st_size > PM_INPUT_MAX_BYTES) {
		pm_fail(err, PM_EINPUT, "%s '%s' is %lld bytes (expected at most %ld)",
			what, path, (long long)sb.st_size, PM_INPUT_MAX_BYTES);
		return NULL;
	}
	if (S_ISFIFO(sb.st_mode))
		return slurp_pipe(path, what, err);
	if (!(f = fopen(path, "r")))
		pm_fail(err, PM_EINPUT, "cannot read %s '%s': %s (expected a readable file)",
			what, path, strerror(errno));
	return f;
}

/* The rest of f into *buf (NUL-terminated, *n bytes before the NUL): 0,
 * or -1 out of memory, -2 past PM_INPUT_MAX_BYTES, -3 a read error. */
static int read_all(FILE *f, char **buf, size_t *n)
{
	size_t cap = 0, got = 1;

	*buf = NULL;
	*n = 0;
	while (got) {
		if (*n > (size_t)PM_INPUT_MAX_BYTES)
			return -2;
		if (pm_grow(buf, &cap, *n + 4096, 1, 65536))
			return -1;
		*n += got = fread(*buf + *n, 1, cap - *n - 1, f);
	}
	(*buf)[*n] = 0;
	return ferror(f) ? -3 : 0;
}

char *pm_input_read(const char *path, const char *what, size_t *len, struct pm_err *err)
{
	FILE *f = pm_input_open(path, what, err);
	char *buf;
	int rc;

	if (!f)
		return NULL;
	rc = read_all(f, &buf, len);
	fclose(f);
	if (rc == -1)
		pm_fail(err, PM_EINTERNAL, "out of memory reading %s '%s'", what, path);
	if (rc == -2)
		pm_fail(err, PM_EINPUT, "%s '%s' is larger than %ld bytes (expected a smaller file)",
			what, path, PM_INPUT_MAX_BYTES);
	if (rc == -3)
		pm_fail(err, PM_EINPUT, "cannot read %s '%s' (expected a readable file)", what, path);
	if (rc) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

int pm_csv_read(const char *path, const char *what, pm_csv_row_fn row_fn,
		pm_csv_comment_fn comment_fn, void *ctx, struct pm_err *err)
{
	struct state st = {.path = path, .what = what, .on_row = row_fn, .ctx = ctx, .err = err};
	struct csv_parser p;
	char line[8192];
	long total = 0;
	FILE *f = pm_input_open(path, what, err);

	if (!f)
		return PM_EINPUT;
	if (csv_init(&p, CSV_APPEND_NULL | CSV_STRICT | CSV_STRICT_FINI) != 0) {
		fclose(f);
		return pm_fail(err, PM_EINTERNAL, "cannot start the CSV parser");
	}
	while (!st.rc && fgets(line, sizeof line, f)) {
		size_t len = strlen(line);
		const char *bom = total == 0 && strncmp(line, "\xEF\xBB\xBF", 3) == 0 ? line + 3 : NULL;
		if ((total += (long)len) > PM_INPUT_MAX_BYTES) {
			st.rc = pm_fail(err, PM_EINPUT, "%s '%s' is larger than %ld bytes (expected a smaller file)",
					what, path, PM_INPUT_MAX_BYTES);
			break;
		}
		if (bom) {	/* a UTF-8 byte order mark is not part of the header */
			memmove(line, bom, strlen(bom) + 1);
			len -= 3;
		}
		if (line[0] == '#') {
			if (comment_fn)
				comment_fn(ctx, line);
			continue;
		}
		if (csv_parse(&p, line, len, on_field, on_row, &st) != len)
			st.rc = pm_fail(err, PM_EINPUT, "%s '%s': malformed CSV (%s)", what, path,
					csv_strerror(csv_error(&p)));
	}
	if (!st.rc && csv_fini(&p, on_field, on_row, &st) != 0)
		st.rc = pm_fail(err, PM_EINPUT, "%s '%s': malformed CSV (%s)", what, path,
				csv_strerror(csv_error(&p)));
	for (int i = 0; i < st.ncell && i < PM_CSV_MAX_CELLS; i++)
		free(st.cell[i]);	/* a row cut short by an error */
	csv_free(&p);
	fclose(f);
	if (!st.rc && st.row == 0)
		st.rc = pm_fail(err, PM_EINPUT, "%s '%s' is empty (expected a header row and data rows)",
				what, path);
	return st.rc;
}

int pm_csv_column(char *const *header, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcasecmp(header[i], name) == 0)
			return i;
	return -1;
}
