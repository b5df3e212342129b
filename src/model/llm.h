/* llm.h: a transformer as the layout planner sees it (data/llms/NAME.csv,
 * one key,value,source row per figure): its shape, its parameters, the
 * compute of one layer's shard on a device and the activations it keeps.
 *
 * A layer is attention (query heads of head_dim, grouped KV heads,
 * output projection) and an MLP (gated: SwiGLU's three matrices, else
 * two), or from layer dense_layers on, when experts > 0, a mixture of
 * experts: `experts` MLPs of moe_ffn of which each token visits topk, plus
 * shared_experts always visited.  docs/model.md, "Training layouts",
 * derives every count.
 */
#ifndef PM_LLM_H
#define PM_LLM_H

#include "model/device.h"
#include "model/err.h"
#include "model/kvfile.h"

struct pm_llm {
	char name[64];
	char path[512];
	char description[200];
	double layers, hidden, heads, kv_heads, head_dim, ffn, vocab, seq;
	double experts, topk, moe_ffn, shared_experts, dense_layers;
	double gated, tied, causal;
	/* element-wise bytes a token moves per unit of hidden size in an
	 * eager framework's layer, forward and backward (0: not measured) */
	double eager_fwd_B, eager_bwd_B;
	struct pm_kv_src src;
};

int pm_llm_load(const char *name_or_path, struct pm_llm *m, struct pm_err *err);
/* Whether m can run on d: an eager device (d->eager) needs the model's
 * eager element-wise traffic. */
int pm_llm_check_device(const struct pm_llm *m, const struct pm_device *d, struct pm_err *err);

/* Parameters. */
double pm_llm_attn_params(const struct pm_llm *m);
double pm_llm_mlp_params(const struct pm_llm *m, double ffn);	/* one MLP of width ffn */
int pm_llm_is_moe(const struct pm_llm *m, int layer);
double pm_llm_moe_layers(const struct pm_llm *m);
/* Of one layer: everything held (dense part, or all experts) and what a
 * token uses (topk of the experts). */
double pm_llm_layer_params(const struct pm_llm *m, int moe);
double pm_llm_layer_expert_params(const struct pm_llm *m);	/* the routed experts alone */
double pm_llm_embed_params(const struct pm_llm *m);		/* input (and untied output) */
double pm_llm_params(const struct pm_llm *m);
double pm_llm_active_params(const struct pm_llm *m);
/* Training FLOPs per token as model FLOPs utilisation counts them
 * (Chowdhery et al., "PaLM", JMLR 2023, App. B): 6 x the active weights
 * (output layer included) + 12 x layers x heads x head_dim x seq. */
double pm_llm_flops_per_token(const struct pm_llm *m, double seq);

/* The part of a layer one GPU runs for one micro-batch. */
struct pm_llm_shard {
	int tp, cp, ep;
	double mb;		/* sequences in the micro-batch */
	double seq;		/* the sequence (all of it: CP splits it) */
};

struct pm_layer_time {
	double fwd_s, bwd_s;		/* the whole layer shard */
	double gemm_fwd_s, attn_fwd_s, attn_bwd_s, elem_fwd_s, elem_bwd_s;
	double expert_fwd_s;		/* the routed experts' share of fwd_s */
};

/* Compute of layer kind moe (0 dense, 1 mixture of experts) on d: each
 * weight multiply as a GEMM (backward: two of the same size), causal
 * attention of the local queries against the whole sequence (causal, or
 * the whole score matrix for an encoder), element-wise work at memory
 * speed: fused (two norms, two residual adds, the activation) or, on an
 * eager device, the model's measured eager traffic. */
void pm_llm_layer_time(const struct pm_llm *m, const struct pm_device *d, int moe,
		       const struct pm_llm_shard *sh, struct pm_layer_time *t);

/* The output layer (logits) of one micro-batch on the last stage,
 * forward and backward: its multiply, and on an eager device the loss's
 * element-wise passes over the logits (the device's eager_loss_*_B). */
void pm_llm_head_time(const struct pm_llm *m, const struct pm_device *d, const struct pm_llm_shard *sh,
		      double *fwd_s, double *bwd_s);

/* Activation bytes one layer keeps for backward per micro-batch
 * (Korthikanti et al., "Reducing Activation Recomputation in Large
 * Transformer Models", MLSys 2023, Table 2, with sequence parallelism:
 * 34 s b h / t; full recomputation keeps the layer input, 2 s b h / t). */
double pm_llm_layer_activation_B(const struct pm_llm *m, const struct pm_llm_shard *sh, int full_recompute);

#endif
