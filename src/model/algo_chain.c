/* algo_chain.c: pipelined chain all-reduce, NCCL's ring broadcast and
 * reduce: K chunks reduced along P-1 -> ... -> 0, then broadcast back
 * (Thakur, Rabenseifner & Gropp 2005, pipelined broadcast).  Built and
 * priced by pipetree.c: S = K + P - 2 reduce steps.
 */
#include "model/pipetree.h"

const struct pm_algo pm_algo_chain = {
	.phases = PM_PHASES_REDUCE_BCAST,
	.name = "chain",
	.summary = "pipelined chain (NCCL's ring broadcast and reduce), K chunks: P-1 -> ... -> 0 reduce, then back",
	.arg_syntax = "K",
	.arg_help = "pipeline chunks K, or P for as many as ranks; default from the size (n / 32 KiB, as dbtree)",
	.formula = "2S(a + d + w(n/K) b) + S (n/K) g, S = K + P - 2",
	.reference = "Thakur, Rabenseifner & Gropp 2005 (pipelined broadcast); NCCL's ring broadcast",
	.prepare = pm_pipetree_prepare,
	.build = pm_pipetree_build,
	.closed = pm_pipetree_closed,
	.xfers = pm_pipetree_xfers,
	.at_size = pm_pipetree_at_size,
};
