/* eval_contention.c: the per-step contention evaluator (see eval.h). */
#include "model/eval.h"

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
};

static void scratch_free(struct scratch *z)
{
	free(z->step_load);
	free(z->run_load);
	free(z->touched);
	free(z->inj);
	free(z->ej);
	free(z->red);
	free(z->sent);
	free(z->route);
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
	return z->step_load && z->run_load && z->touched && z->inj && z->ej &&
	       z->red && z->sent && z->route;
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
	const struct pm_link *links = pm_topo_links(t);
	int nt = 0, hops_max = 0;
	double lat_max = 0, red_max = 0, load_s = 0, max_load = 0;
	double unit = n / s->nchunks;

	uint32_t last_cnt = 0;
	double bytes = 0, wire = 0;

	for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
		const struct pm_xfer *x = &s->x[i];
		if (x->cnt != last_cnt) {	/* most transfers of a step are alike */
			last_cnt = x->cnt;
			bytes = unit * x->cnt;
			wire = pm_wire_bytes(p, bytes);
		}
		int a = s->map[x->src], b = s->map[x->dst];
		const int *route = z->route;
		int h;
		double lat = 0;

		if (s->route_off) {	/* source-routed */
			route = s->route + s->route_off[i];
			h = (int)(s->route_off[i + 1] - s->route_off[i]);
		} else {
			h = pm_topo_route(t, a, b, z->route);
		}
		for (int j = 0; j < h; j++) {
			int l = route[j];
			if (z->step_load[l] == 0)
				z->touched[nt++] = l;
			z->step_load[l] += wire;
			lat += links[l].lat_s;
		}
		if (lat > lat_max)
			lat_max = lat;
		if (h > hops_max)
			hops_max = h;
		z->inj[a] += wire;
		z->ej[b] += wire;
		z->sent[x->src] += bytes * rep;
		if (x->op == PM_REDUCE) {
			z->red[x->dst] += bytes;
			if (z->red[x->dst] > red_max)
				red_max = z->red[x->dst];
		}
		out->wire_B += wire * h * rep;
	}
	for (int j = 0; j < nt; j++) {
		int l = z->touched[j];
		double w = z->step_load[l], tl = w / links[l].bw_Bps;
		if (tl > load_s)
			load_s = tl;
		if (w > max_load)
			max_load = w;
		if (z->run_load[l] == 0)
			out->links_used += 1;
		z->run_load[l] += w * rep;
		z->step_load[l] = 0;
	}
	/* endpoint injection limit, then reset the per-step tallies */
	for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
		const struct pm_xfer *x = &s->x[i];
		int a = s->map[x->src], b = s->map[x->dst];
		if (p->inj_bw_Bps > 0) {
			double ti = z->inj[a] / p->inj_bw_Bps, te = z->ej[b] / p->inj_bw_Bps;
			if (ti > load_s)
				load_s = ti;
			if (te > load_s)
				load_s = te;
		}
		z->inj[a] = z->ej[b] = 0;
		z->red[x->dst] = 0;
	}
	int empty = s->step_off[k] == s->step_off[k + 1];
	struct pm_step_cost c = {
		.alpha_s = empty ? 0 : p->alpha_s,
		.lat_s = lat_max,
		.bw_s = load_s,
		.red_s = red_max * p->gamma_spB,
		.max_link_B = max_load,
		.busy_links = nt,
		.hops_max = hops_max,
		.xfers = s->step_off[k + 1] - s->step_off[k],
	};
	c.time_s = c.alpha_s + c.lat_s + c.bw_s + c.red_s;
	out->alpha_s += c.alpha_s * rep;
	out->lat_s += c.lat_s * rep;
	out->bw_s += c.bw_s * rep;
	out->red_s += c.red_s * rep;
	out->time_s += c.time_s * rep;
	out->util_avg += c.time_s * nt * rep;
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

int pm_eval_contention(const struct pm_topo *t, const struct pm_sched *s,
		       double n, const struct pm_params *p, struct pm_cost *out,
		       struct pm_step_cost *steps, struct pm_err *err)
{
	struct scratch z;
	int L = pm_topo_nlinks(t);

	memset(out, 0, sizeof *out);
	if (!scratch_alloc(&z, L, pm_topo_endpoints(t), s->nranks,
			   pm_topo_max_hops(t))) {
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
	out->links_used = L ? out->links_used / L : 0;
	out->util_avg = out->time_s > 0 && L ? out->util_avg / (out->time_s * L) : 0;
	scratch_free(&z);
	return PM_OK;
}
