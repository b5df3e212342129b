/* lnet.c: the links network of the packet simulator (see lnet.h). */
#include "sim/lnet.h"
#include "sim/evq.h"
#include "model/grow.h"
#include "model/progress.h"
#include "sim/trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct lnet {
	const struct pm_sched *s;
	struct pm_net_hooks h;
	struct pm_trace *trace;
	int nnet, nlinks;	/* network links; all links with endpoint ones */
	double *bw, *lat, *free_at, *busy;
	const size_t *roff;	/* route of transfer i: route[roff[i] .. roff[i+1]) */
	const int32_t *route;
	uint32_t *nseg;		/* segments transfer i is cut into */
	double *segw;		/* wire bytes of each of them */
	uint32_t *rem;		/* segments of transfer i still travelling */
	uint32_t *left0;	/* segments of transfer i not yet past its first link */
	struct pm_evq q;	/* segments due at a link; an event's id is its slot: */
	uint32_t *sx, *shop;	/* the segment's transfer and the hop it is at */
	uint32_t *sfree, nfree, nslot, capslot;	/* slots free, used, allocated */
	double events, segments, expect;
	int failed;
};

/* A slot for a segment's event; PM_EV_ID_MAX + 1 when none is left. */
static uint32_t new_slot(struct lnet *m)
{
	if (m->nfree)
		return m->sfree[--m->nfree];
	if (m->nslot == m->capslot) {
		size_t cap = pm_grow_cap(m->capslot, m->nslot + 1u, 1024);
		if (cap > PM_EV_ID_MAX + 1u || pm_resize(&m->sx, cap, sizeof *m->sx) ||
		    pm_resize(&m->shop, cap, sizeof *m->shop) || pm_resize(&m->sfree, cap, sizeof *m->sfree))
			return PM_EV_ID_MAX + 1u;
		m->capslot = (uint32_t)cap;
	}
	return m->nslot++;
}

/* Segment of transfer x reaches hop `hop` of its route at t. */
static void push(struct lnet *m, double t, uint32_t x, uint32_t hop)
{
	uint32_t k = new_slot(m);

	if (k > PM_EV_ID_MAX || pm_evq_push(&m->q, t, k)) {
		m->failed = 1;
		return;
	}
	m->sx[k] = x;
	m->shop[k] = hop;
}

uint32_t pm_lnet_segments(const struct pm_params *p, int maxseg, double m, double *seg_wire)
{
	double payload = p->payload_B > 0 ? p->payload_B : 256;
	double packets = ceil(m / payload - 1e-9);
	uint32_t n = packets < 1 ? 1 : packets > maxseg ? (uint32_t)maxseg : (uint32_t)packets;
	*seg_wire = pm_wire_bytes(p, m) / n;
	return n;
}

static void send(void *n, uint32_t x, double t)
{
	struct lnet *m = n;
	uint32_t k = m->nseg[x];

	m->rem[x] = m->left0[x] = k;
	m->segments += k;
	for (uint32_t i = 0; i < k; i++)
		push(m, t, x, 0);
}

static void deliver(struct lnet *m, uint32_t x, double t)
{
	if (--m->rem[x] == 0)
		m->h.delivered(m->h.ctx, x, t);
}

static void left(struct lnet *m, uint32_t x, double t)
{
	if (--m->left0[x] == 0 && m->h.left)
		m->h.left(m->h.ctx, x, t);
}

/* Move every queued segment to its destination. */
static int run(void *n)
{
	struct lnet *m = n;

	while (m->q.n && !m->failed) {
		struct pm_ev e = pm_evq_pop(&m->q);
		uint32_t k = pm_ev_id(e), x = m->sx[k], hop = m->shop[k];
		m->sfree[m->nfree++] = k;
		size_t first = m->roff[x];
		uint32_t hops = (uint32_t)(m->roff[x + 1] - first);
		if (hops == 0) {
			left(m, x, e.t);
			deliver(m, x, e.t);
			continue;
		}
		int l = m->route[first + hop];
		double start = e.t > m->free_at[l] ? e.t : m->free_at[l];
		double done = start + m->segw[x] / m->bw[l];
		m->free_at[l] = done;
		m->busy[l] += done - start;
		if (m->trace)
			pm_trace_busy(m->trace, l, start, done);
		m->events += 1;
		if (((uint64_t)m->events & 0xffff) == 0)
			pm_progress("simulating", m->events, m->expect);
		if (hop == 0)
			left(m, x, done);
		if (hop + 1 == hops)
			deliver(m, x, done + m->lat[l]);
		else
			push(m, done + m->lat[l], x, hop + 1);
	}
	return m->failed ? PM_EINTERNAL : PM_OK;
}

static void stats(const void *n, struct pm_net_stats *st)
{
	const struct lnet *m = n;

	st->packets = m->segments;
	st->hops = st->events = m->events;
	st->link_busy = 0;
	for (int l = 0; l < m->nnet; l++)
		st->link_busy += m->busy[l];
}

static void trace(void *n, struct pm_trace *tr)
{
	((struct lnet *)n)->trace = tr;
}

static void expect(void *n, double events)
{
	((struct lnet *)n)->expect = events;
}

static void lnet_free(void *n)
{
	struct lnet *m = n;

	if (!m)
		return;
	void *own[] = {&m->bw, &m->lat, &m->free_at, &m->busy, &m->nseg, &m->segw, &m->rem,
		&m->left0, &m->sx, &m->shop, &m->sfree, &m};
	pm_evq_free(&m->q);
	pm_free_each(own, sizeof own / sizeof *own);
}

const struct pm_net_ops pm_lnet_ops = {
	.send = send,
	.run = run,
	.stats = stats,
	.trace = trace,
	.expect = expect,
	.free = lnet_free,
};

/* The links' rates, and each transfer's segments. */
static int links_and_segments(struct lnet *m, const struct pm_topo *t, double unit,
			      const struct pm_params *p, int maxseg)
{
	const struct pm_link *links = pm_topo_links(t);
	size_t nx = m->s->nx;

	m->bw = malloc(sizeof(double) * (size_t)m->nlinks);
	m->lat = malloc(sizeof(double) * (size_t)m->nlinks);
	m->free_at = calloc((size_t)m->nlinks, sizeof(double));
	m->busy = calloc((size_t)m->nlinks, sizeof(double));
	m->nseg = malloc(sizeof(uint32_t) * (nx + 1));
	m->segw = malloc(sizeof(double) * (nx + 1));
	m->rem = calloc(nx + 1, sizeof(uint32_t));
	m->left0 = calloc(nx + 1, sizeof(uint32_t));
	if (!m->bw || !m->lat || !m->free_at || !m->busy || !m->nseg || !m->segw || !m->rem || !m->left0)
		return PM_EINTERNAL;
	for (int l = 0; l < m->nlinks; l++) {
		m->bw[l] = l < m->nnet ? links[l].bw_Bps : p->inj_bw_Bps;
		m->lat[l] = l < m->nnet && !p->lat_in_alpha ? links[l].lat_s : 0;
	}
	for (size_t i = 0; i < nx; i++) {
		m->nseg[i] = pm_lnet_segments(p, maxseg, unit * m->s->x[i].cnt, &m->segw[i]);
		m->segw[i] *= m->s->x[i].at_switch ? pm_switch_scale(p) : 1;	/* the switch's rate */
	}
	return PM_OK;
}

int pm_lnet_new(const struct pm_topo *t, const struct pm_sched *s, double unit,
		const struct pm_params *p, int maxseg, int inj, const size_t *roff,
		const int32_t *route, const struct pm_net_hooks *h, struct pm_net *out)
{
	struct lnet *m = calloc(1, sizeof *m);

	out->n = m;
	out->ops = &pm_lnet_ops;
	if (!m)
		return PM_EINTERNAL;
	m->s = s;
	m->h = *h;
	m->roff = roff;
	m->route = route;
	m->nnet = pm_topo_nlinks(t);
	m->nlinks = m->nnet + (inj ? 2 * pm_topo_endpoints(t) : 0);
	return links_and_segments(m, t, unit, p, maxseg);
}
