/* group.c: collectives of placed groups (group.h). */
#include "search/group.h"
#include "model/nccl.h"
#include "model/text.h"

#include <math.h>
#include <string.h>

/* Where p ranks stride apart sit: members per node and nodes. */
static void span(const struct pm_machine *m, long long stride, int p, struct pm_group_cost *o)
{
	long long G = m->level[0].count;

	if (stride * p <= G) {
		o->ppn = p;
	} else {
		long long per = stride < G ? G / stride : 1;
		o->ppn = (int)(per < p ? per : p);
	}
	o->nodes = (p + o->ppn - 1) / o->ppn;
}

/* Without NCCL parameters: a ring of p at the bandwidth the machine's rule
 * gives a layer of stride and p, alpha per step. */
static int ring(const struct pm_machine *m, long long stride, int p, enum pm_coll c, double n,
		struct pm_group_cost *o, struct pm_err *err)
{
	struct pm_layer_bw where;
	int rc = pm_machine_layer(m, stride, p, &where, err);
	if (rc)
		return rc;
	double steps = c == PM_COLL_ALLREDUCE ? 2.0 * (p - 1) : p - 1;
	double bytes = c == PM_COLL_ALLREDUCE ? 2.0 * (p - 1) / p * n : (double)(p - 1) / p * n;
	o->time_s = steps * m->alpha_s + bytes / where.bw_Bps;
	o->net_Bps = where.bw_Bps;
	pm_strlcpy(o->how, "ring", sizeof o->how);
	return PM_OK;
}

int pm_group_time(const struct pm_machine *m, long long stride, int p, enum pm_coll c, double n,
		  struct pm_group_cost *o, struct pm_err *err)
{
	struct pm_nccl_sys s;
	struct pm_nccl_cost nc;
	int rc;

	memset(o, 0, sizeof *o);
	if (p <= 1 || n <= 0) {
		pm_strlcpy(o->how, "none", sizeof o->how);
		o->nodes = o->ppn = 1;
		return PM_OK;
	}
	span(m, stride, p, o);
	if (m->nccl.arch < 0)
		return ring(m, stride, p, c, n, o, err);
	if ((rc = pm_nccl_sys_of(m, p, &s, err)))
		return rc;
	s.ppn = o->ppn;
	s.nodes = o->nodes;
	/* the node's NICs are shared by the G / ppn groups with members on it */
	s.net_Bps *= (double)o->ppn / (double)m->level[0].count;
	o->net_Bps = s.nodes > 1 ? s.net_Bps : 0;
	if ((rc = pm_nccl_select(&s, c, ~0u, ~0u, n, &nc, err)))
		return rc;
	o->time_s = nc.time_s;
	snprintf(o->how, sizeof o->how, "nccl %s/%s", pm_nccl_algo_names[nc.algo], pm_nccl_proto_names[nc.proto]);
	return PM_OK;
}

int pm_group_p2p(const struct pm_machine *m, long long stride, double n, struct pm_group_cost *o,
		 struct pm_err *err)
{
	/* two ranks each sending n to the other: an all-to-all of 2n per rank */
	return pm_group_time(m, stride, 2, PM_COLL_ALLTOALL, 2 * n, o, err);
}
