/* algo.c: resolving an algorithm name against a network, the one generic
 * applicability check, and helpers the closed forms share. */
#include "model/algo.h"
#include "model/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pm_is_pow2(long x) { return x > 0 && (x & (x - 1)) == 0; }

int pm_floor_log2(long x)
{
	int k = 0;
	while (x > 1) {
		x >>= 1;
		k++;
	}
	return k;
}

int pm_ceil_log2(long x)
{
	int k = pm_floor_log2(x);
	return (1L << k) < x ? k + 1 : k;
}

long pm_pipe_chunks(double n, double chunk_B, long most)
{
	long k = 1;

	while (k < most && k * chunk_B < n)
		k *= 2;
	return k < most ? k : most;
}

long pm_pipe_budget(double per_chunk, double budget, long most)
{
	while (most > 1 && most * per_chunk > budget)
		most /= 2;
	return most;
}

int pm_node_switch_links(const struct pm_topo *t, int G, int N, int *up, int *down, const char *who,
			 struct pm_err *err)
{
	int *l = malloc(sizeof(int) * (size_t)pm_topo_max_hops(t) * 2 + 8);

	if (!l)
		return pm_fail(err, PM_EINTERNAL, "%s: out of memory", who);
	for (int v = 0; v < N; v++)
		for (int g = 0, sw = -1; g < G; g++)
			for (int way = 0; way < 2; way++) {
				int r = v * G + g, o = v * G + (g ? 0 : 1), a = way ? o : r, b = way ? r : o;
				int h = pm_topo_route(t, a, b, l);
				const struct pm_link *x = h == 2 ? pm_topo_link(t, l[0]) : NULL;
				const struct pm_link *y = x ? pm_topo_link(t, l[1]) : NULL;
				sw = sw < 0 && x ? x->dst : sw;
				if (!x || x->src != a || x->dst != sw || y->src != sw || y->dst != b) {
					free(l);
					return pm_fail(err, PM_ENOTAPPLICABLE,
						       "not applicable: %s needs every GPU one link to and from its node's switch (ranks %d and %d are not joined so)",
						       who, a, b);
				}
				*(way ? &down[r] : &up[r]) = l[way];
			}
	free(l);
	return PM_OK;
}

int pm_switch_via(const int *up, const int *down, int src, int dst, enum pm_op op, int first, int via[2])
{
	via[0] = op == PM_REDUCE || first ? up[src] : down[dst];
	via[1] = down[dst];
	return first ? 2 : 1;
}

double pm_node_switch_rate(const struct pm_topo *t, const char *who, struct pm_err *err)
{
	int up[2], down[2];

	if (pm_node_switch_links(t, 2, 1, up, down, who, err))
		return 0;
	return pm_topo_link(t, up[0])->bw_Bps;
}

double pm_hop_lat(const struct pm_inst *in, const struct pm_params *p)
{
	return in->hop_links * p->link_lat_s;
}

double pm_msg_bw_s(const struct pm_params *p, double m)
{
	return pm_wire_bytes(p, m) / p->link_bw_Bps;
}

struct pm_params pm_inst_params(const struct pm_inst *in,
				const struct pm_params *p)
{
	struct pm_params q = *p;
	if (in->flow_override >= 0) {
		q.flow = (enum pm_flow)in->flow_override;
		if (q.flit_B <= 0)
			q.flit_B = 16;
	}
	if (in->algo && in->algo->params)
		in->algo->params(in, &q);
	return q;
}

static int unknown_algo(const char *name, struct pm_err *err)
{
	int n;
	const struct pm_algo *const *a = pm_algos(&n);
	const char *names[64];
	char msg[1200];

	for (int i = 0; i < n && i < 64; i++)
		names[i] = a[i]->name;
	pm_unknown_text(msg, sizeof msg, "algorithm", name, names, n < 64 ? n : 64, NULL);
	return pm_fail(err, PM_EINPUT, "%s", msg);
}

/* The restrictions flags stand for: what each needs, said once (the
 * refusal and perfmodel list print it), and whether a network has it. */
static int has_grid2d(const struct pm_topo *t, int P)
{
	int dims[3], wrap;
	(void)P;
	return t && pm_topo_grid(t, dims, &wrap) == 2;	/* ace is 3-D, ring 1-D */
}

static int has_torus(const struct pm_topo *t, int P)	/* a grid that wraps: torus, ace, ring */
{
	int dims[3], wrap;
	(void)P;
	return t && pm_topo_grid(t, dims, &wrap) >= 1 && wrap;
}

static int has_reducing_switch(const struct pm_topo *t, int P)
{
	(void)P;
	return t && pm_topo_switch_reduces(t);
}

static int has_reducing_nodes(const struct pm_topo *t, int P)
{
	(void)P;
	return t && pm_topo_nodes_reduce(t);
}

static int has_reducing_network(const struct pm_topo *t, int P)
{
	(void)P;
	return t && pm_topo_net_reduces(t);
}

static int has_bigraph(const struct pm_topo *t, int P)
{
	int m, sw;
	(void)P;
	return t && pm_topo_bigraph(t, &m, &sw);
}

static int has_network(const struct pm_topo *t, int P)
{
	(void)P;
	return t != NULL;
}

static int has_pow2(const struct pm_topo *t, int P)
{
	(void)t;
	return pm_is_pow2(P);
}

static const struct restriction {
	unsigned flag;
	const char *needs;	/* "a 2-D torus or mesh" */
	const char *example;	/* " such as torus:4x4x4 or torus:8", or "" */
	int (*holds)(const struct pm_topo *t, int P);
} restrictions[] = {
	{PM_ALGO_NEEDS_TOPO, "a network (--topo), not just a process count", "", has_network},
	{PM_ALGO_GRID2D, "a 2-D torus or mesh", "", has_grid2d},
	{PM_ALGO_TORUS, "a torus", " such as torus:4x4x4 or torus:8", has_torus},
	{PM_ALGO_BIGRAPH, "a BiGraph network", " such as bigraph:4x8", has_bigraph},
	{PM_ALGO_SWITCH_REDUCES, "a switch that reduces (NVLink SHARP) joining every rank",
	 ": one node of a machine that has it, such as machine:dgx-h100:1", has_reducing_switch},
	{PM_ALGO_NODES_REDUCE, "two or more GPU nodes whose NVSwitch reduces (NVLink SHARP)",
	 ": a machine that has it, such as machine:dgx-h100:4", has_reducing_nodes},
	{PM_ALGO_NET_REDUCES, "two or more nodes joined by switches that reduce (SHARP)",
	 ": a machine whose description enables it (param sharp 1)", has_reducing_network},
	{PM_ALGO_POW2, "a power-of-two number of endpoints", "", has_pow2},
};

size_t pm_algo_needs(const struct pm_algo *a, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof restrictions / sizeof *restrictions && len < size; i++)
		if (a->flags & restrictions[i].flag)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "; " : "", restrictions[i].needs);
	return len;
}

/* The restrictions of flags, checked in one place. */
static int applicable(const struct pm_algo *a, const struct pm_inst *in,
		      struct pm_err *err)
{
	const struct pm_topo *t = in->topo;
	char got[64];

	for (size_t i = 0; i < sizeof restrictions / sizeof *restrictions; i++) {
		const struct restriction *r = &restrictions[i];
		if (!(a->flags & r->flag) || r->holds(t, in->P))
			continue;
		if (r->flag == PM_ALGO_NEEDS_TOPO)
			return pm_fail(err, PM_ENOTAPPLICABLE, "not applicable: needs %s", r->needs);
		if (r->flag == PM_ALGO_POW2)
			snprintf(got, sizeof got, "%d", in->P);
		return pm_fail(err, PM_ENOTAPPLICABLE, "not applicable: needs %s%s (got %s)", r->needs, r->example,
			       r->flag == PM_ALGO_POW2 ? got : t ? pm_topo_spec(t) : "no network");
	}
	return PM_OK;
}

static int resolve_any(enum pm_coll c, const char *spec, const struct pm_topo *t, int P,
		       struct pm_inst *in, struct pm_err *err)
{
	char name[64];
	const char *colon = strchr(spec, ':');
	const char *arg = colon ? colon + 1 : NULL;
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
	int n, rc;
	const struct pm_algo *const *all = pm_algos(&n), *a = NULL;

	if (len >= sizeof name)
		return unknown_algo(spec, err);
	memcpy(name, spec, len);
	name[len] = '\0';
	for (int i = 0; i < n; i++)
		if (strcmp(all[i]->name, name) == 0)
			a = all[i];
	if (!a)
		return unknown_algo(name, err);
	if (arg && !a->arg_syntax)
		return pm_fail(err, PM_EINPUT,
			       "algorithm '%s' takes no argument (got '%s'; expected just %s)",
			       name, spec, name);
	if (arg && !*arg)
		return pm_fail(err, PM_EINPUT,
			       "empty argument in '%s' (expected %s:%s)", spec, name,
			       a->arg_syntax);
	if (arg && (arg[0] == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,")))
		return pm_fail(err, PM_EINPUT,
			       "empty option in '%s' (expected %s:%s, options separated by single commas)", spec, name,
			       a->arg_syntax);
	memset(in, 0, sizeof *in);
	in->coll = c;	/* prepare may size itself for the collective (nvls) */
	in->algo = a;
	in->topo = t;
	in->P = t ? pm_topo_endpoints(t) : P;
	in->ports = 1;
	in->hop_links = t && pm_topo_min_hops(t) > 0 ? pm_topo_min_hops(t) : 1;
	in->flow_override = -1;
	snprintf(in->label, sizeof in->label, "%s", spec);
	rc = applicable(a, in, err);
	if (rc == PM_OK && a->prepare)
		rc = a->prepare(in, arg, err);
	return rc;
}

int pm_algo_does(const struct pm_algo *a, enum pm_coll c)
{
	if (a->flags & PM_ALGO_EVERY_COLL)
		return 1;
	if (a->only_coll)
		return a->only_coll - 1 == (int)c;
	return c == PM_COLL_ALLREDUCE || (a->phases != PM_PHASES_NONE &&
					  pm_coll_info(c)->phases == a->phases);
}

int pm_algo_resolve(const char *spec, const struct pm_topo *t, int P,
		    struct pm_inst *in, struct pm_err *err)
{
	return pm_algo_resolve_coll(PM_COLL_ALLREDUCE, spec, t, P, in, err);
}

int pm_algo_resolve_coll(enum pm_coll c, const char *spec, const struct pm_topo *t,
			 int P, struct pm_inst *in, struct pm_err *err)
{
	in->algo = NULL;
	int rc = resolve_any(c, spec, t, P, in, err);

	if (in->algo && !pm_algo_does(in->algo, c))
		return pm_fail(err, PM_ENOTAPPLICABLE, "not applicable: %s is not %s %s algorithm",
			       in->algo->name, c == PM_COLL_ALLREDUCE || c == PM_COLL_ALLGATHER ||
			       c == PM_COLL_ALLTOALL ? "an" : "a", pm_coll_info(c)->title);
	in->coll = c;
	return rc;
}

/* Which part of its all-reduce the instance's collective is (coll.h):
 * 0 the whole, 1 the first phase, 2 the second. */
static int part_of(const struct pm_inst *in)
{
	if (in->algo->only_coll || (in->algo->flags & PM_ALGO_EVERY_COLL))
		return 0;
	return pm_coll_info(in->coll)->part;
}

/* The schedule's part this collective is (coll.h): its phase split. */
static int keep_part(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	int part = part_of(in);

	if (part == 0 || s->nsteps == 0)
		return PM_OK;
	if (s->second_phase <= 0 || s->second_phase >= s->nsteps)
		return pm_fail(err, PM_EINTERNAL, "internal error: %s has no phase split for %s",
			       in->label, pm_coll_info(in->coll)->title);
	return part == 1 ? pm_sched_keep(s, 0, s->second_phase, err)
			 : pm_sched_keep(s, s->second_phase, s->nsteps, err);
}

static int build_whole(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err);

int pm_algo_check(const struct pm_inst *in, struct pm_err *err)
{
	static const enum pm_coll_end ends[PM_NCOLL] = {
		[PM_COLL_ALLREDUCE] = PM_END_ALL_EVERYWHERE,
		[PM_COLL_REDUCESCATTER] = PM_END_EACH_SOMEWHERE,
		[PM_COLL_ALLGATHER] = PM_END_ALL_EVERYWHERE,
		[PM_COLL_REDUCE] = PM_END_ONE_HAS_ALL,
		[PM_COLL_BROADCAST] = PM_END_ALL_EVERYWHERE,
	};
	struct pm_inst whole = *in;
	struct pm_sched s;
	int rc, part = part_of(in);

	if (in->algo->only_coll || (in->algo->flags & PM_ALGO_EVERY_COLL))
		return PM_OK;	/* all-to-all algorithms check themselves (algo_direct.c, algo_bruck.c);
				 * NCCL's model builds no schedule */
	/* the whole all-reduce the part is cut from: the one built for this
	 * collective (an algorithm that prices its parts may build them apart) */
	whole.coll = in->algo->flags & PM_ALGO_PRICES_PARTS ? in->coll : PM_COLL_ALLREDUCE;
	if ((rc = build_whole(&whole, &s, err)))
		return rc;
	if (part == 0)
		rc = pm_sched_check(&s, -1, PM_END_ALL_EVERYWHERE, ends[in->coll], err);
	else if (part == 1)
		rc = (rc = pm_sched_keep(&s, 0, s.second_phase, err)) ? rc
			: pm_sched_check(&s, -1, PM_END_ALL_EVERYWHERE, ends[in->coll], err);
	else	/* the second phase on the data the first leaves */
		rc = pm_sched_check(&s, s.second_phase, in->coll == PM_COLL_ALLGATHER ?
				    PM_END_EACH_SOMEWHERE : PM_END_ONE_HAS_ALL, ends[in->coll], err);
	pm_sched_release(&s);
	return rc;
}

/* The schedule of in's whole all-reduce, as its builder makes it for
 * in->coll (not cut to the collective's part). */
static int build_whole(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err)
{
	double want = in->P > 1 ? in->algo->xfers(in) : 0;
	if (want > PM_SCHED_MAX_XFERS)
		return pm_fail(err, PM_EINPUT,
			       "schedule too large: %s on %d ranks needs %.0f transfers (expected at most %u; the closed form, --model closed, has no such limit)",
			       in->label, in->P, want, PM_SCHED_MAX_XFERS);
	int rc = pm_sched_init(s, in->P, 1, err);
	if (rc)
		return rc;
	pm_sched_reserve(s, (size_t)want);
	rc = in->algo->build(in, s, err);
	if (rc == PM_OK)
		rc = pm_sched_finish(s, err);
	if (rc)
		pm_sched_release(s);
	return rc;
}

int pm_algo_schedule(const struct pm_inst *in, struct pm_sched *s,
		     struct pm_err *err)
{
	if (in->algo->schedule_inst) {
		struct pm_inst sub;
		int rc = in->algo->schedule_inst(in, &sub, err);
		return rc ? rc : pm_algo_schedule(&sub, s, err);
	}
	int rc = build_whole(in, s, err);
	if (rc)
		return rc;
	rc = keep_part(in, s, err);
	double visits = rc == PM_OK && in->topo ? pm_eval_route_estimate(in->topo, s) : 0;
	if (visits > PM_EVAL_MAX_VISITS)
		rc = pm_fail(err, PM_EINPUT,
			     "schedule too costly to price: %s on %s crosses about %.3g links in all (transfers x mean route length; expected at most %.0e; the closed form, --model closed, has no such limit)",
			     in->label, pm_topo_spec(in->topo), visits, PM_EVAL_MAX_VISITS);
	if (rc)
		pm_sched_release(s);
	return rc;
}

/* The endpoint in the closed form (params.h; Rashidi et al. 2021 §VI-A):
 * the bytes one endpoint reads from memory over the collective, R, bound
 * the bandwidth term from below: bw = max(bw, R / mem_bw).  Baseline: 2
 * bytes a byte sent reduced, 1 a byte copied; ACE: its own data once (n;
 * an all-gather's own block n/P; an all-to-all's blocks for the others).
 * Taken over the whole run, not step by step: exact where every step is
 * bound by the same side (memory or links), below the contention
 * evaluator's per-step maximum otherwise. */
static void endpoint_reads(const struct pm_inst *in, double n, const struct pm_params *p,
			   struct pm_cost *c)
{
	double R, share = in->algo->reduce_share > 0 ? in->algo->reduce_share : 0.5;
	int part = part_of(in);

	if (p->endpoint == PM_END_IDEAL || p->mem_bw_Bps <= 0 || in->P < 2)
		return;
	if (in->coll == PM_COLL_ALLTOALL)
		share = 0;
	else if (part)
		share = part == 1 ? 1 : 0;
	if (p->endpoint == PM_END_BASELINE)
		R = c->sent_B * (1 + share);
	else if (in->coll == PM_COLL_ALLGATHER)
		R = n / in->P;
	else if (in->coll == PM_COLL_ALLTOALL)
		R = n * (in->P - 1) / in->P;
	else
		R = n;
	c->mem_B = R;
	if (R / p->mem_bw_Bps > c->bw_s)
		c->bw_s = R / p->mem_bw_Bps;
}

int pm_algo_at_size(const struct pm_inst *in, double n, struct pm_inst *out,
		    struct pm_err *err)
{
	*out = *in;
	return in->sized && in->algo->at_size ? in->algo->at_size(out, n, err) : PM_OK;
}

void pm_algo_closed(const struct pm_inst *in, double n,
		    const struct pm_params *p, struct pm_cost *c)
{
	struct pm_inst at;
	struct pm_err e;

	/* a sized instance is priced as made for n (callers have asked
	 * pm_algo_at_size whether n runs at all) */
	if (in->sized && pm_algo_at_size(in, n, &at, &e) == PM_OK)
		in = &at;
	struct pm_params q = pm_inst_params(in, p);

	pm_cost_closed_init(c);
	if (in->P > 1)
		in->algo->closed(in, n, &q, c);
	/* its all-reduce's cost halved, unless it prices the part itself */
	int part = in->algo->flags & PM_ALGO_PRICES_PARTS ? 0 : part_of(in);
	if (part) {
		c->alpha_s /= 2;
		c->lat_s /= 2;
		c->bw_s /= 2;
		c->steps /= 2;
		/* a tree's root sends only while broadcasting; every other rank
		 * sends its n bytes once while reducing */
		if (in->algo->phases == PM_PHASES_REDUCE_BCAST)
			c->sent_B = part == 1 ? n : c->sent_B;
		else
			c->sent_B /= 2;
		if (part == 2)
			c->red_s = 0;
	}
	endpoint_reads(in, n, &q, c);
	c->time_s = c->alpha_s + c->lat_s + c->bw_s + c->red_s;
}

int pm_algo_contention(const struct pm_inst *in, const struct pm_sched *s,
		       double n, const struct pm_params *p, struct pm_cost *c,
		       struct pm_step_cost *steps, struct pm_err *err)
{
	struct pm_params q = pm_inst_params(in, p);
	return pm_eval_contention(in->topo, s, n, &q, c, steps, err);
}

struct pm_profile *pm_algo_profile(const struct pm_inst *in, const struct pm_sched *s,
				   const struct pm_params *p)
{
	struct pm_params q = pm_inst_params(in, p);
	struct pm_profile *f;
	struct pm_err e;

	return pm_profile_build(in->topo, s, &q, &f, &e) == PM_OK ? f : NULL;
}

static const char *arg_of(const char *label)
{
	const char *c = strchr(label, ':');
	return c ? c + 1 : "";
}

int pm_algo_same_schedule(const struct pm_inst *a, const struct pm_inst *b)
{
	const struct pm_algo *x = a->algo->schedule_of ? a->algo->schedule_of : a->algo;
	const struct pm_algo *y = b->algo->schedule_of ? b->algo->schedule_of : b->algo;

	return x == y && a->topo == b->topo && a->P == b->P && a->coll == b->coll &&
	       a->ports == b->ports && !a->sized && !b->sized &&
	       strcmp(arg_of(a->label), arg_of(b->label)) == 0;
}
