/* common.c: shared network and parameter options. */
#include "cli/cli.h"
#include "cli/common.h"
#include "model/progress.h"
#include "model/machine.h"
#include "model/preset.h"
#include "model/nccl.h"
#include "model/algo.h"
#include "model/text.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char cli_units_help[] =
	"Units:\n"
	"  sizes      64M = 64 MiB, 32K = 32 KiB (binary, as the papers use); 64MiB the same;\n"
	"             1.5GB = 1.5e9 bytes and 100MB = 1e8 bytes (decimal); 4096 = 4096 bytes\n"
	"  ranges     START:END:xF (geometric, e.g. 32K:64M:x2) or START:END:+STEP\n"
	"  times      150ns, 4.8us, 2ms, 1s (a unit is required, except for 0)\n"
	"  bandwidth  16GB/s (decimal bytes), 16GiB/s (binary), 100Gbps or 100Gb/s (bits)\n";

int cli_net_opt_rows(struct cli_net_opts *o, struct cli_opt *rows)
{
	const struct cli_opt r[] = {
		{"topo", "SPEC", "network, e.g. torus:8x8, fattree:8,2, bigraph:4x8, file:net.csv (see perfmodel list)", &o->topo, NULL},
		{"link-bw", "BW", "bandwidth of every generated link (default 16GB/s, Huang et al. 2021 Table III)", &o->link_bw, NULL},
		{"link-lat", "T", "latency delta of every generated link (default 150ns, Huang et al. 2021 Table III)", &o->link_lat, NULL},
		{"dim-bw", "BW,BW[,BW]", "per-dimension link bandwidth on ring/torus/mesh, X first (Rashidi et al. 2021 Table V: 200GB/s,25GB/s,25GB/s)", &o->dim_bw, NULL},
		{"dim-lat", "T,T[,T]", "per-dimension link latency on ring/torus/mesh, X first", &o->dim_lat, NULL},
		{"inj-bw", "BW", "endpoint injection/ejection bandwidth (default: only the links limit)", &o->inj_bw, NULL},
		{"alpha", "T", "per-message startup alpha (default 0: hardware-issued messages; ~5us for MPI/NCCL)", &o->alpha, NULL},
		{"gamma", "T|BW", "reduction cost per byte, e.g. 0.05ns or a rate such as 20GB/s (default 0)", &o->gamma, NULL},
		{"flow", "F", "flow control: none, message, packet:PAYLOAD[/FLIT] (default packet:256/16)", &o->flow, NULL},
		{"pipeline", "S", "Ueno & Yokota's pipelining factor s for ring closed forms (default 1)", &o->pipeline, NULL},
		{"gpus-per-process", "G", "GPUs one process drives, as nccl-tests -g G runs: NCCL rows add the host's cost of enqueuing each collective on the G - 1 others in turn (the machine's host_enqueue, default 2.75 us; default 1: a process per GPU, as training runs)", &o->gpus_per_process, NULL},
		{"endpoint", "E", "ideal (default), baseline or ace: memory reads the endpoint needs to drive the network (Rashidi et al. 2021 SVI-A; all evaluators; the links simulator ignores it)", &o->endpoint, NULL},
		{"mem-bw", "BW", "memory bandwidth the collective may use (--endpoint baseline or ace)", &o->mem_bw, NULL},
		{"sms", "N", "baseline: SMs running the collective, each moving 64 B/cycle at 1245 MHz (79.7 GB/s); caps --mem-bw", &o->sms, NULL},
	};
	memcpy(rows, r, sizeof r);
	return (int)(sizeof r / sizeof r[0]);
}

/* "A,B[,C]": one value per grid dimension, X first. */
static int parse_dim_list(const char *opt, const char *s, int (*one)(const char *, double *, struct pm_err *),
			  double out[3], int *n, struct pm_err *err)
{
	char buf[128];
	char *save, *tok;

	*n = 0;
	pm_strlcpy(buf, s, sizeof buf);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == 3)
			return pm_fail(err, PM_EINPUT, "too many values in --%s '%s' (expected at most 3, one per dimension, X first)",
				       opt, s);
		if (one(tok, &out[(*n)++], err))
			return PM_EINPUT;
	}
	if (*n == 0 || s[strlen(s) - 1] == ',' || s[0] == ',' || strstr(s, ",,"))
		return pm_fail(err, PM_EINPUT, "invalid --%s '%s' (expected one value per dimension, X first, such as 200GB/s,25GB/s,25GB/s)",
			       opt, s);
	return PM_OK;
}

/* --sms: the baseline's SMs cap the memory bandwidth at 64 B a cycle
 * each. */
static int sms_cap(const char *sms, struct pm_params *p, struct pm_err *err)
{
	long n;

	if (p->endpoint != PM_END_BASELINE)
		return pm_fail(err, PM_EINPUT, "--sms applies to --endpoint baseline (ACE moves data without the SMs)");
	if (pm_parse_int(sms, 1, 4096, "SM count", &n, err))
		return PM_EINPUT;
	if (!(p->mem_bw_Bps > 0) || n * PM_SM_BW_Bps < p->mem_bw_Bps)
		p->mem_bw_Bps = (double)n * PM_SM_BW_Bps;
	return PM_OK;
}

/* --endpoint, --mem-bw, --sms: the memory bandwidth reads may use is
 * --mem-bw, capped for the baseline by --sms x 64 B x 1245 MHz. */
static int parse_endpoint(const struct cli_net_opts *o, struct pm_params *p,
			  struct pm_err *err)
{
	static const char *const names[] = {"ideal", "baseline", "ace", NULL};	/* enum pm_endpoint */
	int e = 0;

	if (!o->endpoint && (o->mem_bw || o->sms))
		return pm_fail(err, PM_EINPUT, "--%s needs --endpoint (expected --endpoint baseline or ace)",
			       o->mem_bw ? "mem-bw" : "sms");
	if (!o->endpoint)
		return PM_OK;
	if ((e = pm_pick_word("endpoint", o->endpoint, names, err)) < 0)
		return PM_EINPUT;
	p->endpoint = (enum pm_endpoint)e;
	if ((o->mem_bw && pm_parse_bw(o->mem_bw, &p->mem_bw_Bps, err)) || (o->sms && sms_cap(o->sms, p, err)))
		return PM_EINPUT;
	if (p->endpoint != PM_END_IDEAL && !(p->mem_bw_Bps > 0))
		return pm_fail(err, PM_EINPUT, "--endpoint %s needs the memory bandwidth the collective may use (expected --mem-bw such as 450GB/s%s)",
			       names[e], p->endpoint == PM_END_BASELINE ? ", or --sms" : "");
	return PM_OK;
}

int cli_need_two(const struct pm_topo *t, struct pm_err *err)
{
	if (pm_topo_endpoints(t) >= 2)
		return PM_OK;
	return pm_fail(err, PM_EINPUT, "network '%s' has one endpoint: nothing to reduce (expected at least 2 endpoints)",
		       pm_topo_spec(t));
}

/* --link-bw, --link-lat, --dim-bw and --dim-lat: the generated links. */
static int link_opts(const struct cli_net_opts *o, struct pm_link_defaults *ld, int have_topo, struct pm_err *err)
{
	if ((o->link_bw && pm_parse_bw(o->link_bw, &ld->bw_Bps, err)) ||
	    (o->link_lat && pm_parse_time(o->link_lat, &ld->lat_s, err)) ||
	    (o->dim_bw && parse_dim_list("dim-bw", o->dim_bw, pm_parse_bw, ld->dim_bw_Bps, &ld->ndim_bw, err)) ||
	    (o->dim_lat && parse_dim_list("dim-lat", o->dim_lat, pm_parse_time, ld->dim_lat_s, &ld->ndim_lat, err)))
		return PM_EINPUT;
	if ((o->dim_bw || o->dim_lat) && !have_topo)
		return pm_fail(err, PM_EINPUT, "--%s needs a network (expected --topo ring:N, torus:... or mesh:...)",
			       o->dim_bw ? "dim-bw" : "dim-lat");
	return PM_OK;
}

/* --inj-bw, --alpha, --gamma, --flow, --pipeline and the endpoint. */
static int param_opts(const struct cli_net_opts *o, struct pm_params *p, struct pm_err *err)
{
	long s = p->pipeline_s, g = p->host_gpus;

	if (cli_opt_long(o->gpus_per_process, 1, 1024, "GPUs per process", &g, err) ||
	    (o->inj_bw && pm_parse_bw(o->inj_bw, &p->inj_bw_Bps, err)) ||
	    (o->alpha && pm_parse_time(o->alpha, &p->alpha_s, err)) ||
	    (o->gamma && pm_parse_per_byte(o->gamma, "reduction cost", &p->gamma_spB, err)) ||
	    (o->flow && pm_parse_flow(o->flow, p, err)) ||
	    cli_opt_long(o->pipeline, 1, 1 << 20, "pipelining factor", &s, err) || parse_endpoint(o, p, err))
		return PM_EINPUT;
	p->pipeline_s = (int)s;
	p->host_gpus = (int)g;
	return PM_OK;
}

/* What the network says of the parameters: a GPU cluster's own startup,
 * and the link the closed forms see (the user's --link-bw/--link-lat,
 * where given, still win: fit's as_options). */
static void topo_params(const struct cli_net_opts *o, const struct pm_topo *t, const struct pm_link_defaults *ld,
			struct pm_params *p)
{
	const struct pm_machine *m = pm_topo_machine_desc(t);
	double bw = p->link_bw_Bps, lat = p->link_lat_s;

	if (!o->alpha && m && m->alpha_s > 0)
		p->alpha_s = m->alpha_s;
	if (!pm_topo_closed_link(t, ld, &p->link_bw_Bps, &p->link_lat_s))
		return;
	p->link_bw_Bps = o->link_bw ? bw : p->link_bw_Bps;
	p->link_lat_s = o->link_lat ? lat : p->link_lat_s;
}

int cli_net_build(const struct cli_net_opts *o, struct pm_params *p,
		  struct pm_topo **topo, struct pm_err *err)
{
	struct pm_link_defaults ld = {.bw_Bps = PM_DEFAULT_LINK_BW, .lat_s = PM_DEFAULT_LINK_LAT};

	pm_params_default(p);
	if (link_opts(o, &ld, topo && o->topo, err) || param_opts(o, p, err))
		return PM_EINPUT;
	p->link_bw_Bps = ld.bw_Bps;
	p->link_lat_s = ld.lat_s;
	if (!(topo && o->topo))
		return PM_OK;
	if (pm_topo_parse(o->topo, &ld, topo, err))
		return PM_EINPUT;
	topo_params(o, *topo, &ld, p);
	return PM_OK;
}

int cli_dim_links(const struct pm_topo *topo, const struct pm_params *p,
		  char *buf, size_t size)
{
	int dims[3], wrap, nd = pm_topo_grid(topo, dims, &wrap), differ = 0;
	char one[96];

	buf[0] = '\0';
	for (int d = 0; d < nd; d++) {
		double dbw, dlat;
		char b[32], l[32];
		pm_topo_dim_link(topo, d, &dbw, &dlat);
		if (dbw <= 0)
			continue;
		differ |= dbw != p->link_bw_Bps || dlat != p->link_lat_s;
		pm_fmt_bw(dbw, b, sizeof b);
		pm_fmt_time(dlat, l, sizeof l);
		snprintf(one, sizeof one, "%s%c %s %s", buf[0] ? ", " : "", "XYZ"[d], b, l);
		strncat(buf, one, size - strlen(buf) - 1);
	}
	return differ;
}

/* Do the closed forms see another link than the network's slowest (the
 * user gave --link-bw or --link-lat on a network with its own rates)? */
static int given_link(const struct pm_topo *topo, const struct pm_params *p)
{
	double bw = p->link_bw_Bps, lat = p->link_lat_s;
	pm_topo_slowest(topo, &bw, &lat);
	return bw != p->link_bw_Bps || lat != p->link_lat_s;
}

/* "50 GB/s to 450 GB/s" when the network's links differ in bandwidth. */
static int link_range(const struct pm_topo *topo, char *buf, size_t size)
{
	const struct pm_link *l = pm_topo_links(topo);
	double lo = 0, hi = 0;
	char a[32], b[32];

	for (int i = 0; i < pm_topo_nlinks(topo); i++) {
		lo = i == 0 || l[i].bw_Bps < lo ? l[i].bw_Bps : lo;
		hi = i == 0 || l[i].bw_Bps > hi ? l[i].bw_Bps : hi;
	}
	if (lo == hi)
		return 0;
	pm_fmt_bw(lo, a, sizeof a);
	pm_fmt_bw(hi, b, sizeof b);
	snprintf(buf, size, "%s to %s", a, b);
	return 1;
}

void cli_nccl_meta(struct cli_table *t, const struct pm_topo *topo, int explain)
{
	const struct pm_machine *m = pm_topo_machine_desc(topo);
	char line[512];
	size_t len = 0;

	if (!m || m->nccl.arch < 0)
		return;
	for (int i = 0; i < m->nccl.nsrc && len < sizeof line; i++)
		len += (size_t)snprintf(line + len, sizeof line - len, "%s%s %s", i ? ", " : "",
					m->nccl.src[i][0], m->nccl.src[i][1]);
	char rel[32];
	pm_nccl_epoch_name(m->nccl.version, rel, sizeof rel);
	cli_table_meta(t, "nccl rows: NCCL's model (algorithm/protocol(channels) it would run; %s constants, %s) on %s's NCCL parameters: %s; --alpha, --link-bw and the links above do not enter them",
		       m->nccl.version ? rel : pm_nccl_version,
		       m->nccl.version ? "the machine's nccl_version" : "the newest; nccl:...,RELEASE or the machine's nccl_version picks another",
		       m->name, line);
	if (m->nccl.library == 1)
		cli_table_meta(t, "library rccl: on one node RCCL %s's own tuning tables price and choose (8 MI300X on a full xGMI mesh); across nodes NCCL's model (docs/model.md, NCCL, RCCL)",
			       pm_rccl_version);
	for (int i = 0; explain && i < m->nccl.nsrc; i++)
		cli_table_meta(t, "  %s %s: %s", m->nccl.src[i][0], m->nccl.src[i][1], m->nccl.src[i][2]);
}

/* The links line: per grid dimension, the network's own range of rates,
 * or the one rate of every link. */
static void links_meta(struct cli_table *t, const struct pm_topo *topo, const struct pm_params *p, const char *bw,
		       const char *lat, const char *inj)
{
	char per[256];

	if (topo && cli_dim_links(topo, p, per, sizeof per))
		cli_table_meta(t, "links per dimension: %s; closed forms that see one link use the slowest: %s, delta %s; injection: %s",
			       per, bw, lat, inj);
	else if (topo && link_range(topo, per, sizeof per))
		cli_table_meta(t, "links: the network's own, %s; closed forms that see one link use %s: %s, delta %s; injection: %s",
			       per, given_link(topo, p) ? "--link-bw and --link-lat" : "the slowest", bw, lat, inj);
	else
		cli_table_meta(t, "links: %s, delta %s per link; injection: %s", bw, lat, inj);
}

/* The alpha, gamma, flow control and pipelining line (m: the machine
 * whose startup alpha is, or NULL). */
static void alpha_meta(struct cli_table *t, const struct pm_params *p, const struct pm_machine *m)
{
	char alpha[32], flow[64], whose[600] = "";

	pm_fmt_time(p->alpha_s, alpha, sizeof alpha);
	pm_fmt_flow(p, flow, sizeof flow);
	if (m && m->alpha_s > 0 && p->alpha_s == m->alpha_s)
		snprintf(whose, sizeof whose, " (%s's: %s)", m->name, m->alpha_source);
	cli_table_meta(t, "alpha %s per message%s; gamma %.4g ns/B; flow control %s; pipelining s = %d",
		       alpha, whose, p->gamma_spB * 1e9, flow, p->pipeline_s);
}

/* A GPU cluster's achieved rates. */
static void machine_meta(struct cli_table *t, const struct pm_machine *m)
{
	char g[32], e[32];
	int nics = m->nics > 0 ? m->nics : (int)m->level[0].count;

	pm_fmt_bw(pm_machine_gpu_bw(m), g, sizeof g);
	pm_fmt_bw(pm_machine_egress_bw(m), e, sizeof e);
	cli_table_meta(t, "machine %s: links at the rates it achieves, %s per GPU in a ring and %s out of a node over %d NIC%s (%s), not the nominal ones; ring's closed form takes its channels' own bottleneck, not the slowest link",
		       m->name, g, e, nics, nics > 1 ? "s" : "",
		       m->nccl.ring_Bps > 0 || m->nccl.nic_Bps > 0 ? "its ring_busbw and nic_bw" : "none given: nominal");
}

/* The endpoint model's line (Rashidi et al. 2021). */
static void endpoint_meta(struct cli_table *t, const struct pm_params *p)
{
	char mem[32];

	pm_fmt_bw(p->mem_bw_Bps, mem, sizeof mem);
	cli_table_meta(t, "endpoint: %s, memory reads at %s (Rashidi et al. 2021 SVI-A: %s); contention rows only, closed forms and the simulator do not model the endpoint",
		       p->endpoint == PM_END_ACE ? "ace" : "baseline", mem,
		       p->endpoint == PM_END_ACE ? "each byte of own data read once into the engine's SRAM"
						 : "2 bytes read per byte sent in a reduction step, 1 in a copy step");
}

void cli_net_meta(struct cli_table *t, const struct pm_topo *topo,
		  const struct pm_params *p)
{
	char bw[32], lat[32], inj[32] = "links only";
	const struct pm_machine *m = topo ? pm_topo_machine_desc(topo) : NULL;

	pm_fmt_bw(p->link_bw_Bps, bw, sizeof bw);
	pm_fmt_time(p->link_lat_s, lat, sizeof lat);
	if (p->inj_bw_Bps > 0)
		pm_fmt_bw(p->inj_bw_Bps, inj, sizeof inj);
	if (topo)
		cli_table_meta(t, "network: %s, %d endpoints, %d switches, %d links", pm_topo_spec(topo),
			       pm_topo_endpoints(topo), pm_topo_vertices(topo) - pm_topo_endpoints(topo), pm_topo_nlinks(topo));
	links_meta(t, topo, p, bw, lat, inj);
	alpha_meta(t, p, m);
	if (m)
		machine_meta(t, m);
	if (m && m->nccl.arch >= 0 && p->host_gpus > 1)
		cli_table_meta(t, "one process drives %d GPUs (--gpus-per-process, as nccl-tests -g %d): NCCL rows add the host's enqueue on the %d others, %.4g us each (%s)",
			       p->host_gpus, p->host_gpus, p->host_gpus - 1,
			       pm_nccl_host_s(m) * 1e6,
			       m->nccl.host_s > 0 ? "the machine's host_enqueue" : "nccl-tests with -g on a DGX A100, NVIDIA/nccl-tests issue 123");
	if (p->endpoint != PM_END_IDEAL)
		endpoint_meta(t, p);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The line, at most four times a second, from a second in, on a terminal. */
static void show(struct cli_progress *pr, const char *what, double done, double total)
{
	double t = now_s();

	if (!pr->tty || t - pr->t0 < 1.0 || t - pr->last < 0.25)
		return;
	pr->last = t;
	if (total > 0)
		fprintf(stderr, "\rperfmodel: %s: %s %.0f%% (%.0f s)\033[K", pr->job, what, 100 * fmin(done / total, 1), t - pr->t0);
	else
		fprintf(stderr, "\rperfmodel: %s: %s %.3g (%.0f s)\033[K", pr->job, what, done, t - pr->t0);
	fflush(stderr);
	pr->shown = 1;
}

/* What the model reports inside one job (simulator events, tree building). */
static void inside(void *ctx, const char *what, double done, double total)
{
	show(ctx, what, done, total);
}

void cli_progress_start(struct cli_progress *pr)
{
	pr->t0 = now_s();
	pr->last = 0;
	/* a command a sweep runs shows none: the sweep has its own line */
	pr->tty = cli_out() == stdout && isatty(STDERR_FILENO);
	pr->shown = 0;
	pr->job[0] = '\0';
	if (pr->tty)
		pm_progress_set(inside, pr);
}

void cli_progress_step(struct cli_progress *pr, const char *what, int i, int n)
{
	snprintf(pr->job, sizeof pr->job, "%s (%d/%d)", what, i + 1, n);
	show(pr, "started", i, n);
}

void cli_progress_end(struct cli_progress *pr)
{
	pm_progress_set(NULL, NULL);
	if (pr->shown)
		fprintf(stderr, "\r\033[K");
}

/* Does the piece s (up to a comma) start with an algorithm's name? */
static int names_algo(const char *s)
{
	int n;
	const struct pm_algo *const *all = pm_algos(&n);
	size_t len = strcspn(s, ":,");

	for (int i = 0; i < n; i++)
		if (strlen(all[i]->name) == len && strncmp(all[i]->name, s, len) == 0)
			return 1;
	return 0;
}

int cli_first_refusal(const int *rc, const struct pm_err *errs, int n, int all, struct pm_err *err)
{
	for (int k = 0; k < n && !all; k++)
		if (rc[k] != PM_OK && rc[k] != PM_ENOTAPPLICABLE) {
			*err = errs[k];
			return rc[k];
		}
	return PM_OK;
}

int cli_split_algos(const char *list, char *buf, size_t size, char **items,
		    int max, struct pm_err *err)
{
	int n = 0;

	if (strlen(list) >= size)
		return pm_fail(err, PM_EINPUT, "algorithm list too long (expected at most %zu characters)",
			       size - 1), -1;
	strcpy(buf, list);
	for (char *p = buf; p;) {
		char *comma = strchr(p, ',');
		/* an argument goes on only after an item that has one */
		if (n == 0 || names_algo(p) || !strchr(items[n - 1], ':')) {
			if (n == max)
				return pm_fail(err, PM_EINPUT, "too many algorithms (expected at most %d)", max), -1;
			items[n++] = p;
			if (p > buf)
				p[-1] = '\0';
		}
		p = comma ? comma + 1 : NULL;
	}
	return n;
}

int cli_algo_names(enum pm_coll coll, const char *list, char *buf, size_t size,
		   char **names, int max, struct pm_err *err)
{
	int n = 0, na;
	const struct pm_algo *const *all = pm_algos(&na);

	if (strcmp(list, "all") == 0) {
		for (int i = 0; i < na && n < max; i++)
			if (pm_algo_does(all[i], coll))
				names[n++] = (char *)all[i]->name;
		return n;
	}
	if (pm_check_list("algo", list, ',', "ring,dbtree", err))
		return -1;
	return cli_split_algos(list, buf, size, names, max, err);
}

void cli_print_presets(const char *title, const char *kind)
{
	char **names;
	int np;
	if (pm_preset_names(kind, &names, &np) != PM_OK)
		return;
	fprintf(cli_out(), "%s in %s/%s:", title, pm_data_dir(), kind);
	for (int i = 0; i < np; i++)
		fprintf(cli_out(), "%s %s", i ? "," : "", names[i]);
	fputc('\n', cli_out());
	pm_free_strings(names, np);
}
