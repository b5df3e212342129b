/* llm.c: transformer shapes, parameters, layer compute and activations
 * (llm.h). */
#include "model/llm.h"
#include "model/preset.h"

#include <math.h>
#include <stddef.h>

#define F(field) offsetof(struct pm_llm, field)
#define INT(key, field, lo, hi, req, dflt, doc) {key, PM_KV_INT, F(field), 0, lo, hi, req, dflt, doc}
#define NUM(key, field, lo, hi, doc) {key, PM_KV_NUM, F(field), 0, lo, hi, 0, 0, doc}

static const struct pm_kv_key keys[] = {
	{"description", PM_KV_TEXT, F(description), sizeof ((struct pm_llm *)0)->description, 0, 0, 0, 0,
	 "what the model is"},
	INT("layers", layers, 1, 10000, 1, 0, "transformer layers"),
	INT("hidden", hidden, 64, 1 << 20, 1, 0, "the model width h"),
	INT("heads", heads, 1, 1 << 14, 1, 0, "query heads"),
	INT("kv_heads", kv_heads, 0, 1 << 14, 0, 0, "key/value heads (0 or left out: as many as heads)"),
	INT("head_dim", head_dim, 0, 1 << 14, 0, 0, "head size (0 or left out: hidden / heads)"),
	INT("ffn", ffn, 1, 1 << 24, 1, 0, "MLP width of a dense layer"),
	INT("vocab", vocab, 1, 1 << 24, 1, 0, "vocabulary size"),
	INT("seq", seq, 1, 1 << 24, 1, 0, "training sequence length (--seq overrides it)"),
	INT("experts", experts, 0, 1 << 16, 0, 0, "routed experts per MoE layer (0: a dense model)"),
	INT("topk", topk, 0, 1 << 16, 0, 0, "routed experts each token visits"),
	INT("moe_ffn", moe_ffn, 0, 1 << 24, 0, 0, "MLP width of one expert"),
	INT("shared_experts", shared_experts, 0, 1 << 10, 0, 0, "experts every token visits"),
	INT("dense_layers", dense_layers, 0, 10000, 0, 0, "leading layers with a dense MLP in an MoE model"),
	INT("gated", gated, 0, 1, 0, 1, "1: gated MLP (SwiGLU, three matrices), 0: two matrices"),
	INT("tied", tied, 0, 1, 0, 0, "1: the output layer shares the input embedding"),
	INT("causal", causal, 0, 1, 0, 1, "1: causal attention (a decoder), 0: every token sees every token (an encoder)"),
	NUM("eager_fwd_B", eager_fwd_B, 0, 1e6,
	    "element-wise bytes a token moves per unit of hidden size in an eager framework's forward (measured)"),
	NUM("eager_bwd_B", eager_bwd_B, 0, 1e6, "the same for its backward"),
};

int pm_llm_load(const char *spec, struct pm_llm *m, struct pm_err *err)
{
	int rc;

	*m = (struct pm_llm){0};
	if ((rc = pm_preset_find(spec, "llms", "model", m->path, sizeof m->path, m->name, sizeof m->name, err)))
		return rc;
	if ((rc = pm_kv_read(m->path, "model description", keys, (int)(sizeof keys / sizeof keys[0]), m, &m->src, err)))
		return rc;
	if (m->kv_heads == 0)
		m->kv_heads = m->heads;
	if (m->head_dim == 0 && m->heads > m->hidden)
		return pm_fail(err, PM_EINPUT,
			       "model '%s': %g heads of a %g-wide model leave no head size (expected heads <= hidden, or head_dim given)",
			       m->path, m->heads, m->hidden);
	if (m->head_dim == 0)
		m->head_dim = floor(m->hidden / m->heads);
	if (fmod(m->heads, m->kv_heads) != 0)
		return pm_fail(err, PM_EINPUT, "model '%s': %g heads do not group into %g KV heads (expected kv_heads to divide heads)",
			       m->path, m->heads, m->kv_heads);
	if (m->experts > 0 && (m->topk < 1 || m->topk > m->experts || m->moe_ffn < 1 || m->dense_layers >= m->layers))
		return pm_fail(err, PM_EINPUT,
			       "model '%s': a mixture of experts needs 1 <= topk <= experts, moe_ffn >= 1 and dense_layers < layers (got experts %g, topk %g, moe_ffn %g, dense_layers %g)",
			       m->path, m->experts, m->topk, m->moe_ffn, m->dense_layers);
	return PM_OK;
}

int pm_llm_check_device(const struct pm_llm *m, const struct pm_device *d, struct pm_err *err)
{
	if (d->eager && (m->eager_fwd_B <= 0 || m->eager_bwd_B <= 0))
		return pm_fail(err, PM_EINPUT,
			       "model '%s' has no measured eager element-wise traffic for eager device '%s' (expected eager_fwd_B and eager_bwd_B rows in the model, or a fused device such as h100)",
			       m->name, d->name);
	return PM_OK;
}

double pm_llm_attn_params(const struct pm_llm *m)
{
	double q = m->heads * m->head_dim, kv = m->kv_heads * m->head_dim;
	return m->hidden * (q + 2 * kv) + q * m->hidden;
}

double pm_llm_mlp_params(const struct pm_llm *m, double ffn)
{
	return (m->gated ? 3 : 2) * m->hidden * ffn;
}

int pm_llm_is_moe(const struct pm_llm *m, int layer)
{
	return m->experts > 0 && layer >= (int)m->dense_layers;
}

double pm_llm_moe_layers(const struct pm_llm *m)
{
	return m->experts > 0 ? m->layers - m->dense_layers : 0;
}

double pm_llm_layer_expert_params(const struct pm_llm *m)
{
	return m->experts * pm_llm_mlp_params(m, m->moe_ffn);
}

double pm_llm_layer_params(const struct pm_llm *m, int moe)
{
	double norms = 2 * m->hidden;
	if (!moe)
		return pm_llm_attn_params(m) + pm_llm_mlp_params(m, m->ffn) + norms;
	return pm_llm_attn_params(m) + pm_llm_layer_expert_params(m) +
	       pm_llm_mlp_params(m, m->moe_ffn) * m->shared_experts + m->hidden * m->experts + norms;
}

double pm_llm_embed_params(const struct pm_llm *m)
{
	return m->vocab * m->hidden * (m->tied ? 1 : 2);
}

double pm_llm_params(const struct pm_llm *m)
{
	double moe = pm_llm_moe_layers(m);
	return (m->layers - moe) * pm_llm_layer_params(m, 0) + moe * pm_llm_layer_params(m, 1) +
	       pm_llm_embed_params(m) + m->hidden;
}

double pm_llm_active_params(const struct pm_llm *m)
{
	double moe = pm_llm_moe_layers(m);
	double idle = (m->experts - m->topk) * pm_llm_mlp_params(m, m->moe_ffn);
	return pm_llm_params(m) - moe * idle;
}

double pm_llm_flops_per_token(const struct pm_llm *m, double seq)
{
	/* the input embedding is a lookup, not a multiply: only the output
	 * layer's V h weights count among the embeddings */
	double weights = pm_llm_active_params(m) - pm_llm_embed_params(m) + m->vocab * m->hidden;
	return 6 * weights + 12 * m->layers * m->heads * m->head_dim * seq;
}

/* One weight multiply of a layer: forward (M x K) @ (K x N); its backward
 * is two multiplies of the same size (input and weight gradients). */
static void gemm(const struct pm_device *d, double M, double N, double K, double *fwd)
{
	*fwd += pm_device_gemm_s(d, M, N, K);
}

/* Element-wise work of T tokens.  Fused: 2 B x (10 h + act) a token
 * forward, twice that backward.  Eager (a device whose kernels are
 * measured under an eager framework): the model's measured traffic,
 * eager_fwd_B and eager_bwd_B bytes per token per unit of h, each a
 * separate kernel's pass through memory; a tensor-parallel shard is
 * charged its 1/tp share. */
static void layer_elementwise(const struct pm_llm *m, const struct pm_device *d, double T, double tp, double act,
			      struct pm_layer_time *t)
{
	double h = m->hidden;
	if (d->eager) {
		t->elem_fwd_s = pm_device_mem_s(d, m->eager_fwd_B * T * h / tp);
		t->elem_bwd_s = pm_device_mem_s(d, m->eager_bwd_B * T * h / tp);
		return;
	}
	t->elem_fwd_s = pm_device_mem_s(d, 2 * T * (10 * h + act));
	t->elem_bwd_s = 2 * t->elem_fwd_s;
}

void pm_llm_layer_time(const struct pm_llm *m, const struct pm_device *d, int moe, const struct pm_llm_shard *sh,
		       struct pm_layer_time *t)
{
	double h = m->hidden, hd = m->head_dim, tp = sh->tp;
	double T = sh->mb * sh->seq / sh->cp;		/* tokens on this GPU */
	double nh = m->heads / tp, nkv = fmax(1, m->kv_heads / tp);
	double g = 0, ex = 0, mlp_cols;

	*t = (struct pm_layer_time){0};
	gemm(d, T, (nh + 2 * nkv) * hd, h, &g);		/* qkv, column parallel */
	gemm(d, T, h, nh * hd, &g);			/* output, row parallel */
	if (!moe) {
		mlp_cols = m->ffn / tp;
	} else {
		/* routed experts are not cut by TP: each GPU runs experts/ep of
		 * them on the T/tp tokens of its sequence-parallel slice times
		 * topk, spread evenly (balanced routing) */
		double local = m->experts / sh->ep, rows = T / tp * m->topk * sh->ep / m->experts;
		double e = 0;
		gemm(d, rows, (m->gated ? 2 : 1) * m->moe_ffn, h, &e);
		gemm(d, rows, h, m->moe_ffn, &e);
		ex = e * local;
		mlp_cols = m->moe_ffn * m->shared_experts / tp;
	}
	if (mlp_cols > 0) {
		gemm(d, T, (m->gated ? 2 : 1) * mlp_cols, h, &g);
		gemm(d, T, h, mlp_cols, &g);
	}
	/* causal attention: T local queries against the sequence, half of
	 * the score matrix on average: 2 x 2 T seq hd / 2 per head; an
	 * encoder computes all of it */
	double af = (m->causal ? 2 : 4) * T * sh->seq * hd * nh;
	t->attn_fwd_s = pm_device_attn_s(d, af, hd, 0);
	t->attn_bwd_s = pm_device_attn_s(d, af, hd, 1);
	/* element-wise, in elements per token: two norms (read h, write h),
	 * two residual adds (2 reads, 1 write), the activation (gated: read
	 * 2 f, write f; else read f, write f), bf16 */
	double act = (m->gated ? 3 : 2) * (moe ? m->moe_ffn * m->topk + m->moe_ffn * m->shared_experts : m->ffn) / tp;
	layer_elementwise(m, d, T, tp, act, t);
	t->gemm_fwd_s = g + ex;
	t->expert_fwd_s = ex;
	t->fwd_s = t->gemm_fwd_s + t->attn_fwd_s + t->elem_fwd_s;
	t->bwd_s = 2 * t->gemm_fwd_s + t->attn_bwd_s + t->elem_bwd_s;
}

void pm_llm_head_time(const struct pm_llm *m, const struct pm_device *d, const struct pm_llm_shard *sh,
		      double *fwd_s, double *bwd_s)
{
	double T = sh->mb * sh->seq / sh->cp, logits = T * m->vocab / sh->tp;
	*fwd_s = pm_device_gemm_s(d, T, m->vocab / sh->tp, m->hidden);
	*bwd_s = 2 * *fwd_s;
	/* an eager framework's loss: passes over the logits, in fp32 */
	*fwd_s += pm_device_mem_s(d, d->loss_fwd_B * logits);
	*bwd_s += pm_device_mem_s(d, d->loss_bwd_B * logits);
}

double pm_llm_layer_activation_B(const struct pm_llm *m, const struct pm_llm_shard *sh, int full_recompute)
{
	double sbh = sh->seq / sh->cp * sh->mb * m->hidden;
	return (full_recompute ? 2 : 34) * sbh / sh->tp;
}
