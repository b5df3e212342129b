/* machine.h: machines for the hierarchical all-reduce model (Ueno & Yokota 2019).
 *
 * A machine is a nest of levels, innermost first: a node holds `count`
 * accelerators, a rack `count` nodes, and so on.  Each level says how fast
 * a ring runs between members inside one of its units (inner_bw), how much
 * bandwidth leaves one unit in all (egress_bw) and how much one flow can
 * use of it (flow_bw).  Files live in data/machines/NAME.csv (docs/model.md
 * gives the format); ranks fill accelerators in order.
 */
#ifndef PM_MACHINE_H
#define PM_MACHINE_H

#include "model/err.h"

#include <stdio.h>

#define PM_MACHINE_LEVELS 8

struct pm_level {
	char name[32];
	long long count;	/* units of the level below in one unit */
	long long unit;		/* accelerators in one unit of this level */
	double inner_bw;	/* B/s a ring gets inside one unit; 0: not given */
	double egress_bw;	/* B/s leaving one unit in all; 0: no limit */
	double flow_bw;		/* B/s one flow may use of it; 0: egress_bw */
	char source[320];
};

/* What NCCL needs to know of a machine (nccl.h), each figure with its
 * source; rates are achieved ones, not nominal (docs/model.md, "NCCL").
 * arch < 0: the description gives none, and NCCL is not modelled on it. */
#define PM_MACHINE_NCCL_PARAMS 19
struct pm_machine_nccl {
	int arch;		/* enum pm_nccl_arch, -1 none */
	int amd_cpu;		/* host CPU: 0 Intel, 1 AMD, 2 Arm */
	double ring_Bps;	/* param ring_busbw: Simple ring bus bandwidth in one node */
	double nvls_Bps;	/* param nvls_busbw: NVLS all-reduce bus bandwidth; 0 none */
	double nic_Bps;		/* param nic_bw: what one NIC moves (achieved) */
	double launch_s;	/* param launch: host launch + sync per collective */
	double host_s;		/* param host_enqueue: one more GPU a host thread enqueues on (0: NCCL's default, nccl.h) */
	double net_lat_s;	/* param net_latency: added per inter-node step */
	double plugin_lat_s;	/* param plugin_latency: what the network plugin reports to NCCL
				 * as its latency, which NCCL's tuner adds per inter-node step
				 * when it selects; < 0 (the default): net_latency */
	int channels;		/* param channels */
	int collnet;		/* param sharp: SHARP reduction in the switches */
	int ll128;		/* param ll128 (default 1) */
	int ll128_net;		/* param ll128_net: LL128 across nodes too (default 1; 0 where
				 * the GPUs reach their NICs through the CPU) */
	unsigned algo_env;	/* param nccl_algo: NCCL_ALGO as the platform sets it (mask; 0, the default: unset) */
	unsigned proto_env;	/* param nccl_proto: NCCL_PROTO as the platform sets it */
	double nvls_chunk_B;	/* param nvls_chunk: NCCL_NVLS_CHUNKSIZE as the platform sets it (0: NCCL's) */
	double nvlstree_chunk_B;	/* param nvlstree_chunk: NCCL_NVLSTREE_MAX_CHUNKSIZE likewise */
	int version;		/* param nccl_version: the constants' epoch (nccl.h), 0 the newest */
	int library;		/* param library: 0 nccl, 1 rccl (AMD GPUs: RCCL's own tuning, nccl.h) */
	int nsrc;		/* the nccl params given, as written, for --explain */
	char src[PM_MACHINE_NCCL_PARAMS][3][320];	/* name, value, source */
};

struct pm_machine {
	char name[64];
	char path[512];
	char description[320];
	char alpha_source[320];
	double alpha_s;		/* per-message startup */
	int pipeline_s;		/* Ueno & Yokota's s */
	int nics;		/* network interfaces per node; 0: one per accelerator */
	char device[32];	/* param device: the accelerator, a row of
				 * data/devices.csv (device.h); "" none given */
	char device_source[320];
	char network[64];	/* param network: "" (a switched cluster) or what
				 * --topo spells the machine as instead */
	struct pm_machine_nccl nccl;
	int nlevels;
	struct pm_level level[PM_MACHINE_LEVELS];
	long long capacity;	/* accelerators in the whole machine */
};

/* Where the layer of stride s (the product of the layers inside it) and
 * size p runs: its bandwidth per ring and what limits it. */
struct pm_layer_bw {
	double bw_Bps;
	int crossed;		/* outermost level whose units the rings leave; -1 none */
	int limit;		/* level that sets bw_Bps */
	long long flows;	/* rings sharing that level's egress per unit */
};

/* NAME (a preset in the data directory) or PATH (contains '/' or ends in
 * .csv). */
int pm_machine_load(const char *name_or_path, struct pm_machine *m,
		    struct pm_err *err);

/* The rates the models use for a node (hier's layers, the machine:
 * network's links, the ring's channels): what a GPU's NVLink carries in a
 * ring and what all the node's NICs move out, achieved (the NCCL
 * parameters ring_busbw, and nic_bw x nics) where the description gives
 * them, else the node level's nominal inner_bw and egress_bw. */
double pm_machine_gpu_bw(const struct pm_machine *m);
double pm_machine_egress_bw(const struct pm_machine *m);

/* A node's NIC rails (param nics, default one per GPU, at most one per
 * GPU) and the rail GPU `local` (0 <= local < the node's GPUs) leaves by:
 * local x rails / G, so a rail's GPUs are consecutive (the machine
 * network's wiring). */
int pm_machine_rails(const struct pm_machine *m);
int pm_machine_rail_of(const struct pm_machine *m, int local);

/* Write m as a machine CSV file that pm_machine_load reads back to the
 * same description (machine_write.c); PM_EINTERNAL on a write error. */
int pm_machine_write(FILE *f, const struct pm_machine *m);

/* The bandwidth rule (docs/model.md): a layer crosses level k when a block
 * of s*p consecutive ranks does not fit evenly in one level-k unit; then
 * min(unit, s) rings leave each unit and share its egress, each at most
 * flow_bw; rings whose consecutive members share a unit also run at that
 * unit's inner_bw.  The slowest of these is the layer's bandwidth.  The
 * node level's rates are the achieved ones (pm_machine_gpu_bw, _egress_bw). */
int pm_machine_layer(const struct pm_machine *m, long long stride, long long p,
		     struct pm_layer_bw *out, struct pm_err *err);

/* One layer of a hierarchical ring all-reduce, priced. */
struct pm_hier_layer {
	int p;
	double msg_B;		/* the part each rank holds entering the layer */
	struct pm_layer_bw where;
	double rs_s, ag_s;	/* reduce-scatter and all-gather halves */
};

/* Seed 001 SIV-C: layer i (stride S_i = p1...p_(i-1)) runs
 *   rs = ag = s alpha (p_i - 1) + (p_i - 1)(n / S_i / p_i) / bw_i,
 * so T = 2 s alpha (sum p_i - h) + 2 n sum (p_i - 1)/(S_i p_i) / bw_i.
 * out (may be NULL) receives h layers. */
int pm_hier_time(const struct pm_machine *m, const int *layers, int h,
		 double n, double alpha, int s, double *time_s,
		 struct pm_hier_layer *out, struct pm_err *err);

#endif
