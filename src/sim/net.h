/* net.h: the networks the packet simulator runs transfers over, behind
 * one interface: the links network (lnet.h: segments store-and-forward,
 * each link serving one at a time) and the router network (rnet.h:
 * packets, virtual channels and credits).  The schedule driver (psim.c)
 * sends transfers, runs the network until no event is left and hears
 * back through the hooks. */
#ifndef PM_NET_H
#define PM_NET_H

#include <stdint.h>

struct pm_trace;

/* What a network tells the schedule driver. */
struct pm_net_hooks {
	void *ctx;
	/* the last packet of transfer x reached its destination at t */
	void (*delivered)(void *ctx, uint32_t x, double t);
	/* the last packet of transfer x left its first channel at t: its
	 * port is free */
	void (*left)(void *ctx, uint32_t x, double t);
};

struct pm_net_stats {
	double packets;		/* packets (links network: segments) injected */
	double hops;		/* their crossings of links (links network: of every link it serves) */
	double events;		/* events processed */
	double link_busy;	/* seconds network links spent sending, summed */
};

/* One network's operations; n is the network. */
struct pm_net_ops {
	/* the endpoint's memory reads of transfer x, before it is sent
	 * (rnet.h, pm_rnet_reads); NULL: the network has no endpoint model */
	void (*reads)(void *n, uint32_t x, double sender_B, int reader, double reader_B, double t);
	void (*send)(void *n, uint32_t x, double t);	/* transfer x starts at t */
	int (*run)(void *n);	/* until no event is left; PM_EINTERNAL: out of memory */
	void (*stats)(const void *n, struct pm_net_stats *st);
	void (*trace)(void *n, struct pm_trace *tr);	/* record links' busy intervals */
	void (*expect)(void *n, double events);	/* for the progress line */
	void (*free)(void *n);
};

struct pm_net {
	void *n;
	const struct pm_net_ops *ops;
};

#endif
