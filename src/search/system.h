/* system.h: the endpoint in the training iteration (Rashidi et al., "Enabling
 * Compute-Communication Overlap in Distributed Deep Learning Training
 * Platforms", ISCA 2021 (ACE), §III, §V, Table VI).
 *
 * While collectives run they hold part of the NPU: SMs (the baseline's
 * communication kernels) and memory bandwidth (every endpoint).  Compute
 * gets the rest and slows down; communication is as fast as what it holds
 * lets it drive the network (the endpoint models of params.h).  Table VI
 * names five such splits; a split is also given by hand (--endpoint
 * baseline|ace --mem-bw --sms).
 */
#ifndef PM_SYSTEM_H
#define PM_SYSTEM_H

#include "model/err.h"
#include "model/params.h"

/* The NPU the resources are taken from.  Compute time is split in a part
 * that scales with SMs and a part (mem_bound) that scales with memory
 * bandwidth. */
struct pm_npu {
	double sms;		/* Rashidi et al. 2021 §V: 80 */
	double mem_bw_Bps;	/* not given in the paper: 900 GB/s assumed (V100 HBM2) */
	double mem_bound;	/* share of compute time bound by memory bandwidth */
};

void pm_npu_default(struct pm_npu *n);

/* One row of Table VI. */
struct pm_system {
	const char *name;	/* as --endpoint spells it */
	const char *paper;	/* as Table VI spells it */
	enum pm_endpoint endpoint;
	const char *mem_bw;	/* memory bandwidth the collectives hold, as
				 * text; NULL: all of the NPU's */
	int sms;		/* SMs they hold; -1: all of the NPU's */
	int overlap;		/* 0: every all-reduce after the backward, in
				 * one kernel holding the whole NPU */
	const char *why;
};

/* NULL when name is not a Table VI row. */
const struct pm_system *pm_system_find(const char *name);
const struct pm_system *pm_systems(int *n);

/* Slowdown of compute while collectives hold mem_Bps of memory bandwidth
 * and sms SMs of npu: (1 - f) S / (S - s) + f M / (M - m), f = mem_bound.
 * PM_EINPUT when they would hold all of either. */
int pm_compute_factor(const struct pm_npu *npu, double mem_Bps, double sms,
		      double *factor, struct pm_err *err);

#endif
