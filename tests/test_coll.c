/* test_coll.c: every collective, its algorithms, schedules and bounds.
 *
 * Evidence independent of the code under test:
 *  - the replay check (sched.c) run on each schedule for its collective's
 *    postcondition, on networks of power-of-two and other sizes;
 *  - the identity reduce-scatter + all-gather = all-reduce (and reduce +
 *    broadcast = all-reduce for the binomial tree) between the contention
 *    evaluator's prices of the three schedules;
 *  - closed forms worked by hand at non-round inputs (in the comments);
 *  - nccl-tests' bus-bandwidth factors as its PERFORMANCE.md states them;
 *  - the lower bounds of Chan et al. 2007, which no evaluator may beat.
 */
#include "helpers.h"
#include "model/coll.h"
#include "model/eval.h"

static const char *const nets[] = {"torus:4x4", "fattree:4,2", "full:6", "ring:6", "torus:3x5",
				   "bigraph:4x8"};
#define NNETS (sizeof nets / sizeof nets[0])

/* Every algorithm that claims a collective passes its replay check. */
Test(coll, every_schedule_does_its_collective)
{
	int na, checked = 0;
	const struct pm_algo *const *all = pm_algos(&na);

	for (size_t t = 0; t < NNETS; t++) {
		struct pm_topo *topo = topo_or_die(nets[t]);
		for (int c = 0; c < PM_NCOLL; c++)
			for (int a = 0; a < na; a++) {
				struct pm_inst in;
				struct pm_err err;
				if (!pm_algo_does(all[a], (enum pm_coll)c))
					continue;
				if (pm_algo_resolve_coll((enum pm_coll)c, all[a]->name, topo, 0, &in, &err))
					continue;
				cr_assert_eq(pm_algo_check(&in, &err), PM_OK, "%s %s on %s: %s",
					     pm_coll_info((enum pm_coll)c)->title, all[a]->name, nets[t], err.msg);
				checked++;
			}
		pm_topo_free(topo);
	}
	cr_assert_gt(checked, 60, "only %d schedules checked", checked);
}

static double contention(const char *algo, enum pm_coll c, const struct pm_topo *t, double n)
{
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost cost;
	struct pm_err err;
	struct pm_params p;

	pm_params_default(&p);
	p.gamma_spB = 1e-10;
	cr_assert_eq(pm_algo_resolve_coll(c, algo, t, 0, &in, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &cost, NULL, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	return cost.time_s;
}

/* Lockstep steps add up: the two phases priced apart cost what the whole
 * all-reduce costs, for every algorithm that splits, on two networks. */
Test(coll, phases_add_up_to_the_allreduce)
{
	int na;
	const struct pm_algo *const *all = pm_algos(&na);
	const char *const two[] = {"torus:4x4", "fattree:4,2"};

	for (int t = 0; t < 2; t++) {
		struct pm_topo *topo = topo_or_die(two[t]);
		for (int a = 0; a < na; a++) {
			struct pm_inst in;
			struct pm_err err;
			enum pm_phases ph = all[a]->phases;
			if (ph == PM_PHASES_NONE ||
			    pm_algo_resolve(all[a]->name, topo, 0, &in, &err) != PM_OK)
				continue;
			enum pm_coll first = ph == PM_PHASES_RS_AG ? PM_COLL_REDUCESCATTER : PM_COLL_REDUCE;
			enum pm_coll second = ph == PM_PHASES_RS_AG ? PM_COLL_ALLGATHER : PM_COLL_BROADCAST;
			double ar = contention(all[a]->name, PM_COLL_ALLREDUCE, topo, 1 << 20);
			double sum = contention(all[a]->name, first, topo, 1 << 20) +
				     contention(all[a]->name, second, topo, 1 << 20);
			cr_assert(rel_close(ar, sum, 1e-12), "%s on %s: all-reduce %.9g, phases %.9g",
				  all[a]->name, two[t], ar, sum);
		}
		pm_topo_free(topo);
	}
}

static double closed(const char *algo, enum pm_coll c, int P, double n, const struct pm_params *p)
{
	struct pm_inst in;
	struct pm_cost cost;
	struct pm_err err;

	cr_assert_eq(pm_algo_resolve_coll(c, algo, NULL, P, &in, &err), PM_OK, "%s", err.msg);
	pm_algo_closed(&in, n, p, &cost);
	return cost.time_s;
}

/* Ring, P = 6, n = 3,000,000 B, alpha 2 us, delta 1 us, 10 GB/s, gamma
 * 1 ns/B, no flow control.  n/P = 500,000 B.
 *   reduce-scatter: 5 (2 + 1) us + 5 x 500,000 B / 10 GB/s + 5 x 500,000 x 1 ns
 *                   = 15 + 250 + 2500 = 2765 us
 *   all-gather:     15 + 250 = 265 us
 * Binomial tree, P = 6 (ceil lg 6 = 3), same parameters:
 *   reduce:    3 (3 us) + 3 x 3,000,000 / 10 GB/s + 3 x 3,000,000 x 1 ns
 *              = 9 + 900 + 9000 = 9909 us
 *   broadcast: 9 + 900 = 909 us */
Test(coll, closed_forms_by_hand)
{
	struct pm_params p = plain_params(2e-6, 1e-6, 10e9, 1e-9);

	assert_rel(closed("ring", PM_COLL_REDUCESCATTER, 6, 3e6, &p), 2765e-6, 1e-12);
	assert_rel(closed("ring", PM_COLL_ALLGATHER, 6, 3e6, &p), 265e-6, 1e-12);
	assert_rel(closed("binomial", PM_COLL_REDUCE, 6, 3e6, &p), 9909e-6, 1e-12);
	assert_rel(closed("binomial", PM_COLL_BROADCAST, 6, 3e6, &p), 909e-6, 1e-12);
}

/* nccl-tests' factors (PERFORMANCE.md): all-reduce 2(n-1)/n, reduce-
 * scatter, all-gather and all-to-all (n-1)/n, broadcast and reduce 1. */
Test(coll, busbw_factors_of_nccl_tests)
{
	assert_rel(pm_coll_busbw_factor(PM_COLL_ALLREDUCE, 8), 1.75, 1e-15);
	assert_rel(pm_coll_busbw_factor(PM_COLL_REDUCESCATTER, 8), 0.875, 1e-15);
	assert_rel(pm_coll_busbw_factor(PM_COLL_ALLGATHER, 8), 0.875, 1e-15);
	assert_rel(pm_coll_busbw_factor(PM_COLL_ALLTOALL, 8), 0.875, 1e-15);
	assert_rel(pm_coll_busbw_factor(PM_COLL_BROADCAST, 8), 1, 1e-15);
	assert_rel(pm_coll_busbw_factor(PM_COLL_REDUCE, 8), 1, 1e-15);
}

/* The bound by hand: torus:4x4 (4 links of 16 GB/s per endpoint, 150 ns),
 * n = 1 MiB: all-reduce must move 2 x 15/16 x 1 MiB = 1,966,080 B over
 * 64 GB/s = 30.72 us, + 0.15 us = 30.87 us; broadcast 1 MiB: 16.384 +
 * 0.15 = 16.534 us.  All-to-all on torus:4x4: the bisection (two cuts of
 * 4 wrap-around rings, 8 links each way = 128 GB/s) must carry 16 x 1 MiB
 * / 4 = 4 MiB: 32.768 us, more than 15/16 MiB / 64 GB/s = 15.36 us. */
Test(coll, lower_bounds_by_hand)
{
	struct pm_topo *t = topo_or_die("torus:4x4");

	assert_rel(pm_coll_bound(PM_COLL_ALLREDUCE, 1048576, t, 0), 30.87e-6, 1e-9);
	assert_rel(pm_coll_bound(PM_COLL_BROADCAST, 1048576, t, 0), 16.534e-6, 1e-9);
	assert_rel(pm_coll_bound(PM_COLL_ALLTOALL, 1048576, t, 0), 32.918e-6, 1e-9);
	pm_topo_free(t);
}

/* No evaluator beats the bound: closed form and contention evaluator of
 * every algorithm of every collective on every test network, 64 KiB and
 * 16 MiB. */
Test(coll, nothing_beats_the_bound)
{
	int na;
	const struct pm_algo *const *all = pm_algos(&na);
	struct pm_params p;
	const double sizes[] = {65536, 16777216};

	pm_params_default(&p);
	for (size_t t = 0; t < NNETS; t++) {
		struct pm_topo *topo = topo_or_die(nets[t]);
		for (int c = 0; c < PM_NCOLL; c++)
			for (int a = 0; a < na; a++) {
				struct pm_inst in;
				struct pm_sched s;
				struct pm_err err;
				if (!pm_algo_does(all[a], (enum pm_coll)c) ||
				    pm_algo_resolve_coll((enum pm_coll)c, all[a]->name, topo, 0, &in, &err))
					continue;
				cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
				for (int z = 0; z < 2; z++) {
					struct pm_cost cl, ct;
					double b = pm_coll_bound((enum pm_coll)c, sizes[z], topo, 0);
					pm_algo_closed(&in, sizes[z], &p, &cl);
					cr_assert_eq(pm_algo_contention(&in, &s, sizes[z], &p, &ct, NULL, &err), PM_OK);
					cr_assert_geq(ct.time_s, b * (1 - 1e-12), "%s %s on %s at %.0f: contention %.6g < bound %.6g",
						      pm_coll_info((enum pm_coll)c)->title, all[a]->name, nets[t], sizes[z], ct.time_s, b);
					cr_assert_geq(cl.time_s, b * (1 - 1e-12), "%s %s on %s at %.0f: closed %.6g < bound %.6g",
						      pm_coll_info((enum pm_coll)c)->title, all[a]->name, nets[t], sizes[z], cl.time_s, b);
				}
				pm_sched_release(&s);
			}
		pm_topo_free(topo);
	}
}

static void a2a_schedule(const char *algo, const struct pm_topo *t, struct pm_sched *s)
{
	struct pm_inst in;
	struct pm_err err;
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_ALLTOALL, algo, t, 0, &in, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_schedule(&in, s, &err), PM_OK, "%s", err.msg);
}

/* Direct all-to-all: every ordered pair of distinct ranks exchanges
 * exactly one block, once. */
Test(coll, direct_alltoall_sends_every_block_once)
{
	const char *const specs[] = {"full:7", "torus:4x4"};
	for (int k = 0; k < 2; k++) {
		struct pm_topo *t = topo_or_die(specs[k]);
		struct pm_sched s;
		int P = pm_topo_endpoints(t);
		int *seen = calloc((size_t)P * P, sizeof(int));
		a2a_schedule("direct", t, &s);
		for (size_t i = 0; i < s.nx; i++) {
			cr_assert_eq(s.x[i].cnt, 1);
			seen[s.x[i].src * P + s.x[i].dst]++;
		}
		for (int a = 0; a < P; a++)
			for (int b = 0; b < P; b++)
				cr_assert_eq(seen[a * P + b], a != b, "%s: %d -> %d sent %d times", specs[k], a, b, seen[a * P + b]);
		free(seen);
		pm_sched_release(&s);
		pm_topo_free(t);
	}
}

/* Bruck: move the P(P-1) blocks by the algorithm's rule, independently of
 * the builder (step k: a holder h forwards to h + 2^k every block whose
 * remaining distance to its destination has bit k set); every step's
 * transfer from h must carry as many blocks as that moves, and every block
 * must end at its destination.  P = 6 (not a power of two) and 16. */
Test(coll, bruck_alltoall_replayed)
{
	const char *const specs[] = {"full:6", "full:16"};
	for (int k = 0; k < 2; k++) {
		struct pm_topo *t = topo_or_die(specs[k]);
		struct pm_sched s;
		int P = pm_topo_endpoints(t), nb = P * (P - 1);
		int *holder = malloc(sizeof(int) * (size_t)nb), *dest = malloc(sizeof(int) * (size_t)nb);
		for (int o = 0, b = 0; o < P; o++)
			for (int d = 0; d < P; d++)
				if (d != o) {
					holder[b] = o;
					dest[b++] = d;
				}
		a2a_schedule("bruck", t, &s);
		for (int step = 0; step < s.nsteps; step++) {
			int *moved = calloc((size_t)P, sizeof(int));
			for (int b = 0; b < nb; b++)
				if ((((dest[b] - holder[b]) % P + P) % P >> step) & 1) {
					moved[holder[b]]++;
					holder[b] = (holder[b] + (1 << step)) % P;
				}
			for (size_t i = s.step_off[step]; i < s.step_off[step + 1]; i++) {
				cr_assert_eq(s.x[i].dst, (s.x[i].src + (1 << step)) % P);
				cr_assert_eq((int)s.x[i].cnt, moved[s.x[i].src], "%s step %d rank %d: %u blocks, replay %d",
					     specs[k], step, s.x[i].src, s.x[i].cnt, moved[s.x[i].src]);
			}
			free(moved);
		}
		for (int b = 0; b < nb; b++)
			cr_assert_eq(holder[b], dest[b]);
		free(holder);
		free(dest);
		pm_sched_release(&s);
		pm_topo_free(t);
	}
}

/* All-to-all algorithm algo on t, its schedule, and the default
 * (Huang et al. 2021 Table III) parameters. */
static void a2a_on(const struct pm_topo *t, const char *algo, struct pm_inst *in, struct pm_sched *s,
		   struct pm_params *p)
{
	struct pm_err err;

	pm_params_default(p);
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_ALLTOALL, algo, t, 0, in, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_schedule(in, s, &err), PM_OK, "%s", err.msg);
}

/* On full:P every block of the direct algorithm has its own link, so the
 * contention evaluator gives the direct formula: P = 8, n = 64 KiB,
 * packet:256/16: 7 x (150 ns + 8192 x 17/16 B / 16 GB/s) = 4.858 us. */
Test(coll, direct_alltoall_on_full_is_the_formula)
{
	struct pm_topo *t = topo_or_die("full:8");
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c;
	struct pm_err err;
	struct pm_params p;

	a2a_on(t, "direct", &in, &s, &p);
	cr_assert_eq(pm_algo_contention(&in, &s, 65536, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.time_s, 4.858e-6, 1e-12);
	pm_algo_closed(&in, 65536, &p, &c);
	assert_rel(c.time_s, 4.858e-6, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* direct:grouped (NCCL's all-to-all) sends every block once, all in one
 * step.  On full:8 each block has its own link, so the contention
 * evaluator pays one step: 150 ns + 8192 x 17/16 B / 16 GB/s = 0.694 us
 * (P = 8, n = 64 KiB, packet:256/16); the closed form sees one link per
 * endpoint and serialises the 7 blocks: 0.15 + 7 x 0.544 = 3.958 us. */
Test(coll, grouped_alltoall_in_one_step)
{
	struct pm_topo *t = topo_or_die("full:8");
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c;
	struct pm_err err;
	struct pm_params p;
	int seen[64] = {0};

	a2a_on(t, "direct:grouped", &in, &s, &p);
	cr_assert_eq(s.nsteps, 1);
	for (size_t i = 0; i < s.nx; i++)
		seen[s.x[i].src * 8 + s.x[i].dst] += (int)s.x[i].cnt;
	for (int a = 0; a < 64; a++)
		cr_assert_eq(seen[a], a / 8 != a % 8, "%d -> %d sent %d times", a / 8, a % 8, seen[a]);
	cr_assert_eq(pm_algo_contention(&in, &s, 65536, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.time_s, 0.15e-6 + 8192 * 17.0 / 16 / 16e9, 1e-12);
	pm_algo_closed(&in, 65536, &p, &c);
	assert_rel(c.time_s, 0.15e-6 + 7 * 8192 * 17.0 / 16 / 16e9, 1e-12);
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_ALLTOALL, "direct:pairs", t, 0, &in, &err), PM_EINPUT);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* The endpoint in the closed form (--endpoint baseline --mem-bw 4GB/s),
 * by hand on full:8, 1 MiB, 150 ns links, no flow control:
 *   ring sends 2 x 7/8 MiB = 1,835,008 B, half reduced: reads 1.5 x that
 *   = 2,752,512 B / 4 GB/s = 688.128 us, + 14 x 0.15 us = 690.228 us;
 *   recursive doubling sends 3 MiB, all reduced: 6,291,456 B / 4 GB/s =
 *   1572.864 us + 3 x 0.15 = 1573.314 us.
 * Every step is memory-bound, so the contention evaluator's per-step
 * maximum gives the same. */
Test(coll, endpoint_in_the_closed_form)
{
	struct pm_topo *t = topo_or_die("full:8");
	struct pm_params p = plain_params(0, 150e-9, 16e9, 0);
	const char *const algos[] = {"ring", "recdoubling"};
	const double want[] = {690.228e-6, 1573.314e-6};

	p.endpoint = PM_END_BASELINE;
	p.mem_bw_Bps = 4e9;
	for (int a = 0; a < 2; a++) {
		struct pm_inst in;
		struct pm_sched s;
		struct pm_cost cl, ct;
		struct pm_err err;
		resolve_or_die(algos[a], t, 0, &in);
		pm_algo_closed(&in, 1 << 20, &p, &cl);
		assert_rel(cl.time_s, want[a], 1e-9);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
		cr_assert_eq(pm_algo_contention(&in, &s, 1 << 20, &p, &ct, NULL, &err), PM_OK);
		assert_rel(ct.time_s, want[a], 1e-9);
		pm_sched_release(&s);
	}
	pm_topo_free(t);
}
