/* lnet.h: the links network of the packet simulator (net.h): a transfer
 * is cut into segments (packets, at most a given number a message) that
 * cross its route store-and-forward; each link serves one segment at a
 * time in arrival order, at its bandwidth, and a segment reaches the next
 * link its latency later (docs/simulator.md). */
#ifndef PM_LNET_H
#define PM_LNET_H

#include "model/err.h"
#include "model/params.h"
#include "model/sched.h"
#include "model/topo.h"
#include "sim/net.h"

/* Segments of an m-byte message, at most maxseg, and the wire bytes of
 * each (*seg_wire). */
uint32_t pm_lnet_segments(const struct pm_params *p, int maxseg, double m, double *seg_wire);

/* unit: bytes per chunk of the schedule; inj: the endpoints' injection
 * and ejection links (links L + e and L + E + e, at p's injection
 * bandwidth) are on the routes; routes[roff[i]..roff[i+1]) are transfer
 * i's links (borrowed, must outlive the network). */
int pm_lnet_new(const struct pm_topo *t, const struct pm_sched *s, double unit,
		const struct pm_params *p, int maxseg, int inj, const size_t *roff,
		const int32_t *route, const struct pm_net_hooks *h, struct pm_net *out);

extern const struct pm_net_ops pm_lnet_ops;

#endif
