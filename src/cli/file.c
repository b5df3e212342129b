/* file.c: output files written whole (file.h). */
#include "cli/file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_same_file(const char *path, const char *other)
{
	struct stat a, b;

	return other && stat(path, &a) == 0 && stat(other, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

const char *cli_topo_file(const char *spec)
{
	static _Thread_local char path[4096];	/* per thread: sweeps run commands at once */
	static const char *const kinds[] = {"file:", "astrasim:", "machine:"};

	for (int k = 0; spec && k < 3; k++) {
		size_t n = strlen(kinds[k]);
		if (strncmp(spec, kinds[k], n))
			continue;
		snprintf(path, sizeof path, "%s", spec + n);
		char *c = strrchr(path, ':');	/* machine:PATH:NODES */
		if (k == 2 && c && c[1] && strspn(c + 1, "0123456789") == strlen(c + 1))
			*c = '\0';
		return k < 2 || strchr(path, '/') || strstr(path, ".csv") || strstr(path, ".json") ? path : NULL;
	}
	return NULL;
}

int cli_write_file(const char *path, const char *what, const char *const *inputs, int ninputs,
		   int (*write)(FILE *f, const void *ctx), const void *ctx, struct pm_err *err)
{
	char tmp[4200];
	FILE *f;
	int bad, saved;

	for (int i = 0; i < ninputs; i++)
		if (cli_same_file(path, inputs[i]))
			return pm_fail(err, PM_EINPUT, "%s '%s' is the input file '%s' (expected another path: it would be overwritten)",
				       what, path, inputs[i]);
	struct stat st;
	int direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode);	/* a device, a pipe: as it is */
	if (snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid()) >= (int)sizeof tmp)
		return pm_fail(err, PM_EINPUT, "%s path '%.64s...' is too long (expected at most 4096 characters)", what, path);
	if (!(f = fopen(direct ? path : tmp, "w")))
		return pm_fail(err, PM_EINPUT, "cannot write %s '%s': %s", what, path, strerror(errno));
	errno = 0;
	bad = write(f, ctx) != PM_OK || fflush(f) != 0 || ferror(f);
	saved = errno;
	bad |= fclose(f) != 0;
	if (!bad && (direct || rename(tmp, path) == 0))
		return PM_OK;
	saved = saved ? saved : errno;
	if (!direct)
		remove(tmp);
	return pm_fail(err, PM_EINPUT, "cannot write %s '%s': %s", what, path, strerror(saved ? saved : EIO));
}
