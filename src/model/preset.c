/* preset.c: the data directory and its presets (see preset.h). */
#include "model/preset.h"
#include "model/grow.h"
#include "model/text.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PM_DATADIR
#define PM_DATADIR "data"
#endif
#ifndef PM_SRC_DATADIR
#define PM_SRC_DATADIR PM_DATADIR
#endif

/* Is the running program one built in this library's build tree (the
 * command, the tests, the fuzz harnesses), not an installed copy? */
static int in_build_tree(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	size_t root = strlen(PM_BUILD_ROOT);

	if (n <= 0)
		return 0;
	exe[n] = '\0';
	return strncmp(exe, PM_BUILD_ROOT, root) == 0 && exe[root] == '/';
}

const char *pm_data_dir(void)
{
	const char *d = getenv("PERFMODEL_DATA");
	int src = access(PM_SRC_DATADIR "/machines", R_OK) == 0;
	int installed = access(PM_DATADIR "/machines", R_OK) == 0;

	if (d && *d)
		return d;
	/* a program of the build tree reads the source tree's data; an
	 * installed one its installed copy (the source tree's only when
	 * nothing was installed) */
	if (src && (in_build_tree() || !installed))
		return PM_SRC_DATADIR;
	return PM_DATADIR;
}

static int ends_csv(const char *s)
{
	size_t l = strlen(s);
	return l > 4 && strcmp(s + l - 4, ".csv") == 0;
}

static int ends_json(const char *s)
{
	size_t l = strlen(s);
	return l > 5 && strcmp(s + l - 5, ".json") == 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int pm_preset_names(const char *kind, char ***names, int *n)
{
	char dir[600];
	struct dirent *e;
	size_t cap = 0;
	DIR *d;

	snprintf(dir, sizeof dir, "%s/%s", pm_data_dir(), kind);
	*n = 0;
	*names = NULL;
	if (!(d = opendir(dir)))
		return PM_EINPUT;
	while ((e = readdir(d))) {
		if (!ends_csv(e->d_name))
			continue;
		if (pm_grow(names, &cap, (size_t)*n + 1, sizeof(char *), 16))
			break;
		if (((*names)[*n] = strndup(e->d_name, strlen(e->d_name) - 4)))
			(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(*names, (size_t)*n, sizeof(char *), by_name);
	return PM_OK;
}

static int unknown(const char *spec, const char *kind, const char *what,
		   const char *path, struct pm_err *err)
{
	char **names, msg[1200];
	int n;

	if (pm_preset_names(kind, &names, &n) != PM_OK)
		return pm_fail(err, PM_EINPUT, "unknown %s '%s' (no %s; set PERFMODEL_DATA to the data directory)",
			       what, spec, path);
	pm_unknown_text(msg, sizeof msg, what, spec, (const char *const *)names, n, ", or a path to a .csv file");
	pm_free_strings(names, n);
	return pm_fail(err, PM_EINPUT, "%s", msg);
}

int pm_preset_find(const char *spec, const char *kind, const char *what,
		   char *path, size_t path_size, char *stem, size_t stem_size,
		   struct pm_err *err)
{
	if (strchr(spec, '/') || ends_csv(spec) || ends_json(spec)) {
		pm_strlcpy(path, spec, path_size);
	} else {
		for (const char *c = spec; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
				return pm_fail(err, PM_EINPUT, "invalid %s name '%s' (expected a preset name or a path to a .csv or .json file)",
					       what, spec);
		snprintf(path, path_size, "%s/%s/%s.csv", pm_data_dir(), kind, spec);
		if (access(path, R_OK) != 0)
			return unknown(spec, kind, what, path, err);
	}
	const char *base = strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec;
	pm_strlcpy(stem, base, stem_size);
	if (ends_csv(stem))
		stem[strlen(stem) - 4] = '\0';
	else if (ends_json(stem))
		stem[strlen(stem) - 5] = '\0';
	return PM_OK;
}
