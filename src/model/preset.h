/* preset.h: the data directory and the named files in it.  Machines and DNN
 * profiles are both "presets": data/<kind>/<name>.csv, or any CSV path the
 * user gives instead of a name. */
#ifndef PM_PRESET_H
#define PM_PRESET_H

#include "model/err.h"

#include <stddef.h>

/* The data directory: $PERFMODEL_DATA, else the source tree's data/ for a
 * program of this build tree (the command before installing, the tests),
 * else the installed copy (DATADIR/perfmodel; the source tree's when none
 * was installed). */
const char *pm_data_dir(void);

/* The preset names of one kind ("machines", "models"), sorted; release with
 * pm_free_strings. */
int pm_preset_names(const char *kind, char ***names, int *n);

/* Resolve spec to a file.  A spec containing '/' or ending in .csv is a path;
 * anything else must be a preset of that kind, and an unknown name is an
 * error listing the presets with the nearest one suggested.  what names the
 * kind in messages ("machine").  Writes the file path and its stem (the name
 * without directory and .csv). */
int pm_preset_find(const char *spec, const char *kind, const char *what,
		   char *path, size_t path_size, char *stem, size_t stem_size,
		   struct pm_err *err);

#endif
