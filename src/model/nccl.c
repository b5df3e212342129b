/* nccl.c: NCCL's cost model and selection (nccl.h).
 *
 * The constants are NCCL 2.30.7's (src/graph/tuning.cc, the default tuner
 * constants; src/enqueue.cc, the channel tuning; src/include/comm.h and
 * device.h, thread counts and thresholds), kept as data, with the ones
 * that changed since 2.18 per release epoch (a machine's nccl_version
 * picks one).  What NCCL takes
 * from its topology search (each graph's bwIntra, bwInter and channel
 * count) comes instead from the rates the machine achieves (struct
 * pm_nccl_sys), so a candidate's bus bandwidth is NCCL's formula applied
 * to measured link rates.  Two terms are ours and said so: the host's
 * launch and synchronisation time per collective, and the network's own
 * latency per inter-node step (NCCL's latencyInter, which its IB
 * transport leaves at 0).  docs/model.md, "NCCL", has the derivation.
 */
#include "model/nccl.h"
#include "model/algo.h"
#include "model/text.h"

#include <ctype.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

const char pm_nccl_version[] = "2.30.7";
const char *const pm_nccl_algo_names[PM_NCCL_NALGO] = {
	"tree", "ring", "collnetdirect", "collnetchain", "nvls", "nvlstree", "pat", "p2p",
};
const char *const pm_nccl_proto_names[PM_NCCL_NPROTO] = {"ll", "ll128", "simple"};
const char *const pm_nccl_arch_names[PM_NCCL_NARCH] = {"volta", "ampere", "hopper", "blackwell"};

enum { HW_NVLINK, HW_PCI, HW_NET, NHW };
#define NTUNED 7	/* the algorithms tuning.cc prices (all but p2p) */

/* tuning.cc's constants that changed between releases, one row per
 * epoch (the releases from `first` to the next row's): latencies in us
 * (baseLat, hwLat), the LL limit of Hopper on one node (llMaxBws' row),
 * and the model refinements that changed.  Read from the tagged sources
 * (git show vX.Y.Z-1:src/graph/tuning.cc); rates in GB/s.  Row 0 is the
 * release pm_nccl_version names. */
struct consts {
	int first, last;		/* the 2.x releases the row holds for */
	double base_us[NTUNED][PM_NCCL_NPROTO];
	double hw_us[NHW][NTUNED][PM_NCCL_NPROTO];
	double hopper_ll[3];		/* llMaxBws[Hopper] */
	int ll_quarter;			/* ring LL at 1/4 of the bus (1/3 on one node
					 * for broadcast, all-gather, reduce-scatter) */
	int ll128_ppn1;			/* ring LL128 at 0.7 with one GPU a node */
	int pat;			/* PAT exists */
	int nvls_base;			/* 2.18: NVLS latency is baseLat (+ the network's
					 * across nodes), NVLSTree's baseLat + 2(N-1) of it */
	int chunks;			/* enqueue.cc's chunk rules: 18 (2.18), 20 (2.19-2.20,
					 * as 2.20), 21 (2.21 on) */
};
static const struct consts epochs[] = {
	{28, 30, {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}},
	 {[HW_NVLINK] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
	  [HW_PCI] = {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
	  [HW_NET] = {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}},
	 {141.0, 45.0, 35.0}, 0, 0, 1, 0, 21},
	{23, 27, {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}},
	 {[HW_NVLINK] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
	  [HW_PCI] = {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
	  [HW_NET] = {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}, {0, 0, 14}}},
	 {141.0, 45.0, 35.0}, 0, 0, 1, 0, 21},
	{21, 22, {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
	 {[HW_NVLINK] = {{0.6, 1.25, 28}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 0}},
	  [HW_PCI] = {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
	  [HW_NET] = {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}, {0, 0, 0}}},
	 {141.0, 45.0, 35.0}, 0, 1, 0, 0, 21},
	{19, 20, {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
	 {[HW_NVLINK] = {{0.6, 1.25, 28}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 23}, {0, 0, 23}, {0, 0, 0}},
	  [HW_PCI] = {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
	  [HW_NET] = {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}, {0, 0, 0}}},
	 {87.7, 22.5, 19.0}, 1, 1, 0, 0, 20},
	{18, 18, {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {6.8, 14.0, 0}, {6.8, 14.0, 0}, {0, 0, 23.0}, {0, 0, 23.0}, {0, 0, 0}},
	 {[HW_NVLINK] = {{0.6, 1.25, 4}, {0.6, 1.9, 3.4}, {0, 0, 8.0}, {0, 0, 4.75}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
	  [HW_PCI] = {{1.0, 1.9, 6}, {1.0, 2.5, 5.7}, {0, 0, 8.0}, {0, 0, 8.0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
	  [HW_NET] = {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 10.7}, {0, 0, 14}, {0, 0, 18}, {0, 0, 19}, {0, 0, 0}}},
	 {87.7, 22.5, 19.0}, 1, 1, 0, 1, 18},
};
#define NEPOCHS ((int)(sizeof epochs / sizeof epochs[0]))

/* "2.24.3" (or "2.24"): the row whose releases hold it; -1 before 2.18
 * or past the newest. */
int pm_nccl_version_find(const char *v)
{
	int maj, min;

	if (!v || strspn(v, "0123456789.") != strlen(v) || sscanf(v, "%d.%d", &maj, &min) != 2 || maj != 2)
		return -1;
	for (int e = 0; e < NEPOCHS; e++)
		if (min >= epochs[e].first && min <= epochs[e].last)
			return e;
	return -1;
}

void pm_nccl_epoch_name(int e, char *buf, size_t size)
{
	if (e < 0 || e >= NEPOCHS)
		e = 0;
	snprintf(buf, size, "2.%d to 2.%d", epochs[e].first, epochs[e].last);
}

static const double ll_max[PM_NCCL_NARCH][3] = {	/* row: arch on one node; else 0 Intel, 1 AMD */
	{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0},
};
static const double ring_ll128_ch[PM_NCCL_NARCH][3] = {
	{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40},
};
static const double tree_ll128_ch[PM_NCCL_NARCH][3] = {
	{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0},
};
static const double tree_ch[PM_NCCL_NARCH][3] = {
	{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0},
};
static const double nvls_tree_ch[PM_NCCL_NARCH][3] = {
	{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0},
};
/* ncclTopoGetAlgoTime: the tree's bandwidth at 64 B x 2^k, k < 23 */
static const double tree_corr[PM_NCCL_NPROTO][23] = {
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};
/* comm.h and device.h: threads a channel runs and the bytes a thread
 * must have before another channel (or thread) is added */
static const int max_threads[PM_NCCL_NPROTO] = {512, 640, 512};
static const int thread_threshold[PM_NCCL_NPROTO] = {8, 8, 64};

int pm_nccl_algo_find(const char *name) { return pm_pick(name, pm_nccl_algo_names, PM_NCCL_NALGO); }
int pm_nccl_proto_find(const char *name) { return pm_pick(name, pm_nccl_proto_names, PM_NCCL_NPROTO); }
int pm_nccl_arch_find(const char *name) { return pm_pick(name, pm_nccl_arch_names, PM_NCCL_NARCH); }

int pm_nccl_mask_parse(const char *list, int proto, unsigned *mask)
{
	const int n = proto ? PM_NCCL_NPROTO : PM_NCCL_NALGO;
	const unsigned all = (1u << n) - 1;
	int exclude = *list == '^';
	unsigned m = 0;

	for (const char *t = list + exclude; *t;) {
		char word[32];
		size_t len = strcspn(t, ",");
		if (len == 0 || len >= sizeof word)
			return -1;
		for (size_t i = 0; i < len; i++)
			word[i] = (char)tolower((unsigned char)t[i]);
		word[len] = '\0';
		int k = proto ? pm_nccl_proto_find(word) : pm_nccl_algo_find(word);
		if (k < 0 || (!proto && k == PM_NCCL_P2P))
			return -1;
		m |= 1u << k;
		t += len + (t[len] == ',');
	}
	if (m == 0)
		return -1;
	m = exclude ? all & ~m : m;
	*mask = proto ? m : m | 1u << PM_NCCL_P2P;
	return 0;
}

static const struct consts *K(const struct pm_nccl_sys *s)
{
	return &epochs[s->version >= 0 && s->version < NEPOCHS ? s->version : 0];
}

/* Does NCCL run algorithm a with protocol p for c here?  NULL, or why not. */
static const char *why_not(const struct pm_nccl_sys *s, enum pm_coll c, enum pm_nccl_algo a,
			   enum pm_nccl_proto p)
{
	int rsag = c == PM_COLL_REDUCESCATTER || c == PM_COLL_ALLGATHER;

	if (c == PM_COLL_ALLTOALL)
		return a == PM_NCCL_P2P ? (p == PM_NCCL_SIMPLE ? NULL : "NCCL's point-to-point runs Simple")
					: "NCCL runs all-to-all as point-to-point sends (nccl:p2p)";
	if (a == PM_NCCL_P2P)
		return "p2p is NCCL's all-to-all";
	if ((c == PM_COLL_BROADCAST || c == PM_COLL_REDUCE) && a != PM_NCCL_RING)
		return "NCCL runs broadcast and reduce on rings only";
	if (rsag && a != PM_NCCL_RING && a != PM_NCCL_PAT && a != PM_NCCL_NVLS)
		return "NCCL's reduce-scatter and all-gather run ring, PAT or NVLS";
	if (c == PM_COLL_ALLREDUCE && a == PM_NCCL_PAT)
		return "PAT runs all-gather and reduce-scatter only";
	if (a != PM_NCCL_RING && a != PM_NCCL_TREE && p != PM_NCCL_SIMPLE)
		return "this algorithm runs the Simple protocol only";
	if (p == PM_NCCL_LL128 && !s->ll128)
		return "LL128 is not enabled on this machine";
	if (p == PM_NCCL_LL128 && s->nodes > 1 && s->ll128_local)
		return "LL128 does not run across this machine's nodes (ll128_net 0: its GPUs reach their NICs through the CPU)";
	if (a == PM_NCCL_PAT && (s->rccl || !K(s)->pat))
		return s->rccl ? "RCCL 2.21 has no PAT" : "PAT came with NCCL 2.23";
	if (s->rccl && s->nodes == 1 && a == PM_NCCL_TREE && p == PM_NCCL_SIMPLE)
		return "RCCL runs no Tree/Simple on one node of gfx94x GPUs (its tuning.cc)";
	if (s->rccl && s->nodes == 1 && a != PM_NCCL_RING && a != PM_NCCL_TREE)
		return "perfmodel holds RCCL's one-node tuning for ring and tree only";
	if (s->rccl && s->nodes == 1 && p == PM_NCCL_LL128)
		return "RCCL's MI300X table gives LL128 no rate (RCCL enables it by default only on gfx90a)";
	if (a == PM_NCCL_PAT && s->ppn != 1)
		return "PAT needs one GPU per node";
	if ((a == PM_NCCL_NVLS || a == PM_NCCL_NVLS_TREE) && s->nvls_Bps <= 0)
		return "no NVLink SHARP (NVLS) on this machine";
	if (a == PM_NCCL_NVLS_TREE && s->nodes == 1)
		return "NVLSTree needs more than one node";
	if (a == PM_NCCL_NVLS && s->nodes > 1 && (!s->collnet || rsag))
		return "NVLS across nodes needs SHARP (CollNet) and runs all-reduce only";
	if ((a == PM_NCCL_COLLNET_DIRECT || a == PM_NCCL_COLLNET_CHAIN) && (!s->collnet || s->nodes == 1))
		return "CollNet needs SHARP in the network switches and more than one node";
	if ((a == PM_NCCL_COLLNET_DIRECT || a == PM_NCCL_COLLNET_CHAIN) && c != PM_COLL_ALLREDUCE)
		return "CollNet is priced for all-reduce only";
	return NULL;
}

/* The bus bandwidth NCCL's model gives a candidate (tuning.cc, "Various
 * model refinements"), in B/s, and the share of it that is algorithm
 * bandwidth (its algbw = bus x *to_alg).  *open is the same rate before
 * LL's limit (llMaxBws), which caps the node's LL traffic as a whole,
 * not each channel's: fewer channels share it (channel_share). */
static double bus_bw(const struct pm_nccl_sys *s, enum pm_coll c, enum pm_nccl_algo a,
		     enum pm_nccl_proto p, double *to_alg, double *open)
{
	int i2 = s->nodes <= 2 ? s->nodes - 1 : 2, R = s->ranks;
	int i1 = s->nodes == 1 ? (int)s->arch : s->amd_cpu == 1;	/* AMD hosts: row 1; Intel, Arm: 0 */
	double ch = s->channels, ppn = s->ppn, G = 1e9;
	double intra = s->ring_Bps, inter = pm_nccl_graph_Bps(s, PM_NCCL_RING);
	double llmax = (s->nodes == 1 && s->arch == PM_NCCL_HOPPER ? K(s)->hopper_ll[i2] : ll_max[i1][i2]) * G, b = 0;

	*to_alg = (double)R / pm_nccl_steps(c, R);
	*open = 0;
	switch (a) {
	case PM_NCCL_RING:
		b = inter;
		if (p == PM_NCCL_LL) {	/* before 2.21: a quarter (a third for one node's bcast, AG, RS) */
			*open = b * (!K(s)->ll_quarter ? 0.5
				     : s->nodes > 1 || c == PM_COLL_ALLREDUCE || c == PM_COLL_REDUCE ? 0.25 : 1.0 / 3);
			b = fmin(llmax, *open);
		}
		if (p == PM_NCCL_LL128)
			b = fmin(b * (K(s)->ll128_ppn1 && ppn < 2 ? 0.7 : 0.92), ch * ring_ll128_ch[s->arch][i2] * G);
		return b;
	case PM_NCCL_TREE:
		*to_alg = 0.5;	/* a node sends n/2 up and n/2 down per tree; with 2 nodes that is all */
		b = pm_nccl_graph_Bps(s, PM_NCCL_TREE);
		b = fmin(b * 0.92, ch * tree_ch[s->arch][i2] * G);
		if (p == PM_NCCL_LL) {
			*open = b / 3.8;
			b = fmin(*open, llmax);
		}
		if (p == PM_NCCL_LL128)
			b = fmin(b * (s->nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * tree_ll128_ch[s->arch][i2] * G);
		return b;
	case PM_NCCL_NVLS:
		if (c != PM_COLL_ALLREDUCE)
			return s->nvls_Bps / 2 * (ppn - 1) / ppn;	/* no two pipelined operations */
		return s->nodes == 1 ? s->nvls_Bps : fmin(s->nvls_Bps, 2 * s->net_Bps);
	case PM_NCCL_NVLS_TREE:
		return fmin(fmin(s->nvls_Bps, s->net_Bps * (s->nodes <= 2 ? 2 : 1)),
			    ch * nvls_tree_ch[s->arch][i2] * G);
	case PM_NCCL_COLLNET_DIRECT:	/* each GPU's shard through its own NIC */
		*to_alg = 0.5;
		b = 2 * fmin(s->net_Bps, intra * ppn / (2 * (ppn - 1 > 0 ? ppn - 1 : 1)));
		return s->arch >= PM_NCCL_HOPPER ? b * 0.85 : b;
	case PM_NCCL_COLLNET_CHAIN:	/* a chain in the node, SHARP across */
		*to_alg = 0.5;
		return 2 * fmin(s->net_Bps, intra / 2);
	case PM_NCCL_PAT:
		*to_alg = 1;	/* tuning.cc gives PAT's rate as algorithm bandwidth */
		return 0.75 * inter;
	default:
		return 0;
	}
}

/* What NCCL's proxy spends on one network step, in us (tuning.cc,
 * getNetOverhead, its "network post overhead": 2 us on AMD x86 hosts,
 * 1 on Intel and Arm). */
static double net_overhead_us(const struct pm_nccl_sys *s)
{
	return s->amd_cpu == 1 ? 2.0 : 1.0;
}

/* NCCL's latency of a candidate in seconds (tuning.cc), with net_s the
 * network's own latency an inter-node step (NCCL's latencyInter). */
static double latency(const struct pm_nccl_sys *s, enum pm_coll c, enum pm_nccl_algo a,
		      enum pm_nccl_proto p, double n, double net_s)
{
	int N = s->nodes, R = s->ranks, ppn = s->ppn, steps = pm_nccl_steps(c, R);
	const struct consts *k = K(s);
	double net = net_s * 1e6, intra = k->hw_us[HW_NVLINK][a][p];
	double inter = (ppn == 1 ? k->hw_us[HW_NET][PM_NCCL_TREE][p] : k->hw_us[HW_NET][a][p]) + net;
	double lat = k->base_us[a][p];

	if (p == PM_NCCL_SIMPLE)
		inter += net;	/* the flush */
	switch (a) {
	case PM_NCCL_RING:
		if (c == PM_COLL_BROADCAST || c == PM_COLL_REDUCE) {
			/* one hop: NCCL's ring search keeps the same ring on every
			 * channel where its first pass reaches the optimum, as on
			 * NVSwitch nodes and rail-optimized networks (search.cc,
			 * sameChannels), and tuning.cc then charges a rooted ring
			 * one hop's latency, its chunks pipelined down the ring;
			 * nsteps hops only for rings that differ per channel */
			lat += k->hw_us[N == 1 ? HW_NVLINK : HW_NET][PM_NCCL_RING][p];
		} else {
			/* three times the overhead with Simple (its flush) */
			double over = N > 1 ? net_overhead_us(s) * (p == PM_NCCL_SIMPLE ? 3 : 1) : 0;
			int ni = N == 1 ? 0 : c == PM_COLL_ALLREDUCE ? 2 * (N - 1) : N - 1;
			lat += (steps - ni) * fmax(intra, over) + ni * inter;
		}
		break;
	case PM_NCCL_TREE:
		lat += 2 * ((ppn - 1) * intra + pm_floor_log2(N) * inter);
		break;
	case PM_NCCL_COLLNET_DIRECT:
		lat += 2 * ((ppn > 1 ? 1 : 0) * intra + (ppn - 1) * 0.4) + inter;
		break;
	case PM_NCCL_COLLNET_CHAIN:
		lat += 2 * (ppn - 1) * intra + inter;
		break;
	case PM_NCCL_NVLS:
		lat = (k->nvls_base ? lat : intra) + (N > 1 ? inter : 0);
		break;
	case PM_NCCL_NVLS_TREE:
		lat += k->nvls_base ? 2 * (N - 1) * inter : intra + 2 * pm_floor_log2(N) * inter;
		break;
	case PM_NCCL_PAT:
		lat += pm_floor_log2(N) * (inter / 3.5) + R * 2.8;
		break;
	default:
		break;
	}
	/* the ring's Simple plateau across nodes */
	if (a == PM_NCCL_RING && p == PM_NCCL_SIMPLE && N > 1 && c == PM_COLL_ALLREDUCE &&
	    n / ((double)s->channels * R) >= 64)
		lat *= s->arch < PM_NCCL_AMPERE ? 1.9 : 1.4;
	return lat * 1e-6;
}

/* enqueue.cc: ring and tree drop channels (then the ring's threads)
 * until every thread has threshold bytes; the share of the full rate
 * left is the channels'. */
static double channel_share(const struct pm_nccl_sys *s, enum pm_nccl_algo a,
			    enum pm_nccl_proto p, double n, int *nc_out)
{
	int nc = s->channels;
	const int nt = max_threads[p];
	double th = thread_threshold[p] * (a == PM_NCCL_RING && p == PM_NCCL_LL ? s->ranks : 1);

	*nc_out = nc;
	if (a != PM_NCCL_RING && a != PM_NCCL_TREE)
		return 1;
	while (n < (double)nc * nt * th && nc >= 2)
		nc--;
	*nc_out = nc;
	/* a channel's rate does not fall with its threads: enqueue.cc cuts
	 * threads only where each would hold less than its threshold, and
	 * then a thread's few lines take a round trip's time, not a share of
	 * the channel's bandwidth (nccl-tests' single-channel LL rings rise
	 * linearly from 1 KiB to 32 KiB at one channel's rate) */
	return (double)nc / s->channels;
}

/* enqueue.cc's buffers: NCCL_STEPS = 8 slots of LL 512 KiB (8 lines x 512
 * threads x 8 x 16 B), LL128 4,915,200 B (120 x 640 threads x 8 x 8 B)
 * and Simple 4 MiB (init.cc); a step is one slot. */
static const double step_B[PM_NCCL_NPROTO] = {65536, 614400, 524288};

/* NVLS's channels and heads (transport/nvls.cc, graph/connect.cc): 16
 * channels on Hopper, 24 on Blackwell in one node and 32 across two
 * (24 beyond, its 48 GB/s NICs); one head per GPU. */
static int nvls_channels(const struct pm_nccl_sys *s)
{
	if (s->arch < PM_NCCL_BLACKWELL)
		return 16;
	return s->nodes == 2 ? 32 : 24;
}

/* NVLS's chunk (nvls.cc): NCCL_NVLS_CHUNKSIZE, 128 KiB unless the
 * platform sets it (2.21 on; a fixed 128 KiB before). */
static double nvls_chunk(const struct pm_nccl_sys *s)
{
	return K(s)->chunks >= 21 && s->nvls_chunk_B > 0 ? s->nvls_chunk_B : 131072;
}

/* NVLSTree's largest chunk: the NVLS chunk (2.18-2.20 the Simple step),
 * at most NCCL_NVLSTREE_MAX_CHUNKSIZE where the platform sets it (2.20
 * on), else 64 KiB from four nodes on (2.20 on) and on Blackwell, whose
 * tuning gives 64 KiB where GPU and NIC share a PCIe switch (DGX B200). */
static double nvlstree_chunk(const struct pm_nccl_sys *s)
{
	double c = K(s)->chunks >= 21 ? nvls_chunk(s) : step_B[PM_NCCL_SIMPLE], most = c;

	if (K(s)->chunks >= 20 && s->nvlstree_chunk_B > 0)
		most = s->nvlstree_chunk_B;
	else if ((K(s)->chunks >= 20 && s->nodes >= 4) || s->arch >= PM_NCCL_BLACKWELL)
		most = 65536;
	return fmin(c, most);
}

/* calcCollChunking (enqueue.cc): the data bytes one channel, or one head
 * of an NVLS channel, moves per pipeline step of tree, NVLS and NVLSTree
 * all-reduce when nc channels run.  n / (...) is an integer division there. */
static double chunk_bytes(const struct pm_nccl_sys *s, enum pm_nccl_algo a, enum pm_nccl_proto p, double n, int nc)
{
	int rules = K(s)->chunks, N = s->nodes;
	double c = step_B[p], ppn = (double)s->ranks / N, ops = (double)nvls_channels(s) * s->ppn;

	if (p == PM_NCCL_LL)
		c /= 2;
	if (p == PM_NCCL_LL128)
		c = floor(c / 16) * 15;	/* 15 data words of each 16-word line */
	if (a == PM_NCCL_TREE && p == PM_NCCL_LL128 && rules >= 20) {
		double st = 1 + pm_floor_log2(N) + 0.1 * ppn;
		while (floor(n / (nc * c)) < st * 64 / ppn && c > 131072)
			c = floor(c / 2);
		while (floor(n / (nc * c)) < st * 16 / ppn && c > 32768)
			c = floor(c / 2);
	} else if (a == PM_NCCL_TREE && p == PM_NCCL_SIMPLE && rules == 18) {
		double depth = s->ppn - 1 + pm_floor_log2(N);
		while (floor(n / (nc * c)) < depth * 8 && c > 131072)
			c /= 2;
		while (floor(n / (nc * c)) < depth * 4 && c > 65536)
			c /= 2;
		while (floor(n / (nc * c)) < depth && c > 32768)
			c /= 2;
	} else if (a == PM_NCCL_NVLS) {
		c = fmin(c, nvls_chunk(s));
		c = n < 64 * ops * c && c > 65536 ? 65536 : c;
		c = n < 8 * ops * c && c > 32768 ? 32768 : c;
		c = n < 2 * ops * c && c > 16384 ? 16384 : c;
	} else if (a == PM_NCCL_NVLS_TREE) {
		c = nvlstree_chunk(s);
		c = n < 32 * ops * c && c > 262144 ? 262144 : c;
		c = n < 16 * ops * c && c > 131072 ? 131072 : c;
		c = n < 4 * ops * c && c > 65536 ? 65536 : c;
		c = n < ops * c && c > 32768 ? 32768 : c;
	}
	return c;
}

/* The pipeline's fill (ours: NCCL's model charges a pipelined algorithm
 * its bytes at the full rate, as if every hop ran from the start).  A
 * tree, NVLS or NVLSTree all-reduce moves its data in chunks along a
 * path of hops, up to the root and back; the first chunk crosses every
 * hop before the path runs full and the last leaves the slowest hop one
 * chunk time before the end, so the time is the bandwidth term plus each
 * hop's time for one chunk but the slowest's.  A hop's chunk time is the
 * chunk at one channel's share of the hop's achieved rate (C channels:
 * 1/C of it, however many run, as channel_share prices the bytes):
 *   tree: 2 log2 N network hops, c x 2 C / (NICs x w) (x 2 NICs on two
 *         nodes, as the bus rate), and NVLink stages, half up and half
 *         down: with Simple the 2(G-1) hops of the node's chain (a slice
 *         is forwarded once it has landed), with LL and LL128 one before
 *         each network send (their lines stream through the chain; the
 *         proxy posts a step when all of it is there).  Up, c x C /
 *         (ring x w): the first chunks have the NVLink to themselves;
 *         down, twice that, a chain GPU sending the next chunks up
 *         beside them, unless a channel has but the one chunk; w is the
 *         protocol's data share of its lines (LL 1/2, LL128 120/128);
 *   NVLS: the switch's reduction and its multicast, each (G-1)/G x
 *         nc x G x c / nvls (a step of every channel and head);
 *   NVLSTree: those two and 2 log2 N network hops, nc x G x c / NICs.
 * c is the chunk (chunk_bytes), or a channel's (head's) whole share when
 * the size is smaller; nc the channels that run.  The ring has none:
 * every link carries a chunk from its first step. */
static double fill_time(const struct pm_nccl_sys *s, enum pm_coll c, enum pm_nccl_algo a,
			enum pm_nccl_proto p, double n, int nc, struct pm_nccl_cost *o)
{
	static const double w[PM_NCCL_NPROTO] = {0.5, 120.0 / 128.0, 1.0};
	int N = s->nodes, G = s->ppn;
	/* [0] NVLink hops up, [1] NVLink hops down, [2] network sends */
	double hops[3] = {0, 0, 0}, t[3] = {0, 0, 0}, sum = 0, worst = 0;
	double nics = s->net_Bps * (N == 2 ? 2 : 1);

	if (c != PM_COLL_ALLREDUCE)
		return 0;
	if (a == PM_NCCL_TREE) {
		double ch = o->chunk_B = fmin(chunk_bytes(s, a, p, n, nc), n / nc), NC = s->channels;
		double one = ch * NC / (s->ring_Bps * w[p]);
		hops[2] = 2.0 * pm_floor_log2(N), t[2] = N > 1 ? ch * 2 * NC / (nics * w[p]) : 0;
		hops[0] = hops[1] = p == PM_NCCL_SIMPLE ? G - 1.0 : hops[2] / 2;
		t[0] = one;
		t[1] = n > nc * ch ? 2 * one : one;
	} else if (a == PM_NCCL_NVLS || a == PM_NCCL_NVLS_TREE) {
		int nv = nvls_channels(s);
		double ch = o->chunk_B = fmin(chunk_bytes(s, a, p, n, nv), n / ((double)nv * G));
		hops[0] = 2, t[0] = (G - 1.0) / G * nv * G * ch / s->nvls_Bps;
		if (a == PM_NCCL_NVLS_TREE)
			hops[2] = 2.0 * pm_floor_log2(N), t[2] = nv * G * ch / nics;
	} else {
		return 0;
	}
	for (int i = 0; i < 3; i++)
		if (hops[i] > 0) {
			sum += hops[i] * t[i];
			worst = fmax(worst, t[i]);
		}
	o->fill_hops = (int)(hops[0] + hops[1] + hops[2]);
	return sum - worst;
}

/* The proxy's bound (ours; NCCL's model charges the proxy's overhead as
 * latency only).  One host thread per GPU, NCCL's proxy, posts every
 * network send and receive of the channels whose network end is that
 * GPU, one message a step, and polls for its completion; at the
 * overhead NCCL's own model gives a network step (net_overhead_us,
 * without Simple's flush, which is the network's and not the thread's)
 * a collective that puts M messages on each proxy moves its bytes in no
 * less than (M - 1) x overhead, however fast the links are: the first
 * message's cost is the latency's.  Messages per channel and node:
 *   tree: each chunk (chunk_bytes) crosses every edge of the tree over
 *         the N nodes once up and once down, a send at one end and a
 *         receive at the other: 4 (N-1) / N a node for each chunk;
 *   NVLSTree: the same tree for each head's share, the node's GPUs
 *         being the heads of every NVLS channel;
 * each node's messages shared by its GPUs' proxies.  nc: the channels
 * that run; chunk: fill_time's (o->chunk_B), at most a channel's (head's)
 * share.  0 on one node, and for the other algorithms: NCCL's ring
 * latency charges the overhead on each of its steps already. */
static double proxy_time(const struct pm_nccl_sys *s, enum pm_coll c, enum pm_nccl_algo a, double n, int nc,
			 double chunk, double *msgs)
{
	double N = s->nodes, G = s->ppn, ends;	/* ends: channels, or NVLS channels x heads, a node */

	*msgs = 0;
	if (N < 2 || n <= 0 || chunk <= 0 || c != PM_COLL_ALLREDUCE)
		return 0;
	if (a == PM_NCCL_TREE)
		ends = nc;
	else if (a == PM_NCCL_NVLS_TREE)
		ends = (double)nvls_channels(s) * G;
	else
		return 0;
	*msgs = ends * ceil(n / ends / chunk) * 4 * (N - 1) / N / G;
	return fmax(*msgs - 1, 0) * net_overhead_us(s) * 1e-6;
}

/* All-to-all as NCCL's point-to-point sends: every rank sends n/R to
 * each other rank at once, over NVLink inside a node and the node's NICs
 * across; one Simple send's latency. */
static void price_p2p(const struct pm_nccl_sys *s, double n, struct pm_nccl_cost *o)
{
	int R = s->ranks, ppn = s->ppn;
	double across = s->nodes > 1 ? ppn * n * (R - ppn) / R / s->net_Bps : 0;
	double inside = n * (ppn - 1) / R / s->ring_Bps;

	const struct consts *k = K(s);
	o->lat_s = (k->base_us[PM_NCCL_RING][PM_NCCL_SIMPLE] +
		    (s->nodes > 1 ? k->hw_us[HW_NET][PM_NCCL_RING][PM_NCCL_SIMPLE] + 2 * s->net_lat_s * 1e6
				  : k->hw_us[HW_NVLINK][PM_NCCL_RING][PM_NCCL_SIMPLE])) * 1e-6;
	o->bw_s = fmax(across, inside);
	o->algbw_Bps = o->bw_s > 0 ? n / o->bw_s : 0;	/* the busier of NVLink and the NICs */
	o->steps = 1;
	o->channels = s->channels;
	o->model_s = o->lat_s + o->bw_s;
}

int pm_nccl_price(const struct pm_nccl_sys *s, enum pm_coll c, enum pm_nccl_algo a,
		  enum pm_nccl_proto p, double n, struct pm_nccl_cost *o, struct pm_err *err)
{
	const char *why = why_not(s, c, a, p);
	double to_alg;

	memset(o, 0, sizeof *o);
	o->algo = a;
	o->proto = p;
	if (why)
		return pm_fail(err, PM_ENOTAPPLICABLE, "not applicable: nccl:%s/%s: %s",
			       pm_nccl_algo_names[a], pm_nccl_proto_names[p], why);
	o->launch_s = pm_nccl_launch_s(s);
	if (a == PM_NCCL_P2P) {
		price_p2p(s, n, o);
	} else if (s->rccl && s->nodes == 1) {
		pm_rccl_price(s, c, a, p, n, o);
	} else {
		double open, bus = bus_bw(s, c, a, p, &to_alg, &open), alg = bus * to_alg;
		double corr = 1, share;
		int k = pm_floor_log2((long)(n / 64));
		if (a == PM_NCCL_TREE && c == PM_COLL_ALLREDUCE && n >= 64 && k < 23)
			corr = tree_corr[p][k];
		/* NVLSTree takes the same correction on Blackwell with x86 hosts
		 * (ncclTopoGetAlgoTime; the table's 24th entry, 256 MiB, is 0.9) */
		if (a == PM_NCCL_NVLS_TREE && c == PM_COLL_ALLREDUCE && s->arch >= PM_NCCL_BLACKWELL &&
		    s->amd_cpu != 2 && n >= 64 && k < 24)
			corr = k < 23 ? tree_corr[p][k] : 0.9;
		alg *= corr;
		o->lat_s = latency(s, c, a, p, n, s->net_lat_s);
		/* NCCL selects with the latency its network plugin reports */
		o->model_s = (s->tuner_lat_s == s->net_lat_s ? o->lat_s : latency(s, c, a, p, n, s->tuner_lat_s)) +
			     n / alg;
		o->algbw_Bps = alg;
		/* the channels that run move their share of the open rate, up to
		 * LL's limit for the whole node */
		share = channel_share(s, a, p, n, &o->channels);
		o->bw_s = n / fmin(alg, fmax(bus, open) * to_alg * corr * share);
		o->fill_s = fill_time(s, c, a, p, n, o->channels, o);
		o->proxy_s = proxy_time(s, c, a, n, o->channels, o->chunk_B, &o->proxy_msgs);
		o->bw_s = fmax(o->bw_s, o->proxy_s);
		o->steps = pm_nccl_steps(c, s->ranks);
	}
	o->time_s = o->launch_s + o->lat_s + o->bw_s + o->fill_s;
	o->busbw_Bps = n / o->time_s * pm_coll_busbw_factor(c, s->ranks);
	return PM_OK;
}

int pm_nccl_select(const struct pm_nccl_sys *s, enum pm_coll c, unsigned algo_mask,
		   unsigned proto_mask, double n, struct pm_nccl_cost *out, struct pm_err *err)
{
	struct pm_nccl_cost best = {0}, one;
	const char *why = NULL;
	int found = 0;

	if (s->algo_env && (algo_mask & ((1u << PM_NCCL_NALGO) - 1)) == (1u << PM_NCCL_NALGO) - 1)
		algo_mask = s->algo_env;
	if (s->proto_env && (proto_mask & ((1u << PM_NCCL_NPROTO) - 1)) == (1u << PM_NCCL_NPROTO) - 1)
		proto_mask = s->proto_env;

	for (int a = 0; a < PM_NCCL_NALGO; a++)
		for (int p = 0; p < PM_NCCL_NPROTO; p++) {
			if (!(algo_mask >> a & 1) || !(proto_mask >> p & 1))
				continue;
			const char *w = why_not(s, c, (enum pm_nccl_algo)a, (enum pm_nccl_proto)p);
			if (w) {
				/* the reason to give: the first pair's, unless a
				 * later one says more than which protocol runs */
				if (!why || p == PM_NCCL_SIMPLE)
					why = w;
				continue;
			}
			pm_nccl_price(s, c, (enum pm_nccl_algo)a, (enum pm_nccl_proto)p, n, &one, NULL);
			if (!found || one.model_s < best.model_s)
				best = one;
			found = 1;
		}
	if (!found)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: NCCL runs none of the algorithms and protocols asked for on %s here (%d ranks on %d node%s)%s%s",
			       pm_coll_info(c)->title, s->ranks, s->nodes, s->nodes == 1 ? "" : "s", why ? ": " : "",
			       why ? why : "");
	*out = best;
	return PM_OK;
}
