/* machine.c: reading machine files, the layer bandwidth rule and the
 * hierarchical ring cost. */
#include "model/machine.h"
#include "model/nccl.h"
#include "model/preset.h"
#include "model/text.h"
#include "model/units.h"

#include "model/csvread.h"
#include <ctype.h>
#include <jansson.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_KIND, C_NAME, C_COUNT, C_INNER, C_EGRESS, C_FLOW, C_VALUE, C_SOURCE, NC };
static const char *const cols[NC] = {"kind", "name", "count", "inner_bw",
				     "egress_bw", "flow_bw", "value", "source"};

struct mreader {
	struct pm_machine *m;
	const char *path;
	int map[NC];
	int row, n;
	char *const *cells;
	const char *where;	/* JSON: "levels[2]"; NULL: CSV row numbers */
};

static const char *get(const struct mreader *r, int c)
{
	int i = r->map[c];
	return i >= 0 && i < r->n ? r->cells[i] : "";
}

static int bad(const struct mreader *r, const char *what, const char *value,
	       const char *expected, struct pm_err *err)
{
	if (r->where)
		return pm_fail(err, PM_EINPUT, "machine file '%s' at %s: invalid %s '%s' (expected %s)",
			       r->path, r->where, what, value, expected);
	return pm_fail(err, PM_EINPUT, "machine file '%s' row %d: invalid %s '%s' (expected %s)",
		       r->path, r->row, what, value, expected);
}

static int opt_bw(const struct mreader *r, int c, double *out, struct pm_err *err)
{
	struct pm_err sub;
	const char *v = get(r, c);
	if (*v && pm_parse_bw(v, out, &sub))
		return bad(r, cols[c], v, "a bandwidth such as 9301.19MB/s or 400Gbps, or nothing", err);
	return PM_OK;
}

static int take_level(const struct mreader *r, struct pm_err *err)
{
	struct pm_machine *m = r->m;
	long cnt;
	struct pm_err sub;

	if (m->nlevels == PM_MACHINE_LEVELS)
		return pm_fail(err, PM_EINPUT, "machine file '%s' has more than %d levels (expected at most %d)",
			       r->path, PM_MACHINE_LEVELS, PM_MACHINE_LEVELS);
	struct pm_level *l = &m->level[m->nlevels];
	memset(l, 0, sizeof *l);
	pm_strlcpy(l->name, get(r, C_NAME), sizeof l->name);
	if (!*l->name)
		return bad(r, "level name", "", "a name such as node or rack", err);
	if (pm_parse_int(get(r, C_COUNT), 1, 1L << 30, "count", &cnt, &sub))
		return bad(r, "count", get(r, C_COUNT), "a positive integer: units of the level below", err);
	l->count = cnt;
	l->unit = (m->nlevels ? m->level[m->nlevels - 1].unit : 1) * cnt;
	if (l->unit > (1LL << 40))
		return bad(r, "count", get(r, C_COUNT), "a machine of at most 2^40 accelerators", err);
	int rc = opt_bw(r, C_INNER, &l->inner_bw, err);
	if (!rc)
		rc = opt_bw(r, C_EGRESS, &l->egress_bw, err);
	if (!rc)
		rc = opt_bw(r, C_FLOW, &l->flow_bw, err);
	pm_strlcpy(l->source, get(r, C_SOURCE), sizeof l->source);
	if (!rc)
		m->nlevels++;
	return rc;
}

/* The NCCL parameters (struct pm_machine_nccl), as a table. */
enum nkind { N_ARCH, N_CPU, N_BW, N_TIME, N_SIZE, N_COUNT, N_FLAG, N_VERSION, N_ALGOS, N_PROTOS, N_LIBRARY };
static const struct nparam {
	const char *name;
	enum nkind kind;
	size_t off;
	const char *expected;
} nparams[] = {
	{"arch", N_ARCH, offsetof(struct pm_machine_nccl, arch), "volta, ampere, hopper or blackwell"},
	{"cpu", N_CPU, offsetof(struct pm_machine_nccl, amd_cpu), "intel, amd or arm"},
	{"ring_busbw", N_BW, offsetof(struct pm_machine_nccl, ring_Bps), "a bandwidth such as 367GB/s"},
	{"nvls_busbw", N_BW, offsetof(struct pm_machine_nccl, nvls_Bps), "a bandwidth such as 480GB/s"},
	{"nic_bw", N_BW, offsetof(struct pm_machine_nccl, nic_Bps), "a bandwidth such as 48GB/s"},
	{"launch", N_TIME, offsetof(struct pm_machine_nccl, launch_s), "a time such as 4us"},
	{"host_enqueue", N_TIME, offsetof(struct pm_machine_nccl, host_s), "a time such as 3us"},
	{"net_latency", N_TIME, offsetof(struct pm_machine_nccl, net_lat_s), "a time such as 2us"},
	{"plugin_latency", N_TIME, offsetof(struct pm_machine_nccl, plugin_lat_s), "a time such as 75us"},
	{"channels", N_COUNT, offsetof(struct pm_machine_nccl, channels), "a channel count from 1 to 64"},
	{"sharp", N_FLAG, offsetof(struct pm_machine_nccl, collnet), "0 or 1"},
	{"ll128", N_FLAG, offsetof(struct pm_machine_nccl, ll128), "0 or 1"},
	{"ll128_net", N_FLAG, offsetof(struct pm_machine_nccl, ll128_net), "0 or 1"},
	{"nccl_algo", N_ALGOS, offsetof(struct pm_machine_nccl, algo_env), "NCCL_ALGO as the platform's documented setup exports it: algorithms such as ring,tree (or ^nvls to exclude)"},
	{"nccl_proto", N_PROTOS, offsetof(struct pm_machine_nccl, proto_env), "NCCL_PROTO as the platform's documented setup exports it: protocols such as simple or ^ll128"},
	{"nvls_chunk", N_SIZE, offsetof(struct pm_machine_nccl, nvls_chunk_B), "NCCL_NVLS_CHUNKSIZE as the platform's documented setup exports it: a size from 4K to 16M such as 512K"},
	{"nvlstree_chunk", N_SIZE, offsetof(struct pm_machine_nccl, nvlstree_chunk_B), "NCCL_NVLSTREE_MAX_CHUNKSIZE as the platform's documented setup exports it: a size from 4K to 16M such as 512K"},
	{"nccl_version", N_VERSION, offsetof(struct pm_machine_nccl, version), "an NCCL release from 2.18 on, such as 2.24.3"},
	{"library", N_LIBRARY, offsetof(struct pm_machine_nccl, library), "nccl or rccl"},
};

_Static_assert(sizeof nparams / sizeof nparams[0] == PM_MACHINE_NCCL_PARAMS,
	       "PM_MACHINE_NCCL_PARAMS sizes the rows a machine keeps for its NCCL parameters: one each");

static int nccl_value(const struct nparam *np, const char *v, void *dst, struct pm_err *sub)
{
	long k;
	static const char *const cpus[] = {"intel", "amd", "arm"}, *const libraries[] = {"nccl", "rccl"};

	switch (np->kind) {
	case N_ARCH:
		return (*(int *)dst = pm_nccl_arch_find(v)) < 0;
	case N_VERSION:
		return (*(int *)dst = pm_nccl_version_find(v)) < 0;
	case N_ALGOS:
	case N_PROTOS:
		return pm_nccl_mask_parse(v, np->kind == N_PROTOS, dst) != 0;
	case N_LIBRARY:
		return (*(int *)dst = (int)pm_pick(v, libraries, 2)) < 0;
	case N_CPU:
		k = pm_pick(v, cpus, 3);
		*(int *)dst = (int)k;	/* 0 Intel, 1 AMD, 2 Arm */
		return k < 0;
	case N_BW:
		return pm_parse_bw(v, dst, sub) != PM_OK;
	case N_TIME:
		return pm_parse_time(v, dst, sub) != PM_OK;
	case N_SIZE:	/* a chunk: NCCL takes any, a fill past 16 MiB a chunk means nothing here */
		return pm_parse_size(v, dst, sub) != PM_OK || *(double *)dst < 4096 || *(double *)dst > 16777216;
	case N_COUNT:
	case N_FLAG:
		if (pm_parse_int(v, np->kind == N_FLAG ? 0 : 1, np->kind == N_FLAG ? 1 : 64, np->name, &k, sub))
			return 1;
		*(int *)dst = (int)k;
		return 0;
	}
	return 1;
}

/* -1 when name is not an NCCL parameter. */
static int take_nccl_param(const struct mreader *r, const char *name, const char *v,
			   struct pm_err *err)
{
	struct pm_machine_nccl *nc = &r->m->nccl;
	struct pm_err sub;

	for (size_t i = 0; i < sizeof nparams / sizeof nparams[0]; i++) {
		if (strcmp(name, nparams[i].name))
			continue;
		if (nccl_value(&nparams[i], v, (char *)nc + nparams[i].off, &sub))
			return bad(r, name, v, nparams[i].expected, err);
		if (nc->nsrc < PM_MACHINE_NCCL_PARAMS) {
			pm_strlcpy(nc->src[nc->nsrc][0], name, sizeof nc->src[0][0]);
			pm_strlcpy(nc->src[nc->nsrc][1], v, sizeof nc->src[0][1]);
			pm_strlcpy(nc->src[nc->nsrc++][2], get(r, C_SOURCE), sizeof nc->src[0][2]);
		}
		return PM_OK;
	}
	return -1;
}

static int take_param(const struct mreader *r, struct pm_err *err)
{
	const char *name = get(r, C_NAME), *v = get(r, C_VALUE);
	struct pm_err sub;
	long s;

	if (strcmp(name, "description") == 0) {
		pm_strlcpy(r->m->description, v, sizeof r->m->description);
	} else if (strcmp(name, "alpha") == 0) {
		if (pm_parse_time(v, &r->m->alpha_s, &sub))
			return bad(r, "alpha", v, "a time such as 4.80us", err);
		pm_strlcpy(r->m->alpha_source, get(r, C_SOURCE), sizeof r->m->alpha_source);
	} else if (strcmp(name, "pipeline") == 0) {
		if (pm_parse_int(v, 1, 1 << 20, "pipeline", &s, &sub))
			return bad(r, "pipeline", v, "a positive integer s", err);
		r->m->pipeline_s = (int)s;
	} else if (strcmp(name, "nics") == 0) {
		if (pm_parse_int(v, 1, 1 << 16, "nics", &s, &sub))
			return bad(r, "nics", v, "a positive integer: network interfaces per node", err);
		r->m->nics = (int)s;
	} else if (strcmp(name, "device") == 0) {
		if (!*v || strlen(v) >= sizeof r->m->device)
			return bad(r, "device", v, "an accelerator name of data/devices.csv such as h100", err);
		pm_strlcpy(r->m->device, v, sizeof r->m->device);
		pm_strlcpy(r->m->device_source, get(r, C_SOURCE), sizeof r->m->device_source);
	} else if (strcmp(name, "network") == 0) {
		pm_strlcpy(r->m->network, v, sizeof r->m->network);
	} else {
		int rc = take_nccl_param(r, name, v, err);
		if (rc < 0) {	/* the NCCL parameters as the table names them */
			enum { NP = sizeof nparams / sizeof nparams[0] };
			const char *names[NP];
			char list[400], expected[512];
			for (int i = 0; i < NP; i++)
				names[i] = nparams[i].name;
			pm_join(list, sizeof list, names, NP);
			snprintf(expected, sizeof expected,
				 "description, alpha, pipeline, nics, device, network, or an NCCL parameter: %s", list);
			return bad(r, "parameter", name, expected, err);
		}
		return rc;
	}
	return PM_OK;
}

static int on_row(void *ctx, int row, char *const *cells, int n, struct pm_err *err)
{
	struct mreader *r = ctx;

	r->row = row;
	r->cells = cells;
	r->n = n;
	if (row == 0) {
		for (int k = 0; k < NC; k++) {
			r->map[k] = pm_csv_column(cells, n, cols[k]);
			if (r->map[k] < 0 && k < C_SOURCE)
				return pm_fail(err, PM_EINPUT,
					       "machine file '%s' has no '%s' column (expected the header kind,name,count,inner_bw,egress_bw,flow_bw,value,source)",
					       r->path, cols[k]);
		}
		return PM_OK;
	}
	const char *kind = get(r, C_KIND);
	if (strcmp(kind, "level") == 0)
		return take_level(r, err);
	if (strcmp(kind, "param") == 0)
		return take_param(r, err);
	return bad(r, "kind", kind, "level or param", err);
}

/* ---- JSON machine files: the same rows as an object (docs/cli.md) ---- */

/* What a key's JSON value must be: text (names, descriptions, sources,
 * quantities with a unit such as "400GB/s") or an integer (counts). */
static int integer_key(const char *k)
{
	static const char *const ints[] = {"count", "pipeline", "nics", "channels", "sharp", "ll128", "ll128_net"};
	for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
		if (!strcmp(k, ints[i]))
			return 1;
	return 0;
}

/* A JSON value as the text a CSV cell would hold: a string where the key
 * wants text, an integer where it wants a count; anything else is not a
 * cell (a number where a description belongs, "2" for a count). */
static int cell_text(const char *key, const json_t *v, char *buf, size_t size)
{
	if (json_is_string(v) && !integer_key(key))
		pm_strlcpy(buf, json_string_value(v), size);
	else if (json_is_integer(v) && integer_key(key))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else
		return -1;
	return 0;
}

/* A CSV-like row of the given kind, every cell empty, fed from buf. */
static void blank_row(struct mreader *r, char buf[NC][512], char **cells, const char *kind)
{
	for (int c = 0; c < NC; c++) {
		buf[c][0] = '\0';
		cells[c] = buf[c];
		r->map[c] = c;
	}
	pm_strlcpy(buf[C_KIND], kind, sizeof buf[C_KIND]);
	r->cells = cells;
	r->n = NC;
}

static int not_text(const struct mreader *r, const char *key, const json_t *v, struct pm_err *err)
{
	if (integer_key(key))
		return bad(r, key, json_is_string(v) ? json_string_value(v) : "a non-integer value",
			   "an integer such as 8 (a JSON number, not a string or a fraction)", err);
	return bad(r, key, json_is_real(v) || json_is_integer(v) ? "a number" : "a non-text value",
		   "text such as \"400GB/s\" or \"8 x H100 per node\"", err);
}

/* One level object as a level row: its keys are the CSV columns. */
static int json_level(struct mreader *r, const json_t *obj, struct pm_err *err)
{
	static const char *const keys[] = {"name", "count", "inner_bw", "egress_bw", "flow_bw", "source"};
	static const int col[] = {C_NAME, C_COUNT, C_INNER, C_EGRESS, C_FLOW, C_SOURCE};
	char buf[NC][512], *cells[NC];
	const char *k;
	json_t *v;

	blank_row(r, buf, cells, "level");
	json_object_foreach((json_t *)obj, k, v) {
		int i = 0;
		while (i < 6 && strcmp(keys[i], k))
			i++;
		if (i == 6)
			return bad(r, "key", k, "one of name, count, inner_bw, egress_bw, flow_bw, source", err);
		if (cell_text(k, v, buf[col[i]], sizeof buf[col[i]]))
			return not_text(r, k, v, err);
	}
	return take_level(r, err);
}

/* Every top-level key but levels and alpha_source as a param row (the
 * CSV reader's take_param names the keys it knows). */
static int json_params(struct mreader *r, json_t *root, struct pm_err *err)
{
	char buf[NC][512], *cells[NC], where[96], skey[96];
	const char *k;
	json_t *v;

	json_object_foreach(root, k, v) {
		size_t len = strlen(k);
		if (strcmp(k, "levels") == 0 || (len > 7 && strcmp(k + len - 7, "_source") == 0))
			continue;	/* "NAME_source" is the source of NAME */
		snprintf(where, sizeof where, "key '%.60s'", k);
		r->where = where;
		blank_row(r, buf, cells, "param");
		pm_strlcpy(buf[C_NAME], k, sizeof buf[C_NAME]);
		if (cell_text(k, v, buf[C_VALUE], sizeof buf[C_VALUE]))
			return not_text(r, k, v, err);
		snprintf(skey, sizeof skey, "%.80s_source", k);
		const json_t *src = json_object_get(root, skey);
		if (src && cell_text(skey, src, buf[C_SOURCE], sizeof buf[C_SOURCE]))
			return not_text(r, skey, src, err);
		int rc = take_param(r, err);
		if (rc)
			return rc;
	}
	return PM_OK;
}

static int json_levels(struct mreader *r, json_t *levels, struct pm_err *err)
{
	char where[32];
	size_t i;
	json_t *l;

	r->where = "levels";
	if (!json_is_array(levels))
		return bad(r, "levels", "not a list", "a list of objects, innermost level first", err);
	json_array_foreach(levels, i, l) {
		snprintf(where, sizeof where, "levels[%zu]", i);
		r->where = where;
		if (!json_is_object(l))
			return bad(r, "level", "not an object", "an object such as {\"name\": \"node\", \"count\": 8, \"inner_bw\": \"450GB/s\"}", err);
		int rc = json_level(r, l, err);
		if (rc)
			return rc;
	}
	return PM_OK;
}

static int read_json(const char *path, struct mreader *r, struct pm_err *err)
{
	size_t len;
	char *text = pm_input_read(path, "machine file", &len, err);
	json_error_t je;
	json_t *root;
	int rc;

	if (!text)
		return PM_EINPUT;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!root)
		return pm_fail(err, PM_EINPUT, "machine file '%s' line %d: %s (expected JSON: an object with description, alpha, pipeline, nics and a list of levels)",
			       path, je.line, je.text);
	if (!json_is_object(root))
		rc = pm_fail(err, PM_EINPUT, "machine file '%s': the document is not an object (expected {\"levels\": [...], ...})", path);
	else if (!json_object_get(root, "levels"))
		rc = pm_fail(err, PM_EINPUT, "machine file '%s' has no \"levels\" (expected a list of levels, innermost first)", path);
	else if (!(rc = json_params(r, root, err)))
		rc = json_levels(r, json_object_get(root, "levels"), err);
	json_decref(root);
	return rc;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a > b && strcmp(s + a - b, suffix) == 0;
}

static int read_machine(const char *path, struct pm_machine *m, struct pm_err *err)
{
	struct mreader r = {.m = m, .path = path};
	int rc = ends_with(path, ".json") ? read_json(path, &r, err)
		 : pm_csv_read(path, "machine file", on_row, NULL, &r, err);

	if (!rc && m->nlevels == 0)
		rc = pm_fail(err, PM_EINPUT, "machine file '%s' has no level rows (expected at least one 'level' row such as level,node,4,...)",
			     path);
	if (!rc && m->level[0].inner_bw <= 0 && m->level[0].egress_bw <= 0)
		rc = pm_fail(err, PM_EINPUT, "machine file '%s': level '%s' gives neither inner_bw nor egress_bw (expected the bandwidth inside or out of one %s)",
			     path, m->level[0].name, m->level[0].name);
	return rc;
}

int pm_machine_load(const char *spec, struct pm_machine *m, struct pm_err *err)
{
	memset(m, 0, sizeof *m);
	m->pipeline_s = 1;
	m->nccl.arch = -1;
	m->nccl.ll128 = 1;
	m->nccl.ll128_net = 1;
	m->nccl.plugin_lat_s = -1;
	m->nccl.channels = 16;
	if (pm_preset_find(spec, "machines", "machine", m->path, sizeof m->path,
			   m->name, sizeof m->name, err))
		return PM_EINPUT;
	int rc = read_machine(m->path, m, err);
	if (rc == PM_OK)
		m->capacity = m->level[m->nlevels - 1].unit;
	return rc;
}

double pm_machine_gpu_bw(const struct pm_machine *m)
{
	return m->nccl.ring_Bps > 0 ? m->nccl.ring_Bps : m->level[0].inner_bw;
}

double pm_machine_egress_bw(const struct pm_machine *m)
{
	double nics = m->nics > 0 ? m->nics : (double)m->level[0].count;
	return m->nccl.nic_Bps > 0 ? m->nccl.nic_Bps * nics : m->level[0].egress_bw;
}

int pm_machine_rails(const struct pm_machine *m)
{
	int G = (int)m->level[0].count;
	return m->nics > 0 && m->nics < G ? m->nics : G;
}

int pm_machine_rail_of(const struct pm_machine *m, int local)
{
	return (int)((long long)local * pm_machine_rails(m) / m->level[0].count);
}

/* Level k's inner and egress rates as the models use them: level 0's
 * achieved where the description gives them. */
static void rates(const struct pm_machine *m, int k, double *inner, double *egress)
{
	const struct pm_level *l = &m->level[k];
	*inner = l->inner_bw;
	*egress = l->egress_bw;
	if (k == 0 && l->inner_bw > 0)
		*inner = pm_machine_gpu_bw(m);
	if (k == 0 && l->egress_bw > 0)
		*egress = pm_machine_egress_bw(m);
}

int pm_machine_layer(const struct pm_machine *m, long long stride, long long p,
		     struct pm_layer_bw *out, struct pm_err *err)
{
	long long span = stride * p;
	double bw = INFINITY;

	out->crossed = -1;
	out->limit = -1;
	out->flows = 1;
	for (int k = 0; k < m->nlevels; k++) {
		const struct pm_level *l = &m->level[k];
		int crossed = span > l->unit || l->unit % span != 0;
		double inner, egress;
		rates(m, k, &inner, &egress);
		/* consecutive ring members inside one unit run at its inner rate */
		if (inner > 0 && stride < l->unit && inner < bw) {
			bw = inner;
			out->limit = k;
			out->flows = 1;
		}
		if (!crossed)
			break;
		out->crossed = k;
		long long f = l->unit < stride ? l->unit : stride;
		double share = egress > 0 ? egress / (double)f : INFINITY;
		double cap = l->flow_bw > 0 ? l->flow_bw : INFINITY;
		if (cap < share)
			share = cap;
		if (share < bw) {
			bw = share;
			out->limit = k;
			out->flows = f;
		}
	}
	if (!isfinite(bw))
		return pm_fail(err, PM_EINPUT,
			       "machine '%s' gives no bandwidth for a ring of %lld ranks at stride %lld (expected inner_bw or egress_bw on the levels it uses)",
			       m->name, p, stride);
	out->bw_Bps = bw;
	return PM_OK;
}

int pm_hier_time(const struct pm_machine *m, const int *layers, int h,
		 double n, double alpha, int s, double *time_s,
		 struct pm_hier_layer *out, struct pm_err *err)
{
	long long stride = 1;
	double total = 0;

	for (int i = 0; i < h; i++) {
		struct pm_layer_bw w;
		int p = layers[i];
		int rc = pm_machine_layer(m, stride, p, &w, err);
		if (rc)
			return rc;
		double msg = n / (double)stride;
		double half = s * alpha * (p - 1) + (p - 1) * (msg / p) / w.bw_Bps;
		if (out)
			out[i] = (struct pm_hier_layer){p, msg, w, half, half};
		total += 2 * half;
		stride *= p;
	}
	*time_s = total;
	return PM_OK;
}
