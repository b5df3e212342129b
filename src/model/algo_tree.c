/* algo_tree.c: pipelined binary tree all-reduce, NCCL's tree (one of
 * dbtree's two): K chunks reduced to rank 0 along the tree, then
 * broadcast back (Sanders, Speck & Traff 2009, one tree).  Built and
 * priced by pipetree.c.
 */
#include "model/pipetree.h"

const struct pm_algo pm_algo_tree = {
	.phases = PM_PHASES_REDUCE_BCAST,
	.name = "tree",
	.summary = "pipelined binary tree (NCCL's tree, one of them), K chunks reduced to rank 0 then broadcast",
	.arg_syntax = "K",
	.arg_help = "pipeline chunks K, or P for as many as ranks; default from the size (n / 32 KiB, as dbtree); tree:1 is the unpipelined binary tree",
	.formula = "2S(a + d + w(n/K) b) + S (n/K) g, S = reduce steps of the construction",
	.reference = "Sanders, Speck & Traff 2009 (one tree); NCCL trees.cc; Thakur, Rabenseifner & Gropp 2005",
	.prepare = pm_pipetree_prepare,
	.build = pm_pipetree_build,
	.closed = pm_pipetree_closed,
	.xfers = pm_pipetree_xfers,
	.at_size = pm_pipetree_at_size,
};
