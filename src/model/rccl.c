/* rccl.c: RCCL's cost model on one node of AMD GPUs (nccl.h).
 *
 * RCCL, AMD's port of NCCL, keeps NCCL's algorithms and its selection by
 * the lowest estimate lat + n / algbw, but prices candidates with tables
 * of its own (src/graph/tuning.cc, struct tuningModel), one per
 * platform, chosen by the topology (src/graph/rome_models.cc gives the
 * 8-GPU fully connected MI300X nodes, with 0, 8 or 16 NICs, tuning=5:
 * "rccl tuning parameters for MI300X gfx942 with 8 GPUs single and
 * multi-node", ROCm/rccl pull request 1047).
 * On AMD GPUs none of NVIDIA's refinements apply: a candidate's bus
 * bandwidth is the channels' rate times the table's bwRatio (LL128 is
 * off), its latency RCCL's baseLat plus a per-step hwLat, and tuning.cc
 * skips Tree/Simple where all ranks share one gfx94x node.  Read from
 * ROCm/rccl develop of 2024-10-24 (release 2.21.5); the tables are kept
 * as data.  On one node, where they describe xGMI steps and rates,
 * RCCL's estimate is the prediction: the tables are tuned to the
 * platform as RCCL runs it, not derived from link rates, so no channel
 * share or pipeline fill is added to them.
 * Across nodes perfmodel keeps NCCL's model (docs/model.md, NCCL, RCCL).
 */
#include "model/algo.h"
#include "model/nccl.h"


const char pm_rccl_version[] = "2.21.5";

enum { R_TREE, R_RING, R_NALGO };
#define NLOG 27	/* correction factors: 64 B x 2^k, k < 27 */

/* tuning_model_5 (8 MI300X, full xGMI mesh), one node */
static const struct {
	double base_us[R_NALGO][PM_NCCL_NPROTO];	/* baseLat */
	double xgmi_us[R_NALGO][PM_NCCL_NPROTO];	/* hwLat[NVLINK]: xGMI counts as NVLink */
	double ratio[R_NALGO][PM_NCCL_NPROTO];		/* bwRatio[<= 2 nodes] */
	double tree_corr[PM_NCCL_NPROTO][NLOG];		/* treeCorrectionFactor */
} mi300x = {
	.base_us = {{12.0, 12.0, 17.0}, {12.0, 12.0, 17.0}},
	.xgmi_us = {{0.9, 0.0, 2.3}, {0.8, 0.0, 2.1}},
	.ratio = {{0.06, 0.00, 0.11}, {0.08, 0.00, 1.00}},
	.tree_corr = {
		{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9,
		 1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
		{0},
		{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
		 0.1, 0.7, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8},
	},
};

/* tuning.cc's latency on one node: the ring's steps (a broadcast's or
 * reduce's each at the tree's Simple step), the tree's chain up and
 * down. */
static double latency(const struct pm_nccl_sys *s, enum pm_coll c, int ra, enum pm_nccl_proto p)
{
	int steps = pm_nccl_steps(c, s->ranks);
	double lat = mi300x.base_us[ra][p];

	if (ra == R_TREE)
		return lat + 2.0 * (s->ppn - 1) * mi300x.xgmi_us[R_TREE][p];
	if (c == PM_COLL_BROADCAST || c == PM_COLL_REDUCE)
		return lat + steps * mi300x.xgmi_us[p == PM_NCCL_SIMPLE ? R_TREE : R_RING][p];
	return lat + steps * mi300x.xgmi_us[R_RING][p];
}

void pm_rccl_price(const struct pm_nccl_sys *s, enum pm_coll c, enum pm_nccl_algo a,
		   enum pm_nccl_proto p, double n, struct pm_nccl_cost *o)
{
	int ra = a == PM_NCCL_TREE ? R_TREE : R_RING;
	double bus = pm_nccl_graph_Bps(s, a) * mi300x.ratio[ra][p];
	double to_alg = ra == R_TREE ? 0.5 : (double)s->ranks / pm_nccl_steps(c, s->ranks);
	int k = n >= 128 ? pm_floor_log2((long)(n / 64)) : 0;

	/* gfx94x rings' LL broadcast and reduce on one node: x 1.65 */
	if (ra == R_RING && p == PM_NCCL_LL && (c == PM_COLL_BROADCAST || c == PM_COLL_REDUCE))
		bus *= 1.65;
	o->algbw_Bps = bus * to_alg * (ra == R_TREE ? mi300x.tree_corr[p][k < NLOG ? k : NLOG - 1] : 1);
	o->lat_s = latency(s, c, ra, p) * 1e-6;
	o->bw_s = n / o->algbw_Bps;
	o->model_s = o->lat_s + o->bw_s;
	o->channels = s->channels;
	o->steps = pm_nccl_steps(c, s->ranks);
}
