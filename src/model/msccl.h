/* msccl.h: schedules as MSCCL algorithm XML (the format msccl-tools'
 * compiler writes and MSCCL-enabled NCCL loads: Cowan et al., "MSCCLang:
 * Microsoft Collective Communication Language", ASPLOS 2023).
 *
 * <algo name coll ngpus nchunksperloop nchannels proto inplace outofplace
 * minBytes maxBytes>, one <gpu id i_chunks o_chunks s_chunks> per rank, in
 * it one <tb id send recv chan> per peer direction and channel, in each
 * <step s type srcbuf srcoff dstbuf dstoff cnt depid deps hasdep>, with no
 * XML declaration (the executor's parser, Azure/msccl-executor-nccl
 * src/misc/msccl/msccl_parser.cc, takes none).  A schedule transfer from
 * rank a to rank b of units [lo, lo+cnt) becomes a send step (type "s") in
 * a's thread block that sends to b and a receive step in b's thread block
 * that receives from a ("rrc", receive-reduce-copy, for a reduction; "r"
 * for a copy), both on buffer "i" (in place) at offset lo.  Thread blocks
 * run their steps in schedule order; every hazard on a chunk is a wait
 * (depid/deps; msccl_write.c says which), and the waited-for steps are
 * marked hasdep.
 */
#ifndef PM_MSCCL_H
#define PM_MSCCL_H

#include <stdio.h>

#include "model/err.h"
#include "model/sched.h"

/* What the file says besides the schedule. */
struct pm_msccl_opts {
	const char *proto;	/* "Simple", "LL128" or "LL" */
	double min_B, max_B;	/* the sizes MSCCL runs it for, [min_B, max_B) */
	int max_steps;		/* steps a thread block holds: the executor's
				 * MSCCL_MAX_NUM_STEPS (64 in its default build) */
};

/* Write s (stored, not compact) as MSCCL XML to f; PM_EINPUT naming the
 * executor's limit a schedule would pass. */
int pm_msccl_write(FILE *f, const struct pm_sched *s, const char *name, const char *coll,
		   const struct pm_msccl_opts *o, struct pm_err *err);

/* One transfer read back: per (src, dst) pair in the order sent. */
struct pm_msccl_xfer {
	int src, dst;
	unsigned lo, cnt;
	int reduce;
};

/* Read MSCCL XML written by pm_msccl_write (or msccl-tools with the same
 * step types): every send matched with the receive of the same peer pair
 * in order; PM_EINPUT with what was wrong when the file is not such XML or
 * a send and its receive disagree. */
int pm_msccl_read(const char *path, int *ngpus, unsigned *nchunks,
		  struct pm_msccl_xfer **xfers, size_t *n, struct pm_err *err);

#endif
