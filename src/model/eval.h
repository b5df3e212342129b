/* eval.h: pricing.  Two evaluators produce the same struct pm_cost:
 *
 *  closed form   each algorithm's alpha-beta-gamma formula (algo.h), a pure
 *                function of P, n and the parameters;
 *  contention    route every transfer of every step over the topology,
 *                add up the wire bytes each link carries in that step, and
 *                price the step by its slowest parts:
 *                  alpha + max route latency + max(link load / link bw,
 *                  endpoint injection / injection bw) + gamma * most bytes
 *                  one rank reduces;
 *                the steps add up (lockstep).
 * Fields a closed form cannot know (link loads, utilisation) are -1.
 */
#ifndef PM_EVAL_H
#define PM_EVAL_H

#include "model/params.h"
#include "model/sched.h"
#include "model/topo.h"

struct pm_cost {
	double time_s;
	double alpha_s;		/* startup terms */
	double lat_s;		/* link latency terms */
	double bw_s;		/* bandwidth (beta) terms */
	double red_s;		/* reduction (gamma) terms */
	double steps;
	double sent_B;		/* most payload bytes one endpoint sends */
	double wire_B;		/* sum over links of wire bytes carried */
	double max_link_B;	/* most wire bytes one link carries in the run */
	double links_used;	/* share of directed links used at least once */
	double util_avg;	/* time-weighted share of links busy per step */
	double mem_B;		/* endpoint models: most bytes one endpoint reads
				 * from memory (0 for the ideal endpoint) */
};

struct pm_step_cost {
	double time_s, alpha_s, lat_s, bw_s, red_s;
	double max_link_B;	/* wire bytes on the busiest link this step */
	int busy_links;
	int hops_max;		/* longest route this step, in links */
	size_t xfers;
};

/* Zero the cost and mark the contention-only fields unknown. */
void pm_cost_closed_init(struct pm_cost *c);

/* Price schedule s for an n-byte message on topology t.  steps, when not
 * NULL, receives s->nsteps per-step records. */
int pm_eval_contention(const struct pm_topo *t, const struct pm_sched *s,
		       double n, const struct pm_params *p, struct pm_cost *out,
		       struct pm_step_cost *steps, struct pm_err *err);

/* A schedule's profile: its routes walked and its link loads counted
 * once per transfer size class, so that any message size is then priced
 * without walking a route (eval_profile.c).  It prices exactly what
 * pm_eval_contention prices (to rounding) for the same t, s and p, which
 * it keeps pointers to: both must outlive it.  PM_ENOTAPPLICABLE where a
 * profile does not hold (the ACE endpoint, whose reads depend on the
 * units each pass moves; more than 64 transfer sizes, or 8 in one step;
 * too many loaded links in steps that mix sizes): price size by size
 * then.  Building one
 * costs about one pricing; it pays from the second size on. */
struct pm_profile;
int pm_profile_build(const struct pm_topo *t, const struct pm_sched *s, const struct pm_params *p,
		     struct pm_profile **out, struct pm_err *err);
void pm_profile_price(const struct pm_profile *f, double n, struct pm_cost *out,
		      struct pm_step_cost *steps);
void pm_profile_free(struct pm_profile *f);

/* The links stored transfer i of s crosses: its own route where s is
 * source-routed (MULTITREE), else the network's route, written to buf
 * (room for pm_topo_max_hops links).  *links points at them; returns
 * their number. */
int pm_eval_route(const struct pm_topo *t, const struct pm_sched *s, size_t i, int *buf, const int **links);

/* Which ends of transfer i's route (its h links) are its ranks': bit 0
 * the sender's, bit 1 the receiver's.  A source-routed transfer may start
 * or end in a switch that reduces or multicasts (nvls, nvlstree); then
 * the switch, not the rank, sends or receives it, and the rank's bytes
 * sent and its injection and ejection do not count it. */
int pm_eval_ends(const struct pm_topo *t, const struct pm_sched *s, size_t i, const int *route, int h);

/* Pricing walks every stored transfer's route once: its cost is the
 * links crossed in all.  Refused above this (about 3.5 s at 7 ns a link). */
#define PM_EVAL_MAX_VISITS pm_limit(5e8)	/* limits.h */

/* The links the stored transfers of s cross in all, estimated before any
 * pricing from the routes of at most 1024 evenly spaced transfers (exact
 * for source-routed schedules and for at most 1024 transfers). */
double pm_eval_route_estimate(const struct pm_topo *t, const struct pm_sched *s);

/* The memory an endpoint reads to move transfer x (params.h, enum
 * pm_endpoint; Rashidi et al. 2021 SVI-A), split into what its sender and
 * its receiver read: the baseline 2 bytes a byte sent reduced and 1 a
 * byte copied, all at the sender; ACE each unit of an endpoint's own data
 * once, marking it in cached (ranks x nchunks, zeroed at the start),
 * the receiver loading what it reduces into.  Call in schedule order. */
void pm_endpoint_reads(const struct pm_sched *s, const struct pm_xfer *x, double unit,
		       enum pm_endpoint e, uint8_t *cached, double *src_B, double *dst_B);

/* nccl-tests conventions: algbw = n / time, busbw = algbw * 2(P-1)/P. */
double pm_algbw(double n, double time_s);
double pm_busbw(double n, double time_s, int P);

#endif
