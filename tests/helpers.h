/* helpers.h: small test helpers shared by the criterion files: building
 * networks and parameters, running the perfmodel command. */
#ifndef PM_TEST_HELPERS_H
#define PM_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/algo.h"
#include "model/topo.h"

static inline struct pm_topo *topo_or_die(const char *spec)
{
	struct pm_topo *t = NULL;
	struct pm_err err;
	int rc = pm_topo_parse(spec, NULL, &t, &err);
	cr_assert_eq(rc, PM_OK, "%s: %s", spec, err.msg);
	return t;
}

/* Parameters without flow control overhead, as the papers' formulas. */
static inline struct pm_params plain_params(double alpha, double lat,
					    double bw, double gamma)
{
	struct pm_params p;
	pm_params_default(&p);
	p.flow = PM_FLOW_NONE;
	p.alpha_s = alpha;
	p.link_lat_s = lat;
	p.link_bw_Bps = bw;
	p.gamma_spB = gamma;
	return p;
}

static inline struct pm_topo *topo_with(const char *spec, double bw, double lat)
{
	struct pm_topo *t = NULL;
	struct pm_err err;
	struct pm_link_defaults ld = {.bw_Bps = bw, .lat_s = lat};
	int rc = pm_topo_parse(spec, &ld, &t, &err);
	cr_assert_eq(rc, PM_OK, "%s: %s", spec, err.msg);
	return t;
}

/* A resolved instance made for n bytes where it depends on the size
 * (the pipelines' default chunk count, multiphase's chunk=). */
static inline int made_for(struct pm_inst *in, double n, struct pm_err *err)
{
	return in->sized ? pm_algo_at_size(in, n, in, err) : PM_OK;
}

static inline void resolve_or_die(const char *algo, const struct pm_topo *t,
				  int P, struct pm_inst *in)
{
	struct pm_err err;
	int rc = pm_algo_resolve(algo, t, P, in, &err);
	cr_assert_eq(rc, PM_OK, "%s: %s", algo, err.msg);
}

static inline int rel_close(double a, double b, double rel)
{
	double scale = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
	return fabs(a - b) <= rel * (scale > 0 ? scale : 1);
}

#define assert_rel(a, b, rel) \
	cr_assert(rel_close((a), (b), (rel)), "%s = %.12g, expected %.12g", #a, (double)(a), (double)(b))

struct run {
	int status;
	char *out;
	char *err;
};

static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	size_t got = fread(s, 1, (size_t)n, f);
	s[got] = '\0';
	fclose(f);
	return s;
}

/* An SVG file's text with PLplot's &#xHH; (ASCII) escapes decoded, so
 * legends and titles can be searched for. */
static inline char *svg_text(const char *path)
{
	char *svg = slurp(path), *text = malloc(strlen(svg) + 1), *o = text;
	for (const char *p = svg; *p;) {
		unsigned c;
		int n;
		if (sscanf(p, "&#x%x;%n", &c, &n) == 1 && c < 128) {
			*o++ = (char)c;
			p += n;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	free(svg);
	return text;
}

/* Run "perfmodel ARGS" (ARGS as shell words), capturing both streams. */
static inline struct run run_perfmodel(const char *args)
{
	char cmd[4096], outp[64], errp[64];
	const char *exe = getenv("PERFMODEL");
	struct run r;
	static int seq;

	cr_assert(exe, "PERFMODEL is not set (run through meson test)");
	snprintf(outp, sizeof outp, "/tmp/pm_test_%d_%d.out", (int)getpid(), seq);
	snprintf(errp, sizeof errp, "/tmp/pm_test_%d_%d.err", (int)getpid(), seq++);
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >%s 2>%s", getenv("PM_SRCDIR"),
		 exe, args, outp, errp);
	int st = system(cmd);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	r.out = slurp(outp);
	r.err = slurp(errp);
	remove(outp);
	remove(errp);
	return r;
}

static inline void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

#endif
