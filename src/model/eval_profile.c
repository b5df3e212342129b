/* eval_profile.c: a schedule's link loads counted once, priced at any
 * message size (eval.h, struct pm_profile).
 *
 * The contention evaluator's price of a step depends on the message size
 * n only through the wire bytes of each transfer, w(n cnt / nchunks): a
 * transfer's route, latency and the links it shares do not move with n.
 * So the transfers of a schedule fall into classes by their unit count
 * cnt (a ring has one, a double binary tree two or three), and a link's
 * load in a step is sum over classes of m_c x w_c, m_c the transfers of
 * class c that cross it.  The profile keeps, per stored step, what the
 * step's price needs of those counts:
 *   - one class: the step's load time is w_c x max over links of m / bw
 *     (and over endpoints of injected and ejected counts / injection bw),
 *     two numbers;
 *   - several classes: each loaded link and endpoint with its counts, and
 *     the maximum is taken per size;
 * and the size-linear terms (bytes reduced, read from memory and sent
 * per rank) as unit counts.  Pricing a size then costs the stored steps
 * (plus the multi-class entries and the used links once), not the
 * transfers times their routes: on 65,536 GPUs a size costs about a
 * millisecond an algorithm instead of the tenths of a second a routing
 * takes (docs/validation/06-scale.md).  The sums are the same as
 * pm_eval_contention's to rounding (a test holds them to 1e-12 on every
 * algorithm of its suite).
 */
#include "model/eval.h"
#include "model/grow.h"

#include <stdlib.h>
#include <string.h>

/* fmax without its NaN rules (no NaN reaches here): inlined */
static inline double mx(double a, double b) { return a > b ? a : b; }

#define MAXC 64			/* transfer classes a schedule may have (K) */
#define MAXS 8			/* classes one step may mix (S) */
#define MAX_ENTRIES (1u << 22)	/* multi-class entries kept (S counts each) */
#define MAX_RUN_COUNTS (1u << 23)	/* links x K run-wide counts (64 MB) */

struct pstep {
	int nt, hops_max, ncls;
	size_t xfers;
	double lat_max;
	double bwf, maxm;		/* one class: max m/bw (and inj), max m */
	size_t e0, ne;			/* several: entries [e0, e0+ne) */
	double red_u, mem_u;		/* max units reduced at, and read by, one rank */
	int cls[MAXS];			/* the step's classes (global indices), by slot */
};

struct pm_profile {
	const struct pm_topo *t;
	const struct pm_sched *s;
	struct pm_params p;
	int ncls;			/* K: classes, the stride of run-wide counts */
	int nslot;			/* S: most classes in one step, the stride of a step's counts */
	uint32_t cnt[MAXC];		/* unit count of each class */
	uint8_t sw[MAXC];		/* ... and whether a switch carries it (at_switch) */
	double hops_rep[MAXC];		/* sum of route length x rep per class */
	struct pstep *st;		/* per stored step */
	double *e_inv;			/* per entry: 1 / bandwidth */
	uint8_t *e_link;		/* per entry: a link (1) or an endpoint port (0) */
	double *e_m;			/* per entry: S counts, by the step's slots */
	size_t ne, cape;
	int *used;			/* links loaded in the run */
	double *run_m;			/* per used link: K counts x rep */
	int nused;
	double sent_u, memrun_u;	/* max units one rank sends, reads (run) */
};

struct build {
	double *m;			/* per link: S counts this step, by slot */
	int *touched;
	double *inj, *ej;		/* per endpoint: S counts this step */
	int *etouched;			/* endpoints injecting or ejecting */
	double *red, *mem;		/* per rank, units this step */
	double *sent, *memrun;		/* per rank, units x rep */
	double *run;			/* per class, per link: counts x rep (class-major:
					 * a step of one class stays in one row) */
	int *route;
};

static void build_free(struct build *b)
{
	void *own[] = {&b->m, &b->touched, &b->inj, &b->ej, &b->etouched, &b->red, &b->mem,
		&b->sent, &b->memrun, &b->run, &b->route};
	pm_free_each(own, sizeof own / sizeof *own);
}

static int build_alloc(struct build *b, int L, int E, int R, int H, int S, int K)
{
	b->m = calloc((size_t)L * S + 1, sizeof(double));
	b->touched = malloc(sizeof(int) * ((size_t)L + 1));
	b->inj = calloc((size_t)E * S + 1, sizeof(double));
	b->ej = calloc((size_t)E * S + 1, sizeof(double));
	b->etouched = malloc(sizeof(int) * (2 * (size_t)E + 1));
	b->red = calloc((size_t)R + 1, sizeof(double));
	b->mem = calloc((size_t)R + 1, sizeof(double));
	b->sent = calloc((size_t)R + 1, sizeof(double));
	b->memrun = calloc((size_t)R + 1, sizeof(double));
	b->run = calloc((size_t)L * K + 1, sizeof(double));
	b->route = malloc(sizeof(int) * ((size_t)H + 1));
	return b->m && b->touched && b->inj && b->ej && b->etouched && b->red && b->mem &&
	       b->sent && b->memrun && b->run && b->route;
}

void pm_profile_free(struct pm_profile *f)
{
	if (!f)
		return;
	free(f->st);
	free(f->e_inv);
	free(f->e_link);
	free(f->e_m);
	free(f->used);
	free(f->run_m);
	free(f);
}

/* The class of unit count cnt, added if new; -1 past MAXC. */
static int class_of(struct pm_profile *f, const struct pm_xfer *x)
{
	int c = 0;

	while (c < f->ncls && (f->cnt[c] != x->cnt || f->sw[c] != x->at_switch))
		c++;
	if (c == f->ncls) {
		if (f->ncls == MAXC)
			return -1;
		f->sw[f->ncls] = x->at_switch;
		f->cnt[f->ncls++] = x->cnt;
	}
	return c;
}

/* The classes of s (K) and the most one stored step mixes (S). */
static int classes(struct pm_profile *f, const struct pm_sched *s)
{
	for (int k = 0; k < s->nstored; k++) {
		int mine[MAXS], n = 0;
		for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
			int g = class_of(f, &s->x[i]), q = 0;
			if (g < 0)
				return -1;
			while (q < n && mine[q] != g)
				q++;
			if (q == n) {
				if (n == MAXS)
					return -1;
				mine[n++] = g;
			}
		}
		if (n > f->nslot)
			f->nslot = n;
	}
	return 0;
}

static int add_entry(struct pm_profile *f, double inv, int link, const double *m)
{
	size_t K = (size_t)f->nslot;

	if (f->ne == f->cape) {
		size_t cap = pm_grow_cap(f->cape, f->ne + 1, 1024);
		if (cap > MAX_ENTRIES || pm_resize(&f->e_inv, cap, sizeof *f->e_inv) ||
		    pm_resize(&f->e_link, cap, 1) || pm_resize(&f->e_m, cap * K, sizeof *f->e_m))
			return -1;
		f->cape = cap;
	}
	f->e_inv[f->ne] = inv;
	f->e_link[f->ne] = (uint8_t)link;
	memcpy(f->e_m + f->ne * K, m, K * sizeof *m);
	f->ne++;
	return 0;
}

/* The step's slot of class g, given one if new. */
static int slot_of(struct pstep *ps, int g)
{
	for (int i = 0; i < ps->ncls; i++)
		if (ps->cls[i] == g)
			return i;
	ps->cls[ps->ncls] = g;
	return ps->ncls++;
}

static int all_zero(const double *v, int K)
{
	for (int c = 0; c < K; c++)
		if (v[c] != 0)
			return 0;
	return 1;
}

/* Count transfer i (slot q of the step) on its route's links and, with an
 * injection limit, on its endpoints' ports; the longest route. */
static int count_route(struct pm_profile *f, struct pstep *ps, size_t i, int q, struct build *b, int *ne,
		       int *ends)
{
	const struct pm_sched *s = f->s;
	const int *route;
	int S = f->nslot, a = s->map[s->x[i].src], d = s->map[s->x[i].dst];
	int h = pm_eval_route(f->t, s, i, b->route, &route);

	for (int j = 0; j < h; j++) {
		double *m = b->m + (size_t)route[j] * S;
		if (all_zero(m, S))
			b->touched[ps->nt++] = route[j];
		m[q] += 1;
	}
	if (!f->p.lat_in_alpha)
		ps->lat_max = mx(ps->lat_max, pm_topo_route_lat(f->t, route, h));
	if (h > ps->hops_max)
		ps->hops_max = h;
	*ends = pm_eval_ends(f->t, s, i, route, h);
	for (int r = 0; r < 2 && f->p.inj_bw_Bps > 0; r++) {
		if (!(*ends & (1 << r)))
			continue;	/* a switch's end */
		double *v = (r ? b->ej : b->inj) + (size_t)(r ? d : a) * S;
		if (all_zero(v, S))
			b->etouched[(*ne)++] = r ? -1 - d : a;
		v[q] += 1;
	}
	return h;
}

/* Each rank's reads of step k (the most one rank reads), added to the
 * run's, and the step's reduce tallies cleared. */
static void close_ranks(struct pm_profile *f, struct pstep *ps, int k, double rep, struct build *b)
{
	const struct pm_sched *s = f->s;

	for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
		const struct pm_xfer *x = &s->x[i];
		for (int r = 0; r < 2; r++) {	/* sender and receiver, each once */
			int q = r ? x->dst : x->src;
			ps->mem_u = mx(ps->mem_u, b->mem[q]);
			b->memrun[q] += b->mem[q] * rep;
			b->mem[q] = 0;
		}
		b->red[x->dst] = 0;
	}
}

/* Route and count stored step k's transfers (the step played rep times):
 * per link and endpoint port the transfers of each class, per rank the
 * units it reduces, reads and sends. */
static void route_step(struct pm_profile *f, struct pstep *ps, int k, double rep,
		       struct build *b, int *ne)
{
	const struct pm_sched *s = f->s;
	int g = 0, q = 0;
	uint32_t last = 0;
	int last_sw = 0;

	for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
		const struct pm_xfer *x = &s->x[i];
		if (i == s->step_off[k] || x->cnt != last || x->at_switch != last_sw) {	/* most transfers of a step are alike */
			last = x->cnt;
			last_sw = x->at_switch;
			g = class_of(f, x);
			q = slot_of(ps, g);
		}
		int ends, h = count_route(f, ps, i, q, b, ne, &ends);
		if (f->p.endpoint != PM_END_IDEAL) {	/* in units: unit = 1 */
			double src, dst;
			pm_endpoint_reads(s, x, 1, f->p.endpoint, NULL, &src, &dst);
			b->mem[x->src] += src;
			b->mem[x->dst] += dst;
		}
		b->sent[x->src] += ends & 1 ? (double)x->cnt * rep : 0;
		if (x->op == PM_REDUCE) {
			b->red[x->dst] += x->cnt;
			ps->red_u = mx(ps->red_u, b->red[x->dst]);
		}
		f->hops_rep[g] += (double)h * rep;
	}
	close_ranks(f, ps, k, rep, b);
}

/* One loaded link or port of the step (counts v, 1/bandwidth inv): the
 * one-class bottleneck, or an entry; the counts are cleared. */
static int keep(struct pm_profile *f, struct pstep *ps, double *v, double inv, int link)
{
	int rc = 0;

	if (ps->ncls == 1) {
		ps->bwf = mx(ps->bwf, v[0] * inv);
		if (link)
			ps->maxm = mx(ps->maxm, v[0]);
	} else {
		rc = add_entry(f, inv, link, v);
	}
	memset(v, 0, (size_t)f->nslot * sizeof *v);
	return rc;
}

/* Count stored step k (played rep times) into f. */
static int count_step(struct pm_profile *f, int k, double rep, struct build *b)
{
	const struct pm_link *links = pm_topo_links(f->t);
	struct pstep *ps = &f->st[k];
	int ne = 0, S = f->nslot, L = pm_topo_nlinks(f->t);

	memset(ps, 0, sizeof *ps);
	ps->xfers = f->s->step_off[k + 1] - f->s->step_off[k];
	ps->e0 = f->ne;
	route_step(f, ps, k, rep, b, &ne);
	for (int j = 0; j < ps->nt; j++) {
		int l = b->touched[j];
		double *m = b->m + (size_t)l * S;
		for (int c = 0; c < ps->ncls; c++)
			b->run[(size_t)ps->cls[c] * L + l] += m[c] * rep;
		if (keep(f, ps, m, 1 / links[l].bw_Bps, 1))
			return -1;
	}
	for (int j = 0; j < ne; j++) {
		int e = b->etouched[j];
		double *v = e >= 0 ? b->inj + (size_t)e * S : b->ej + (size_t)(-1 - e) * S;
		if (keep(f, ps, v, 1 / f->p.inj_bw_Bps, 0))
			return -1;
	}
	ps->ne = f->ne - ps->e0;
	return 0;
}

static int refuse(struct pm_profile *f, struct build *b, struct pm_err *err, const char *why)
{
	build_free(b);
	pm_profile_free(f);
	return pm_fail(err, PM_ENOTAPPLICABLE, "not applicable: %s", why);
}

static int link_used(const struct build *b, int l, int L, int K)
{
	for (int c = 0; c < K; c++)
		if (b->run[(size_t)c * L + l] != 0)
			return 1;
	return 0;
}

/* The links the run loads, with their counts x rep (link-major). */
static int keep_used(struct pm_profile *f, const struct build *b, int L)
{
	int K = f->ncls;

	for (int l = 0; l < L; l++)
		f->nused += link_used(b, l, L, K);
	if (!(f->used = malloc(sizeof(int) * ((size_t)f->nused + 1))) ||
	    !(f->run_m = malloc(sizeof(double) * (size_t)K * ((size_t)f->nused + 1))))
		return -1;
	f->nused = 0;
	for (int l = 0; l < L; l++)
		if (link_used(b, l, L, K)) {
			f->used[f->nused] = l;
			for (int c = 0; c < K; c++)
				f->run_m[(size_t)f->nused * K + c] = b->run[(size_t)c * L + l];
			f->nused++;
		}
	return 0;
}

int pm_profile_build(const struct pm_topo *t, const struct pm_sched *s, const struct pm_params *p,
		     struct pm_profile **out, struct pm_err *err)
{
	struct build b;
	struct pm_profile *f;
	int L = pm_topo_nlinks(t);

	*out = NULL;
	memset(&b, 0, sizeof b);
	if (p->endpoint == PM_END_ACE)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: ACE's memory reads depend on which units each pass moves");
	if (!(f = calloc(1, sizeof *f)))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	f->t = t;
	f->s = s;
	f->p = *p;
	if (classes(f, s))
		return refuse(f, &b, err, "more than 64 transfer sizes in a schedule, or 8 in one step");
	if ((double)L * f->ncls > MAX_RUN_COUNTS)
		return refuse(f, &b, err, "too many links x transfer sizes for a profile");
	if (!(f->st = calloc((size_t)s->nstored + 1, sizeof *f->st)) ||
	    !build_alloc(&b, L, pm_topo_endpoints(t), s->nranks, pm_topo_max_hops(t), f->nslot + 1, f->ncls + 1))
		return refuse(f, &b, err, "out of memory for a schedule's profile");
	for (int r = 0; r < s->nruns; r++)
		for (int i = 0; i < s->runs[r].span; i++)
			if (count_step(f, s->runs[r].first + i, s->runs[r].rep, &b))
				return refuse(f, &b, err, "too many loaded links in steps of several transfer sizes");
	if (keep_used(f, &b, L))
		return refuse(f, &b, err, "out of memory for a schedule's profile");
	for (int r = 0; r < s->nranks; r++) {
		f->sent_u = mx(f->sent_u, b.sent[r]);
		f->memrun_u = mx(f->memrun_u, b.memrun[r]);
	}
	build_free(&b);
	*out = f;
	return PM_OK;
}

/* Stored step ps at wire bytes w (per class): load time, busiest link. */
static void load_of(const struct pm_profile *f, const struct pstep *ps, const double *w,
		    double *load_s, double *max_link)
{
	size_t S = (size_t)f->nslot;

	if (ps->ncls == 1) {
		*load_s = w[ps->cls[0]] * ps->bwf;
		*max_link = w[ps->cls[0]] * ps->maxm;
		return;
	}
	*load_s = *max_link = 0;
	for (size_t e = ps->e0; e < ps->e0 + ps->ne; e++) {
		const double *m = f->e_m + e * S;
		double v = 0;
		for (int c = 0; c < ps->ncls; c++)
			v += m[c] * w[ps->cls[c]];
		*load_s = mx(*load_s, v * f->e_inv[e]);
		if (f->e_link[e])
			*max_link = mx(*max_link, v);
	}
}

/* The run's terms at unit bytes a unit and wire bytes w per class. */
static void price_steps(const struct pm_profile *f, double unit, const double *w,
			struct pm_cost *out, struct pm_step_cost *steps)
{
	const struct pm_sched *s = f->s;
	const struct pm_params *p = &f->p;

	for (int r = 0, step = 0; r < s->nruns; r++) {
		const struct pm_run *run = &s->runs[r];
		for (int i = 0; i < run->span; i++) {
			const struct pstep *ps = &f->st[run->first + i];
			double load_s, max_link;
			load_of(f, ps, w, &load_s, &max_link);
			if (p->endpoint != PM_END_IDEAL)
				load_s = mx(load_s, ps->mem_u * unit / p->mem_bw_Bps);
			struct pm_step_cost c = {
				.alpha_s = ps->xfers ? p->alpha_s : 0,
				.lat_s = ps->lat_max,
				.bw_s = load_s,
				.red_s = ps->red_u * unit * p->gamma_spB,
				.max_link_B = max_link,
				.busy_links = ps->nt,
				.hops_max = ps->hops_max,
				.xfers = ps->xfers,
			};
			c.time_s = c.alpha_s + c.lat_s + c.bw_s + c.red_s;
			out->alpha_s += c.alpha_s * run->rep;
			out->lat_s += c.lat_s * run->rep;
			out->bw_s += c.bw_s * run->rep;
			out->red_s += c.red_s * run->rep;
			out->time_s += c.time_s * run->rep;
			out->util_avg += c.time_s * ps->nt * run->rep;
			for (int j = 0; steps && j < run->rep; j++)
				steps[step + j * run->span + i] = c;
		}
		step += run->span * run->rep;
	}
}

void pm_profile_price(const struct pm_profile *f, double n, struct pm_cost *out,
		      struct pm_step_cost *steps)
{
	size_t K = (size_t)f->ncls;
	double unit = n / f->s->nchunks, w[MAXC];
	int L = pm_topo_nlinks(f->t);

	memset(out, 0, sizeof *out);
	for (size_t c = 0; c < K; c++) {
		w[c] = pm_wire_bytes(&f->p, unit * f->cnt[c]) * (f->sw[c] ? pm_switch_scale(&f->p) : 1);
		out->wire_B += w[c] * f->hops_rep[c];
	}
	price_steps(f, unit, w, out, steps);
	for (int u = 0; u < f->nused; u++) {
		double v = 0;
		for (size_t c = 0; c < K; c++)
			v += f->run_m[u * K + c] * w[c];
		out->max_link_B = mx(out->max_link_B, v);
	}
	out->steps = f->s->nsteps;
	out->sent_B = f->sent_u * unit;
	out->mem_B = f->memrun_u * unit;
	out->links_used = L ? (double)f->nused / L : 0;
	out->util_avg = out->time_s > 0 && L ? out->util_avg / (out->time_s * L) : 0;
}
