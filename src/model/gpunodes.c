/* gpunodes.c: the GPU nodes of a machine network as the node-aware
 * schedules (nvlstree, collnet) read them: GPUs a node, nodes, GPUs a NIC
 * serves, and how much faster a GPU's link to its node's switch is than
 * the network's slowest link (the one a closed form sees). */
#include "model/algo.h"
#include "model/machine.h"

int pm_gpu_nodes_of(const struct pm_inst *in, const char *who, struct pm_gpu_nodes *nd, struct pm_err *err)
{
	const struct pm_machine *m = pm_topo_machine_desc(in->topo);
	int rails = pm_machine_rails(m);
	double slow, lat;

	nd->G = (int)m->level[0].count;
	if (in->P % nd->G)
		return pm_fail(err, PM_ENOTAPPLICABLE, "not applicable: %s needs whole nodes (%d ranks on nodes of %d GPUs)",
			       who, in->P, nd->G);
	nd->N = in->P / nd->G;
	nd->share = (nd->G + rails - 1) / rails;
	nd->nvl_Bps = 0;
	nd->r = 1;
	if (nd->G < 2)
		return PM_OK;
	if ((nd->nvl_Bps = pm_node_switch_rate(in->topo, who, err)) <= 0)
		return PM_ENOTAPPLICABLE;
	pm_topo_slowest(in->topo, &slow, &lat);
	if (slow > 0)
		nd->r = nd->nvl_Bps / slow;
	return PM_OK;
}
