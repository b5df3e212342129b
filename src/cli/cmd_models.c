/* cmd_models.c: perfmodel models, the DNN profiles in data/models. */
#include "cli/cli.h"
#include "cli/common.h"
#include "model/preset.h"
#include "model/text.h"
#include "search/train.h"

#include <stdio.h>
#include <stdlib.h>

/* --help: usage, what the command does, examples (cli_help adds the options) */
static const char help_text[] =
	"usage: perfmodel models [--format F]\n\n"
	"Lists the DNN profiles perfmodel train can use (data/models/*.csv): gradient\n"
	"tensors, parameters, backward and forward time, and whether the times were\n"
	"measured or estimated (and on which device).\n\nOptions:\n";

enum { M_NAME, M_TENSORS, M_PARAMS, M_BACKWARD, M_FORWARD, M_KIND, M_BATCH, M_DEVICE, NM };
static const char *const cols[NM] = {"model", "tensors", "params", "backward_ms", "forward_ms", "kind", "batch", "device"};
static const unsigned flags[NM] = {COL_USER, COL_NUM, COL_NUM, COL_NUM, COL_NUM, COL_USER, COL_USER, COL_USER};

/* One profile's row: its tensors, parameters and backward time summed
 * over the layers. */
static void put_profile(struct cli_table *t, const char *name, const struct pm_profile *p)
{
	double tb = 0, params = 0;

	for (int l = 0; l < p->L; l++) {
		tb += p->tb_s[l];
		params += p->params[l];
	}
	cli_table_row(t);
	cli_table_set(t, M_NAME, "%s", name);
	cli_table_set(t, M_TENSORS, "%d", p->L);
	cli_table_set(t, M_PARAMS, "%.0f", params);
	cli_table_nums(t, M_BACKWARD, (const double[]){tb * 1e3, p->tf_s * 1e3}, 2, "%.4g");
	cli_table_set(t, M_KIND, "%s%s", p->kind, p->forward_assumed ? " (forward assumed)" : "");
	cli_table_set(t, M_BATCH, "%s", p->batch);
	cli_table_set(t, M_DEVICE, "%s", p->device);
}

int cmd_models(int argc, char **argv, struct pm_err *err)
{
	const char *format = "table", *pos[1];
	int help = 0, npos, n = 0, np;
	enum cli_format fmt;
	char **names;

	const struct cli_opt opts[] = {
		cli_format_opt(&format),
		{"help", NULL, "show this help", NULL, &help},
	};
	n = (int)(sizeof opts / sizeof opts[0]);
	if (cli_parse("models", argc, argv, opts, n, pos, &npos, 0, err))
		return PM_EINPUT;
	if (help) {
		cli_help(cli_out(), help_text, opts, n);
		return 0;
	}
	if (cli_parse_format(format, &fmt, err))
		return PM_EINPUT;
	if (pm_preset_names("models", &names, &np) != PM_OK)
		return pm_fail(err, PM_EINPUT, "cannot list %s/models (set PERFMODEL_DATA to the data directory)", pm_data_dir());
	struct cli_table t;
	cli_table_init(&t, NM, cols, flags);
	cli_table_meta(&t, "profiles in %s/models; estimated ones come from per-tensor FLOPs (scripts/make-models), the -h100 ones from measured gradient-ready timelines (scripts/make-measured-profiles)", pm_data_dir());
	for (int i = 0; i < np; i++) {
		struct pm_profile p;
		struct pm_err e;
		if (pm_profile_load(names[i], &p, &e) == PM_OK) {
			put_profile(&t, names[i], &p);
			pm_profile_release(&p);
		}
	}
	pm_free_strings(names, np);
	int rc = cli_table_write(cli_out(), &t, fmt, err);
	cli_table_release(&t);
	return rc;
}
