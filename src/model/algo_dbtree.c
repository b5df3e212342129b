/* algo_dbtree.c: double binary tree all-reduce (Sanders, Speck & Traff
 * 2009) with NCCL's two trees: tree 0 is NCCL's binary tree on ranks
 * 0..P-1, tree 1 the same shifted by one rank when P is odd and mirrored
 * when P is even, so the leaves of one tree are inner nodes of the other;
 * the message in K chunks, the even ones reduced along tree 0 and the odd
 * ones along tree 1, then broadcast back.  Built and priced by
 * pipetree.c, whose comment derives the steps and the cost.
 */
#include "model/pipetree.h"

const struct pm_algo pm_algo_dbtree = {
	.name = "dbtree",
	.summary = "double binary tree, pipelined into K chunks (NCCL trees, Sanders et al.)",
	.arg_syntax = "K[,shift]",
	.arg_help = "pipeline chunks K, or P for as many as ranks (the MULTITREE supplement's dbtree:P); default from the size, as NCCL cuts its trees' data into chunks: n / 32 KiB (NCCL's LL chunk) rounded up to a power of two, at most max(P, 256); past 4,096 ranks 256 at every size; dbtree:2 is unpipelined; shift: tree 1 is tree 0 shifted by one rank for every P (NCCL and the MULTITREE artifact shift it only for odd P and mirror it for even P)",
	.formula = "2S(a + d + w(n/K) b) + S (n/K) g, S = reduce steps of the construction",
	.reference = "Sanders, Speck & Traff 2009; NCCL trees.cc; the MULTITREE supplement SII",
	.prepare = pm_pipetree_prepare,
	.build = pm_pipetree_build,
	.closed = pm_pipetree_closed,
	.xfers = pm_pipetree_xfers,
	.at_size = pm_pipetree_at_size,
};
