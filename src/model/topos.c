/* topos.c: the registry of topology kinds.  `perfmodel list`, --help and
 * the spec parser all read this one table. */
#include "model/topo.h"

extern const struct pm_topo_kind pm_topo_ring, pm_topo_torus, pm_topo_ace, pm_topo_mesh,
	pm_topo_full, pm_topo_switch, pm_topo_fattree_kind, pm_topo_bigraph_kind,
	pm_topo_file, pm_topo_machine, pm_topo_astrasim;

static const struct pm_topo_kind *const kinds[] = {
	&pm_topo_ring, &pm_topo_full, &pm_topo_switch, &pm_topo_torus,
	&pm_topo_ace, &pm_topo_mesh, &pm_topo_fattree_kind, &pm_topo_bigraph_kind,
	&pm_topo_file, &pm_topo_machine, &pm_topo_astrasim,
};

const struct pm_topo_kind *const *pm_topo_kinds(int *n)
{
	*n = (int)(sizeof kinds / sizeof kinds[0]);
	return kinds;
}
