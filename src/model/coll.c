/* coll.c: the table of collectives (see coll.h). */
#include "model/coll.h"
#include "model/text.h"

#include <string.h>

static const struct pm_coll_info colls[PM_NCOLL] = {
	[PM_COLL_ALLREDUCE] = {"allreduce", "all-reduce", "all_reduce_perf",
			       "SIZE is each rank's buffer, reduced in place (nccl-tests all_reduce_perf)",
			       "busbw = algbw x 2(P-1)/P", PM_PHASES_NONE, 0},
	[PM_COLL_REDUCESCATTER] = {"reducescatter", "reduce-scatter", "reduce_scatter_perf",
				   "SIZE is each rank's input buffer; each rank ends with SIZE/P of it reduced over all ranks (nccl-tests reduce_scatter_perf)",
				   "busbw = algbw x (P-1)/P", PM_PHASES_RS_AG, 1},
	[PM_COLL_ALLGATHER] = {"allgather", "all-gather", "all_gather_perf",
			       "SIZE is each rank's output buffer; each rank contributes SIZE/P (nccl-tests all_gather_perf)",
			       "busbw = algbw x (P-1)/P", PM_PHASES_RS_AG, 2},
	[PM_COLL_REDUCE] = {"reduce", "reduce", "reduce_perf",
			    "SIZE is each rank's buffer, reduced into the root's (nccl-tests reduce_perf)",
			    "busbw = algbw", PM_PHASES_REDUCE_BCAST, 1},
	[PM_COLL_BROADCAST] = {"broadcast", "broadcast", "broadcast_perf",
			       "SIZE is the root's buffer, copied to every rank (nccl-tests broadcast_perf)",
			       "busbw = algbw", PM_PHASES_REDUCE_BCAST, 2},
	[PM_COLL_ALLTOALL] = {"alltoall", "all-to-all", "alltoall_perf",
			      "SIZE is each rank's send buffer: P blocks of SIZE/P, block d to rank d (nccl-tests alltoall_perf)",
			      "busbw = algbw x (P-1)/P", PM_PHASES_NONE, 0},
};

const struct pm_coll_info *pm_coll_info(enum pm_coll c)
{
	return &colls[c];
}

int pm_coll_find(const char *name)
{
	for (int c = 0; c < PM_NCOLL; c++)
		if (strcmp(colls[c].name, name) == 0)
			return c;
	return -1;
}

int pm_coll_pick(const char *what, const char *name, struct pm_err *err)
{
	const char *names[PM_NCOLL + 1];

	for (int c = 0; c < PM_NCOLL; c++)
		names[c] = colls[c].name;
	names[PM_NCOLL] = NULL;
	return pm_pick_word(what, name, names, err);
}

double pm_coll_busbw_factor(enum pm_coll c, int P)
{
	if (P < 2)
		return 0;
	switch (c) {
	case PM_COLL_ALLREDUCE:
		return 2.0 * (P - 1) / P;
	case PM_COLL_REDUCE:
	case PM_COLL_BROADCAST:
		return 1;
	default:
		return (double)(P - 1) / P;
	}
}

/* Bytes every endpoint (or the root, or every non-root) must move. */
static double must_move(enum pm_coll c, double n, int P)
{
	switch (c) {
	case PM_COLL_ALLREDUCE:
		return 2.0 * (P - 1) / P * n;
	case PM_COLL_BROADCAST:
		return n;
	default:
		return (double)(P - 1) / P * n;
	}
}

double pm_coll_bound(enum pm_coll c, double n, const struct pm_topo *t,
		     double inj_bw_Bps)
{
	const struct pm_link *lk = pm_topo_links(t);
	int P = pm_topo_endpoints(t);
	double slowest = -1, lat = -1, bound;

	if (P < 2)
		return 0;
	for (int e = 0; e < P; e++) {	/* the endpoint that moves its bytes slowest */
		int cnt;
		const int *out = pm_topo_out(t, e, &cnt);
		double bw = 0;
		for (int k = 0; k < cnt; k++) {
			bw += lk[out[k]].bw_Bps;
			if (lat < 0 || lk[out[k]].lat_s < lat)
				lat = lk[out[k]].lat_s;
		}
		if (inj_bw_Bps > 0 && inj_bw_Bps < bw)
			bw = inj_bw_Bps;
		if (slowest < 0 || bw < slowest)
			slowest = bw;
	}
	bound = slowest > 0 ? must_move(c, n, P) / slowest : 0;
	/* a switch that reduces: each rank sends each byte it does not own
	 * once, the switch sums the copies and multicasts the sums, so each
	 * moves (P-1)/P n each way (algo_nvls.c), half what ranks that
	 * reduce must */
	if (c == PM_COLL_ALLREDUCE && (pm_topo_switch_reduces(t) || pm_topo_net_reduces(t)))
		bound /= 2;
	if (c == PM_COLL_ALLTOALL) {
		struct pm_topo_info info;
		pm_topo_describe(t, &info);
		double cut = info.bisection_Bps > 0 ? (double)P * n / 4 / info.bisection_Bps : 0;
		bound = cut > bound ? cut : bound;
	}
	return bound + (lat > 0 ? lat : 0);
}

double pm_coll_busbw(enum pm_coll c, double n, double time_s, int P)
{
	return (time_s > 0 ? n / time_s : 0) * pm_coll_busbw_factor(c, P);
}
