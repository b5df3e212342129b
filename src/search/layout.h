/* layout.h: one training step of a transformer under a parallel layout,
 * placed on a machine (docs/model.md, "Training layouts").
 *
 * GPUs = tp x cp x dp x pp; expert parallelism is carved out of data
 * parallelism (ep divides dp).  Ranks are laid out TP innermost, then CP,
 * then DP (EP its innermost part), then PP (Megatron-LM's order), and
 * each group's collectives are priced where its members sit (group.h).
 *
 * One step: the pipeline of m = B / (dp mb) micro-batches, 1F1B or
 * interleaved with v chunks a stage: (m + (pp-1)/v) (tf + tb) (Narayanan
 * et al., SC 2021, §2.2), where tf and tb are a stage's forward and
 * backward of one micro-batch, its tensor-, expert- and context-parallel
 * communication included; then the data-parallel gradient reduction that
 * the last micro-batch's backward did not hide, and the optimizer.
 */
#ifndef PM_LAYOUT_H
#define PM_LAYOUT_H

#include "model/device.h"
#include "model/err.h"
#include "model/llm.h"
#include "model/machine.h"

enum pm_recompute { PM_RECOMPUTE_NONE, PM_RECOMPUTE_FULL };

struct pm_layout {
	int tp, pp, dp, cp, ep, vpp;	/* vpp: model chunks a stage (interleaving), 1 for 1F1B */
	int mb;				/* sequences per micro-batch */
	int recompute;			/* enum pm_recompute */
	int zero;			/* 0 none, 1 optimizer states sharded, 2 and gradients, 3 and weights */
};

struct pm_job {
	const struct pm_llm *model;
	const struct pm_device *dev;
	const struct pm_machine *mach;
	long long gpus;
	double batch;		/* global batch in sequences */
	double seq;		/* sequence length */
	double grad_bytes;	/* bytes a gradient is reduced in (4: fp32) */
};

/* Memory per GPU of the fullest stage, bytes. */
struct pm_mem {
	double weights_B, grads_B, optim_B, act_B, total_B;
	double params;		/* parameters held (before ZeRO sharding) */
};

struct pm_step {
	double step_s, tokens_per_s, tflops_per_gpu, mfu;
	int micro;		/* m */
	double layers_stage;	/* layers of the fullest stage */
	double tf_s, tb_s;	/* a stage's forward and backward of one micro-batch */
	/* the step's breakdown; they add up to step_s */
	double compute_s;	/* m (tf + tb) without communication */
	double bubble_s;	/* (pp - 1) / v (tf + tb) */
	double tp_s, pp_s, ep_s, cp_s;	/* exposed communication in the m micro-batches */
	double dp_s;		/* exposed data-parallel reduction (and ZeRO gathers) */
	double optim_s;
	double dp_total_s;	/* the data-parallel collectives in all, hidden or not */
	char tp_how[48], dp_how[48], ep_how[48], pp_how[48], cp_how[48];
	struct pm_mem mem;
	int fits;
};

/* Is the layout possible for the job?  PM_EINPUT with the figures when
 * not (a product that is not the GPU count, a batch that does not divide,
 * heads that TP cannot split, ...). */
int pm_layout_check(const struct pm_job *job, const struct pm_layout *l, struct pm_err *err);

/* Price a checked layout.  out->fits says whether its memory fits the
 * device. */
int pm_layout_price(const struct pm_job *job, const struct pm_layout *l, struct pm_step *out, struct pm_err *err);

/* "tp8 pp16 dp64 cp1 ep1 v1 mb1 full zero1" */
void pm_layout_name(const struct pm_layout *l, char *buf, size_t size);

#endif
