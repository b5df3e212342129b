/* layout.c: a training step under a parallel layout (layout.h). */
#include "search/layout.h"
#include "search/group.h"
#include "model/text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const recompute_names[] = {"none", "full"};

void pm_layout_name(const struct pm_layout *l, char *buf, size_t size)
{
	snprintf(buf, size, "tp%d pp%d dp%d cp%d ep%d v%d mb%d %s zero%d", l->tp, l->pp, l->dp, l->cp, l->ep, l->vpp,
		 l->mb, recompute_names[l->recompute], l->zero);
}

int pm_layout_check(const struct pm_job *job, const struct pm_layout *l, struct pm_err *err)
{
	const struct pm_llm *m = job->model;
	long long prod = (long long)l->tp * l->pp * l->dp * l->cp;
	double seqs;

	if (l->tp < 1 || l->pp < 1 || l->dp < 1 || l->cp < 1 || l->ep < 1 || l->vpp < 1 || l->mb < 1)
		return pm_fail(err, PM_EINPUT, "every degree must be at least 1 (got tp %d pp %d dp %d cp %d ep %d vpp %d micro-batch %d)",
			       l->tp, l->pp, l->dp, l->cp, l->ep, l->vpp, l->mb);
	if (prod != job->gpus)
		return pm_fail(err, PM_EINPUT, "tp %d x pp %d x dp %d x cp %d = %lld GPUs, not the %lld of the network (expected the product to be the GPU count)",
			       l->tp, l->pp, l->dp, l->cp, prod, job->gpus);
	if (fmod(m->heads, l->tp) != 0)
		return pm_fail(err, PM_EINPUT, "tp %d does not divide the %g attention heads of %s (expected a divisor)", l->tp,
			       m->heads, m->name);
	if (fmod(job->seq, 2.0 * l->cp) != 0 && l->cp > 1)
		return pm_fail(err, PM_EINPUT, "cp %d does not split the sequence %g into 2 x cp equal chunks (expected 2 cp to divide it: ring attention's load balance)",
			       l->cp, job->seq);
	if (l->pp > m->layers)
		return pm_fail(err, PM_EINPUT, "pp %d is more stages than the %g layers of %s", l->pp, m->layers, m->name);
	if (l->ep > 1 && (m->experts == 0 || fmod(m->experts, l->ep) != 0 || l->dp % l->ep))
		return pm_fail(err, PM_EINPUT, "ep %d needs a mixture of experts whose %g experts it divides, and it must divide dp %d (expert parallelism is carved out of data parallelism)",
			       l->ep, m->experts, l->dp);
	if (fmod(job->batch, (double)l->dp * l->mb) != 0)
		return pm_fail(err, PM_EINPUT, "the global batch %g is not a multiple of dp %d x micro-batch %d (expected whole micro-batches per replica)",
			       job->batch, l->dp, l->mb);
	seqs = job->batch / l->dp / l->mb;
	if (l->vpp > 1 && (l->pp == 1 || fmod(seqs, l->pp) != 0 || (double)l->pp * l->vpp > m->layers))
		return pm_fail(err, PM_EINPUT, "interleaving %d chunks a stage needs pp > 1, micro-batches (%g) a multiple of pp %d and at least a layer a chunk (pp x v <= %g layers; Narayanan et al. 2021 §2.2)",
			       l->vpp, seqs, l->pp, m->layers);
	if (l->zero < 0 || l->zero > 3 || l->recompute < 0 || l->recompute > 1)
		return pm_fail(err, PM_EINPUT, "zero %d / recompute %d out of range (expected zero 0-3, recompute none or full)",
			       l->zero, l->recompute);
	return PM_OK;
}

/* Parameters one GPU of the fullest stage holds: dense (cut by TP) and
 * routed experts (cut by EP), the embedding counted on the stage. */
static void stage_params(const struct pm_job *job, const struct pm_layout *l, double Ls, double *dense,
			 double *expert)
{
	const struct pm_llm *m = job->model;
	double f_moe = pm_llm_moe_layers(m) / m->layers;
	double layer_dense = (1 - f_moe) * pm_llm_layer_params(m, 0) +
			     f_moe * (pm_llm_layer_params(m, 1) - pm_llm_layer_expert_params(m));
	*dense = (Ls * layer_dense + m->vocab * m->hidden) / l->tp;
	*expert = Ls * f_moe * pm_llm_layer_expert_params(m) / l->ep;
}

static void memory(const struct pm_job *job, const struct pm_layout *l, double Ls, double micro, double dense,
		   double expert, struct pm_mem *o)
{
	const struct pm_llm *m = job->model;
	struct pm_llm_shard sh = {l->tp, l->cp, l->ep, l->mb, job->seq};
	double dshard = (double)l->dp * l->cp, eshard = dshard / l->ep;

	o->params = dense + expert;
	/* bf16 weights, fp32 gradients, Adam in fp32 (master copy, m, v: 12
	 * bytes); ZeRO stage k shards the first k of optimizer, gradients,
	 * weights over the data-parallel ranks (Rajbhandari et al., SC 2020) */
	o->weights_B = 2 * (l->zero >= 3 ? dense / dshard + expert / eshard : o->params);
	if (l->zero >= 3)	/* the gathered weights of the layer running and the next (prefetch) */
		o->weights_B += 2 * 2 * o->params / Ls;
	o->grads_B = job->grad_bytes * (l->zero >= 2 ? dense / dshard + expert / eshard : o->params);
	o->optim_B = 12 * (l->zero >= 1 ? dense / dshard + expert / eshard : o->params);
	/* 1F1B: the first stage keeps min(m, pp) micro-batches of its Ls
	 * layers; interleaving adds (pp - 1) / (pp v) (Korthikanti et al.
	 * 2023 §4.2); full recomputation keeps each layer's input and one
	 * layer's whole activations while it recomputes */
	double inflight = fmin(micro, l->pp) * (l->vpp > 1 ? 1 + (l->pp - 1.0) / (l->pp * l->vpp) : 1);
	double per = pm_llm_layer_activation_B(m, &sh, l->recompute == PM_RECOMPUTE_FULL);
	o->act_B = inflight * Ls * per;
	if (l->recompute == PM_RECOMPUTE_FULL)
		o->act_B += pm_llm_layer_activation_B(m, &sh, 0);
	o->total_B = o->weights_B + o->grads_B + o->optim_B + o->act_B;
}

/* Communication of one layer and one micro-batch, forward and backward:
 * TP 2 all-reduces of the activations each way (Megatron; with sequence
 * parallelism the same bytes as reduce-scatter + all-gather), EP 2
 * all-to-alls each way (dispatch, combine), CP ring attention's cp - 1
 * passes of K and V (backward: K, V and their gradients), hidden behind
 * the attention they feed. */
struct layer_comm {
	double tp_f, tp_b, ep_f, ep_b, cp_f, cp_b;
};

static int layer_comm(const struct pm_job *job, const struct pm_layout *l, const struct pm_layer_time *lt, int moe,
		      struct layer_comm *c, struct pm_step *o, struct pm_err *err)
{
	const struct pm_llm *m = job->model;
	double T = l->mb * job->seq / l->cp, act = 2 * T * m->hidden;
	struct pm_group_cost g;
	int rc;

	memset(c, 0, sizeof *c);
	if ((rc = pm_group_time(job->mach, 1, l->tp, PM_COLL_ALLREDUCE, act, &g, err)))
		return rc;
	c->tp_f = c->tp_b = 2 * g.time_s;
	pm_strlcpy(o->tp_how, g.how, sizeof o->tp_how);
	if (moe && l->ep > 1) {
		double a2a = 2 * T / l->tp * m->topk * m->hidden;
		if ((rc = pm_group_time(job->mach, (long long)l->tp * l->cp, l->ep, PM_COLL_ALLTOALL, a2a, &g, err)))
			return rc;
		c->ep_f = c->ep_b = 2 * g.time_s;
		pm_strlcpy(o->ep_how, g.how, sizeof o->ep_how);
	}
	if (l->cp > 1) {
		double kv = 2 * 2 * T * fmax(1, m->kv_heads / l->tp) * m->head_dim;
		struct pm_group_cost b;
		if ((rc = pm_group_p2p(job->mach, l->tp, kv, &g, err)) || (rc = pm_group_p2p(job->mach, l->tp, 2 * kv, &b, err)))
			return rc;
		c->cp_f = fmax(0, (l->cp - 1) * g.time_s - lt->attn_fwd_s);
		c->cp_b = fmax(0, (l->cp - 1) * b.time_s - lt->attn_bwd_s);
		pm_strlcpy(o->cp_how, g.how, sizeof o->cp_how);
	}
	return PM_OK;
}

/* A stage's forward and backward of one micro-batch: Ls layers (dense and
 * MoE in the model's proportion) and the output layer; full recomputation
 * runs the forward again inside the backward. */
static int stage_times(const struct pm_job *job, const struct pm_layout *l, double Ls, struct pm_step *o,
		       struct pm_err *err)
{
	const struct pm_llm *m = job->model;
	struct pm_llm_shard sh = {l->tp, l->cp, l->ep, l->mb, job->seq};
	double f_moe = pm_llm_moe_layers(m) / m->layers, hf, hb;
	double comp_f = 0, comp_b = 0, tp = 0, ep = 0, cp = 0;
	int rc;

	for (int moe = 0; moe <= 1; moe++) {
		double share = moe ? f_moe : 1 - f_moe;
		struct pm_layer_time lt;
		struct layer_comm c;
		if (share <= 0)
			continue;
		pm_llm_layer_time(m, job->dev, moe, &sh, &lt);
		if ((rc = layer_comm(job, l, &lt, moe, &c, o, err)))
			return rc;
		int re = l->recompute == PM_RECOMPUTE_FULL;
		comp_f += share * Ls * lt.fwd_s;
		comp_b += share * Ls * (lt.bwd_s + re * lt.fwd_s);
		tp += share * Ls * (c.tp_f + c.tp_b + re * c.tp_f);
		ep += share * Ls * (c.ep_f + c.ep_b + re * c.ep_f);
		cp += share * Ls * (c.cp_f + c.cp_b + re * c.cp_f);
	}
	pm_llm_head_time(m, job->dev, &sh, &hf, &hb);
	comp_f += hf;
	comp_b += hb;
	o->tf_s = comp_f;	/* communication added below */
	o->tb_s = comp_b;
	o->tp_s = tp, o->ep_s = ep, o->cp_s = cp;	/* per micro-batch for now */
	return PM_OK;
}

/* The data-parallel reduction of the fullest stage's gradients (dense over
 * dp x cp ranks, experts over dp x cp / ep), and what of it the step
 * shows: ZeRO 0 all-reduces, hidden behind the last backward; ZeRO 1-2
 * reduce-scatter (hidden behind the last backward) and all-gather the
 * updated bf16 weights (behind the next forward); ZeRO 3 also gathers the
 * weights before every micro-batch's forward and backward. */
static int data_parallel(const struct pm_job *job, const struct pm_layout *l, double micro, double dense, double expert,
			 struct pm_step *o, struct pm_err *err)
{
	double t_red = 0, t_ag = 0;
	int shards[2] = {l->dp * l->cp, l->dp * l->cp / l->ep};
	long long strides[2] = {l->tp, (long long)l->tp * l->cp * l->ep};
	int rc;

	double params[2] = {dense, expert};
	for (int k = 0; k < 2; k++) {
		struct pm_group_cost r, a;
		double n = params[k] * job->grad_bytes;
		if (params[k] <= 0 || shards[k] <= 1)
			continue;
		if ((rc = pm_group_time(job->mach, strides[k], shards[k], l->zero ? PM_COLL_REDUCESCATTER : PM_COLL_ALLREDUCE,
					n, &r, err)) ||
		    (rc = pm_group_time(job->mach, strides[k], shards[k], PM_COLL_ALLGATHER, 2 * params[k], &a, err)))
			return rc;
		t_red += r.time_s;
		t_ag += l->zero ? a.time_s : 0;
		if (k == 0)
			pm_strlcpy(o->dp_how, r.how, sizeof o->dp_how);
	}
	double tf = o->tf_s, tb = o->tb_s;
	o->dp_total_s = t_red + t_ag * (l->zero >= 3 ? 2 * micro : 1);
	o->dp_s = fmax(0, t_red - tb);
	if (l->zero >= 1 && l->zero <= 2)
		o->dp_s += fmax(0, t_ag - tf);
	if (l->zero >= 3)
		o->dp_s += micro * (fmax(0, t_ag - tf) + fmax(0, t_ag - tb));
	return PM_OK;
}

int pm_layout_price(const struct pm_job *job, const struct pm_layout *l, struct pm_step *o, struct pm_err *err)
{
	const struct pm_llm *m = job->model;
	/* the fullest stage: v chunks of ceil(L / (pp v)) layers (uneven
	 * stages as Megatron-LM allows; the pipeline runs at its pace) */
	double Ls = l->vpp * ceil(m->layers / ((double)l->pp * l->vpp)), micro = job->batch / ((double)l->dp * l->mb);
	struct pm_group_cost p2p;
	int rc;

	memset(o, 0, sizeof *o);
	o->micro = (int)micro;
	o->layers_stage = Ls;
	if ((rc = stage_times(job, l, Ls, o, err)))
		return rc;
	double comp = o->tf_s + o->tb_s;
	double comm = o->tp_s + o->ep_s + o->cp_s;	/* one micro-batch's */
	double pp = 0;
	if (l->pp > 1) {
		/* scatter-gather: each TP rank sends its 1/tp of the boundary
		 * activations (Narayanan et al. 2021 §4.1); v sends a direction */
		double act = 2 * l->mb * job->seq / l->cp * m->hidden / l->tp;
		if ((rc = pm_group_p2p(job->mach, (long long)l->tp * l->cp * l->dp, act, &p2p, err)))
			return rc;
		pp = 2 * l->vpp * p2p.time_s;
		pm_strlcpy(o->pp_how, p2p.how, sizeof o->pp_how);
	}
	double slots = micro + (l->pp - 1.0) / l->vpp;	/* the 1F1B schedule's length in micro-batch slots */
	double per = comp + comm + pp;
	o->compute_s = micro * comp;
	o->bubble_s = (slots - micro) * per;
	o->tp_s *= micro, o->ep_s *= micro, o->cp_s *= micro;
	o->pp_s = micro * pp;
	o->tf_s += (comm + pp) * o->tf_s / comp;	/* communication in proportion, for the overlaps below */
	o->tb_s = per - o->tf_s;
	double dense, expert;	/* the fullest stage's parameters a GPU holds */
	stage_params(job, l, Ls, &dense, &expert);
	if ((rc = data_parallel(job, l, micro, dense, expert, o, err)))
		return rc;
	memory(job, l, Ls, micro, dense, expert, &o->mem);
	/* Adam touches 30 bytes a parameter it owns: fp32 master, m and v read
	 * and written (24), the fp32 gradient read (4), the bf16 weight written (2) */
	double owned = l->zero >= 1 ? o->mem.params / ((double)l->dp * l->cp) : o->mem.params;
	o->optim_s = pm_device_mem_s(job->dev, 30 * owned);
	o->step_s = slots * per + o->dp_s + o->optim_s;
	double tokens = job->batch * job->seq;
	o->tokens_per_s = tokens / o->step_s;
	o->tflops_per_gpu = pm_llm_flops_per_token(m, job->seq) * tokens / o->step_s / (double)job->gpus / 1e12;
	o->mfu = o->tflops_per_gpu * 1e12 / job->dev->peak_flops;
	o->fits = o->mem.total_B <= job->dev->mem_B;
	return PM_OK;
}
