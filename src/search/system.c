/* system.c: Table VI of Rashidi et al. 2021 (ACE) and the compute slowdown
 * of an NPU whose resources collectives share (system.h). */
#include "search/system.h"

#include <string.h>

/* Rashidi et al. 2021 §V: "a 1245 MHz GPU-like core with 80 SMs", 120
 * TFLOP/s FP16.  The NPU's memory bandwidth is not stated ("chosen based
 * on the state-of-the-art accelerators [24]"): 900 GB/s, a V100's HBM2,
 * the GPU of §III's measurements, is our assumption.  mem_bound = 1: the
 * paper's ResNet-50 computes 1.75x faster under BaselineCompOpt (2 SMs,
 * 128 GB/s for communication) than under BaselineCommOpt (6 SMs,
 * 450 GB/s) (§VI-B); with 900 GB/s only a compute bound by memory alone
 * comes near that (1.71x), an SM-bound one would gain 1.05x. */
void pm_npu_default(struct pm_npu *n)
{
	n->sms = 80;
	n->mem_bw_Bps = 900e9;
	n->mem_bound = 1;
}

static const struct pm_system systems[] = {
	{"ideal", "Ideal", PM_END_IDEAL, "0", 0, 1,
	 "the endpoint handles what it receives in one cycle; compute keeps the whole NPU"},
	{"ace", "ACE", PM_END_ACE, "128GB/s", 0, 1,
	 "ACE moves and reduces in its own engine: no SMs, 128 GB/s of memory reach 90% of ideal (Fig. 5)"},
	{"baseline-commopt", "BaselineCommOpt", PM_END_BASELINE, "450GB/s", 6, 1,
	 "communication kernels hold 450 GB/s and 6 SMs, enough for 90% of ideal (Figs. 5, 6)"},
	{"baseline-compopt", "BaselineCompOpt", PM_END_BASELINE, "128GB/s", 2, 1,
	 "communication kernels hold 128 GB/s and 2 SMs; compute keeps the rest"},
	{"baseline-nooverlap", "BaselineNoOverlap", PM_END_BASELINE, NULL, -1, 0,
	 "no overlap: every all-reduce after the backward in one kernel holding the whole NPU"},
};

const struct pm_system *pm_systems(int *n)
{
	*n = (int)(sizeof systems / sizeof systems[0]);
	return systems;
}

const struct pm_system *pm_system_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof systems / sizeof systems[0]; i++)
		if (strcmp(name, systems[i].name) == 0)
			return &systems[i];
	return NULL;
}

int pm_compute_factor(const struct pm_npu *npu, double mem_Bps, double sms,
		      double *factor, struct pm_err *err)
{
	if (!(mem_Bps < npu->mem_bw_Bps))
		return pm_fail(err, PM_EINPUT,
			       "the collectives would hold %.4g GB/s of the NPU's %.4g GB/s of memory bandwidth, leaving compute none (expected less than --npu-mem-bw)",
			       mem_Bps / 1e9, npu->mem_bw_Bps / 1e9);
	if (!(sms < npu->sms))
		return pm_fail(err, PM_EINPUT,
			       "the collectives would hold %.0f of the NPU's %.0f SMs, leaving compute none (expected fewer than --npu-sms)",
			       sms, npu->sms);
	double f = npu->mem_bound;
	*factor = (1 - f) * npu->sms / (npu->sms - sms) +
		  f * npu->mem_bw_Bps / (npu->mem_bw_Bps - mem_Bps);
	return PM_OK;
}
