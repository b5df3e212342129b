/* rnet.c: the router-level network of the packet simulator (see rnet.h).
 *
 * Ids: channels 0..L-1 are the topology's links, then the injection
 * channels (endpoint e, port k: L + e*ports + k), then the ejection
 * channels (L + E*ports + e*ports + k).  Arbitration points ("outputs")
 * are the links 0..L-1, then one ejection point per endpoint (L + e), then
 * one sender per injection channel (L + E + e*ports + k).
 */
#include "sim/rnet.h"
#include "sim/evq.h"
#include "model/grow.h"
#include "model/progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* Events (sim/evq.h): a transfer done (its id), or an output to
 * arbitrate (the output's id, in the indexed heap of outputs). */

struct pkt {
	uint32_t x, next;	/* transfer; next packet in the same VC FIFO */
	uint32_t flits, hop;	/* hop: network links crossed so far */
	int dim, cls;		/* dimension travelled last, VC class */
	double head_t;		/* first flit in the current buffer */
	double lag;		/* last flit arrives lag after the first */
	double ready;		/* may leave (at the front, pipeline done) */
	uint32_t out;		/* the output it asks for at its current router */
};

/* Credits of one packet coming back, one flit time apart. */
struct ramp {
	double t0, dt;
	uint32_t n;
};

struct vcq {
	uint32_t head, tail;	/* packet FIFO */
	double inflight;	/* flits sent in whose credits are not all back */
	struct ramp *r;		/* circular, in departure order */
	uint32_t r0, rn, rcap;
	int waiting;		/* a sender found too few credits */
	double depth;		/* buffer of this VC, flits */
};

/* The input VCs whose front packet asks for one output. */
struct reqs {
	uint32_t *a;		/* channel * nvc + vc */
	uint32_t n, cap;
};

struct nport {
	uint32_t cur, sent, npk;	/* transfer being sent, packets sent, of */
	uint32_t qhead, qtail;	/* ni_buffer: transfers queued behind cur */
	uint32_t pend;		/* ni_buffer: the last transfer, not yet left */
	double backlog;		/* ni_buffer: packets not yet on the wire */
	double free_at;		/* ni_buffer: when the last transfer left */
	double left_B;		/* payload bytes not yet packetised */
	double read_per_B;	/* memory bytes read per payload byte sent */
	double mem_at;		/* the next packet's reads are done then; <0: not asked */
};

struct pm_rnet {
	const struct pm_topo *t;
	const struct pm_sched *s;
	const struct pm_params *p;
	struct pm_router_cfg c;
	struct pm_net_hooks h;
	struct pm_trace *trace;
	const size_t *roff;
	const int32_t *route;
	double unit, payload, flit, pipe, credit, inj_lat;
	double maxflits;	/* the largest packet, flits */
	int L, E, ports, nvc, nch, nout;
	int classes;		/* VC classes: 1 (none), 2 by dateline, or by hop */
	int by_hop;
	double *bw, *lat, *busy_until, *busy;
	int *ldim, *ldate;	/* per link: grid dimension, wrap-around */
	struct vcq *q;		/* (channel < L + E*ports) * nvc + vc */
	double *wake;		/* per output: pending arbitration time */
	uint32_t *rr;		/* islip, per output: one past the input
				 * channel it granted last */
	struct reqs *rq;	/* per output: who asks for it */
	struct nport *np;	/* per injection channel */
	uint32_t *left, *step;	/* per transfer: packets not delivered; step */
	uint32_t *qnext;	/* ni_buffer: per transfer, the next queued */
	double *last_t;
	double *xread;		/* per transfer: bytes its sender reads from memory */
	struct pkt *pk;
	uint32_t npk, cappk, freepk;
	struct pm_evq done;	/* transfers done; its counter numbers the outputs' keys too */
	/* outputs waiting to arbitrate: an indexed heap keyed by
	 * (wake time, sequence), so an earlier request moves an output up
	 * instead of leaving a stale event behind */
	struct pm_ev *oh;		/* (wake time, sequence, output) */
	uint32_t *opos;
	uint32_t noh;
	/* The output being arbitrated stays at the top of oh while it runs
	 * (every wake is at or after now, and later in sequence, so nothing
	 * passes it); a wake of it meanwhile is kept here and replaces the
	 * top afterwards: one sift down instead of a pop and a push. */
	uint32_t running;	/* NONE outside an arbitration */
	int rekeyed;
	struct pm_ev rekey;
	double packets, hops, events;
	double expect;		/* events the run should take, for progress; 0 unknown */
	double *mem_free;	/* per endpoint: when its memory reads are done */
	double mem_bw;		/* 0: reads cost nothing (ideal endpoint) */
	int failed;
};

/* BookSim2's defaults as the MULTITREE artifact runs them (Huang et al.,
 * ISCA 2021, Table III); the pipeline: routing 0 + VC allocation 1 +
 * switch allocation 1 cycles. */
void pm_router_cfg_default(struct pm_router_cfg *c)
{
	*c = (struct pm_router_cfg){.vcs = 4, .vc_flits = 318, .vc_auto = 1, .clock_Hz = 1e9, .pipe_cycles = 2,
				    .credit_cycles = 1, .inj_cycles = 1};
}

/* Transfer x is done at t. */
static void done_at(struct pm_rnet *n, double t, uint32_t x)
{
	if (pm_evq_push(&n->done, t, x))
		n->failed = 1;
}

static void o_up(struct pm_rnet *n, uint32_t i)
{
	struct pm_ev e = n->oh[i];
	while (i > 0 && pm_ev_before(&e, &n->oh[(i - 1) / 4])) {
		n->oh[i] = n->oh[(i - 1) / 4];
		n->opos[pm_ev_id(n->oh[i])] = i;
		i = (i - 1) / 4;
	}
	n->oh[i] = e;
	n->opos[pm_ev_id(e)] = i;
}

/* Put e at position i of the output heap and sift it down. */
static void o_down(struct pm_rnet *n, uint32_t i, struct pm_ev e)
{
	struct pm_ev *restrict h = n->oh;
	uint32_t *restrict pos = n->opos;
	uint32_t size = n->noh;

	for (;;) {
		uint32_t c = 4 * i + 1, end = c + 4 < size ? c + 4 : size;
		if (c >= size)
			break;
		c = (uint32_t)pm_ev_min_child(h, c, end);
		if (!pm_ev_before(&h[c], &e))
			break;
		h[i] = h[c];
		pos[pm_ev_id(h[i])] = i;
		i = c;
	}
	h[i] = e;
	pos[pm_ev_id(e)] = i;
}

/* Take the earliest output off the heap.  (Floyd's bottom-up pop was
 * tried: 7% slower here, the last entry usually stops high.) */
static void o_pop(struct pm_rnet *n)
{
	uint32_t top = pm_ev_id(n->oh[0]);

	n->opos[top] = NONE;
	if (--n->noh > 0)
		o_down(n, 0, n->oh[n->noh]);
}

/* Arbitrate output o at t, unless it already will earlier. */
static void wake(struct pm_rnet *n, uint32_t o, double t)
{
	if (t >= n->wake[o])
		return;
	n->wake[o] = t;
	if (o == n->running) {
		n->rekey = pm_evq_next(&n->done, t, o);
		n->rekeyed = 1;
		return;
	}
	if (n->opos[o] == NONE)
		n->opos[o] = n->noh++;
	n->oh[n->opos[o]] = pm_evq_next(&n->done, t, o);
	o_up(n, n->opos[o]);
}

/* ---- credits ---- */

static void retire(struct vcq *q, double now)
{
	while (q->rn) {
		struct ramp *r = &q->r[q->r0];
		if (r->t0 + (r->n - 1) * r->dt > now)
			break;
		q->inflight -= r->n;
		q->r0 = (q->r0 + 1) % q->rcap;
		q->rn--;
	}
}

/* Earliest time >= now at which q has room for f flits; INFINITY until
 * more packets leave it. */
static double credit_time(struct vcq *q, double f, double now)
{
	if (f <= q->depth - q->inflight)
		return now;
	retire(q, now);
	double need = f - (q->depth - q->inflight);
	if (need <= 0)
		return now;
	for (uint32_t k = 0; k < q->rn; k++) {
		const struct ramp *r = &q->r[(q->r0 + k) % q->rcap];
		if (need <= r->n) {
			double t = r->t0 + (need - 1) * r->dt;
			return t > now ? t : now;
		}
		need -= r->n;
	}
	return INFINITY;
}

static int add_ramp(struct vcq *q, double t0, double dt, uint32_t cnt)
{
	if (q->rn == q->rcap) {
		uint32_t cap = q->rcap ? 2 * q->rcap : 8;
		struct ramp *a = malloc(sizeof *a * cap);
		if (!a)
			return -1;
		for (uint32_t k = 0; k < q->rn; k++)
			a[k] = q->r[(q->r0 + k) % q->rcap];
		free(q->r);
		q->r = a;
		q->r0 = 0;
		q->rcap = cap;
	}
	q->r[(q->r0 + q->rn++) % q->rcap] = (struct ramp){t0, dt, cnt};
	return 0;
}

/* ---- packets and FIFOs ---- */

static uint32_t new_pkt(struct pm_rnet *n)
{
	if (n->freepk != NONE) {
		uint32_t i = n->freepk;
		n->freepk = n->pk[i].next;
		return i;
	}
	if (n->npk == n->cappk) {
		size_t cap = pm_grow_cap(n->cappk, n->npk + 1u, 1024);
		if (pm_resize(&n->pk, cap, sizeof *n->pk)) {
			n->failed = 1;
			return NONE;
		}
		n->cappk = (uint32_t)cap;
	}
	return n->npk++;
}

static void free_pkt(struct pm_rnet *n, uint32_t i)
{
	n->pk[i].next = n->freepk;
	n->freepk = i;
}

/* The output packet i asks for at its current router. */
static uint32_t target(const struct pm_rnet *n, uint32_t i)
{
	const struct pkt *p = &n->pk[i];
	size_t k = n->roff[p->x] + p->hop;
	if (k < n->roff[p->x + 1])
		return (uint32_t)n->route[k];
	return (uint32_t)(n->L + n->s->map[n->s->x[p->x].dst]);
}

/* The front of input VC qi asks for output o, or no longer does. */
static void ask(struct pm_rnet *n, uint32_t o, uint32_t qi)
{
	struct reqs *r = &n->rq[o];
	size_t cap = r->cap;

	if (pm_grow(&r->a, &cap, r->n + 1u, sizeof *r->a, 4)) {
		n->failed = 1;
		return;
	}
	r->cap = (uint32_t)cap;
	r->a[r->n++] = qi;
}

static void unask(struct pm_rnet *n, uint32_t o, uint32_t qi)
{
	struct reqs *r = &n->rq[o];
	for (uint32_t k = 0; k < r->n; k++)
		if (r->a[k] == qi) {
			r->a[k] = r->a[--r->n];
			return;
		}
}

/* Packet i enters the buffer of channel ch, VC v, first flit at t. */
static void enqueue(struct pm_rnet *n, uint32_t i, int ch, int v, double t, double lag)
{
	struct vcq *q = &n->q[(size_t)ch * n->nvc + v];
	struct pkt *p = &n->pk[i];

	p->head_t = t;
	p->lag = lag;
	p->next = NONE;
	p->out = target(n, i);
	q->inflight += p->flits;
	if (q->head == NONE) {
		q->head = q->tail = i;
		p->ready = t + n->pipe;
		ask(n, p->out, (uint32_t)ch * n->nvc + v);
		wake(n, p->out, p->ready);
	} else {
		n->pk[q->tail].next = i;
		q->tail = i;
	}
}

/* The VC class a packet takes on link o (0 where there are no classes). */
static int class_on(const struct pm_rnet *n, const struct pkt *p, int o)
{
	if (n->classes == 1)
		return 0;
	if (n->by_hop)
		return (int)p->hop < n->classes ? (int)p->hop : n->classes - 1;
	if (n->ldate[o])
		return 1;
	return n->ldim[o] == p->dim ? p->cls : 0;
}

/* The VC of class cls on channel ch with room for f flits now and the
 * most free credits; -1 and *when (earliest time one may have room) if
 * none. */
static int pick_vc(struct pm_rnet *n, int ch, int cls, double f, double now, double *when)
{
	int w = n->nvc / n->classes;
	int lo = cls * w, hi = cls == n->classes - 1 ? n->nvc : lo + w;
	int best = -1;

	*when = INFINITY;
	for (int v = lo; v < hi; v++) {
		struct vcq *q = &n->q[(size_t)ch * n->nvc + v];
		double t = credit_time(q, f, now);
		if (t <= now) {
			if (best < 0 || q->inflight < n->q[(size_t)ch * n->nvc + best].inflight)
				best = v;
		} else {
			if (t < *when)
				*when = t;
			q->waiting = 1;
		}
	}
	return best;
}

/* Packet i (at the front of channel in, VC v) leaves at d over channel
 * ch, taking ser; the buffer returns its credits and its next packet
 * moves to the front. */
static void depart(struct pm_rnet *n, int in, int v, double d, double ser)
{
	struct vcq *q = &n->q[(size_t)in * n->nvc + v];
	uint32_t i = q->head;
	struct pkt *p = &n->pk[i];
	double dur = ser > p->lag ? ser : p->lag;

	unask(n, p->out, (uint32_t)in * n->nvc + v);
	q->head = p->next;
	if (q->head == NONE)
		q->tail = NONE;
	if (add_ramp(q, d + n->lat[in] + n->credit, dur / p->flits, p->flits)) {
		n->failed = 1;
		return;
	}
	if (q->waiting) {
		q->waiting = 0;
		uint32_t up = in < n->L ? (uint32_t)in : (uint32_t)(n->L + n->E + (in - n->L));
		wake(n, up, d + n->lat[in] + n->credit);
	}
	if (q->head != NONE) {
		struct pkt *f = &n->pk[q->head];
		double r = f->head_t + n->pipe;
		f->ready = r > d + dur ? r : d + dur;
		ask(n, f->out, (uint32_t)in * n->nvc + v);
		wake(n, f->out, f->ready);
	}
}

/* The packet reached its endpoint: the transfer may be done. */
static void eject(struct pm_rnet *n, uint32_t i, double t)
{
	uint32_t x = n->pk[i].x;

	if (t > n->last_t[x])
		n->last_t[x] = t;
	if (--n->left[x] == 0)
		done_at(n, n->last_t[x], x);
	free_pkt(n, i);
}

/* Is packet a ahead of packet b in arbitration? */
static int wins(const struct pm_rnet *n, uint32_t a, uint32_t b)
{
	const struct pkt *pa = &n->pk[a], *pb = &n->pk[b];
	if (!n->c.fcfs && n->step[pa->x] != n->step[pb->x])
		return n->step[pa->x] < n->step[pb->x];
	if (pa->head_t != pb->head_t)
		return pa->head_t < pb->head_t;
	if (pa->x != pb->x)
		return pa->x < pb->x;
	return a < b;
}

/* ---- arbitration at a link or an ejection point ---- */

/* With islip: does packet a (at the front of input queue qa) go before
 * packet b (of queue qb) at output o?  The input channel nearer after the
 * one o granted last first (round robin); within one input, wins(). */
static int ahead(const struct pm_rnet *n, uint32_t o, uint32_t qa, uint32_t a, uint32_t qb, uint32_t b)
{
	uint32_t nin = (uint32_t)(n->L + n->E * n->ports), ia = qa / (uint32_t)n->nvc,
		 ib = qb / (uint32_t)n->nvc;
	if (ia != ib)
		return (ia + nin - n->rr[o]) % nin < (ib + nin - n->rr[o]) % nin;
	return wins(n, a, b);
}

/* The channel of output o that is free first (an endpoint's ejection
 * point has one per port). */
static int out_channel(const struct pm_rnet *n, uint32_t o)
{
	if (o < (uint32_t)n->L)
		return (int)o;
	int base = n->L + n->E * n->ports + ((int)o - n->L) * n->ports, ch = base;
	for (int k = 1; k < n->ports; k++)
		if (n->busy_until[base + k] < n->busy_until[ch])
			ch = base + k;
	return ch;
}

static double free_at(const struct pm_rnet *n, uint32_t o)
{
	return n->busy_until[out_channel(n, o)];
}

/* The request output o grants now: the best packet at the head of an
 * input queue that asks for it, is ready and (on a network link) finds a
 * free VC downstream; *next when the next one may be ready, *others
 * whether another asked too. */
struct grant {
	uint32_t pkt, queue;
	int vc, others;
	double next;
};

static struct grant choose(struct pm_rnet *n, uint32_t o, int ch, double now)
{
	const struct reqs *rq = &n->rq[o];
	struct grant g = {NONE, 0, -1, 0, INFINITY};

	for (uint32_t k = 0; k < rq->n; k++) {
		uint32_t i = n->q[rq->a[k]].head;
		struct pkt *p = &n->pk[i];
		if (p->ready > now) {
			g.next = p->ready < g.next ? p->ready : g.next;
			continue;
		}
		int vc = 0;
		if (ch < n->L) {
			double when;
			vc = pick_vc(n, ch, class_on(n, p, ch), p->flits, now, &when);
			if (vc < 0) {
				g.next = when < g.next ? when : g.next;
				continue;
			}
		}
		if (g.pkt != NONE)
			g.others = 1;
		if (g.pkt == NONE || (n->rr ? ahead(n, o, rq->a[k], i, g.queue, g.pkt) : wins(n, i, g.pkt))) {
			g.pkt = i;
			g.queue = rq->a[k];
			g.vc = vc;
		}
	}
	return g;
}

static void arbitrate(struct pm_rnet *n, uint32_t o, double now)
{
	int ch = out_channel(n, o);

	if (n->busy_until[ch] > now) {
		wake(n, o, n->busy_until[ch]);
		return;
	}
	struct grant g = choose(n, o, ch, now);
	if (g.pkt == NONE) {
		if (g.next < INFINITY)
			wake(n, o, g.next);
		return;
	}
	/* the winner's input channel and VC (queues are numbered in x nvc + v) */
	int bin = (int)(g.queue / (uint32_t)n->nvc), bv = (int)(g.queue % (uint32_t)n->nvc);
	if (n->rr)
		n->rr[o] = (uint32_t)bin + 1;
	struct pkt *p = &n->pk[g.pkt];
	double ser = p->flits * n->flit / n->bw[ch];
	double lag = (p->flits - 1) * n->flit / n->bw[ch];
	n->busy_until[ch] = now + ser;
	n->busy[ch] += ser;
	if (n->trace && ch < n->L)
		pm_trace_busy(n->trace, ch, now, now + ser);
	depart(n, bin, bv, now, ser);
	if (ch < n->L) {
		p->cls = class_on(n, p, ch);
		p->dim = n->ldim[ch];
		p->hop++;
		n->hops += 1;
		enqueue(n, g.pkt, ch, g.vc, now + n->lat[ch], lag);
	} else {
		eject(n, g.pkt, now + ser + n->lat[ch]);
	}
	if (g.others || g.next < INFINITY)
		wake(n, o, free_at(n, o));
}

/* ---- injection ---- */

/* A packet's payload and flit size, bytes (the flow control's, else
 * Table III's 256 and 16). */
static void packet_shape(const struct pm_params *p, double *payload, double *flit)
{
	*payload = p->payload_B > 0 ? p->payload_B : 256;
	*flit = p->flit_B > 0 ? p->flit_B : 16;
}

double pm_rnet_handover_s(const struct pm_params *p, const struct pm_router_cfg *c, double bytes)
{
	double pay, flit;

	packet_shape(p, &pay, &flit);
	double k = ceil(bytes / pay - 1e-9), B = c->ni_buffer;
	double pkt = ceil((pay + (p->flow == PM_FLOW_NONE ? 0 : flit)) / flit - 1e-9) * flit / p->link_bw_Bps;

	if (k < 1)
		k = 1;
	return (k > B ? (k - B) * pkt : 0) + (k < B ? k : B) / c->clock_Hz;
}

static void begin(struct pm_rnet *n, int e, int port, uint32_t x, double t);

/* With a memory limit, is the next packet's data read by now?  If not,
 * its read is booked (once) and the channel woken when it is done. */
static int data_read(struct pm_rnet *n, uint32_t o, int c, struct nport *np, double pay, double now)
{
	if (n->mem_bw <= 0 || np->read_per_B <= 0)
		return 1;
	if (np->mem_at < 0) {
		int e = c / n->ports;
		double s0 = n->mem_free[e] > now ? n->mem_free[e] : now;
		np->mem_at = n->mem_free[e] = s0 + pay * np->read_per_B / n->mem_bw;
	}
	if (np->mem_at > now) {
		wake(n, o, np->mem_at);
		return 0;
	}
	return 1;
}

/* A packet of pay bytes has left: the next packet's reads follow at once
 * (the engine reads one packet ahead of the wire). */
static void read_ahead(struct pm_rnet *n, int c, struct nport *np, double pay)
{
	np->left_B -= pay;
	np->sent++;
	if (n->mem_bw > 0 && np->read_per_B > 0 && np->sent < np->npk) {
		int e = c / n->ports;
		double nxt = np->left_B < n->payload ? np->left_B : n->payload;
		np->mem_at = n->mem_free[e] += nxt * np->read_per_B / n->mem_bw;
	} else {
		np->mem_at = -1;
	}
}

/* The transfer's last packet has left at `done`: the port takes the next
 * transfer its buffer holds, or says the transfer has left. */
static void transfer_left(struct pm_rnet *n, int c, struct nport *np, double done)
{
	uint32_t x = np->cur;

	np->cur = NONE;
	if (n->c.ni_buffer > 0) {
		if (np->qhead != NONE) {	/* the next transfer in the buffer */
			uint32_t y = np->qhead;
			np->qhead = n->qnext[y];
			if (np->qhead == NONE)
				np->qtail = NONE;
			begin(n, c / n->ports, c % n->ports, y, done);
		}
		return;
	}
	if (n->h.left)
		n->h.left(n->h.ctx, x, done);
}

/* Injection channel ch (endpoint e, port k) sends its next packet. */
static void inject(struct pm_rnet *n, uint32_t o, double now)
{
	int c = (int)o - n->E - n->L, ch = n->L + c;
	struct nport *np = &n->np[c];

	if (np->cur == NONE)
		return;
	if (n->busy_until[ch] > now) {
		wake(n, o, n->busy_until[ch]);
		return;
	}
	double pay = np->left_B < n->payload ? np->left_B : n->payload;
	if (!data_read(n, o, c, np, pay, now))
		return;
	double head = n->p->flow == PM_FLOW_PACKET ||
		(n->p->flow == PM_FLOW_MESSAGE && np->sent == 0) ? n->p->flit_B : 0;
	double flits = ceil((pay + head) / n->flit - 1e-9);
	if (flits < 1)
		flits = 1;
	double when;
	int vc = pick_vc(n, ch, 0, flits, now, &when);
	if (vc < 0) {
		if (when < INFINITY)
			wake(n, o, when);
		return;
	}
	uint32_t i = new_pkt(n);
	if (i == NONE)
		return;
	struct pkt *p = &n->pk[i];
	double ser = flits * n->flit / n->bw[ch];
	*p = (struct pkt){.x = np->cur, .flits = (uint32_t)flits, .dim = -1};
	n->busy_until[ch] = now + ser;
	n->packets += 1;
	read_ahead(n, c, np, pay);
	enqueue(n, i, ch, vc, now + n->lat[ch], (flits - 1) * n->flit / n->bw[ch]);
	if (n->c.ni_buffer > 0 && --np->backlog <= n->c.ni_buffer && np->pend != NONE) {
		uint32_t x = np->pend;	/* its last packet is in the buffer */
		np->pend = NONE;
		np->free_at = now + ser;
		if (n->h.left)
			n->h.left(n->h.ctx, x, now + ser);
	}
	if (np->sent < np->npk)
		wake(n, o, now + ser);
	else
		transfer_left(n, c, np, now + ser);
}

/* Packets transfer x is cut into. */
static uint32_t packets_of(const struct pm_rnet *n, uint32_t x)
{
	double k = ceil(n->unit * n->s->x[x].cnt / n->payload - 1e-9);
	return k < 1 ? 1 : (uint32_t)k;
}

static void begin(struct pm_rnet *n, int e, int port, uint32_t x, double t)
{
	struct nport *np = &n->np[e * n->ports + port];
	double m = n->unit * n->s->x[x].cnt;

	np->cur = x;
	np->sent = 0;
	np->mem_at = -1;
	np->npk = packets_of(n, x);
	np->left_B = m;
	np->read_per_B = m > 0 ? n->xread[x] / m : 0;
	n->left[x] = np->npk;
	n->last_t[x] = 0;
	wake(n, (uint32_t)(n->L + n->E + e * n->ports + port), t);
}

void pm_rnet_reads(struct pm_rnet *n, uint32_t x, double sender_B, int reader, double reader_B, double t)
{
	n->xread[x] = sender_B;
	if (reader >= 0 && reader_B > 0 && n->mem_bw > 0) {	/* the receiver loads its own data */
		double s0 = n->mem_free[reader] > t ? n->mem_free[reader] : t;
		n->mem_free[reader] = s0 + reader_B / n->mem_bw;
	}
}

/* ni_buffer: x goes to the channel of endpoint e free first (its last
 * transfer has left), the lowest-numbered among those free at t, and
 * queues behind what that channel still holds; it has left once the
 * channel holds at most ni_buffer packets, its packets entering the
 * buffer one a cycle. */
static void buffer(struct pm_rnet *n, int e, uint32_t x, double t)
{
	int k = -1;
	double at = INFINITY;

	for (int j = 0; j < n->ports; j++) {
		const struct nport *q = &n->np[e * n->ports + j];
		double f = q->pend != NONE ? INFINITY : q->free_at > t ? q->free_at : t;
		if (f < at) {
			at = f;
			k = j;
		}
	}
	if (k < 0) {
		n->failed = 1;	/* the driver keeps every rank within its ports */
		return;
	}
	struct nport *np = &n->np[e * n->ports + k];
	uint32_t m = packets_of(n, x);
	np->backlog += m;
	np->pend = x;
	np->free_at = INFINITY;
	n->qnext[x] = NONE;
	if (np->cur == NONE)
		begin(n, e, k, x, at);
	else if (np->qtail == NONE)
		np->qhead = np->qtail = x;
	else
		np->qtail = n->qnext[np->qtail] = x;
	if (np->backlog <= n->c.ni_buffer) {
		np->pend = NONE;
		np->free_at = at + m / n->c.clock_Hz;
		if (n->h.left)
			n->h.left(n->h.ctx, x, np->free_at);
	}
}

void pm_rnet_send(struct pm_rnet *n, uint32_t x, double t)
{
	int e = n->s->map[n->s->x[x].src];

	if (n->s->x[x].cnt == 0) {	/* nothing to move: left and arrived at once */
		if (n->h.left)
			n->h.left(n->h.ctx, x, t);
		done_at(n, t, x);
		return;
	}
	if (n->c.ni_buffer > 0) {
		buffer(n, e, x, t);
		return;
	}
	for (int k = 0; k < n->ports; k++)
		if (n->np[e * n->ports + k].cur == NONE) {
			begin(n, e, k, x, t);
			return;
		}
	n->failed = 1;	/* the driver keeps every rank within its ports */
}

void pm_rnet_expect(struct pm_rnet *n, double events)
{
	n->expect = events;
}

int pm_rnet_run(struct pm_rnet *n)
{
	while ((n->done.n || n->noh) && !n->failed) {
		n->events += 1;
		if (((uint64_t)n->events & 0xffff) == 0)
			pm_progress("simulating router events", n->events, n->expect);
		if (n->done.n && (!n->noh || pm_ev_before(&n->done.h[0], &n->oh[0]))) {
			struct pm_ev e = pm_evq_pop(&n->done);
			if (n->h.delivered)
				n->h.delivered(n->h.ctx, pm_ev_id(e), e.t);
			continue;
		}
		uint32_t o = pm_ev_id(n->oh[0]);
		double t = n->wake[o];
		n->wake[o] = INFINITY;
		n->running = o;
		n->rekeyed = 0;
		if (o >= (uint32_t)(n->L + n->E))
			inject(n, o, t);
		else
			arbitrate(n, o, t);
		n->running = NONE;
		if (n->rekeyed)
			o_down(n, 0, n->rekey);
		else
			o_pop(n);
	}
	return n->failed ? PM_EINTERNAL : PM_OK;
}

void pm_rnet_trace(struct pm_rnet *n, struct pm_trace *tr) { n->trace = tr; }

void pm_rnet_stats(const struct pm_rnet *n, struct pm_net_stats *st)
{
	st->packets = n->packets;
	st->hops = n->hops;
	st->events = n->events;
	st->link_busy = 0;
	for (int l = 0; l < n->L; l++)
		st->link_busy += n->busy[l];
}

void pm_rnet_free(struct pm_rnet *n)
{
	if (!n)
		return;
	void *own[] = {&n->q, &n->bw, &n->lat, &n->busy_until, &n->busy, &n->ldim, &n->ldate,
		&n->wake, &n->rr, &n->rq, &n->np, &n->left, &n->qnext, &n->step, &n->last_t,
		&n->xread, &n->mem_free, &n->pk, &n->oh, &n->opos, &n};
	for (size_t k = 0; n->q && k < (size_t)(n->L + n->E * n->ports) * n->nvc; k++)
		free(n->q[k].r);
	for (int o = 0; n->rq && o < n->nout; o++)
		free(n->rq[o].a);
	pm_evq_free(&n->done);
	pm_free_each(own, sizeof own / sizeof *own);
}

/* Virtual-channel classes that keep routing deadlock free: a torus's
 * dateline (2 classes); where the kind's routes may turn from down to up
 * and back (its turns: BiGraph, file and ASTRA-sim networks), one class
 * per hop of the longest route when there are VCs enough (a packet's class only grows along its route,
 * so no cycle of waiting channels can close); none where routing is
 * deadlock free by itself (meshes in dimension order, fat trees and
 * machine trees up then down, one switch, full connection). */
static void set_classes(struct pm_rnet *n, int wrap)
{
	int hops = pm_topo_max_hops(n->t);

	n->classes = 1;
	n->by_hop = 0;
	if (wrap && n->nvc >= 2) {
		n->classes = 2;
	} else if (pm_topo_kind_of(n->t)->turns && hops > 2 && hops <= n->nvc) {
		n->classes = hops;
		n->by_hop = 1;
	}
}

/* Channels and their buffers. */
static int build_channels(struct pm_rnet *n)
{
	const struct pm_link *lk = pm_topo_links(n->t);
	double ibw = n->p->inj_bw_Bps > 0 ? n->p->inj_bw_Bps : 0;
	size_t nq = (size_t)(n->L + n->E * n->ports) * n->nvc;

	n->bw = malloc(sizeof(double) * (size_t)n->nch);
	n->lat = malloc(sizeof(double) * (size_t)n->nch);
	n->busy_until = calloc((size_t)n->nch, sizeof(double));
	n->busy = calloc((size_t)n->nch, sizeof(double));
	n->ldim = malloc(sizeof(int) * (size_t)(n->L + 1));
	n->ldate = malloc(sizeof(int) * (size_t)(n->L + 1));
	n->q = calloc(nq, sizeof *n->q);
	if (!n->bw || !n->lat || !n->busy_until || !n->busy || !n->ldim ||
	    !n->ldate || !n->q)
		return -1;
	for (size_t k = 0; k < nq; k++)
		n->q[k].head = n->q[k].tail = NONE;
	int wrap = 0;
	for (int l = 0; l < n->L; l++) {
		n->bw[l] = lk[l].bw_Bps;
		n->lat[l] = n->p->lat_in_alpha ? 0 : lk[l].lat_s;
		n->ldim[l] = pm_topo_link_dim(n->t, l, &n->ldate[l]);
		wrap |= n->ldate[l];
	}
	set_classes(n, wrap);
	for (int e = 0; e < n->E; e++) {
		/* an endpoint's channels run at its fastest link unless --inj-bw */
		double b = ibw;
		int cnt;
		const int *out = pm_topo_out(n->t, e, &cnt);
		for (int k = 0; !ibw && k < cnt; k++)
			b = lk[out[k]].bw_Bps > b ? lk[out[k]].bw_Bps : b;
		for (int k = 0; k < n->ports; k++) {
			int in = n->L + e * n->ports + k, ej = n->L + n->E * n->ports + e * n->ports + k;
			n->bw[in] = n->bw[ej] = b > 0 ? b : PM_DEFAULT_LINK_BW;
			n->lat[in] = n->lat[ej] = n->inj_lat;
		}
	}
	/* Buffers: --vc-flits, or by default Table III's 318 flits, unless the
	 * channel's credit round trip holds more flits than that; then the
	 * round trip plus one packet, as Huang et al. size theirs ("to cover
	 * the credit round-trip loop"): a buffer smaller than bandwidth x
	 * round trip throttles a stream below the link (ACE's 200 GB/s links:
	 * 1,875 flits). */
	for (int ch = 0; ch < n->L + n->E * n->ports; ch++) {
		double rtt = 2 * n->lat[ch] + n->pipe + n->credit;
		double loop = ceil(rtt * n->bw[ch] / n->flit);	/* flits in flight over the loop */
		double d = n->c.vc_auto && loop > n->c.vc_flits ? loop + n->maxflits : n->c.vc_flits;
		for (int v = 0; v < n->nvc; v++)
			n->q[(size_t)ch * n->nvc + v].depth = d;
	}
	return 0;
}

int pm_rnet_check(const struct pm_params *p, const struct pm_router_cfg *c,
	       struct pm_err *err)
{
	double flit = p->flit_B > 0 ? p->flit_B : 16;
	double payload = p->payload_B > 0 ? p->payload_B : 256;
	double flits = ceil((payload + (p->flow == PM_FLOW_NONE ? 0 : flit)) / flit - 1e-9);

	if (!c->vc_auto && flits > c->vc_flits)
		return pm_fail(err, PM_EINPUT,
			       "a packet of %.0f flits does not fit a virtual channel of %.0f flits (expected --vc-flits of at least %.0f: virtual cut-through buffers whole packets)",
			       flits, c->vc_flits, flits);
	return PM_OK;
}

/* The arrays of a network: per arbiter, per port, per transfer; then
 * their starting values. */
static int alloc_state(struct pm_rnet *n)
{
	const struct pm_sched *s = n->s;
	const struct pm_router_cfg *c = &n->c;

	n->wake = malloc(sizeof(double) * (size_t)n->nout);
	n->oh = malloc(sizeof *n->oh * (size_t)n->nout);
	n->opos = malloc(sizeof(uint32_t) * (size_t)n->nout);
	n->rq = calloc((size_t)n->nout, sizeof *n->rq);
	n->rr = c->islip ? calloc((size_t)n->nout, sizeof(uint32_t)) : NULL;
	n->np = malloc(sizeof *n->np * (size_t)n->E * n->ports);
	n->left = calloc(s->nx + 1, sizeof(uint32_t));
	n->qnext = c->ni_buffer > 0 ? malloc(sizeof(uint32_t) * (s->nx + 1)) : NULL;
	n->step = malloc(sizeof(uint32_t) * (s->nx + 1));
	n->last_t = calloc(s->nx + 1, sizeof(double));
	n->xread = calloc(s->nx + 1, sizeof(double));
	n->mem_free = calloc((size_t)n->E + 1, sizeof(double));
	if (!n->wake || !n->oh || !n->opos || !n->rq || !n->np || (c->islip && !n->rr) ||
	    !n->left || (c->ni_buffer > 0 && !n->qnext) || !n->step || !n->last_t || !n->xread || !n->mem_free ||
	    build_channels(n))
		return -1;
	for (int o = 0; o < n->nout; o++) {
		n->wake[o] = INFINITY;
		n->opos[o] = NONE;
	}
	n->running = NONE;
	for (int k = 0; k < n->E * n->ports; k++)
		n->np[k] = (struct nport){.cur = NONE, .qhead = NONE, .qtail = NONE, .pend = NONE};
	for (int k = 0; k < s->nsteps; k++)
		for (size_t i = s->step_off[k]; i < s->step_off[k + 1]; i++)
			n->step[i] = (uint32_t)k;
	return 0;
}

/* Routers inject at the sender's router and eject at the receiver's, so
 * every source-routed transfer must run link to link from one to the
 * other; a schedule whose transfers end or start in a switch (the
 * in-network reduction and multicast of nvls) is refused. */
static int routes_join_endpoints(const struct pm_topo *t, const struct pm_sched *s, struct pm_err *err)
{
	for (size_t i = 0; s->route_off && i < s->nx; i++) {
		int at = s->map[s->x[i].src];
		for (uint32_t k = s->route_off[i]; k < s->route_off[i + 1]; k++) {
			const struct pm_link *l = pm_topo_link(t, s->route[k]);
			if (l->src != at)
				break;
			at = l->dst;
		}
		if (at != s->map[s->x[i].dst] || s->route_off[i] == s->route_off[i + 1])
			return pm_fail(err, PM_ENOTAPPLICABLE,
				       "not applicable: the router network runs every transfer from its sender's router to its receiver's, and this schedule's transfer from rank %d to %d starts or ends in a switch (an in-network reduction or multicast); --sim-net links simulates it",
				       s->x[i].src, s->x[i].dst);
	}
	return PM_OK;
}

int pm_rnet_new(const struct pm_topo *t, const struct pm_sched *s, double unit,
	     const struct pm_params *p, const struct pm_router_cfg *c,
	     int ports, const size_t *roff, const int32_t *route,
	     const struct pm_net_hooks *h, struct pm_rnet **out, struct pm_err *err)
{
	struct pm_rnet *n = calloc(1, sizeof *n);

	*out = NULL;
	if (!n)
		return pm_fail(err, PM_EINTERNAL, "out of memory setting up the simulation");
	n->t = t;
	n->s = s;
	n->p = p;
	n->c = *c;
	n->h = *h;
	n->roff = roff;
	n->route = route;
	n->unit = unit;
	packet_shape(p, &n->payload, &n->flit);
	n->pipe = c->pipe_cycles / c->clock_Hz;
	n->credit = c->credit_cycles / c->clock_Hz;
	n->inj_lat = c->inj_cycles / c->clock_Hz;
	n->maxflits = ceil((n->payload + (p->flow == PM_FLOW_NONE ? 0 : n->flit)) / n->flit - 1e-9);
	n->L = pm_topo_nlinks(t);
	n->E = pm_topo_endpoints(t);
	n->ports = ports < 1 ? 1 : ports;
	n->nvc = c->vcs;
	n->nch = n->L + 2 * n->E * n->ports;
	n->nout = n->L + n->E + n->E * n->ports;
	n->freepk = NONE;
	n->mem_bw = p->endpoint != PM_END_IDEAL ? p->mem_bw_Bps : 0;
	if (pm_rnet_check(p, c, err)) {
		free(n);
		return PM_EINPUT;
	}
	if (routes_join_endpoints(t, s, err)) {
		free(n);
		return PM_ENOTAPPLICABLE;
	}
	if (pm_switch_scale(p) != 1) {	/* flits are cut from the payload alone */
		free(n);
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: the router network moves flits at the links' own rate and cannot charge a byte %.3g bytes of link time (--sim-net links can)",
			       pm_switch_scale(p));
	}
	if ((double)n->nout >= (double)(1u << PM_EV_ID_BITS) || s->nx >= (1u << PM_EV_ID_BITS)) {
		int nout = n->nout;
		free(n);
		return pm_fail(err, PM_EINPUT,
			       "network too large for the router simulator: %d arbiters and %zu transfers (expected fewer than %u of each; use --sim-net links or the contention evaluator)",
			       nout, s->nx, 1u << PM_EV_ID_BITS);
	}
	if (alloc_state(n)) {
		pm_rnet_free(n);
		return pm_fail(err, PM_EINTERNAL, "out of memory setting up the simulation");
	}
	*out = n;
	return PM_OK;
}

static void ops_reads(void *n, uint32_t x, double sender_B, int reader, double reader_B, double t)
{
	pm_rnet_reads(n, x, sender_B, reader, reader_B, t);
}

static void ops_send(void *n, uint32_t x, double t) { pm_rnet_send(n, x, t); }
static int ops_run(void *n) { return pm_rnet_run(n); }
static void ops_stats(const void *n, struct pm_net_stats *st) { pm_rnet_stats(n, st); }
static void ops_trace(void *n, struct pm_trace *tr) { pm_rnet_trace(n, tr); }
static void ops_expect(void *n, double events) { pm_rnet_expect(n, events); }
static void ops_free(void *n) { pm_rnet_free(n); }

const struct pm_net_ops pm_rnet_ops = {
	.reads = ops_reads,
	.send = ops_send,
	.run = ops_run,
	.stats = ops_stats,
	.trace = ops_trace,
	.expect = ops_expect,
	.free = ops_free,
};
