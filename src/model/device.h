/* device.h: what an accelerator computes in a transformer layer, and how
 * fast (data/devices/NAME.csv, one key,value,source row per figure).
 *
 * Nominal rates come from the datasheet; achieved ones from measurements
 * of the kernels a layer runs, fitted as time = t0 + work / (nominal x
 * efficiency): matrix multiplies (GEMM), causal flash attention forward
 * and backward, and memory-bound element-wise work at a share of HBM
 * bandwidth.  docs/model.md, "Training layouts", gives the fits and their
 * data; a device without its own measurement says whose it borrowed.
 */
#ifndef PM_DEVICE_H
#define PM_DEVICE_H

#include "model/err.h"
#include "model/kvfile.h"

struct pm_device {
	char name[64];
	char path[512];
	char description[200];
	double peak_flops;	/* dense bf16 tensor-core FLOP/s (datasheet) */
	double hbm_Bps;		/* memory bandwidth (datasheet) */
	double mem_B;		/* memory capacity (datasheet) */
	double gemm_eff, gemm_t0_s;		/* GEMM: t = t0 + max(2MNK / (peak eff), bytes / (hbm mem_eff)) */
	double attn_fwd_eff, attn_fwd_t0_s;	/* causal attention forward, head size 128 */
	double attn_bwd_eff, attn_bwd_t0_s;	/* its backward (2.5 x the forward's FLOPs) */
	double attn_hd_exp;	/* below head size 128 the efficiency scales as (d/128)^exp */
	double mem_eff;		/* share of hbm_Bps element-wise kernels reach */
	double eager;		/* 1: rates are kernel times under an eager framework (element-wise work: the model's eager traffic) */
	double gemm_eff_align[2];	/* efficiency of multiplies whose sizes are odd [0] or even but not all multiples of 8 [1]; 0: gemm_eff */
	double loss_fwd_B, loss_bwd_B;	/* an eager framework's loss: element-wise bytes per logit (0: not charged) */
	struct pm_kv_src src;
};

/* NAME (data/devices/NAME.csv) or a path. */
int pm_device_load(const char *name_or_path, struct pm_device *d, struct pm_err *err);

/* Seconds of one (M x K) @ (K x N) multiply (at gemm_eff, or the row's
 * efficiency for sizes not all multiples of 8). */
double pm_device_gemm_s(const struct pm_device *d, double M, double N, double K);
/* Seconds of causal attention doing `flops` (forward count) with head
 * size hd, forward (backward = 0) or backward (1). */
double pm_device_attn_s(const struct pm_device *d, double flops, double hd, int backward);
/* Seconds of an element-wise kernel moving bytes. */
double pm_device_mem_s(const struct pm_device *d, double bytes);

#endif
