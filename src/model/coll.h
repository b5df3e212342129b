/* coll.h: the collectives perfmodel prices, as one table.
 *
 * Every collective is a row: its command name, the nccl-tests convention
 * for the size and the bus bandwidth factor, how its schedules are made
 * and checked, and the lower bound no algorithm can beat on a network.
 * Reduce-scatter and all-gather are the two phases of an all-reduce
 * algorithm that reduce-scatters and then all-gathers (ring, halving and
 * doubling, 2D-RING, the hierarchical ring, MULTITREE); reduce and
 * broadcast the two phases of one that reduces to a root and broadcasts
 * back (the binomial tree).  All-to-all has algorithms of its own.
 * docs/model.md, "Collectives", says why the table is shaped this way.
 */
#ifndef PM_COLL_H
#define PM_COLL_H

#include "model/err.h"
#include "model/sched.h"
#include "model/topo.h"

enum pm_coll {
	PM_COLL_ALLREDUCE,
	PM_COLL_REDUCESCATTER,
	PM_COLL_ALLGATHER,
	PM_COLL_REDUCE,
	PM_COLL_BROADCAST,
	PM_COLL_ALLTOALL,
	PM_NCOLL,
};

/* How an all-reduce algorithm's schedule splits at its second_phase. */
enum pm_phases {
	PM_PHASES_NONE,		/* it does not split into collectives */
	PM_PHASES_RS_AG,	/* reduce-scatter, then all-gather */
	PM_PHASES_REDUCE_BCAST,	/* reduce to one root, then broadcast */
};

struct pm_coll_info {
	const char *name;	/* the command: allreduce, reducescatter, ... */
	const char *title;	/* all-reduce, reduce-scatter, ... */
	const char *nccl;	/* the nccl-tests program that measures it */
	const char *size_doc;	/* what SIZE is, as nccl-tests reports it */
	const char *busbw_doc;	/* its bus bandwidth factor, in words */
	enum pm_phases phases;	/* the algorithms that implement it */
	int part;		/* 0 the whole schedule, 1 its first phase, 2 its second */
};

const struct pm_coll_info *pm_coll_info(enum pm_coll c);
/* By command name ("allgather"); -1 if none. */
int pm_coll_find(const char *name);
/* The same, or -1 with "invalid WHAT 'name' (expected allreduce, ...)". */
int pm_coll_pick(const char *what, const char *name, struct pm_err *err);
/* nccl-tests: busbw = algbw x this factor. */
double pm_coll_busbw_factor(enum pm_coll c, int P);
/* nccl-tests' bus bandwidth of collective c on P ranks (B/s): n bytes in
 * time_s, times the factor above; 0 when time_s <= 0. */
double pm_coll_busbw(enum pm_coll c, double n, double time_s, int P);

/* A time no algorithm can beat for an n-byte collective on t: the bytes
 * some endpoint must send or receive (Chan et al., "Collective
 * communication: theory, practice, and experience", CCPE 2007:
 * 2(P-1)/P n for all-reduce, (P-1)/P n for reduce-scatter, all-gather,
 * reduce and all-to-all, n for broadcast) over the fastest an endpoint can
 * move them (the sum of its links' bandwidths, capped by inj_bw_Bps when
 * it is > 0), plus one link latency; for all-to-all also the bytes that
 * must cross the network's bisection (P n / 4 each way) over its
 * bandwidth, when the topology computes it. */
double pm_coll_bound(enum pm_coll c, double n, const struct pm_topo *t,
		     double inj_bw_Bps);

#endif
