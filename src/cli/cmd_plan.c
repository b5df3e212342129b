/* cmd_plan.c: perfmodel plan, the parallel layout of a transformer's
 * training on a machine: every layout that fits, ranked by step time. */
#include "cli/cli.h"
#include "cli/common.h"
#include "model/preset.h"
#include "model/text.h"
#include "model/topo.h"
#include "model/units.h"
#include "search/layout_search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_RANK, C_LAYOUT, C_TP, C_PP, C_DP, C_CP, C_EP, C_V, C_MB, C_REC, C_ZERO, C_STEP, C_TOK, C_TFL, C_MFU,
       C_COMP, C_BUB, C_TPC, C_PPC, C_DPC, C_EPC, C_CPC, C_OPT, C_MEM, C_W, C_G, C_O, C_A, NC };
static const char *const cols[NC] = {"rank", "layout", "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch",
				     "recompute", "zero", "step_s", "tokens_per_s", "TFLOPs_per_gpu", "mfu_pct",
				     "compute_s", "bubble_s", "tp_comm_s", "pp_comm_s", "dp_comm_s", "ep_comm_s",
				     "cp_comm_s", "optimizer_s", "memory_GB", "weights_GB", "grads_GB",
				     "optimizer_GB", "activations_GB"};
#define N_ COL_NUM
#define D_ (COL_NUM | COL_DATA)
static const unsigned flags[NC] = {N_, COL_TABLE, D_, D_, D_, D_, D_, D_, D_, COL_DATA, D_, N_, N_, N_, N_,
				   N_, N_, N_, N_, N_, N_, N_, D_, N_, D_, D_, D_, D_};

/* --help: usage, what the command does, examples (cli_help adds the options) */
static const char help_text[] =
	"usage: perfmodel plan --model M --topo machine:NAME:NODES --global-batch B [--seq S]\n"
	"                      [--tp T] [--pp P] [--cp C] [--ep E] [--vpp V] [--micro-batch b]\n"
	"                      [--recompute none|full] [--zero 0-3] [--top K] [--explain] [--format F]\n\n"
	"Which parallel layout trains a transformer fastest on a machine.  Every layout of\n"
	"tensor (TP), pipeline (PP), data (DP), context (CP) and expert (EP) parallelism\n"
	"with TP x PP x DP x CP = GPUs is priced: the layers' compute on the machine's\n"
	"device (GEMMs, flash attention and element-wise work at measured efficiencies),\n"
	"each group's collectives where its ranks sit (TP innermost, then CP, DP, PP) with\n"
	"NCCL's own model, the 1F1B pipeline and its bubble (Narayanan et al., SC 2021),\n"
	"and the memory per GPU (Korthikanti et al., MLSys 2023; ZeRO, Rajbhandari et al.,\n"
	"SC 2020).  Layouts that do not fit are dropped; the fastest K are printed with\n"
	"step time, tokens/s, model TFLOP/s per GPU and MFU (PaLM's count: 6 x active\n"
	"weights + 12 x layers x width x sequence per token), and where the step goes.\n"
	"An axis given as an option is fixed; give them all to price one layout.\n"
	"docs/model.md, \"Training layouts\", derives every term.\n\n"
	"Examples:\n"
	"  perfmodel plan --model llama3-70b --topo machine:dgx-h100:128 --global-batch 1024 --seq 8192\n"
	"  perfmodel plan --model llama3-405b --topo machine:dgx-h100:2048 --global-batch 2048 \\\n"
	"      --tp 8 --pp 16 --cp 1 --vpp 1 --micro-batch 1 --recompute none --zero 1 --explain\n"
	"  perfmodel plan --model mixtral-8x7b --topo machine:dgx-h100:32 --global-batch 512 --format csv\n\n"
	"Options:\n";

static void usage(const struct cli_opt *opts, int n)
{
	cli_help(cli_out(), help_text, opts, n);
	fputc('\n', cli_out());
	cli_print_presets("Models", "llms");
	cli_print_presets("Devices", "devices");
}

struct plan_args {
	const char *model, *topo, *device, *batch, *seq, *top, *grad_bytes;
	const char *tp, *pp, *cp, *ep, *vpp, *mb, *recompute, *zero;
};

/* An axis option: absent -> -1 (free). */
static int axis(const char *opt, const char *v, long lo, long hi, int *out, struct pm_err *err)
{
	long x;
	*out = -1;
	if (!v)
		return PM_OK;
	if (pm_parse_int(v, lo, hi, opt, &x, err))
		return PM_EINPUT;
	*out = (int)x;
	return PM_OK;
}

/* --topo machine:NAME[:NODES] -> the machine and the GPU count, read by
 * the one parser of network specs (the machine: kind's own checks: node
 * counts, partial units, description files). */
static int machine_of(const char *topo, struct pm_machine *m, long long *gpus, struct pm_err *err)
{
	struct pm_topo *t = NULL;
	const struct pm_machine *desc;

	if (!topo || strncmp(topo, "machine:", 8))
		return pm_fail(err, PM_EINPUT, "invalid --topo '%s' for plan (expected machine:NAME:NODES, such as machine:dgx-h100:128)",
			       topo ? topo : "");
	if (pm_topo_parse(topo, NULL, &t, err))
		return PM_EINPUT;
	desc = pm_topo_machine_desc(t);
	*m = *desc;
	*gpus = pm_topo_endpoints(t);
	pm_topo_free(t);
	return PM_OK;
}

/* Everything the search needs, from the options. */
static int make_request(const struct plan_args *a, struct pm_machine *mach, struct pm_llm *model,
			struct pm_device *dev, struct pm_lsearch_req *r, struct pm_err *err)
{
	long top, gb, batch, seq;
	const char *dname;

	memset(r, 0, sizeof *r);
	if (!a->model)
		return pm_fail(err, PM_EINPUT, "missing --model (expected a transformer such as llama3-70b, or a file; see perfmodel plan --help)");
	if (!a->batch)
		return pm_fail(err, PM_EINPUT, "missing --global-batch (expected the sequences per step, such as 1024)");
	if (machine_of(a->topo, mach, &r->job.gpus, err) || pm_llm_load(a->model, model, err))
		return PM_EINPUT;
	dname = a->device ? a->device : mach->device;
	if (!*dname)
		return pm_fail(err, PM_EINPUT, "machine '%s' names no device (expected --device, such as h100, or a param,device row)",
			       mach->name);
	if (pm_device_load(dname, dev, err) || pm_llm_check_device(model, dev, err) ||
	    pm_parse_int(a->top, 1, 10000, "--top", &top, err) ||
	    pm_parse_int(a->grad_bytes, 2, 4, "--grad-bytes", &gb, err))
		return PM_EINPUT;
	if (gb == 3)
		return pm_fail(err, PM_EINPUT, "invalid --grad-bytes '3' (expected 2 for bf16 or 4 for fp32)");
	seq = (long)model->seq;
	if (pm_parse_int(a->batch, 1, 1L << 31, "--global-batch", &batch, err) ||
	    (a->seq && pm_parse_int(a->seq, 1, 1L << 24, "--seq", &seq, err)))
		return PM_EINPUT;
	r->job = (struct pm_job){model, dev, mach, r->job.gpus, (double)batch, (double)seq, (double)gb};
	r->top = (int)top;
	if (axis("--tp", a->tp, 1, 1 << 16, &r->fix.tp, err) || axis("--pp", a->pp, 1, 1 << 16, &r->fix.pp, err) ||
	    axis("--cp", a->cp, 1, 1 << 16, &r->fix.cp, err) || axis("--ep", a->ep, 1, 1 << 16, &r->fix.ep, err) ||
	    axis("--vpp", a->vpp, 1, 64, &r->fix.vpp, err) || axis("--micro-batch", a->mb, 1, 1 << 16, &r->fix.mb, err) ||
	    axis("--zero", a->zero, 0, 3, &r->fix.zero, err))
		return PM_EINPUT;
	r->fix.recompute = -1;
	if (a->recompute) {
		static const char *const recomputes[] = {"none", "full", NULL};
		if ((r->fix.recompute = pm_pick_word("--recompute", a->recompute, recomputes, err)) < 0)
			return PM_EINPUT;
	}
	return PM_OK;
}

static void put_row(struct cli_table *t, int rank, const struct pm_lsearch_entry *e)
{
	const struct pm_layout *l = &e->l;
	const struct pm_step *s = &e->s;
	char name[96];

	pm_layout_name(l, name, sizeof name);
	cli_table_row(t);
	cli_table_set(t, C_RANK, "%d", rank);
	cli_table_set(t, C_LAYOUT, "%s", name);
	cli_table_nums(t, C_TP, (const double[]){l->tp, l->pp, l->dp, l->cp, l->ep, l->vpp, l->mb}, 7, "%.0f");
	cli_table_set(t, C_REC, "%s", l->recompute ? "full" : "none");
	cli_table_set(t, C_ZERO, "%d", l->zero);
	cli_table_set(t, C_STEP, "%.4g", s->step_s);
	cli_table_set(t, C_TOK, "%.4g", s->tokens_per_s);
	cli_table_set(t, C_TFL, "%.4g", s->tflops_per_gpu);
	cli_table_set(t, C_MFU, "%.3g", 100 * s->mfu);
	cli_table_nums(t, C_COMP, (const double[]){s->compute_s, s->bubble_s, s->tp_s, s->pp_s, s->dp_s, s->ep_s, s->cp_s, s->optim_s},
		       8, "%.4g");
	cli_table_nums(t, C_MEM, (const double[]){s->mem.total_B / 1e9, s->mem.weights_B / 1e9, s->mem.grads_B / 1e9,
						  s->mem.optim_B / 1e9, s->mem.act_B / 1e9}, 5, "%.4g");
}

static void put_meta(struct cli_table *t, const struct pm_lsearch_req *r, const struct pm_lsearch_out *o)
{
	const struct pm_job *j = &r->job;
	const struct pm_llm *m = j->model;

	cli_table_meta(t, "model: %s (%s): %.4g B parameters, %.4g B active; %.4g GFLOP a token at sequence %g", m->name,
		       m->description, pm_llm_params(m) / 1e9, pm_llm_active_params(m) / 1e9,
		       pm_llm_flops_per_token(m, j->seq) / 1e9, j->seq);
	cli_table_meta(t, "machine: %s, %lld GPUs (%lld nodes of %lld): device %s (%s), %.4g TFLOP/s bf16, %.4g GB",
		       j->mach->name, j->gpus, j->gpus / j->mach->level[0].count, j->mach->level[0].count, j->dev->name,
		       j->dev->description, j->dev->peak_flops / 1e12, j->dev->mem_B / 1e9);
	cli_table_meta(t, "step: global batch %g sequences of %g tokens; gradients reduced in %s", j->batch, j->seq,
		       j->grad_bytes == 4 ? "fp32" : "bf16");
	cli_table_meta(t, "searched: %.0f layouts, %.0f possible, %.0f fit in memory; ranked by step time", o->candidates,
		       o->valid, o->fits);
}

/* --explain: how the device prices a layer's multiplies and element-wise
 * work. */
static void explain_device(struct cli_table *t, const struct pm_llm *m, const struct pm_device *d)
{
	cli_table_meta(t, "explain: device %s: GEMM t = %.4g us + max(2MNK / (%.4g TFLOP/s x %.4g), 2(MK+KN+MN) B / (%.4g TB/s x %.4g)) (%s)",
		       d->name, d->gemm_t0_s * 1e6, d->peak_flops / 1e12, d->gemm_eff, d->hbm_Bps / 1e12, d->mem_eff,
		       pm_kv_source(&d->src, "gemm_eff"));
	if (d->eager)
		cli_table_meta(t, "explain: element-wise (eager): %.4g B forward and %.4g B backward a token per unit of h, each pass its own kernel, at %.4g TB/s (%s)",
			       m->eager_fwd_B, m->eager_bwd_B, d->hbm_Bps * d->mem_eff / 1e12, pm_kv_source(&m->src, "eager_fwd_B"));
	else
		cli_table_meta(t, "explain: element-wise (fused): 2 B x (10 h + the MLP's activation) a token forward, twice that backward, at %.4g TB/s",
			       d->hbm_Bps * d->mem_eff / 1e12);
	if (d->loss_fwd_B > 0 || d->gemm_eff_align[0] > 0 || d->gemm_eff_align[1] > 0)
		cli_table_meta(t, "explain: output layer: the loss moves %.4g B forward and %.4g B backward a logit; multiplies with an odd size run at %.4g of peak, with even sizes off the multiple of 8 at %.4g (0: gemm_eff)",
			       d->loss_fwd_B, d->loss_bwd_B, d->gemm_eff_align[0], d->gemm_eff_align[1]);
}

/* --explain: the fastest layout's figures, term by term. */
static void explain(struct cli_table *t, const struct pm_lsearch_req *r, const struct pm_lsearch_entry *e)
{
	const struct pm_step *s = &e->s;
	const struct pm_layout *l = &e->l;
	const struct pm_device *d = r->job.dev;

	cli_table_meta(t, "explain: a stage holds %g layers; m = %d micro-batches of %d; per micro-batch a stage runs forward %.4g ms and backward %.4g ms (communication included)",
		       s->layers_stage, s->micro, l->mb, s->tf_s * 1e3, s->tb_s * 1e3);
	cli_table_meta(t, "explain: step = (m + (pp-1)/v) (tf + tb) + exposed DP + optimizer = (%d + %g) x %.4g ms + %.4g ms + %.4g ms = %.4g s",
		       s->micro, (l->pp - 1.0) / l->vpp, (s->tf_s + s->tb_s) * 1e3, s->dp_s * 1e3, s->optim_s * 1e3,
		       s->step_s);
	cli_table_meta(t, "explain: TP %s; PP %s; DP %s (%.4g ms in all, %.4g ms exposed); EP %s; CP %s",
		       s->tp_how[0] ? s->tp_how : "none", s->pp_how[0] ? s->pp_how : "none", s->dp_how[0] ? s->dp_how : "none",
		       s->dp_total_s * 1e3, s->dp_s * 1e3, s->ep_how[0] ? s->ep_how : "none", s->cp_how[0] ? s->cp_how : "none");
	cli_table_meta(t, "explain: memory %.4g GB = weights %.4g (bf16) + gradients %.4g + Adam %.4g (ZeRO %d) + activations %.4g (%s recomputation) of %.4g M parameters held",
		       s->mem.total_B / 1e9, s->mem.weights_B / 1e9, s->mem.grads_B / 1e9, s->mem.optim_B / 1e9, l->zero,
		       s->mem.act_B / 1e9, l->recompute ? "full" : "no", s->mem.params / 1e6);
	explain_device(t, r->job.model, d);
}

int cmd_plan(int argc, char **argv, struct pm_err *err)
{
	struct plan_args a = {.top = "10", .grad_bytes = "4"};
	const char *format = "table";
	int help = 0, expl = 0, n = 0, npos, rc;
	const char *pos[1];
	enum cli_format fmt;
	struct pm_machine mach;
	struct pm_llm model;
	struct pm_device dev;
	struct pm_lsearch_req r;
	struct pm_lsearch_out o = {0};
	struct cli_table tab = {0};
	struct cli_progress pr;

	const struct cli_opt opts[] = {
		{"model", "M", "the transformer: a preset (listed below) or a key,value,source file", &a.model, NULL},
		{"topo", "machine:NAME:NODES", "the cluster, such as machine:dgx-h100:128", &a.topo, NULL},
		{"device", "D", "the accelerator (default: the machine's device row)", &a.device, NULL},
		{"global-batch", "B", "sequences per step (required)", &a.batch, NULL},
		{"seq", "S", "sequence length (default: the model's)", &a.seq, NULL},
		{"tp", "T", "fix tensor parallelism (default: every divisor of a node's GPUs)", &a.tp, NULL},
		{"pp", "P", "fix pipeline stages (default: every count dividing the GPUs)", &a.pp, NULL},
		{"cp", "C", "fix context parallelism (default: 1-32, powers of two)", &a.cp, NULL},
		{"ep", "E", "fix expert parallelism (default: divisors of the experts that divide dp)", &a.ep, NULL},
		{"vpp", "V", "fix model chunks per stage, 1 for 1F1B (default: 1, 2, 4)", &a.vpp, NULL},
		{"micro-batch", "b", "fix sequences per micro-batch (default: 1, 2, 4, 8)", &a.mb, NULL},
		{"recompute", "R", "fix activation recomputation: none or full (default: both)", &a.recompute, NULL},
		{"zero", "Z", "fix the ZeRO stage 0-3 (default: 0-2, and 3 without pipelining)", &a.zero, NULL},
		{"grad-bytes", "N", "bytes a gradient is reduced in: 4 fp32 (default) or 2 bf16", &a.grad_bytes, NULL},
		{"top", "K", "layouts to print (default 10)", &a.top, NULL},
		{"explain", NULL, "derive the fastest layout's step time and memory term by term", NULL, &expl},
		cli_format_opt(&format),
		{"help", NULL, "show this help", NULL, &help},
	};
	n = (int)(sizeof opts / sizeof opts[0]);
	if (cli_parse("plan", argc, argv, opts, n, pos, &npos, 0, err))
		return PM_EINPUT;
	if (help) {
		usage(opts, n);
		return 0;
	}
	if (cli_parse_format(format, &fmt, err) || make_request(&a, &mach, &model, &dev, &r, err))
		return PM_EINPUT;
	cli_progress_start(&pr);
	rc = pm_lsearch(&r, &o, err);
	cli_progress_end(&pr);
	if (!rc) {
		cli_table_init(&tab, NC, cols, flags);
		put_meta(&tab, &r, &o);
		if (expl)
			explain(&tab, &r, &o.best[0]);
		for (int i = 0; i < o.nbest; i++)
			put_row(&tab, i + 1, &o.best[i]);
		rc = cli_table_write(cli_out(), &tab, fmt, err);
		cli_table_release(&tab);
	}
	pm_lsearch_release(&o);
	return rc;
}
