/* ringlib.c: the ring reduce-scatter / all-gather steps (Patarasuk & Yuan
 * 2009): at step t member i passes one part to its neighbour, so each part
 * travels p-1 links and every link carries one part per step.  Step t+1
 * is step t with every part moved back by dir, which each transfer
 * records as its rotation: a builder adds a phase's first step and
 * repeats it (pm_sched_repeat) instead of storing p-1 steps. */
#include "model/ringlib.h"

static int mod(int a, int p)
{
	return ((a % p) + p) % p;
}

/* Member i sends part (first + i) mod p to member i + dir. */
static void ring_step(struct pm_sched *s, const int *members, int p,
		      uint32_t lo, uint32_t len, int step, int first, int dir,
		      enum pm_op op, int flow)
{
	uint32_t part = len / (uint32_t)p;
	int q = mod(first, p), next = mod(dir, p);

	for (int i = 0; i < p; i++) {
		pm_sched_add_rot(s, step, members[i], members[next],
				 lo + (uint32_t)q * part, part, op, flow,
				 lo, part * (uint32_t)p, -dir * (int32_t)part);
		q = q + 1 == p ? 0 : q + 1;
		next = next + 1 == p ? 0 : next + 1;
	}
}

void pm_ring_rs_step(struct pm_sched *s, const int *members, int p,
		     uint32_t lo, uint32_t len, int step, int t, int dir,
		     int flow)
{
	ring_step(s, members, p, lo, len, step, -dir * (t + 1), dir, PM_REDUCE, flow);
}

void pm_ring_ag_step(struct pm_sched *s, const int *members, int p,
		     uint32_t lo, uint32_t len, int step, int t, int dir,
		     int flow)
{
	ring_step(s, members, p, lo, len, step, -dir * t, dir, PM_COPY, flow);
}

void pm_ring_rs(struct pm_sched *s, const int *members, int p, uint32_t lo,
		uint32_t len, int step0, int dir, int flow)
{
	if (p < 2)
		return;
	pm_ring_rs_step(s, members, p, lo, len, step0, 0, dir, flow);
	pm_sched_repeat(s, 1, p - 1);
}

void pm_ring_ag(struct pm_sched *s, const int *members, int p, uint32_t lo,
		uint32_t len, int step0, int dir, int flow)
{
	if (p < 2)
		return;
	pm_ring_ag_step(s, members, p, lo, len, step0, 0, dir, flow);
	pm_sched_repeat(s, 1, p - 1);
}
