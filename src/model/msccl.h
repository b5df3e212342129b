/* msccl.h: schedules as MSCCL algorithm XML (the format msccl-tools'
 * compiler writes and MSCCL-enabled NCCL loads: Cowan et al., "MSCCLang:
 * Microsoft Collective Communication Language", ASPLOS 2023).
 *
 * <algo name coll ngpus nchunksperloop nchannels proto inplace ...>, one
 * <gpu id i_chunks o_chunks s_chunks> per rank, in it one <tb id send recv
 * chan> per peer direction, in each <step s type srcbuf srcoff dstbuf
 * dstoff cnt depid deps hasdep>.  A schedule transfer from rank a to rank b
 * of units [lo, lo+cnt) becomes a send step (type "s") in a's thread block
 * that sends to b and a receive step in b's thread block that receives
 * from a ("rrc", receive-reduce-copy, for a reduction; "r" for a copy),
 * both on buffer "i" (in place) at offset lo.  Thread blocks run their
 * steps in schedule order; a send waits for the receives that last wrote
 * its units into the rank (depid/deps; one dependency a step, so a send
 * with several gets "nop" steps in front, one each), and those receives
 * are marked hasdep.  One channel.
 */
#ifndef PM_MSCCL_H
#define PM_MSCCL_H

#include <stdio.h>

#include "model/err.h"
#include "model/sched.h"

/* Write s (stored, not compact) as MSCCL XML to f. */
int pm_msccl_write(FILE *f, const struct pm_sched *s, const char *name, const char *coll,
		   struct pm_err *err);

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
