/* ringlib.c: the ring reduce-scatter / all-gather steps (Patarasuk & Yuan
 * 2009): at step t member i passes one part to its neighbour, so each part
 * travels p-1 links and every link carries one part per step. */
#include "model/ringlib.h"

static int mod(int a, int p)
{
	return ((a % p) + p) % p;
}

void pm_ring_rs(struct pm_sched *s, const int *members, int p, uint32_t lo,
		uint32_t len, int step0, int dir, int flow)
{
	uint32_t part = len / (uint32_t)p;

	for (int t = 0; t + 1 < p; t++)
		for (int i = 0; i < p; i++) {
			int q = mod(i - dir * (t + 1), p);	/* part sent now */
			pm_sched_add(s, step0 + t, members[i],
				     members[mod(i + dir, p)],
				     lo + (uint32_t)q * part, part, PM_REDUCE, flow);
		}
}

void pm_ring_ag(struct pm_sched *s, const int *members, int p, uint32_t lo,
		uint32_t len, int step0, int dir, int flow)
{
	uint32_t part = len / (uint32_t)p;

	for (int t = 0; t + 1 < p; t++)
		for (int i = 0; i < p; i++) {
			int q = mod(i - dir * t, p);
			pm_sched_add(s, step0 + t, members[i],
				     members[mod(i + dir, p)],
				     lo + (uint32_t)q * part, part, PM_COPY, flow);
		}
}
