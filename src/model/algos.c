/* algos.c: the registry of collective algorithms (all-reduce and its
 * phases first, then all-to-all), in the order the
 * command lists them. */
#include "model/algo.h"

extern const struct pm_algo pm_algo_ring, pm_algo_biring, pm_algo_rd,
	pm_algo_rhd, pm_algo_btree, pm_algo_dbtree, pm_algo_tree, pm_algo_chain, pm_algo_railchain, pm_algo_nodetree, pm_algo_ring2d,
	pm_algo_hring, pm_algo_multitree, pm_algo_multitree_msg, pm_algo_hdrm,
	pm_algo_multiphase, pm_algo_nvls, pm_algo_nvlstree, pm_algo_collnet, pm_algo_pat, pm_algo_a2a_direct, pm_algo_a2a_bruck, pm_algo_nccl;

static const struct pm_algo *const algos[] = {
	&pm_algo_ring, &pm_algo_biring, &pm_algo_rd, &pm_algo_rhd,
	&pm_algo_btree, &pm_algo_dbtree, &pm_algo_tree, &pm_algo_chain, &pm_algo_railchain, &pm_algo_nodetree, &pm_algo_ring2d, &pm_algo_hring,
	&pm_algo_multitree, &pm_algo_multitree_msg, &pm_algo_hdrm,
	&pm_algo_multiphase, &pm_algo_nvls, &pm_algo_nvlstree, &pm_algo_collnet, &pm_algo_pat, &pm_algo_a2a_direct, &pm_algo_a2a_bruck, &pm_algo_nccl,
};

const struct pm_algo *const *pm_algos(int *n)
{
	*n = (int)(sizeof algos / sizeof algos[0]);
	return algos;
}
