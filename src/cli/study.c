/* study.c: study files (study.h), read with libyaml's document API so that
 * every refusal names the key and its line. */
#include "cli/study.h"
#include "model/csvread.h"
#include "model/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct reader {
	struct study *s;
	yaml_document_t *doc;
	struct pm_err *err;
	unsigned char seen[8];	/* top-level keys met */
};

static int line_of(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

static int bad(struct reader *r, const yaml_node_t *n, const char *what, const char *expected)
{
	return pm_fail(r->err, PM_EINPUT, "study '%s' line %d: %s (expected %s)", r->s->path, line_of(n), what, expected);
}

/* "--" name, allocated. */
static char *dashed(const char *name)
{
	size_t n = strlen(name);
	char *o = malloc(n + 3);
	if (o)
		memcpy(o, "--", 2), memcpy(o + 2, name, n + 1);
	return o;
}

static char *scalar(struct reader *r, const yaml_node_t *n, const char *key, char **out)
{
	char what[160];
	if (n->type != YAML_SCALAR_NODE) {
		snprintf(what, sizeof what, "'%s' is not a single value", key);
		bad(r, n, what, "a scalar such as 64M or torus:4x4");
		return NULL;
	}
	*out = strndup((const char *)n->data.scalar.value, n->data.scalar.length);
	if (!*out)
		pm_fail(r->err, PM_EINTERNAL, "out of memory");
	return *out;
}

/* A list of scalars (or one scalar, a list of one). */
static int list(struct reader *r, const yaml_node_t *n, const char *key, char ***out, int *count, int max)
{
	char what[160];
	*count = 0;
	*out = NULL;
	if (n->type == YAML_SCALAR_NODE) {
		if (!(*out = calloc(1, sizeof **out)) || !scalar(r, n, key, &(*out)[0]))
			return PM_EINPUT;
		*count = 1;
		return PM_OK;
	}
	if (n->type != YAML_SEQUENCE_NODE) {
		snprintf(what, sizeof what, "'%s' is a mapping", key);
		return bad(r, n, what, "a list such as [1M, 64M]");
	}
	int len = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (len == 0) {
		snprintf(what, sizeof what, "'%s' is an empty list", key);
		return bad(r, n, what, "at least one value");
	}
	if (len > max) {
		snprintf(what, sizeof what, "'%s' has %d values", key, len);
		return bad(r, n, what, "at most 4096 values an axis");
	}
	if (!(*out = calloc((size_t)len, sizeof **out)))
		return pm_fail(r->err, PM_EINTERNAL, "out of memory");
	for (int i = 0; i < len; i++) {
		yaml_node_t *v = yaml_document_get_node(r->doc, n->data.sequence.items.start[i]);
		if (!scalar(r, v, key, &(*out)[i]))
			return PM_EINPUT;
		(*count)++;
	}
	return PM_OK;
}

/* A key the study gives twice is refused (YAML would keep the last). */
static int once(struct reader *r, const yaml_node_t *k, const void *already)
{
	return already ? bad(r, k, "a key given twice", "each key once") : PM_OK;
}

typedef int (*pair_fn)(struct reader *r, const char *key, yaml_node_t *k, yaml_node_t *v);

static int each_pair(struct reader *r, yaml_node_t *map, const char *what, pair_fn fn)
{
	if (map->type != YAML_MAPPING_NODE)
		return bad(r, map, what, "a mapping of keys to values");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(r->doc, p->key), *v = yaml_document_get_node(r->doc, p->value);
		if (k->type != YAML_SCALAR_NODE)
			return bad(r, k, "a key that is not a name", "names such as command, axes");
		int rc = fn(r, (const char *)k->data.scalar.value, k, v);
		if (rc)
			return rc;
	}
	return PM_OK;
}

static int take_fixed(struct reader *r, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct study *s = r->s;
	char *val;
	if (s->nfixed == STUDY_MAX_FIXED)
		return bad(r, k, "too many fixed options", "at most 32");
	for (int i = 0; i < s->nfixed; i++)
		if (!strcmp(s->fixed_opt[i] + 2, key))
			return bad(r, k, "a fixed option given twice", "each option once");
	int at = s->nfixed;
	s->fixed_value[at] = NULL;
	if (!(s->fixed_opt[at] = dashed(key)))
		return pm_fail(r->err, PM_EINTERNAL, "out of memory");
	s->nfixed++;	/* study_release frees it whatever follows */
	if (!scalar(r, v, key, &val))
		return PM_EINPUT;
	if (strcmp(val, "true") == 0) {	/* a flag such as explain: true */
		free(val);
		val = NULL;
	}
	s->fixed_value[at] = val;
	return PM_OK;
}

static int take_axis(struct reader *r, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct study *s = r->s;
	if (s->naxes == STUDY_MAX_AXES)
		return bad(r, k, "too many axes", "at most 16");
	for (int i = 0; i < s->naxes; i++)
		if (strcmp(s->axis[i].name, key) == 0)
			return bad(r, k, "an axis given twice", "each option once");
	struct study_axis *a = &s->axis[s->naxes];
	if (!(a->name = strdup(key)) || !(a->opt = dashed(key)))
		return pm_fail(r->err, PM_EINTERNAL, "out of memory");
	a->line = line_of(k);
	s->naxes++;
	return list(r, v, key, &a->values, &a->n, 4096);
}

static int take_best(struct reader *r, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct study *s = r->s;
	if (strcmp(key, "minimize") == 0)
		return once(r, k, s->minimize) || !scalar(r, v, key, &s->minimize) ? PM_EINPUT : PM_OK;
	if (strcmp(key, "by") == 0) {
		if (s->nby)
			return once(r, k, k);
		char **by = NULL;
		int rc = list(r, v, key, &by, &s->nby, STUDY_MAX_AXES);
		if (by)	/* what was read, even on an error: study_release frees it */
			memcpy(s->best_by, by, sizeof *by * (size_t)s->nby);
		free(by);
		return rc;
	}
	return bad(r, k, "unknown key under best", "by and minimize");
}

static int take_top(struct reader *r, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct study *s = r->s;
	char *text = NULL, *end;
	static const char *const keys[] = {"command", "fixed", "axes", "best", "pareto", "outputs", "cost_per_gpu_hour"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		if (!strcmp(keys[i], key) && r->seen[i]++)
			return once(r, k, k);

	if (strcmp(key, "command") == 0)
		return scalar(r, v, key, &s->command) ? PM_OK : PM_EINPUT;
	if (strcmp(key, "fixed") == 0)
		return each_pair(r, v, "'fixed' is not a mapping", take_fixed);
	if (strcmp(key, "axes") == 0)
		return each_pair(r, v, "'axes' is not a mapping", take_axis);
	if (strcmp(key, "best") == 0)
		return each_pair(r, v, "'best' is not a mapping", take_best);
	if (strcmp(key, "pareto") == 0)
		return scalar(r, v, key, &s->pareto) ? PM_OK : PM_EINPUT;
	if (strcmp(key, "outputs") == 0) {
		char **o = NULL;
		int rc = list(r, v, key, &o, &s->noutputs, STUDY_MAX_COLS);
		if (o)
			memcpy(s->outputs, o, sizeof *o * (size_t)s->noutputs);
		free(o);
		return rc;
	}
	if (strcmp(key, "cost_per_gpu_hour") == 0) {
		if (!scalar(r, v, key, &text))
			return PM_EINPUT;
		s->cost_per_gpu_hour = strtod(text, &end);
		int ok = end != text && !*end && isfinite(s->cost_per_gpu_hour) && s->cost_per_gpu_hour > 0;
		free(text);
		return ok ? PM_OK : bad(r, v, "invalid cost_per_gpu_hour", "a positive number, the price of a GPU hour");
	}
	return bad(r, k, "unknown key", "command, fixed, axes, outputs, best, pareto or cost_per_gpu_hour");
}

/* What a loaded study must say, and the grid's size. */
static int finish(struct reader *r, yaml_node_t *root)
{
	struct study *s = r->s;
	if (!s->command)
		return bad(r, root, "no 'command'", "the command every point runs, such as allreduce or plan");
	if (!s->naxes)
		return bad(r, root, "no 'axes'", "at least one axis: an option and its values");
	s->npoints = 1;
	for (int i = 0; i < s->naxes; i++)
		s->npoints *= s->axis[i].n;
	if (s->npoints > STUDY_MAX_POINTS)
		return pm_fail(r->err, PM_EINPUT, "study '%s': %.0f points (at most %.0e: split it into several studies)",
			       s->path, s->npoints, STUDY_MAX_POINTS);
	for (int i = 0; i < s->nby; i++)
		if (study_axis_find(s, s->best_by[i]) < 0)
			return bad(r, root, "best.by names no axis", "names from axes");
	if (s->nby && !s->minimize)
		return bad(r, root, "best without minimize", "best: {by: [...], minimize: COLUMN}");
	for (int i = 0; i < s->nfixed; i++)
		if (study_axis_find(s, s->fixed_opt[i] + 2) >= 0)
			return bad(r, root, "an option both fixed and an axis", "each option in one place");
	return PM_OK;
}

int study_load(const char *path, struct study *s, struct pm_err *err)
{
	yaml_parser_t p;
	yaml_document_t doc;
	struct reader r = {s, &doc, err, {0}};
	int rc;

	memset(s, 0, sizeof *s);
	snprintf(s->path, sizeof s->path, "%s", path);
	FILE *f = pm_input_open(path, "study", err);
	if (!f)
		return PM_EINPUT;
	if (!yaml_parser_initialize(&p)) {
		fclose(f);
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	}
	yaml_parser_set_input_file(&p, f);
	if (!yaml_parser_load(&p, &doc)) {
		rc = pm_fail(err, PM_EINPUT, "study '%s' line %zu: %s (expected YAML)", path, p.problem_mark.line + 1,
			     p.problem ? p.problem : "unreadable");
		yaml_parser_delete(&p);
		fclose(f);
		return rc;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root)
		rc = pm_fail(err, PM_EINPUT, "study '%s' is empty (expected command and axes)", path);
	else if (!(rc = each_pair(&r, root, "the study is not a mapping", take_top)))
		rc = finish(&r, root);
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	fclose(f);
	return rc;
}

void study_release(struct study *s)
{
	free(s->command);
	for (int i = 0; i < s->nfixed; i++)
		free(s->fixed_opt[i]), free(s->fixed_value[i]);
	for (int i = 0; i < s->naxes; i++) {
		pm_free_strings(s->axis[i].values, s->axis[i].n);
		free(s->axis[i].name);
		free(s->axis[i].opt);
	}
	for (int i = 0; i < s->noutputs; i++)
		free(s->outputs[i]);
	for (int i = 0; i < s->nby; i++)
		free(s->best_by[i]);
	free(s->minimize);
	free(s->pareto);
	memset(s, 0, sizeof *s);
}

void study_point(const struct study *s, long i, int *idx)
{
	for (int k = s->naxes - 1; k >= 0; k--) {
		idx[k] = (int)(i % s->axis[k].n);
		i /= s->axis[k].n;
	}
}

void study_key(const struct study *s, long i, char *buf, size_t size)
{
	int idx[STUDY_MAX_AXES];
	size_t len = 0;

	study_point(s, i, idx);
	buf[0] = '\0';
	for (int k = 0; k < s->naxes && len < size; k++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", k ? ";" : "", s->axis[k].name,
					s->axis[k].values[idx[k]]);
}

int study_argv(const struct study *s, long i, char **argv)
{
	int idx[STUDY_MAX_AXES], n = 0;

	study_point(s, i, idx);
	argv[n++] = s->command;
	for (int k = 0; k < s->nfixed; k++) {
		argv[n++] = s->fixed_opt[k];
		if (s->fixed_value[k])
			argv[n++] = s->fixed_value[k];
	}
	for (int k = 0; k < s->naxes; k++) {
		argv[n++] = s->axis[k].opt;
		argv[n++] = s->axis[k].values[idx[k]];
	}
	argv[n++] = "--format";
	argv[n++] = "csv";
	argv[n] = NULL;
	return n;
}

int study_axis_find(const struct study *s, const char *name)
{
	for (int k = 0; k < s->naxes; k++)
		if (strcmp(s->axis[k].name, name) == 0)
			return k;
	return -1;
}
