/* algo.h: collective algorithms as a table.
 *
 * Each algorithm is one file holding one exported descriptor: its name, a
 * one-line summary, its restrictions as flags, a schedule builder and its
 * closed form.  An algorithm is resolved against a network (or just a
 * rank count) into a struct pm_inst, which carries everything the builder
 * and the closed form need (layers, grid shape, pipeline depth).  The CLI,
 * --help, the CSV rows and the test loops iterate pm_algos().
 */
#ifndef PM_ALGO_H
#define PM_ALGO_H

#include "model/coll.h"
#include "model/eval.h"
#include "model/params.h"
#include "model/sched.h"
#include "model/topo.h"

#include <stddef.h>

#define PM_MAX_LAYERS 32
#define PM_PRIV_BYTES 224	/* room for an algorithm's own state */

enum pm_algo_flags {
	PM_ALGO_POW2 = 1 << 0,		/* needs a power-of-two P */
	PM_ALGO_GRID2D = 1 << 1,	/* needs a 2-D torus or mesh */
	PM_ALGO_BIGRAPH = 1 << 2,	/* needs a BiGraph network */
	PM_ALGO_NEEDS_TOPO = 1 << 3,	/* needs a network, not just P */
	PM_ALGO_TORUS = 1 << 4,		/* needs a torus (every grid line a ring) */
	PM_ALGO_SWITCH_REDUCES = 1 << 6,	/* needs one switch joining every endpoint that
					 * reduces in the network (NVLS) */
	PM_ALGO_EVERY_COLL = 1 << 5,	/* prices every collective itself (NCCL's model):
					 * no phase split, no halving */
	PM_ALGO_NODES_REDUCE = 1 << 7,	/* needs two or more GPU nodes, each joined by
					 * a switch that reduces (NVLS) */
	PM_ALGO_NET_REDUCES = 1 << 8,	/* needs two or more nodes joined by switches
					 * that reduce (SHARP) */
	PM_ALGO_PRICES_PARTS = 1 << 9,	/* its closed form prices a reduce-scatter or
					 * all-gather (a phase of its all-reduce) itself,
					 * and its builder may build their schedule apart
					 * from the all-reduce's (in->coll) */
};

struct pm_algo;

/* An algorithm resolved for one network. */
struct pm_inst {
	const struct pm_algo *algo;
	enum pm_coll coll;		/* the collective it is resolved for */
	const struct pm_topo *topo;	/* NULL: closed form on P alone */
	int P;
	char label[96];			/* name with its argument, e.g. hring:4x8x4 */
	int ports;			/* links per endpoint used at once */
	int steps;			/* step count a construction yields */
	int hop_links;			/* links between neighbours (closed forms) */
	int flow_override;		/* -1, or the enum pm_flow this variant forces */
	int sized;			/* its schedule depends on the message size:
					 * price it through pm_algo_at_size */
	/* The algorithm's own state: a struct its file defines (hring's
	 * layers, dbtree's chunk count, MULTITREE's sums, ...), filled by its
	 * prepare and read by its build and closed form through the file's
	 * accessor, and by nothing else.  Kept inline so an instance stays a
	 * plain value, copied and never freed; each file checks its struct
	 * fits (docs/model.md, the algorithm table). */
	union {
		unsigned char bytes[PM_PRIV_BYTES];
		max_align_t align;
	} priv;
};

struct pm_algo {
	const char *name;
	const char *summary;
	const char *arg_syntax;		/* e.g. "K", NULL when it takes none */
	const char *arg_help;
	unsigned flags;			/* enum pm_algo_flags */
	/* How its all-reduce splits (reduce-scatter + all-gather, reduce +
	 * broadcast): which other collectives it implements, as the phases
	 * of its schedule (coll.h).  An algorithm of another collective only
	 * (all-to-all) names it in coll and leaves phases NONE. */
	enum pm_phases phases;
	int only_coll;			/* 0: all-reduce (and its phases); else 1 + the enum pm_coll */
	/* Share of the bytes its all-reduce sends that are reduced at the
	 * receiver (the endpoint's memory reads, params.h): 0 means one half
	 * (reduce-scatter then all-gather, reduce then broadcast); recursive
	 * doubling reduces everything it sends (1). */
	double reduce_share;
	const char *formula;		/* the closed form in one line */
	const char *reference;
	/* Fill the algorithm-specific fields of in; arg may be NULL. */
	int (*prepare)(struct pm_inst *in, const char *arg, struct pm_err *err);
	/* Add transfers to s (initialised for in->P ranks by the caller). */
	int (*build)(const struct pm_inst *in, struct pm_sched *s,
		     struct pm_err *err);
	void (*closed)(const struct pm_inst *in, double n,
		       const struct pm_params *p, struct pm_cost *c);
	/* Exact number of transfers the builder will store (a repeated
	 * step counts once), so an oversized schedule is refused before it
	 * is built. */
	double (*xfers)(const struct pm_inst *in);
	/* Optional, for instances prepare marked sized: turn in into the
	 * instance of an n-byte collective (multiphase's chunk count from a
	 * chunk size, its chunks in flight from the SRAM).  Must give the
	 * same instance when applied again for the same n.
	 * PM_ENOTAPPLICABLE with the reason when it cannot run n bytes. */
	int (*at_size)(struct pm_inst *in, double n, struct pm_err *err);
	/* Optional: the closed form's terms at n bytes in words, the note of
	 * its rows under --explain. */
	void (*terms)(const struct pm_inst *in, double n, const struct pm_params *p, char *buf, size_t size);
	/* Optional: the algorithm whose schedule this one builds for the
	 * same argument (a variant that only prices it differently, as
	 * multitree-msg's message flow control), so one built schedule
	 * serves both (pm_algo_same_schedule). */
	const struct pm_algo *schedule_of;
	/* Optional: the instance whose schedule prices this one (NCCL's
	 * choice: the ring it runs); pm_algo_schedule builds that one, or
	 * returns this hook's PM_EINPUT with the reason there is none. */
	int (*schedule_inst)(const struct pm_inst *in, struct pm_inst *sub, struct pm_err *err);
	/* Optional: the parameters the instance's schedule is priced with
	 * (NCCL's protocol as wire bytes, its latency as the steps' alpha),
	 * applied by pm_inst_params. */
	void (*params)(const struct pm_inst *in, struct pm_params *p);
};

const struct pm_algo *const *pm_algos(int *n);

/* Resolve "name" or "name:arg" for network t (P = its endpoints) or, when
 * t is NULL, for P ranks.  PM_ENOTAPPLICABLE says why it cannot run. */
int pm_algo_resolve(const char *spec, const struct pm_topo *t, int P,
		    struct pm_inst *in, struct pm_err *err);
/* The same for collective c: PM_ENOTAPPLICABLE when the algorithm does
 * not implement it. */
int pm_algo_resolve_coll(enum pm_coll c, const char *spec, const struct pm_topo *t,
			 int P, struct pm_inst *in, struct pm_err *err);
/* Does algorithm a implement collective c? */
int pm_algo_does(const struct pm_algo *a, enum pm_coll c);

/* What a's restriction flags need of a network, as one line ("a 2-D torus
 * or mesh; a power-of-two number of endpoints"), the same words its
 * refusal uses; the length (0: no restriction). */
size_t pm_algo_needs(const struct pm_algo *a, char *buf, size_t size);

/* Replay in's schedule and check it does its collective (sched.h,
 * pm_sched_check); an all-gather or broadcast is checked on the data the
 * algorithm's first phase leaves. */
int pm_algo_check(const struct pm_inst *in, struct pm_err *err);

/* Do a and b build the same schedule: one algorithm or a variant of it
 * (schedule_of), the same argument, network, collective and ports, and
 * neither sized?  Then a schedule built for one serves the other. */
int pm_algo_same_schedule(const struct pm_inst *a, const struct pm_inst *b);

/* Build the schedule: init, the algorithm's builder, finish. */
int pm_algo_schedule(const struct pm_inst *in, struct pm_sched *s,
		     struct pm_err *err);

/* The contention evaluator with the instance's own parameters (a variant
 * such as MULTITREE-MSG forces its flow control). */
int pm_algo_contention(const struct pm_inst *in, const struct pm_sched *s,
		       double n, const struct pm_params *p, struct pm_cost *c,
		       struct pm_step_cost *steps, struct pm_err *err);

/* The schedule's profile with the instance's own parameters (eval.h):
 * every later size priced by pm_profile_price as pm_algo_contention
 * prices it.  NULL where a profile does not hold (pm_profile_build says
 * why): the caller prices size by size. */
struct pm_profile *pm_algo_profile(const struct pm_inst *in, const struct pm_sched *s,
				   const struct pm_params *p);

/* The closed form; time_s is the sum of the four terms.  A collective
 * that is one phase of an all-reduce algorithm costs half its alpha,
 * latency and bandwidth terms (the algorithms that split have phases of
 * equal steps and bytes, which tests/test_coll.c checks against their
 * schedules) and all of its reduction term (reduce-scatter, reduce) or
 * none of it (all-gather, broadcast). */
void pm_algo_closed(const struct pm_inst *in, double n,
		    const struct pm_params *p, struct pm_cost *c);

/* The instance that runs an n-byte collective: a copy of in, made for n
 * by the algorithm's at_size hook when in is sized (then its schedule
 * must be built for out, size by size); PM_ENOTAPPLICABLE when the
 * algorithm cannot run n bytes.  Every other instance runs every size
 * with one schedule. */
int pm_algo_at_size(const struct pm_inst *in, double n, struct pm_inst *out,
		    struct pm_err *err);

/* The parameters an instance is priced with (a variant may force its
 * own flow control, as MULTITREE-MSG does). */
struct pm_params pm_inst_params(const struct pm_inst *in,
				const struct pm_params *p);

/* Helpers for closed forms: the latency of one neighbour message, and
 * seconds per wire byte of an m-byte message. */
double pm_hop_lat(const struct pm_inst *in, const struct pm_params *p);
/* Each GPU's link up to its node's switch and down from it (up[r],
 * down[r]) on N nodes of G GPUs (ranks v G + g): the two links of every
 * route between two GPUs of a node (nvls, nvlstree).  PM_ENOTAPPLICABLE,
 * naming algorithm who, where a route is not those two. */
int pm_node_switch_links(const struct pm_topo *t, int G, int N, int *up, int *down, const char *who,
			 struct pm_err *err);
/* The rate of GPU 0's link to its node's switch (B/s; 0 with err set
 * where its node has no two GPUs on one switch). */
double pm_node_switch_rate(const struct pm_topo *t, const char *who, struct pm_err *err);
/* The links of a transfer a node's switch carries (nvls, nvlstree,
 * collnet:nodes=nvls) into via: a copy up to the switch (PM_REDUCE; the
 * first of a block's copies also carries the sum on down to dst) or one
 * from the switch down (PM_COPY, a multicast; the first also carries
 * src's one copy up); returns their number. */
int pm_switch_via(const int *up, const int *down, int src, int dst, enum pm_op op, int first, int via[2]);
/* The GPU nodes of a machine network as the node-aware schedules read
 * them (nvlstree, collnet). */
struct pm_gpu_nodes {
	int G, N;		/* GPUs a node, nodes */
	int share;		/* GPUs a NIC serves (G / the node's rails, rounded up) */
	double nvl_Bps;		/* a GPU's link to its node's switch (0 with one GPU a node) */
	double r;		/* that link over the network's slowest (1 with one GPU a node) */
};
/* Fill nd for in (a machine: network, which the caller's restriction
 * row has checked); PM_ENOTAPPLICABLE, naming who, where the ranks are
 * not whole nodes or a node's GPUs are not joined by one switch. */
int pm_gpu_nodes_of(const struct pm_inst *in, const char *who, struct pm_gpu_nodes *nd, struct pm_err *err);
/* NVLS's rate (the machine's nvls_busbw as the all-reduce of G GPUs:
 * algbw = busbw G / 2(G-1)) as a scale on the bytes its switch carries
 * over links of link_Bps (pm_params.switch_scale; 1 where the links are
 * the slower).  algo_nvls.c; nvlstree's nodes charge it too. */
double pm_nvls_switch_scale(const struct pm_topo *t, int G, double link_Bps);
double pm_msg_bw_s(const struct pm_params *p, double m);

/* Reduce-phase steps of the double binary tree on P ranks, K chunks. */
int pm_dbtree_reduce_steps(int P, int K);
/* Rank r's parent in NCCL's tree 0 or 1 over n ranks (-1 at the root). */
int pm_dbtree_parent(int n, int r, int tree);

int pm_is_pow2(long x);
int pm_ceil_log2(long x);

/* The pipelines' default chunk (dbtree, tree, chain, nodetree): NCCL's
 * LL chunk, NCCL_LL_BUFFSIZE 512 KiB / NCCL_STEPS 8, half of each line
 * data (NCCL src/init.cc, src/include/device.h, src/enqueue.cc
 * calcCollChunking). */
#define PM_PIPE_CHUNK_B 32768.0
/* Chunks for n bytes: the smallest power of two K with K x chunk_B >= n
 * (a size sweep then builds one schedule per octave), at most most. */
long pm_pipe_chunks(double n, double chunk_B, long most);
/* The most chunks a pipeline may take where its schedule stores
 * per_chunk transfers a chunk: most halved until K x per_chunk fits in
 * budget (nodetree-like schedules' stored-transfer limit), at least 1. */
long pm_pipe_budget(double per_chunk, double budget, long most);
int pm_floor_log2(long x);

#endif
