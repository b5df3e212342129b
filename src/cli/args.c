/* args.c: the option parser. */
#include "cli/args.h"
#include "model/text.h"
#include "model/units.h"

#include <string.h>

static int unknown(const char *cmd, const char *word, const struct cli_opt *opts,
		   int n, struct pm_err *err)
{
	const char *names[64];
	char list[1024] = "";
	size_t used = 0;

	for (int i = 0; i < n && i < 64; i++) {
		names[i] = opts[i].name;
		int w = snprintf(list + used, sizeof list - used, "%s--%s",
				 i ? ", " : "", opts[i].name);
		if (w > 0 && (size_t)w < sizeof list - used)
			used += (size_t)w;
	}
	const char *bare = word;
	while (*bare == '-')
		bare++;
	int near = pm_nearest(bare, names, n < 64 ? n : 64);
	if (near >= 0)
		return pm_fail(err, PM_EINPUT,
			       "unknown option '%s' for %s (did you mean '--%s'? see perfmodel %s --help)",
			       word, cmd, names[near], cmd);
	return pm_fail(err, PM_EINPUT,
		       "unknown option '%s' for %s (expected one of %s)", word, cmd,
		       list);
}

int cli_parse(const char *cmd, int argc, char **argv, const struct cli_opt *opts,
	      int n, const char **pos, int *npos, int maxpos,
	      struct pm_err *err)
{
	*npos = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int is_opt = strncmp(a, "--", 2) == 0 || strcmp(a, "-h") == 0;
		if (!is_opt && a[0] == '-' && a[1])
			return unknown(cmd, a, opts, n, err);
		if (!is_opt) {
			if (*npos >= maxpos)
				return pm_fail(err, PM_EINPUT,
					       "unexpected argument '%s' for %s (see perfmodel %s --help)",
					       a, cmd, cmd);
			pos[(*npos)++] = a;
			continue;
		}
		const char *name = strcmp(a, "-h") == 0 ? "help" : a + 2;
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct cli_opt *o = NULL;
		for (int j = 0; j < n; j++)
			if (strlen(opts[j].name) == len && strncmp(opts[j].name, name, len) == 0)
				o = &opts[j];
		if (!o)
			return unknown(cmd, a, opts, n, err);
		if (!o->metavar) {
			if (eq)
				return pm_fail(err, PM_EINPUT,
					       "option '--%s' takes no value (got '%s')",
					       o->name, a);
			*o->flag = 1;
			continue;
		}
		if (eq) {
			*o->value = eq + 1;
		} else if (i + 1 < argc) {
			*o->value = argv[++i];
		} else {
			return pm_fail(err, PM_EINPUT,
				       "option '--%s' needs a value (expected %s)",
				       o->name, o->metavar);
		}
	}
	return PM_OK;
}

void cli_print_opts(FILE *f, const struct cli_opt *opts, int n)
{
	for (int i = 0; i < n; i++) {
		char head[64];
		snprintf(head, sizeof head, "--%s%s%s", opts[i].name,
			 opts[i].metavar ? " " : "",
			 opts[i].metavar ? opts[i].metavar : "");
		fprintf(f, "  %-22s %s\n", head, opts[i].help);
	}
}

int cli_opt_long(const char *s, long lo, long hi, const char *what, long *v, struct pm_err *err)
{
	return s ? pm_parse_int(s, lo, hi, what, v, err) : PM_OK;
}

void cli_help(FILE *f, const char *text, const struct cli_opt *opts, int n)
{
	fputs(text, f);
	cli_print_opts(f, opts, n);
}

int cli_opt_add(struct cli_opt *opts, int n, const struct cli_opt *rows, int nrows)
{
	memcpy(opts + n, rows, sizeof *rows * (size_t)nrows);
	return n + nrows;
}

struct cli_opt cli_format_opt(const char **value)
{
	return (struct cli_opt){"format", "F", "table, csv or json (default table)", value, NULL};
}
