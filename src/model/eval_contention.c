/* eval_contention.c: the per-step contention evaluator (see eval.h). */
#include "model/eval.h"
#include "model/grow.h"

#include <stdlib.h>
#include <string.h>

void pm_cost_closed_init(struct pm_cost *c)
{
	memset(c, 0, sizeof *c);
	c->wire_B = -1;
	c->max_link_B = -1;
	c->links_used = -1;
	c->util_avg = -1;
}

double pm_algbw(double n, double time_s)
{
	return time_s > 0 ? n / time_s : 0;
}

double pm_busbw(double n, double time_s, int P)
{
	return P > 1 ? pm_algbw(n, time_s) * 2.0 * (P - 1) / P : 0;
}

struct scratch {
	double *step_load;	/* wire bytes per link, this step */
	double *run_load;	/* wire bytes per link, whole run */
	int *touched;		/* links loaded this step */
	double *inj, *ej;	/* wire bytes injected/ejected per endpoint */
	double *red;		/* payload bytes reduced per rank this step */
	double *sent;		/* payload bytes sent per rank, whole run */
	int *route;
	double *mem, *mem_run;	/* endpoint: bytes read per rank, step and run */
	uint8_t *cached;	/* ACE: [rank][unit] already in the engine's SRAM */
};

static void scratch_free(struct scratch *z)
{
	void *own[] = {&z->step_load, &z->run_load, &z->touched, &z->inj, &z->ej, &z->red,
		&z->sent, &z->route, &z->mem, &z->mem_run, &z->cached};
	pm_free_each(own, sizeof own / sizeof *own);
}

static int scratch_alloc(struct scratch *z, int links, int ends, int ranks,
			 int hops)
{
	memset(z, 0, sizeof *z);
	z->step_load = calloc((size_t)links + 1, sizeof(double));
	z->run_load = calloc((size_t)links + 1, sizeof(double));
	z->touched = malloc(sizeof(int) * ((size_t)links + 1));
	z->inj = calloc((size_t)ends + 1, sizeof(double));
	z->ej = calloc((size_t)ends + 1, sizeof(double));
	z->red = calloc((size_t)ranks + 1, sizeof(double));
	z->sent = calloc((size_t)ranks + 1, sizeof(double));
	z->route = malloc(sizeof(int) * ((size_t)hops + 1));
	z->mem = calloc((size_t)ranks + 1, sizeof(double));
	z->mem_run = calloc((size_t)ranks + 1, sizeof(double));
	return z->step_load && z->run_load && z->touched && z->inj && z->ej &&
	       z->red && z->sent && z->route && z->mem && z->mem_run;
}

/* The memory reads transfer x costs its endpoints this step (params.h,
 * enum pm_endpoint): baseline 2 bytes per byte sent in a reduction and 1
 * in a copy; ACE the units its sender sends, and its receiver reduces
 * into, that are not yet in the engine's SRAM. */
void pm_endpoint_reads(const struct pm_sched *s, const struct pm_xfer *x, double unit,
		       enum pm_endpoint e, uint8_t *cached, double *src_B, double *dst_B)
{
	*src_B = *dst_B = 0;
	if (e == PM_END_BASELINE) {
		*src_B = unit * x->cnt * (x->op == PM_REDUCE ? 2 : 1);
		return;
	}
	if (e != PM_END_ACE)
		return;
	for (int r = 0; r < 2; r++) {
		int q = r ? x->dst : x->src;
		uint8_t *c = cached + (size_t)q * s->nchunks;
		if (r && x->op != PM_REDUCE)
			break;	/* a copy arrives final: nothing of its own to load */
		for (uint32_t u = x->lo; u < x->lo + x->cnt; u++)
			if (!c[u]) {
				c[u] = 1;
				*(r ? dst_B : src_B) += unit;
			}
	}
}

static void read_memory(const struct pm_sched *s, const struct pm_xfer *x,
			double unit, enum pm_endpoint e, struct scratch *z)
{
	double src, dst;
	pm_endpoint_reads(s, x, unit, e, z->cached, &src, &dst);
	z->mem[x->src] += src;
	z->mem[x->dst] += dst;
}

int pm_eval_route(const struct pm_topo *t, const struct pm_sched *s, size_t i, int *buf, const int **links)
{
	if (s->route_off) {
		*links = s->route + s->route_off[i];
		return (int)(s->route_off[i + 1] - s->route_off[i]);
	}
	*links = buf;
	return pm_topo_route(t, s->map[s->x[i].src], s->map[s->x[i].dst], buf);
}

int pm_eval_ends(const struct pm_topo *t, const struct pm_sched *s, size_t i, const int *route, int h)
{
	if (!s->route_off || h == 0)
		return 3;
	return (pm_topo_link(t, route[0])->src == s->map[s->x[i].src]) |
	       (pm_topo_link(t, route[h - 1])->dst == s->map[s->x[i].dst]) << 1;
}

/* What a step's transfers add up to. */
struct tally {
	int nt, hops_max;		/* links loaded, longest route */
	double lat_max, red_max;	/* longest route's latency, most bytes one rank reduces */
	double load_s, max_load;	/* slowest link or port (s), busiest link (B) */
};

/* Route stored step k's transfers: each link's wire bytes this step
 * (z->step_load, the loaded links in z->touched), each endpoint's bytes
 * in and out and each rank's reads, reductions and sends. */
static void route_step(const struct pm_topo *t, const struct pm_sched *s, int k, double rep, double n,
		       const struct pm_params *p, struct scratch *z, struct pm_cost *out, struct tally *y)
{
	double unit = n / s->nchunks, bytes = 0, wire = 0;
	uint32_t last_cnt = 0;
	int last_sw = 0;

	for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
		const struct pm_xfer *x = &s->x[i];
		if (x->cnt != last_cnt || x->at_switch != last_sw) {	/* most transfers of a step are alike */
			last_cnt = x->cnt;
			last_sw = x->at_switch;
			bytes = unit * x->cnt;
			wire = pm_wire_bytes(p, bytes) * (x->at_switch ? pm_switch_scale(p) : 1);
		}
		int a = s->map[x->src], b = s->map[x->dst];
		const int *route;
		int h = pm_eval_route(t, s, i, z->route, &route);
		double lat = p->lat_in_alpha ? 0 : pm_topo_route_lat(t, route, h);

		for (int j = 0; j < h; j++) {
			int l = route[j];
			if (z->step_load[l] == 0)
				z->touched[y->nt++] = l;
			z->step_load[l] += wire;
		}
		if (lat > y->lat_max)
			y->lat_max = lat;
		if (h > y->hops_max)
			y->hops_max = h;
		int ends = pm_eval_ends(t, s, i, route, h);
		z->inj[a] += ends & 1 ? wire : 0;
		z->ej[b] += ends & 2 ? wire : 0;
		if (p->endpoint != PM_END_IDEAL)
			read_memory(s, x, unit, p->endpoint, z);
		z->sent[x->src] += ends & 1 ? bytes * rep : 0;
		if (x->op == PM_REDUCE) {
			z->red[x->dst] += bytes;
			if (z->red[x->dst] > y->red_max)
				y->red_max = z->red[x->dst];
		}
		out->wire_B += wire * h * rep;
	}
}

/* The loaded links: the slowest, the busiest, and their run-wide loads;
 * the step's loads are cleared. */
static void link_loads(const struct pm_topo *t, double rep, struct scratch *z, struct pm_cost *out,
		       struct tally *y)
{
	const double *bws = pm_topo_bws(t);
	double bw = pm_topo_same_bw(t);	/* one rate: the busiest link is the slowest */

	for (int j = 0; j < y->nt; j++) {
		int l = z->touched[j];
		double w = z->step_load[l];
		if (!bw && w / bws[l] > y->load_s)
			y->load_s = w / bws[l];
		if (w > y->max_load)
			y->max_load = w;
		if (z->run_load[l] == 0)
			out->links_used += 1;
		z->run_load[l] += w * rep;
		z->step_load[l] = 0;
	}
	if (bw && y->max_load / bw > y->load_s)
		y->load_s = y->max_load / bw;
}

/* The endpoints' injection and memory limits on the step; their
 * tallies are cleared. */
static void endpoint_limits(const struct pm_sched *s, int k, double rep, const struct pm_params *p,
			    struct scratch *z, struct tally *y)
{
	for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
		const struct pm_xfer *x = &s->x[i];
		int a = s->map[x->src], b = s->map[x->dst];
		if (p->endpoint != PM_END_IDEAL) {
			for (int r = 0; r < 2; r++) {	/* sender and receiver */
				int q = r ? x->dst : x->src;
				double tm = z->mem[q] / p->mem_bw_Bps;
				if (tm > y->load_s)
					y->load_s = tm;
				z->mem_run[q] += z->mem[q] * rep;
				z->mem[q] = 0;
			}
		}
		if (p->inj_bw_Bps > 0) {
			double ti = z->inj[a] / p->inj_bw_Bps, te = z->ej[b] / p->inj_bw_Bps;
			if (ti > y->load_s)
				y->load_s = ti;
			if (te > y->load_s)
				y->load_s = te;
		}
		z->inj[a] = z->ej[b] = 0;
		z->red[x->dst] = 0;
	}
}

/* Price stored step k, played rep times; accumulate run-wide loads
 * into z and out.  Every pass of a repeated step moves the same amounts
 * over the same routes (only the chunk ids rotate), so one pricing
 * serves them all. */
static void price_step(const struct pm_topo *t, const struct pm_sched *s,
		       int k, double rep, double n, const struct pm_params *p,
		       struct scratch *z, struct pm_cost *out,
		       struct pm_step_cost *sc)
{
	struct tally y = {0};

	route_step(t, s, k, rep, n, p, z, out, &y);
	link_loads(t, rep, z, out, &y);
	endpoint_limits(s, k, rep, p, z, &y);
	int empty = s->step_off[k] == s->step_off[k + 1];
	struct pm_step_cost c = {
		.alpha_s = empty ? 0 : p->alpha_s,
		.lat_s = y.lat_max,
		.bw_s = y.load_s,
		.red_s = y.red_max * p->gamma_spB,
		.max_link_B = y.max_load,
		.busy_links = y.nt,
		.hops_max = y.hops_max,
		.xfers = s->step_off[k + 1] - s->step_off[k],
	};
	c.time_s = c.alpha_s + c.lat_s + c.bw_s + c.red_s;
	out->alpha_s += c.alpha_s * rep;
	out->lat_s += c.lat_s * rep;
	out->bw_s += c.bw_s * rep;
	out->red_s += c.red_s * rep;
	out->time_s += c.time_s * rep;
	out->util_avg += c.time_s * y.nt * rep;
	*sc = c;
}

/* Price one run: its stored steps once each; steps (logical, may be
 * NULL) gets a record per pass. */
static void price_run(const struct pm_topo *t, const struct pm_sched *s,
		      const struct pm_run *r, int step0, double n,
		      const struct pm_params *p, struct scratch *z,
		      struct pm_cost *out, struct pm_step_cost *steps)
{
	for (int i = 0; i < r->span; i++) {
		struct pm_step_cost c;
		price_step(t, s, r->first + i, r->rep, n, p, z, out, &c);
		for (int j = 0; steps && j < r->rep; j++)
			steps[step0 + j * r->span + i] = c;
	}
}

double pm_eval_route_estimate(const struct pm_topo *t, const struct pm_sched *s)
{
	size_t k, samples = s->nx < 1024 ? s->nx : 1024;
	double hops = 0;
	int *route;

	if (s->route_off || samples == 0)
		return (double)s->nroute;
	if (!(route = malloc(sizeof(int) * ((size_t)pm_topo_max_hops(t) + 1))))
		return 0;
	for (k = 0; k < samples; k++) {
		const struct pm_xfer *x = &s->x[k * s->nx / samples];
		hops += pm_topo_route(t, s->map[x->src], s->map[x->dst], route);
	}
	free(route);
	return hops / (double)samples * (double)s->nx;
}

static int price_all(const struct pm_topo *t, const struct pm_sched *s,
		     double n, const struct pm_params *p, struct pm_cost *out,
		     struct pm_step_cost *steps, struct pm_err *err);

int pm_eval_contention(const struct pm_topo *t, const struct pm_sched *s,
		       double n, const struct pm_params *p, struct pm_cost *out,
		       struct pm_step_cost *steps, struct pm_err *err)
{
	struct pm_sched e;
	int rc;

	if (p->endpoint != PM_END_IDEAL && !(p->mem_bw_Bps > 0))
		return pm_fail(err, PM_EINPUT, "an endpoint model needs the memory bandwidth it may use (expected --mem-bw or --sms)");
	if (p->endpoint != PM_END_ACE || !pm_sched_is_compact(s))
		return price_all(t, s, n, p, out, steps, err);
	/* ACE's reads depend on which units each pass moves: play it out */
	if ((rc = pm_sched_expand(s, &e, PM_SCHED_MAX_XFERS, err)))
		return rc;
	rc = price_all(t, &e, n, p, out, steps, err);
	pm_sched_release(&e);
	return rc;
}

static int price_all(const struct pm_topo *t, const struct pm_sched *s,
		     double n, const struct pm_params *p, struct pm_cost *out,
		     struct pm_step_cost *steps, struct pm_err *err)
{
	struct scratch z;
	int L = pm_topo_nlinks(t);

	memset(out, 0, sizeof *out);
	if (p->endpoint == PM_END_ACE && (double)s->nranks * s->nchunks > 2147483648.0)
		return pm_fail(err, PM_EINPUT, "the ACE endpoint model tracks %d ranks x %u units (expected at most 2^31)",
			       s->nranks, s->nchunks);
	if (!scratch_alloc(&z, L, pm_topo_endpoints(t), s->nranks,
			   pm_topo_max_hops(t))) {
		scratch_free(&z);
		return pm_fail(err, PM_EINTERNAL, "out of memory pricing a schedule");
	}
	if (p->endpoint == PM_END_ACE &&
	    !(z.cached = calloc((size_t)s->nranks * s->nchunks + 1, 1))) {
		scratch_free(&z);
		return pm_fail(err, PM_EINTERNAL, "out of memory pricing a schedule");
	}
	for (int r = 0, step = 0; r < s->nruns; r++) {
		price_run(t, s, &s->runs[r], step, n, p, &z, out, steps);
		step += s->runs[r].span * s->runs[r].rep;
	}
	out->steps = s->nsteps;
	for (int r = 0; r < s->nranks; r++)
		if (z.sent[r] > out->sent_B)
			out->sent_B = z.sent[r];
	for (int l = 0; l < L; l++)
		if (z.run_load[l] > out->max_link_B)
			out->max_link_B = z.run_load[l];
	for (int r = 0; r < s->nranks; r++)
		if (z.mem_run[r] > out->mem_B)
			out->mem_B = z.mem_run[r];
	out->links_used = L ? out->links_used / L : 0;
	out->util_avg = out->time_s > 0 && L ? out->util_avg / (out->time_s * L) : 0;
	scratch_free(&z);
	return PM_OK;
}
