/* nccl.h: what NCCL runs and what it costs.
 *
 * NCCL (NVIDIA Collective Communication Library) prices every candidate
 * algorithm and protocol of a collective with its own alpha-beta model
 * (src/graph/tuning.cc) and runs the cheapest, with fewer channels for
 * small messages (src/enqueue.cc).  This area holds that model with its
 * constants (one table per NCCL version), fed with the rates a machine
 * achieves (a machine description's nccl parameters, machine.h) instead
 * of the rates NCCL's topology search assumes, so that it predicts what
 * nccl-tests measures.  docs/model.md, "NCCL", derives every term.
 */
#ifndef PM_NCCL_H
#define PM_NCCL_H

#include "model/coll.h"
#include "model/err.h"

#include <stddef.h>

enum pm_nccl_algo {		/* NCCL's order (nccl_common.h) */
	PM_NCCL_TREE, PM_NCCL_RING, PM_NCCL_COLLNET_DIRECT, PM_NCCL_COLLNET_CHAIN,
	PM_NCCL_NVLS, PM_NCCL_NVLS_TREE, PM_NCCL_PAT, PM_NCCL_P2P, PM_NCCL_NALGO
};
enum pm_nccl_proto { PM_NCCL_LL, PM_NCCL_LL128, PM_NCCL_SIMPLE, PM_NCCL_NPROTO };
enum pm_nccl_arch { PM_NCCL_VOLTA, PM_NCCL_AMPERE, PM_NCCL_HOPPER, PM_NCCL_BLACKWELL, PM_NCCL_NARCH };

/* The machine as NCCL sees it.  Rates are achieved ones (B/s), each with
 * its source in the machine description. */
struct pm_nccl_sys {
	int ranks, nodes, ppn;		/* GPUs, nodes, GPUs per node */
	enum pm_nccl_arch arch;		/* compute capability class */
	int amd_cpu;			/* host CPU: 0 Intel, 1 AMD, 2 Arm (LL limits, network overhead) */
	double ring_Bps;		/* Simple ring bus bandwidth inside one node */
	double nvls_Bps;		/* NVLS all-reduce bus bandwidth in one node; 0: no NVLS */
	double net_Bps;			/* what one node's NICs move out at once */
	double launch_s;		/* host launch and synchronisation per collective */
	double host_s;			/* what each further GPU a host thread drives adds (host_gpus) */
	int host_gpus;			/* GPUs one host thread enqueues each collective on, in
					 * turn (nccl-tests -g); 1: a process per GPU */
	double net_lat_s;		/* the network's own latency per inter-node step */
	double tuner_lat_s;		/* what NCCL's tuner adds per inter-node step instead, where it
					 * selects (its latencyInter: the latency the network plugin
					 * reports; aws-ofi-nccl 75 us on p4d and p5) */
	int channels;			/* ring and tree channels */
	int collnet;			/* SHARP reduction in the switches (CollNet) */
	int ll128;			/* LL128 enabled */
	int ll128_local;		/* LL128 in a node only, not across nodes (machine
					 * param ll128_net 0: tuning.cc enables LL128 across
					 * nodes only where the GPUs reach their NICs through
					 * PCIe switches, or another GPU on Hopper) */
	unsigned algo_env, proto_env;	/* what the platform's environment lets NCCL pick
					 * (its NCCL_ALGO, NCCL_PROTO as masks; 0: unset) */
	double nvls_chunk_B;		/* the platform's NCCL_NVLS_CHUNKSIZE (2.21 on); 0: unset */
	double nvlstree_chunk_B;	/* its NCCL_NVLSTREE_MAX_CHUNKSIZE (2.20 on); 0: unset */
	int version;			/* the release epoch of the constants (pm_nccl_version_find); 0 newest */
	int rccl;			/* the library is RCCL (AMD GPUs): RCCL's own tuning (rccl.c) */
};

/* The host's cost of enqueuing a collective on one more GPU from the same
 * thread, where one process drives several GPUs (nccl-tests -g G, a
 * single-process job): NCCL's group launch, a cudaLaunchKernel and the
 * proxy's work, serial on that thread.  2.75 us: nccl-tests on a DGX A100
 * with -g G (NVIDIA/nccl-tests issue 123, NCCL_ALGO=Ring, one channel)
 * grows 3.95 us a GPU from 2 to 8 GPUs, of which NCCL's own model gives
 * 1.2 us (two ring steps of 0.6 us); the rest is the host's. */
#define PM_NCCL_HOST_ENQUEUE_S 2.75e-6

struct pm_machine;
/* The machine as NCCL sees it when P ranks fill m's nodes in order: the
 * description's NCCL parameters; rates it does not give fall back to the
 * nominal ones of its node level.  PM_ENOTAPPLICABLE when m gives none. */
int pm_nccl_sys_of(const struct pm_machine *m, int P, struct pm_nccl_sys *s, struct pm_err *err);

/* m's host_enqueue, or PM_NCCL_HOST_ENQUEUE_S where it gives none. */
double pm_nccl_host_s(const struct pm_machine *m);

/* A collective's launch on s: the launch, and the host's enqueue on each
 * GPU past the first that one thread drives (host_gpus). */
double pm_nccl_launch_s(const struct pm_nccl_sys *s);

/* One candidate priced. */
struct pm_nccl_cost {
	enum pm_nccl_algo algo;
	enum pm_nccl_proto proto;
	int channels;			/* channels it runs on at this size */
	double launch_s, lat_s, bw_s;	/* the terms; time_s is their sum with fill_s */
	double fill_s;			/* the pipeline's fill (ours; NCCL's model has none) */
	double chunk_B;			/* ... the chunk it fills with, and its hops */
	int fill_hops;
	double proxy_s;			/* the proxy's bound on the bytes' time (ours): bw_s is
					 * at least this */
	double proxy_msgs;		/* ... the network messages of one GPU's proxy */
	double time_s;
	double model_s;			/* NCCL's own estimate, what it selects by */
	double busbw_Bps;		/* the bus bandwidth the candidate is given */
	double algbw_Bps;		/* NCCL's algorithm bandwidth of it, all channels */
	double steps;
};

extern const char *const pm_nccl_algo_names[PM_NCCL_NALGO];	/* ring, tree, ... */
extern const char *const pm_nccl_proto_names[PM_NCCL_NPROTO];	/* ll, ll128, simple */
extern const char *const pm_nccl_arch_names[PM_NCCL_NARCH];
/* The NCCL version whose constants the model holds. */
extern const char pm_nccl_version[];

/* Price algorithm a with protocol p for an n-byte collective c (n as
 * nccl-tests reports the size).  PM_ENOTAPPLICABLE, with the reason,
 * when NCCL would not run that pair here. */
int pm_nccl_price(const struct pm_nccl_sys *s, enum pm_coll c, enum pm_nccl_algo a,
		  enum pm_nccl_proto p, double n, struct pm_nccl_cost *out,
		  struct pm_err *err);

/* NCCL's choice among the pairs allowed by algo_mask and proto_mask
 * (bit 1 << enum value each, as NCCL_ALGO and NCCL_PROTO restrict it):
 * the lowest model_s; ties to the lower algorithm, then protocol number.
 * A mask with every bit set is the variable unset: the platform's own
 * setting (s->algo_env, s->proto_env) applies, as a user's export of
 * NCCL_ALGO replaces the one a vendor's profile sets.
 * PM_ENOTAPPLICABLE when none applies. */
int pm_nccl_select(const struct pm_nccl_sys *s, enum pm_coll c, unsigned algo_mask,
		   unsigned proto_mask, double n, struct pm_nccl_cost *out,
		   struct pm_err *err);

/* Steps NCCL counts for collective c on R ranks (tuning.cc, nsteps). */
int pm_nccl_steps(enum pm_coll c, int R);

/* What NCCL's topology search would give algorithm a's channels together
 * (nChannels x bwIntra or bwInter) before its model's refinements, from
 * the rates s achieves: the ring's rate in a node, across nodes the
 * slower of it and the node's NICs (twice the NICs for a tree on two
 * nodes). */
double pm_nccl_graph_Bps(const struct pm_nccl_sys *s, enum pm_nccl_algo a);

/* RCCL's model of a ring or tree candidate on s (rccl.c): fills out as
 * pm_nccl_price does; the caller has checked that RCCL runs the pair. */
void pm_rccl_price(const struct pm_nccl_sys *s, enum pm_coll c, enum pm_nccl_algo a,
		   enum pm_nccl_proto p, double n, struct pm_nccl_cost *out);
/* The RCCL release whose tuning tables perfmodel holds. */
extern const char pm_rccl_version[];

/* The constants' epoch of an NCCL release ("2.18.5", "2.24"), or -1
 * outside 2.18 to the newest; its releases as text ("2.21 to 2.22"). */
int pm_nccl_version_find(const char *release);
void pm_nccl_epoch_name(int epoch, char *buf, size_t size);

/* Name lookups: the index, or -1. */
int pm_nccl_algo_find(const char *name);
int pm_nccl_proto_find(const char *name);
int pm_nccl_arch_find(const char *name);

/* An NCCL_ALGO or NCCL_PROTO value ("Ring,Tree", "^LL128", "simple";
 * names in any case) as a mask of algorithms (protocols when proto);
 * -1 on a name that is neither.  An algorithm mask keeps p2p, which
 * NCCL_ALGO does not govern. */
int pm_nccl_mask_parse(const char *list, int proto, unsigned *mask);

#endif
