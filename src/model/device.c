/* device.c: accelerator descriptions and the kernel times of a layer
 * (device.h). */
#include "model/device.h"
#include "model/preset.h"

#include <math.h>
#include <stddef.h>

#define F(field) offsetof(struct pm_device, field)
#define NUM(key, field, lo, hi, req, dflt, doc) {key, PM_KV_NUM, F(field), 0, lo, hi, req, dflt, doc}

static const struct pm_kv_key keys[] = {
	{"description", PM_KV_TEXT, F(description), sizeof ((struct pm_device *)0)->description, 0, 0, 0, 0,
	 "what the device is"},
	NUM("peak_TFLOPs", peak_flops, 1, 1e6, 1, 0, "dense bf16 tensor TFLOP/s from the datasheet"),
	NUM("hbm_TBps", hbm_Bps, 0.01, 1e4, 1, 0, "memory bandwidth in TB/s from the datasheet"),
	NUM("memory_GiB", mem_B, 1, 1e6, 1, 0, "usable memory in GiB, as the driver reports it"),
	NUM("gemm_eff", gemm_eff, 0.01, 1, 1, 0, "achieved share of peak in large matrix multiplies"),
	NUM("gemm_t0_us", gemm_t0_s, 0, 1e4, 1, 0, "fixed time of one matrix multiply in us"),
	NUM("attn_fwd_eff", attn_fwd_eff, 0.01, 1, 1, 0, "achieved share of peak in causal attention forward"),
	NUM("attn_fwd_t0_us", attn_fwd_t0_s, 0, 1e5, 1, 0, "fixed time of one attention forward in us"),
	NUM("attn_bwd_eff", attn_bwd_eff, 0.01, 1, 1, 0, "achieved share of peak in causal attention backward"),
	NUM("attn_bwd_t0_us", attn_bwd_t0_s, 0, 1e5, 1, 0, "fixed time of one attention backward in us"),
	NUM("attn_hd_exp", attn_hd_exp, 0, 4, 0, 0, "exponent of (head size / 128) below 128"),
	NUM("mem_eff", mem_eff, 0.01, 1, 1, 0, "achieved share of memory bandwidth in element-wise kernels"),
	{"eager", PM_KV_INT, F(eager), 0, 0, 1, 0, 0,
	 "1: the rates are kernel times of an eager framework (PyTorch without fusion): a layer's element-wise work is "
	 "the model's measured eager traffic (eager_fwd_B, eager_bwd_B), not the fused kernels'"},
	NUM("gemm_eff_align1", gemm_eff_align[0], 0, 1, 0, 0,
	    "achieved share of peak in multiplies with an odd size (0: gemm_eff)"),
	NUM("gemm_eff_align2", gemm_eff_align[1], 0, 1, 0, 0,
	    "achieved share of peak in multiplies with even sizes not all multiples of 8 (0: gemm_eff)"),
	NUM("eager_loss_fwd_B", loss_fwd_B, 0, 1e4, 0, 0,
	    "an eager framework's loss: element-wise bytes a logit moves forward (0: not charged)"),
	NUM("eager_loss_bwd_B", loss_bwd_B, 0, 1e4, 0, 0, "the same backward"),
};

int pm_device_load(const char *spec, struct pm_device *d, struct pm_err *err)
{
	int rc;

	*d = (struct pm_device){0};
	if ((rc = pm_preset_find(spec, "devices", "device", d->path, sizeof d->path, d->name, sizeof d->name, err)))
		return rc;
	if ((rc = pm_kv_read(d->path, "device description", keys, (int)(sizeof keys / sizeof keys[0]), d, &d->src, err)))
		return rc;
	d->peak_flops *= 1e12;
	d->hbm_Bps *= 1e12;
	d->mem_B *= 1024.0 * 1024 * 1024;
	d->gemm_t0_s *= 1e-6;
	d->attn_fwd_t0_s *= 1e-6;
	d->attn_bwd_t0_s *= 1e-6;
	return PM_OK;
}

/* cuBLAS's fastest kernels need rows of 16 bytes (8 bf16 elements); an
 * odd size or an even one off that grain takes slower kernels. */
static double gemm_eff(const struct pm_device *d, double M, double N, double K)
{
	if (d->gemm_eff_align[0] <= 0 && d->gemm_eff_align[1] <= 0)
		return d->gemm_eff;
	int odd = fmod(M, 2) || fmod(N, 2) || fmod(K, 2), off8 = fmod(M, 8) || fmod(N, 8) || fmod(K, 8);
	double e = odd ? d->gemm_eff_align[0] : off8 ? d->gemm_eff_align[1] : 0;
	return e > 0 ? e : d->gemm_eff;
}

/* A multiply takes its fixed time plus the slower of its arithmetic and
 * moving its operands and result once, 2 B an element (the roofline:
 * Williams, Waterman and Patterson, "Roofline: an insightful visual
 * performance model for multicore architectures", CACM 52(4), 2009).
 * Few rows (an MoE expert's 128-256 tokens) make it memory-bound. */
double pm_device_gemm_s(const struct pm_device *d, double M, double N, double K)
{
	double arith = 2 * M * N * K / (d->peak_flops * gemm_eff(d, M, N, K));
	return d->gemm_t0_s + fmax(arith, pm_device_mem_s(d, 2 * (M * K + K * N + M * N)));
}

double pm_device_attn_s(const struct pm_device *d, double flops, double hd, int backward)
{
	double f = hd < 128 ? pow(hd / 128, d->attn_hd_exp) : 1;
	if (backward)
		return d->attn_bwd_t0_s + 2.5 * flops / (d->peak_flops * d->attn_bwd_eff * f);
	return d->attn_fwd_t0_s + flops / (d->peak_flops * d->attn_fwd_eff * f);
}

double pm_device_mem_s(const struct pm_device *d, double bytes)
{
	return bytes / (d->hbm_Bps * d->mem_eff);
}
