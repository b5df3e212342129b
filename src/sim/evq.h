/* evq.h: the packet simulator's event queue, one for both networks (the
 * links network, lnet.c, and the router network, rnet.c).
 *
 * An event is a time and a key: a sequence number above an id of
 * PM_EV_ID_BITS bits, so it is 16 bytes and events at one time are
 * served in the order they were pushed.  Times are finite and >= +0, so
 * their bit patterns order as the numbers do and (time bits, key)
 * compares as one 128-bit integer, without the branches of two
 * floating-point tests (heaps once took 40% of a router run).  The heap
 * is 4-ary: half the levels of a binary one.  A network whose events
 * need more than an id keeps what they carry in its own table, indexed
 * by the id.  The comparison and the choice among four children are
 * shared with the router network's indexed heap of outputs, which takes
 * its sequence numbers from the same counter.  Inline: these run once
 * an event in the simulators' inner loops. */
#ifndef PM_EVQ_H
#define PM_EVQ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PM_EV_ID_BITS 26
#define PM_EV_ID_MAX ((1u << PM_EV_ID_BITS) - 1)

struct pm_ev {
	double t;
	uint64_t key;		/* sequence << PM_EV_ID_BITS | id */
};

struct pm_evq {
	struct pm_ev *h;
	size_t n, cap;
	uint64_t seq;		/* the next sequence number */
};

static inline uint32_t pm_ev_id(struct pm_ev e)
{
	return (uint32_t)(e.key & PM_EV_ID_MAX);
}

/* An event at t with id, the next in sequence. */
static inline struct pm_ev pm_evq_next(struct pm_evq *q, double t, uint32_t id)
{
	return (struct pm_ev){t, (q->seq++ << PM_EV_ID_BITS) | id};
}

__extension__ typedef unsigned __int128 pm_ev_u128;

static inline pm_ev_u128 pm_ev_key(const struct pm_ev *e)
{
	uint64_t t;
	memcpy(&t, &e->t, sizeof t);
	return (pm_ev_u128)t << 64 | e->key;
}

static inline int pm_ev_before(const struct pm_ev *a, const struct pm_ev *b)
{
	return pm_ev_key(a) < pm_ev_key(b);
}

/* The earliest of four heap entries, without branches: which child is
 * earliest is a coin toss the branch predictor loses half the time. */
static inline uint32_t pm_ev_min4(const struct pm_ev *h, uint32_t c)
{
	pm_ev_u128 a = pm_ev_key(&h[c]), b = pm_ev_key(&h[c + 1]);
	pm_ev_u128 x = pm_ev_key(&h[c + 2]), y = pm_ev_key(&h[c + 3]);
	uint32_t i1 = b < a, i2 = y < x;
	pm_ev_u128 m1 = i1 ? b : a, m2 = i2 ? y : x;
	return m2 < m1 ? c + 2 + i2 : c + i1;
}

/* The earliest of the children [c, end) of a 4-ary heap node.  This and
 * the push are kept out of line (the router network ran them so before
 * this header; inlining them measured no faster). */
static __attribute__((noinline, unused)) size_t pm_ev_min_child(const struct pm_ev *h, size_t c, size_t end)
{
	if (end - c == 4)
		return pm_ev_min4(h, (uint32_t)c);
	for (size_t k = c + 1; k < end; k++)
		if (pm_ev_before(&h[k], &h[c]))
			c = k;
	return c;
}

/* Push an event at t with id (at most PM_EV_ID_MAX); -1: out of memory. */
static __attribute__((noinline, unused)) int pm_evq_push(struct pm_evq *q, double t, uint32_t id)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 1024;
		struct pm_ev *a = realloc(q->h, sizeof *a * cap);
		if (!a)
			return -1;
		q->h = a;
		q->cap = cap;
	}
	struct pm_ev e = pm_evq_next(q, t, id);
	size_t i = q->n++;
	while (i > 0 && pm_ev_before(&e, &q->h[(i - 1) / 4])) {
		q->h[i] = q->h[(i - 1) / 4];
		i = (i - 1) / 4;
	}
	q->h[i] = e;
	return 0;
}

/* Take the earliest event off a queue that has one. */
static inline struct pm_ev pm_evq_pop(struct pm_evq *q)
{
	struct pm_ev *restrict h = q->h;
	struct pm_ev top = h[0], last = h[--q->n];
	size_t i = 0, size = q->n;	/* locals: the stores into h may
					 * not alias q's fields */
	for (;;) {
		size_t c = 4 * i + 1, end = c + 4 < size ? c + 4 : size;
		if (c >= size)
			break;
		c = pm_ev_min_child(h, c, end);
		if (!pm_ev_before(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (size)
		h[i] = last;
	return top;
}

static inline void pm_evq_free(struct pm_evq *q)
{
	free(q->h);
	q->h = NULL;
	q->n = q->cap = 0;
}

#endif
