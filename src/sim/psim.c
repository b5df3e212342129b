/* psim.c: the packet simulator's schedule driver (see psim.h): when each
 * transfer starts (lockstep, per-rank step counters, dataflow, ports), its
 * reduction, and the network it crosses (net.h: lnet.c or rnet.c). */
#include "sim/psim.h"
#include "model/eval.h"
#include "model/grow.h"
#include "model/progress.h"

#include "sim/lnet.h"
#include "sim/rnet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct sim {
	const struct pm_topo *t;
	const struct pm_sched *s;
	const struct pm_params *p;
	double unit;		/* bytes per chunk unit */
	int maxseg, inj;	/* inj: endpoint links present */
	int routers;		/* the router-level network (rnet.h) */
	int nnet;		/* network links */
	size_t *roff;		/* route of transfer i: route[roff[i] .. roff[i+1]) */
	int32_t *route;
	double *red_free;	/* per rank: when its reducer is idle */
	int parallel_reduce;	/* pm_sim_opts: reductions do not queue */
	double end;
	double est_events;	/* what plan() expects, for progress */
	/* dataflow */
	uint32_t *pending;	/* unfinished writers of transfer i's chunks */
	double *ready;
	size_t *doff;		/* readers of transfer i: dep[doff[i] .. doff[i+1]) */
	uint32_t *dep;
	/* dataflow: the schedule's port budget, the most transfers one rank
	 * sends in one step; a rank never has more in flight out of it */
	int ports;
	int *sending;		/* per rank: transfers still leaving it */
	uint32_t **waitq;	/* per rank: ready transfers waiting for a port,
				 * ascending (earlier steps first) */
	int *nwait;
	size_t *capwait;
	int failed;
	struct pm_net net;	/* links (lnet.h) or routers (rnet.h) */
	struct pm_trace *trace;
	double *rd_src, *rd_dst;	/* per transfer: memory its sender, its receiver reads */
	/* NOP lockstep (Huang et al. 2021 SIV-A): each rank's time-step
	 * counter; its transfers of step k wait for the counter to reach k */
	int nop;		/* per-rank step counters (NOP or ORDER) */
	int order;		/* ORDER: no NOP time, move on at the last start */
	int *cstep;		/* per rank: counter */
	double *ctime;		/* per rank: when it reached it */
	int *todo;		/* per rank: transfers of that step not yet sent */
	size_t *roff2;		/* rank r's transfers: rx[roff2[r] .. roff2[r+1]) */
	uint32_t *rx;
	size_t *rpos;		/* per rank: first of its transfers at cstep */
	uint8_t *parked;	/* transfer: data ready, counter not there yet */
	uint32_t *xstep;	/* transfer: its step */
	double *tstep;		/* step: estimated length (serialization) */
	size_t done;		/* transfers delivered */
};

/* Packets of an m-byte message (at least one). */
static double packets(const struct pm_params *p, double m)
{
	double k = ceil(m / (p->payload_B > 0 ? p->payload_B : 256) - 1e-9);
	return k < 1 ? 1 : k;
}

/* The links transfer i crosses: endpoint injection, the route, ejection. */
static int route_of(const struct pm_topo *t, const struct pm_sched *s,
		    size_t i, int inj, int *buf)
{
	const struct pm_xfer *x = &s->x[i];
	int a = s->map[x->src], b = s->map[x->dst], h = 0, E = pm_topo_endpoints(t);
	int L = pm_topo_nlinks(t), at = inj;	/* the route starts after the injection link */

	if (inj)
		buf[h++] = L + a;
	if (s->route_off) {
		for (uint32_t k = s->route_off[i]; k < s->route_off[i + 1]; k++)
			buf[h++] = s->route[k];
	} else {
		h += pm_topo_route(t, a, b, buf + h);
	}
	/* a transfer a switch starts or ends (nvls) takes no rank's port there */
	int ends = inj ? pm_eval_ends(t, s, i, buf + at, h - at) : 3;
	if (inj && !(ends & 1))
		memmove(buf, buf + 1, sizeof *buf * (size_t)--h);
	if (inj && (ends & 2))
		buf[h++] = L + E + b;
	return h;
}

static void inject(struct sim *m, uint32_t x, double t)
{
	if (m->trace)
		pm_trace_start(m->trace, x, t);
	if (m->rd_src && m->net.ops->reads)
		m->net.ops->reads(m->net.n, x, m->rd_src[x], m->s->map[m->s->x[x].dst], m->rd_dst[x], t);
	m->net.ops->send(m->net.n, x, t);
}

static void ready(struct sim *m, uint32_t x, double t);
static void release(struct sim *m, uint32_t x, double t);
static void advance(struct sim *m, int r, double t);

static void complete(struct sim *m, uint32_t x, double t)
{
	if (t > m->end)
		m->end = t;
	if (!m->pending)
		return;
	for (size_t k = m->doff[x]; k < m->doff[x + 1]; k++) {
		uint32_t d = m->dep[k];
		if (t > m->ready[d])
			m->ready[d] = t;
		if (--m->pending[d] == 0)
			release(m, d, m->ready[d] + m->p->alpha_s);
	}
}

/* Dataflow: start x at t if its rank has a port free, else queue it
 * (ordered by transfer index: an earlier step goes first). */
static void ready(struct sim *m, uint32_t x, double t)
{
	int r = m->s->x[x].src;

	if (m->sending[r] < m->ports) {
		m->sending[r]++;
		inject(m, x, t);
		if (m->order && --m->todo[r] == 0)
			advance(m, r, t);	/* every transfer of the step started */
		return;
	}
	if (pm_grow(&m->waitq[r], &m->capwait[r], (size_t)m->nwait[r] + 1, sizeof *m->waitq[r], 8)) {
		m->failed = 1;
		return;
	}
	int i = m->nwait[r]++;
	while (i > 0 && m->waitq[r][i - 1] > x) {
		m->waitq[r][i] = m->waitq[r][i - 1];
		i--;
	}
	m->waitq[r][i] = x;
	m->ready[x] = t;	/* when it could have started */
}

/* NOP lockstep: rank r's counter moves on from its current step at t.
 * A step where r sends nothing is a NOP lasting the step's estimated
 * length; at a step where it sends, every parked transfer is released. */
static void advance(struct sim *m, int r, double t)
{
	const struct pm_sched *s = m->s;

	for (;;) {
		size_t b = m->rpos[r];
		while (b < m->roff2[r + 1] && m->xstep[m->rx[b]] == (uint32_t)m->cstep[r])
			b++;	/* skip what the step just finished sent */
		m->rpos[r] = b;
		if (++m->cstep[r] >= s->nsteps)
			return;
		size_t e = b;
		while (e < m->roff2[r + 1] && m->xstep[m->rx[e]] == (uint32_t)m->cstep[r])
			e++;
		if (e == b) {	/* NOP */
			t += m->tstep[m->cstep[r]];
			continue;
		}
		m->ctime[r] = t;
		m->todo[r] = (int)(e - b);
		for (size_t k = b; k < e; k++)
			if (m->parked[m->rx[k]]) {
				uint32_t x = m->rx[k];
				m->parked[x] = 0;
				ready(m, x, m->ready[x] > t ? m->ready[x] : t);
			}
		return;
	}
}

/* x's data is ready at t: start it (through the port budget) unless NOP
 * lockstep has its rank's counter short of x's step. */
static void release(struct sim *m, uint32_t x, double t)
{
	int r = m->s->x[x].src;

	if (!m->nop) {
		ready(m, x, t);
		return;
	}
	if ((uint32_t)m->cstep[r] != m->xstep[x]) {
		m->parked[x] = 1;
		m->ready[x] = t;
		return;
	}
	ready(m, x, t > m->ctime[r] ? t : m->ctime[r]);
}

/* The last segment of x left its first link at t: its port is free. */
static void port_free(struct sim *m, uint32_t x, double t)
{
	int r = m->s->x[x].src;

	m->sending[r]--;
	if (m->nop && !m->order && --m->todo[r] == 0)
		advance(m, r, t);
	if (m->nwait[r] == 0)
		return;
	uint32_t y = m->waitq[r][0];
	memmove(m->waitq[r], m->waitq[r] + 1, sizeof(uint32_t) * (size_t)--m->nwait[r]);
	ready(m, y, t > m->ready[y] ? t : m->ready[y]);
}

/* Every byte of x has arrived at t: reduce it, then wake its readers. */
static void finish(struct sim *m, uint32_t x, double t)
{
	const struct pm_xfer *xf = &m->s->x[x];

	m->done++;
	if (m->trace)
		pm_trace_done(m->trace, x, t);
	if (xf->op == PM_REDUCE && m->p->gamma_spB > 0) {
		double red = m->unit * xf->cnt * m->p->gamma_spB;
		double *r = &m->red_free[xf->dst];
		if (m->parallel_reduce) {
			t += red;	/* its own reducer: no wait for others */
		} else {
			*r = (t > *r ? t : *r) + red;
			t = *r;
		}
	}
	complete(m, x, t);
}

static void net_delivered(void *ctx, uint32_t x, double t)
{
	finish(ctx, x, t);
}

static void net_left(void *ctx, uint32_t x, double t)
{
	struct sim *m = ctx;
	if (m->pending)		/* dataflow: the port is free again */
		port_free(m, x, t);
}

/* Run the network until no event is left. */
static void run(struct sim *m)
{
	if (m->net.ops->run(m->net.n))
		m->failed = 1;
}

/* The dependency edges found so far: writer ew[e] before reader er[e]. */
struct edges {
	uint32_t *ew, *er;
	size_t n, cap;
};

static int add_edge(struct edges *d, uint32_t w, uint32_t r)
{
	if (d->n == d->cap) {
		size_t cap = pm_grow_cap(d->cap, d->n + 1, 16);
		if (pm_resize(&d->ew, cap, sizeof *d->ew) || pm_resize(&d->er, cap, sizeof *d->er))
			return -1;
		d->cap = cap;
	}
	d->ew[d->n] = w;
	d->er[d->n++] = r;
	return 0;
}

/* Step k's transfers: each depends on the last earlier-step writer of
 * every chunk it sends from its source (lw: last writer per rank and
 * chunk); then its writes are recorded. */
static int step_deps(struct sim *m, int k, uint32_t *lw, struct edges *d)
{
	const struct pm_sched *s = m->s;

	for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
		const struct pm_xfer *x = &s->x[i];
		uint32_t last = NONE;
		for (uint32_t c = x->lo; c < x->lo + x->cnt; c++) {
			uint32_t w = lw[(size_t)x->src * s->nchunks + c];
			if (w == NONE || w == last)
				continue;
			if (add_edge(d, w, (uint32_t)i))
				return -1;
			m->pending[i]++;
			m->doff[w + 1]++;
			last = w;
		}
	}
	for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
		const struct pm_xfer *x = &s->x[i];
		for (uint32_t c = x->lo; c < x->lo + x->cnt; c++)
			lw[(size_t)x->dst * s->nchunks + c] = (uint32_t)i;
	}
	return 0;
}

/* The readers of each writer, grouped by writer (dep[doff[w] ..]). */
static int group_deps(struct sim *m, const struct edges *d)
{
	size_t nx = m->s->nx, *fill = malloc(sizeof(size_t) * (nx + 1));

	m->dep = malloc(sizeof(uint32_t) * (d->n + 1));
	if (!fill || !m->dep) {
		free(fill);
		return -1;
	}
	for (size_t i = 0; i < nx; i++)
		m->doff[i + 1] += m->doff[i];
	memcpy(fill, m->doff, sizeof(size_t) * (nx + 1));
	for (size_t e = 0; e < d->n; e++)
		m->dep[fill[d->ew[e]]++] = d->er[e];
	free(fill);
	return 0;
}

/* Readers of each transfer: i depends on the last earlier-step transfer
 * that wrote each chunk it sends into its source. */
static int build_deps(struct sim *m)
{
	const struct pm_sched *s = m->s;
	size_t cells = (size_t)s->nranks * s->nchunks;
	uint32_t *lw = malloc(sizeof(uint32_t) * cells);
	struct edges d = {0};
	int ok;

	m->pending = calloc(s->nx + 1, sizeof(uint32_t));
	m->ready = calloc(s->nx + 1, sizeof(double));
	m->doff = calloc(s->nx + 2, sizeof(size_t));
	ok = lw && m->pending && m->ready && m->doff;
	for (size_t c = 0; ok && c < cells; c++)
		lw[c] = NONE;
	for (int k = 0; ok && k < s->nsteps; k++)
		ok = !step_deps(m, k, lw, &d);
	ok = ok && !group_deps(m, &d);
	free(lw);
	free(d.ew);
	free(d.er);
	return ok ? PM_OK : PM_EINTERNAL;
}

/* The most transfers one rank sends in one step of the schedule: what
 * the schedule was built for, and the most a rank may have in flight out
 * of it in dataflow mode. */
static int port_budget(struct sim *m)
{
	const struct pm_sched *s = m->s;
	int *cnt = calloc((size_t)s->nranks + 1, sizeof(int));

	m->sending = calloc((size_t)s->nranks + 1, sizeof(int));
	m->waitq = calloc((size_t)s->nranks + 1, sizeof *m->waitq);
	m->nwait = calloc((size_t)s->nranks + 1, sizeof(int));
	m->capwait = calloc((size_t)s->nranks + 1, sizeof(size_t));
	if (!cnt || !m->sending || !m->waitq || !m->nwait || !m->capwait) {
		free(cnt);
		return PM_EINTERNAL;
	}
	m->ports = 1;
	for (int k = 0; k < s->nsteps; k++) {
		for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++)
			if (++cnt[s->x[i].src] > m->ports)
				m->ports = cnt[s->x[i].src];
		for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++)
			cnt[s->x[i].src] = 0;
	}
	free(cnt);
	return PM_OK;
}

static void sim_free(struct sim *m)
{
	void *own[] = {&m->roff, &m->route, &m->red_free, &m->pending, &m->ready, &m->doff,
		&m->dep, &m->sending, &m->waitq, &m->nwait, &m->capwait, &m->cstep, &m->ctime,
		&m->todo, &m->roff2, &m->rx, &m->rpos, &m->parked, &m->xstep, &m->tstep,
		&m->rd_src, &m->rd_dst};

	for (int r = 0; m->waitq && r < m->s->nranks; r++)
		free(m->waitq[r]);
	if (m->net.ops)
		m->net.ops->free(m->net.n);
	pm_free_each(own, sizeof own / sizeof *own);
}

/* Route every transfer once and cut it into segments; *events is the
 * number of link traversals the run will simulate. */
static int plan(struct sim *m, double *events)
{
	const struct pm_sched *s = m->s;
	int *buf = malloc(sizeof(int) * ((size_t)pm_topo_max_hops(m->t) + 3));
	size_t total = 0, cap = 0;
	int rc = buf ? PM_OK : PM_EINTERNAL;

	*events = 0;
	for (size_t i = 0; !rc && i < s->nx; i++) {
		int h = route_of(m->t, s, i, m->inj, buf);
		if (pm_grow(&m->route, &cap, total + (size_t)h, sizeof *m->route, s->nx + 16)) {
			rc = PM_EINTERNAL;
			break;
		}
		m->roff[i] = total;
		for (int k = 0; k < h; k++)
			m->route[total++] = buf[k];
		double segw;
		if (m->routers)	/* every packet, injection and ejection included */
			*events += packets(m->p, m->unit * s->x[i].cnt) * (h + 2);
		else
			*events += (double)pm_lnet_segments(m->p, m->maxseg, m->unit * s->x[i].cnt, &segw) * h;
	}
	m->roff[s->nx] = total;
	free(buf);
	return rc;
}

static int sim_init(struct sim *m, const struct pm_topo *t,
		    const struct pm_sched *s, double n,
		    const struct pm_params *p, const struct pm_sim_opts *o)
{
	memset(m, 0, sizeof *m);
	m->t = t;
	m->s = s;
	m->p = p;
	m->unit = n / s->nchunks;
	m->maxseg = o->max_segments > 0 ? o->max_segments : PM_SIM_DEFAULT_SEGMENTS;
	m->routers = o->routers;
	m->parallel_reduce = o->parallel_reduce;
	m->inj = p->inj_bw_Bps > 0 && !o->routers;	/* routers have their own */
	m->nnet = pm_topo_nlinks(t);
	m->roff = malloc(sizeof(size_t) * (s->nx + 1));
	m->red_free = calloc((size_t)s->nranks + 1, sizeof(double));
	return m->roff && m->red_free ? PM_OK : PM_EINTERNAL;
}

/* The endpoint's memory reads per transfer, by the contention
 * evaluator's rule (pm_endpoint_reads): the sender's share gates its
 * packets, the receiver's loads its memory. */
static int plan_reads(struct sim *m)
{
	const struct pm_sched *s = m->s;
	uint8_t *cached = NULL;

	if (m->p->endpoint == PM_END_IDEAL || m->p->mem_bw_Bps <= 0)
		return PM_OK;
	m->rd_src = calloc(s->nx + 1, sizeof(double));
	m->rd_dst = calloc(s->nx + 1, sizeof(double));
	if (m->p->endpoint == PM_END_ACE)
		cached = calloc((size_t)s->nranks * s->nchunks + 1, 1);
	if (!m->rd_src || !m->rd_dst || (m->p->endpoint == PM_END_ACE && !cached)) {
		free(cached);
		return PM_EINTERNAL;
	}
	for (size_t i = 0; i < s->nx; i++)
		pm_endpoint_reads(s, &s->x[i], m->unit, m->p->endpoint, cached,
				  &m->rd_src[i], &m->rd_dst[i]);
	free(cached);
	return PM_OK;
}

/* NOP lockstep: each rank's transfers by step, the steps' estimated
 * lengths (the serialization of the step's largest message at the link
 * bandwidth, as Huang et al. 2021 SIV-A estimate it from its flits) and
 * every counter at its first step. */
static int nop_setup(struct sim *m, const struct pm_sim_opts *o)
{
	const struct pm_sched *s = m->s;
	size_t R = (size_t)s->nranks;

	m->cstep = malloc(sizeof(int) * R);
	m->ctime = calloc(R, sizeof(double));
	m->todo = calloc(R, sizeof(int));
	m->roff2 = calloc(R + 1, sizeof(size_t));
	m->rx = malloc(sizeof(uint32_t) * (s->nx + 1));
	m->rpos = malloc(sizeof(size_t) * R);
	m->parked = calloc(s->nx + 1, 1);
	m->xstep = malloc(sizeof(uint32_t) * (s->nx + 1));
	m->tstep = calloc((size_t)s->nsteps + 1, sizeof(double));
	if (!m->cstep || !m->ctime || !m->todo || !m->roff2 || !m->rx ||
	    !m->rpos || !m->parked || !m->xstep || !m->tstep)
		return PM_EINTERNAL;
	for (int k = 0; k < s->nsteps; k++)
		for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++) {
			double t = o->routers && o->router.ni_buffer > 0
				? pm_rnet_handover_s(m->p, &o->router, m->unit * s->x[i].cnt)
				: pm_wire_bytes(m->p, m->unit * s->x[i].cnt) * (s->x[i].at_switch ? pm_switch_scale(m->p) : 1) /
					  m->p->link_bw_Bps;
			m->xstep[i] = (uint32_t)k;
			if (!m->order)	/* ORDER skips a NOP at once */
				m->tstep[k] = t > m->tstep[k] ? t : m->tstep[k];
			m->roff2[s->x[i].src + 1]++;
		}
	for (size_t r = 0; r < R; r++)
		m->roff2[r + 1] += m->roff2[r];
	memcpy(m->rpos, m->roff2, sizeof(size_t) * R);
	for (size_t i = 0; i < s->nx; i++)
		m->rx[m->rpos[s->x[i].src]++] = (uint32_t)i;
	memcpy(m->rpos, m->roff2, sizeof(size_t) * R);
	for (size_t r = 0; r < R; r++) {
		m->cstep[r] = -1;
		advance(m, (int)r, 0);
	}
	return PM_OK;
}

/* The network the transfers cross: the links network, or the routers
 * (with the endpoint's reads); on failure *err is set. */
static int make_net(struct sim *m, const struct pm_sim_opts *o, struct pm_err *err)
{
	struct pm_net_hooks h = {m, net_delivered, net_left};
	struct pm_rnet *rn = NULL;
	int rc;

	if (!o->routers) {
		if (pm_lnet_new(m->t, m->s, m->unit, m->p, m->maxseg, m->inj, m->roff, m->route, &h, &m->net))
			return pm_fail(err, PM_EINTERNAL, "out of memory setting up the simulation");
	} else {
		if (plan_reads(m) != PM_OK)
			return pm_fail(err, PM_EINTERNAL, "out of memory setting up the simulation");
		rc = pm_rnet_new(m->t, m->s, m->unit, m->p, &o->router, m->ports, m->roff, m->route, &h, &rn, err);
		if (rc)
			return rc;
		m->net = (struct pm_net){rn, &pm_rnet_ops};
	}
	if (o->trace)
		m->net.ops->trace(m->net.n, o->trace);
	m->net.ops->expect(m->net.n, m->est_events);
	return PM_OK;
}

/* Dependencies, the port budget and the network, as the options ask; on
 * failure *err is set. */
static int prepare(struct sim *m, const struct pm_sim_opts *o, double ev,
		   struct pm_err *err)
{
	double limit = o->routers ? PM_SIM_MAX_PACKET_HOPS : PM_SIM_MAX_EVENTS;

	if (ev <= limit && o->budget > 0 && ev > o->budget)
		return pm_fail(err, PM_EINPUT,
			       "the command's simulation budget is spent: this run needs %.3g %s, %.3g are left of the %.3g one command may simulate (expected fewer algorithms, sizes or simulated evaluators in one command, or the contention evaluator)",
			       ev, o->routers ? "packet crossings" : "link traversals", o->budget, limit);
	if (ev > limit)
		return o->routers
			? pm_fail(err, PM_EINPUT,
				  "simulation too large: %.3g packet crossings of channels (expected at most %.0e; use a smaller size, --sim-net links or the contention evaluator)",
				  ev, limit)
			: pm_fail(err, PM_EINPUT,
				  "simulation too large: %.3g link traversals (expected at most %.0e; lower --sim-segments or use the contention evaluator)",
				  ev, limit);
	int flow = o->dataflow || o->lockstep != PM_LOCK_BARRIER;
	if (flow && build_deps(m) != PM_OK)
		return pm_fail(err, PM_EINTERNAL, "out of memory setting up the simulation");
	if ((flow || o->routers) && port_budget(m) != PM_OK)
		return pm_fail(err, PM_EINTERNAL, "out of memory setting up the simulation");
	m->nop = !o->dataflow && o->lockstep != PM_LOCK_BARRIER;
	m->order = m->nop && o->lockstep == PM_LOCK_ORDER;
	if (m->nop && nop_setup(m, o) != PM_OK)
		return pm_fail(err, PM_EINTERNAL, "out of memory setting up the simulation");
	return make_net(m, o, err);
}

/* The simulator as a driver (psim.h: init / step / done). */
struct pm_sim {
	struct sim m;
	struct pm_sim_opts o;
	struct pm_sched played;		/* a compact schedule played out */
	int own;			/* played is ours to release */
	int k;				/* lockstep: the next schedule step */
	int flow;			/* dataflow or a per-rank step counter: one run */
	int finished;
};

/* Lockstep: schedule step k, from when the last one ended; else the
 * whole run, every transfer released as its data are ready. */
static void step_once(struct pm_sim *d)
{
	struct sim *m = &d->m;
	const struct pm_sched *s = m->s;

	if (d->flow) {
		for (size_t i = 0; i < s->nx; i++)
			if (m->pending[i] == 0)
				release(m, (uint32_t)i, m->p->alpha_s);
		run(m);
		d->finished = 1;
		return;
	}
	double t0 = m->end;
	int k = d->k++;
	for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++)
		inject(m, (uint32_t)i, t0 + m->p->alpha_s);
	run(m);
	if (m->trace)
		pm_trace_step(m->trace, k, t0, m->end);
	/* a step that never ended is a deadlock, reported by pm_sim_done */
	d->finished = d->k >= s->nsteps || m->done < s->step_off[k + 1];
}

static void driver_free(struct pm_sim *d)
{
	sim_free(&d->m);
	if (d->own)
		pm_sched_release(&d->played);
	free(d);
}

static int driver_setup(struct pm_sim *d, const struct pm_topo *t, const struct pm_sched *s, double n,
			const struct pm_params *p, struct pm_err *err)
{
	double ev = 0;

	if (sim_init(&d->m, t, s, n, p, &d->o) != PM_OK || plan(&d->m, &ev) != PM_OK)
		return pm_fail(err, PM_EINTERNAL, "out of memory setting up the simulation");
	if (d->o.trace && pm_trace_begin(d->o.trace, t, s, d->m.unit) != PM_OK)
		return pm_fail(err, PM_EINTERNAL, "out of memory setting up the trace");
	d->m.trace = d->o.trace;
	d->m.est_events = ev;
	return prepare(&d->m, &d->o, ev, err);
}

int pm_sim_init(struct pm_sim **out, const struct pm_topo *t, const struct pm_sched *s, double n,
		const struct pm_params *p, const struct pm_sim_opts *o, struct pm_err *err)
{
	struct pm_sim *d = calloc(1, sizeof *d);
	int rc;

	*out = NULL;
	if (!d)
		return pm_fail(err, PM_EINTERNAL, "out of memory setting up the simulation");
	d->o = *o;
	if (pm_sched_is_compact(s)) {	/* the simulator moves every transfer */
		if ((rc = pm_sched_expand(s, &d->played, PM_SCHED_MAX_XFERS, err))) {
			free(d);
			return rc;
		}
		d->own = 1;
		s = &d->played;
	}
	if ((rc = driver_setup(d, t, s, n, p, err))) {
		driver_free(d);
		return rc;
	}
	d->flow = d->m.nop || o->dataflow;
	d->finished = !d->flow && s->nsteps == 0;
	*out = d;
	return PM_OK;
}

int pm_sim_step(struct pm_sim *d)
{
	if (!d->finished && !d->m.failed)
		step_once(d);
	return !d->finished && !d->m.failed;
}

double pm_sim_now(const struct pm_sim *d)
{
	return d->m.end;
}

static void result_of(const struct sim *m, struct pm_sim_result *r)
{
	struct pm_net_stats st;

	m->net.ops->stats(m->net.n, &st);
	r->time_s = m->end;
	r->segments = st.packets;
	r->events = st.hops;
	r->link_busy = m->end > 0 && m->nnet ? st.link_busy / (m->end * m->nnet) : 0;
}

int pm_sim_done(struct pm_sim *d, struct pm_sim_result *r, struct pm_err *err)
{
	const struct sim *m = &d->m;
	int rc = PM_OK;

	memset(r, 0, sizeof *r);
	if (m->failed)
		rc = pm_fail(err, PM_EINTERNAL, "out of memory during the simulation");
	else if (m->routers && m->done < m->s->nx)
		rc = pm_fail(err, PM_EINPUT,
			     "the simulated network deadlocked: %zu of %zu transfers never arrived (expected routes whose buffers cannot wait on each other in a cycle: give rings and tori at least 2 --vcs, or more --vc-flits)",
			     m->s->nx - m->done, m->s->nx);
	else
		result_of(m, r);
	driver_free(d);
	return rc;
}

int pm_sim_run(const struct pm_topo *t, const struct pm_sched *s, double n,
	       const struct pm_params *p, const struct pm_sim_opts *o,
	       struct pm_sim_result *r, struct pm_err *err)
{
	struct pm_sim *d;
	int rc;

	memset(r, 0, sizeof *r);
	if ((rc = pm_sim_init(&d, t, s, n, p, o, err)))
		return rc;
	while (pm_sim_step(d))
		;
	return pm_sim_done(d, r, err);
}
