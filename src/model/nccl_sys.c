/* nccl_sys.c: the machine as NCCL sees it (nccl.h): its rates, launch
 * and steps, shared by NCCL's model (nccl.c) and RCCL's (rccl.c).
 */
#include "model/machine.h"
#include "model/nccl.h"

#include <math.h>
#include <string.h>

int pm_nccl_steps(enum pm_coll c, int R)
{
	if (c == PM_COLL_ALLREDUCE)
		return 2 * (R - 1);
	return c == PM_COLL_REDUCESCATTER || c == PM_COLL_ALLGATHER ? R - 1 : R;
}

double pm_nccl_graph_Bps(const struct pm_nccl_sys *s, enum pm_nccl_algo a)
{
	if (s->nodes == 1)
		return s->ring_Bps;
	if (a == PM_NCCL_TREE)	/* on two nodes each sends half up one tree, half down the other */
		return fmin(s->ring_Bps, s->net_Bps * (s->nodes == 2 ? 2 : 1));
	return fmin(s->ring_Bps, s->net_Bps);
}

double pm_nccl_host_s(const struct pm_machine *m)
{
	return m->nccl.host_s > 0 ? m->nccl.host_s : PM_NCCL_HOST_ENQUEUE_S;
}

double pm_nccl_launch_s(const struct pm_nccl_sys *s)
{
	return s->launch_s + (s->host_gpus > 1 ? (s->host_gpus - 1) * s->host_s : 0);
}

int pm_nccl_sys_of(const struct pm_machine *m, int P, struct pm_nccl_sys *s, struct pm_err *err)
{
	if (m->nccl.arch < 0)
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: machine '%s' gives no NCCL parameters (expected param rows arch, ring_busbw, nvls_busbw, nic_bw, launch, ...: docs/model.md, NCCL)",
			       m->name);
	const struct pm_level *node = &m->level[0];
	int nics = m->nics > 0 ? m->nics : (int)node->count;
	memset(s, 0, sizeof *s);
	s->ranks = P;
	s->ppn = (int)(node->count < P ? node->count : P);
	s->nodes = (P + s->ppn - 1) / s->ppn;
	s->arch = (enum pm_nccl_arch)m->nccl.arch;
	s->amd_cpu = m->nccl.amd_cpu;
	s->ring_Bps = m->nccl.ring_Bps > 0 ? m->nccl.ring_Bps : node->inner_bw;
	s->nvls_Bps = m->nccl.nvls_Bps;
	s->net_Bps = m->nccl.nic_Bps > 0 ? nics * m->nccl.nic_Bps : node->egress_bw;
	s->launch_s = m->nccl.launch_s;
	s->host_s = pm_nccl_host_s(m);
	s->host_gpus = 1;
	s->net_lat_s = m->nccl.net_lat_s;
	s->tuner_lat_s = m->nccl.plugin_lat_s >= 0 ? m->nccl.plugin_lat_s : m->nccl.net_lat_s;
	s->channels = m->nccl.channels;
	s->collnet = m->nccl.collnet;
	s->ll128 = m->nccl.ll128;
	s->ll128_local = !m->nccl.ll128_net;
	s->algo_env = m->nccl.algo_env;
	s->proto_env = m->nccl.proto_env;
	s->nvls_chunk_B = m->nccl.nvls_chunk_B;
	s->nvlstree_chunk_B = m->nccl.nvlstree_chunk_B;
	s->version = m->nccl.version;
	s->rccl = m->nccl.library;
	return PM_OK;
}
