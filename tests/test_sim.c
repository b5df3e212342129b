/* test_sim.c: the packet simulator.
 *
 * Evidence independent of the simulator's code:
 *  - small schedules timed by hand (the arithmetic in each comment):
 *    store-and-forward pipelining over two hops, two messages queueing on
 *    one link, a dataflow start that lockstep delays;
 *  - identities with the contention evaluator where the two must agree:
 *    every transfer of a step crosses one link and no reduction (gamma = 0)
 *    — then a step lasts alpha + busiest link load / bandwidth + latency in
 *    both — for every algorithm on full:P and the one-hop schedules on a
 *    torus;
 *  - with reductions the simulator starts reducing as messages arrive, so it
 *    is never slower than the contention evaluator on full:P.
 */
#include "helpers.h"
#include "model/eval.h"
#include "sim/psim.h"

#define BW 16e9
#define LAT 150e-9

/* A schedule of n transfers built by hand on topology t. */
static void sched_by_hand(struct pm_sched *s, int ranks, uint32_t chunks)
{
	struct pm_err err;
	cr_assert_eq(pm_sched_init(s, ranks, chunks, &err), PM_OK);
}

static double sim_time(const struct pm_topo *t, const struct pm_sched *s, double n,
		       const struct pm_params *p, int dataflow)
{
	struct pm_sim_opts o = {.dataflow = dataflow};
	struct pm_sim_result r;
	struct pm_err err;
	cr_assert_eq(pm_sim_run(t, s, n, p, &o, &r, &err), PM_OK, "%s", err.msg);
	return r.time_s;
}

/* One message from rank 0 on endpoint 0 to rank 1 on endpoint 2. */
static void two_hop_message(struct pm_sched *s)
{
	struct pm_err err;

	sched_by_hand(s, 2, 1);
	s->map[1] = 2;
	pm_sched_add(s, 0, 0, 1, 0, 1, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(s, &err), PM_OK);
}

/* One 2560-byte message from endpoint 0 to endpoint 2 of ring:4 (two
 * links), 256-byte packets, no head flits: 10 packets of 16 ns each at
 * 16 GB/s.  The last packet leaves the first link at 160 ns, reaches the
 * second at 160 + 150 = 310 ns, leaves it at 326 ns and arrives at 476 ns.
 * The contention evaluator, which does not pipeline within a step, says
 * 2 x 150 + 160 = 460 ns: the simulator pays one packet more per extra hop. */
Test(sim, two_hops_by_hand)
{
	struct pm_topo *t = topo_with("ring:4", BW, LAT);
	struct pm_params p = plain_params(0, LAT, BW, 0);
	struct pm_sched s;
	struct pm_err err;
	struct pm_cost c;

	two_hop_message(&s);
	assert_rel(sim_time(t, &s, 2560, &p, 0), 476e-9, 1e-12);
	cr_assert_eq(pm_eval_contention(t, &s, 2560, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.time_s, 460e-9, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* The driver steps a lockstep run one schedule step at a time (init /
 * step / done).  The ring all-reduce on ring:4 at n = 10240 B: each of
 * its 2 x 3 steps sends n/4 = 2560 B from every rank to its ring
 * neighbour, one link, no contention, so a step lasts alpha + 2560 B /
 * 16 GB/s + 150 ns = 1 us + 160 ns + 150 ns = 1.31 us, and step k ends at
 * k x 1.31 us; the sixth is the last and done reports 7.86 us. */
Test(sim, driver_steps_by_hand)
{
	struct pm_topo *t = topo_with("ring:4", BW, LAT);
	struct pm_params p = plain_params(1e-6, LAT, BW, 0);
	struct pm_sim_opts o = {0};
	struct pm_sim_result r;
	struct pm_inst in;
	struct pm_sched s;
	struct pm_sim *d;
	struct pm_err err;
	int k = 0, more;

	resolve_or_die("ring", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_sim_init(&d, t, &s, 10240, &p, &o, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_sim_now(d), 0);
	do {
		more = pm_sim_step(d);
		k++;
		assert_rel(pm_sim_now(d), k * 1.31e-6, 1e-12);
	} while (more);
	cr_assert_eq(k, 6);
	cr_assert_eq(pm_sim_done(d, &r, &err), PM_OK, "%s", err.msg);
	assert_rel(r.time_s, 7.86e-6, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* A run's budget (what is left of a command's): the two-hop message of
 * two_hops_by_hand crosses 2 links in 10 packets, 20 link traversals on
 * the links network.  A budget of 19 refuses the run before it starts and
 * says why; 20 runs it and reports the 20 it used. */
Test(sim, budget_refuses_before_the_run)
{
	struct pm_topo *t = topo_with("ring:4", BW, LAT);
	struct pm_params p = plain_params(0, LAT, BW, 0);
	struct pm_sched s;
	struct pm_err err;
	struct pm_sim_result r;
	struct pm_sim_opts o = {.budget = 19};

	two_hop_message(&s);
	cr_assert_eq(pm_sim_run(t, &s, 2560, &p, &o, &r, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "simulation budget is spent"), "%s", err.msg);
	o.budget = 20;
	cr_assert_eq(pm_sim_run(t, &s, 2560, &p, &o, &r, &err), PM_OK, "%s", err.msg);
	cr_assert_float_eq(r.events, 20, 0);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Two 2560-byte messages into the same link in one step (ranks 0 and 1 of
 * ring:4 to rank 2: 0 -> 1 -> 2 and 1 -> 2 share link 1 -> 2), packet flow
 * control 256/16: each message is 10 packets of 272 B = 17 ns.  The
 * message from 1 has its 10 packets at link 1 -> 2 at time 0 and sends
 * them by 170 ns; the packets from 0 arrive at 17 + 150 = 167 ns and
 * later, queue behind, and the last leaves at 170 + 10 x 17 = 340 ns
 * (link 1 -> 2 is never idle once it starts), arriving at 490 ns. */
Test(sim, queueing_by_hand)
{
	struct pm_topo *t = topo_with("ring:4", BW, LAT);
	struct pm_params p = plain_params(0, LAT, BW, 0);
	struct pm_sched s;
	struct pm_err err;

	p.flow = PM_FLOW_PACKET;
	p.payload_B = 256;
	p.flit_B = 16;
	sched_by_hand(&s, 3, 2);
	s.map[0] = 0;
	s.map[1] = 1;
	s.map[2] = 2;
	pm_sched_add(&s, 0, 0, 2, 0, 1, PM_COPY, 0);
	pm_sched_add(&s, 0, 1, 2, 1, 1, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	assert_rel(sim_time(t, &s, 5120, &p, 0), 490e-9, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Dataflow against lockstep on full:4 with alpha = 1 us, no latency:
 * step 0 sends a 16,000-byte chunk 0 -> 1 (1 us + 1 us) and a 1,600-byte
 * chunk 2 -> 3 (1 us + 0.1 us); step 1 forwards chunk 1 from 3 to 0
 * (1 us + 0.1 us).  Lockstep waits for the big message: 2 + 1.1 = 3.1 us.
 * Dataflow starts 3 -> 0 when 2 -> 3 is done: 1.1 + 1.1 = 2.2 us, and the
 * run ends with the big message at 2 us, so 2.2 us. */
Test(sim, dataflow_by_hand)
{
	struct pm_topo *t = topo_with("full:4", BW, 0);
	struct pm_params p = plain_params(1e-6, 0, BW, 0);
	struct pm_sched s;
	struct pm_err err;

	/* 11 units of 1600 B: chunk 0 is units 0-9, chunk 1 is unit 10 */
	sched_by_hand(&s, 4, 11);
	pm_sched_add(&s, 0, 0, 1, 0, 10, PM_COPY, 0);
	pm_sched_add(&s, 0, 2, 3, 10, 1, PM_COPY, 0);
	pm_sched_add(&s, 1, 3, 0, 10, 1, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	assert_rel(sim_time(t, &s, 17600, &p, 0), 3.1e-6, 1e-12);
	assert_rel(sim_time(t, &s, 17600, &p, 1), 2.2e-6, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

static void agree_with_contention(const char *spec, const char *algo, double n,
				  const struct pm_params *p)
{
	struct pm_topo *t = topo_with(spec, BW, p->link_lat_s);
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c;
	struct pm_err err;

	if (pm_algo_resolve(algo, t, 0, &in, &err) != PM_OK) {
		pm_topo_free(t);
		return;
	}
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_contention(&in, &s, n, p, &c, NULL, &err), PM_OK);
	struct pm_params q = pm_inst_params(&in, p);	/* multitree-msg: message flow */
	double sim = sim_time(t, &s, n, &q, 0);
	cr_assert(rel_close(sim, c.time_s, 1e-9), "%s on %s at %.0f B: sim %.9g, contention %.9g",
		  algo, spec, n, sim, c.time_s);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* full:P: every transfer has a private link, so with gamma = 0 a lockstep
 * step lasts alpha + most bytes on one link / bandwidth + one latency in
 * both evaluators, whatever the algorithm. */
Test(sim, equals_contention_on_full)
{
	int na;
	const struct pm_algo *const *all = pm_algos(&na);
	const char *nets[] = {"full:2", "full:5", "full:8", "full:9", "full:12"};
	struct pm_params p = plain_params(2e-6, LAT, BW, 0);
	p.flow = PM_FLOW_PACKET;
	for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++)
		for (int a = 0; a < na; a++) {
			agree_with_contention(nets[k], all[a]->name, 1048576, &p);
			agree_with_contention(nets[k], all[a]->name, 3e6, &p);
		}
}

/* One-hop, contention-free schedules on direct networks: the rings in
 * snake order, 2d-ring, multiphase and MULTITREE (every tree edge is one
 * physical link, no link used twice in a step). */
Test(sim, equals_contention_one_hop)
{
	const char *cases[][2] = {
		{"ring", "torus:4x4"}, {"bidir-ring", "torus:4x4"}, {"2d-ring", "torus:4x4"},
		{"multitree", "torus:4x4"}, {"multitree", "torus:3x3"}, {"multitree", "mesh:4x4"},
		{"multiphase", "torus:4x4x4"}, {"multiphase", "torus:3x4"}, {"ring", "ring:9"},
	};
	struct pm_params p = plain_params(0, LAT, BW, 0);
	p.flow = PM_FLOW_PACKET;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		agree_with_contention(cases[i][1], cases[i][0], 4.0 * 1048576, &p);
}

/* With gamma the simulator reduces each message as it arrives while the
 * contention evaluator adds a step's largest reduction after its slowest
 * link: on full:P the simulator is never slower, and never faster by more
 * than the whole reduction term. */
Test(sim, reductions_on_full)
{
	int na;
	const struct pm_algo *const *all = pm_algos(&na);
	struct pm_params p = plain_params(1e-6, LAT, BW, 0.05e-9);
	struct pm_topo *t = topo_with("full:12", BW, LAT);
	for (int a = 0; a < na; a++) {
		struct pm_inst in;
		struct pm_sched s;
		struct pm_cost c;
		struct pm_err err;
		if (pm_algo_resolve(all[a]->name, t, 0, &in, &err) != PM_OK)
			continue;
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
		pm_algo_contention(&in, &s, 3e6, &p, &c, NULL, &err);
		struct pm_params q = pm_inst_params(&in, &p);
		double sim = sim_time(t, &s, 3e6, &q, 0);
		cr_assert(sim <= c.time_s * (1 + 1e-9), "%s: sim %.9g > contention %.9g", in.label, sim, c.time_s);
		cr_assert(sim >= (c.time_s - c.red_s) * (1 - 1e-9), "%s: sim %.9g below contention without reduction",
			  in.label, sim);
		pm_sched_release(&s);
	}
	pm_topo_free(t);
}

/* Every schedule runs to completion in dataflow mode too, every segment
 * is delivered, and on a network where every step is one hop and
 * contention free a ring gains nothing from dropping the barriers (each
 * step's transfers wait for the previous step's anyway). */
Test(sim, dataflow_runs_everything)
{
	int na;
	const struct pm_algo *const *all = pm_algos(&na);
	const char *nets[] = {"torus:4x4", "fattree:4,2", "bigraph:4x8", "full:7"};
	struct pm_params p = plain_params(0, LAT, BW, 0);
	for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++) {
		struct pm_topo *t = topo_with(nets[k], BW, LAT);
		for (int a = 0; a < na; a++) {
			struct pm_inst in;
			struct pm_sched s;
			struct pm_err err;
			struct pm_sim_opts o = {.dataflow = 1};
			struct pm_sim_result r;
			if (pm_algo_resolve(all[a]->name, t, 0, &in, &err) != PM_OK)
				continue;
			cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
			cr_assert_eq(pm_sim_run(t, &s, 1048576, &p, &o, &r, &err), PM_OK, "%s", err.msg);
			cr_assert(r.time_s > 0 && isfinite(r.time_s), "%s on %s", in.label, nets[k]);
			cr_assert(r.link_busy > 0 && r.link_busy <= 1 + 1e-9, "%s on %s: busy %g",
				  in.label, nets[k], r.link_busy);
			pm_sched_release(&s);
		}
		pm_topo_free(t);
	}
	struct pm_topo *t = topo_with("ring:8", BW, LAT);
	struct pm_inst in;
	struct pm_sched s;
	struct pm_err err;
	resolve_or_die("ring", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	assert_rel(sim_time(t, &s, 1048576, &p, 1), sim_time(t, &s, 1048576, &p, 0), 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* A run too large to simulate is refused with the reason. */
Test(sim, refuses_huge_runs)
{
	struct pm_topo *t = topo_with("torus:32x32", BW, LAT);
	struct pm_params p = plain_params(0, LAT, BW, 0);
	struct pm_inst in;
	struct pm_sched s;
	struct pm_err err;
	struct pm_sim_opts o = {.max_segments = 1 << 20};
	struct pm_sim_result r;
	resolve_or_die("ring", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert_eq(pm_sim_run(t, &s, 1024.0 * 1048576, &p, &o, &r, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "simulation too large"), "%s", err.msg);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* The port budget in dataflow mode (issue 10): rank 0 of full:3 sends
 * unit 0 to rank 1 in step 0 and unit 1 to rank 2 in step 1; neither
 * waits for data, so dataflow may start both at once, but the schedule
 * never has rank 0 send two messages in one step, so it sends one at a
 * time.  n = 2 x 2560 B, 256-byte packets, no head flits, 16 GB/s, no
 * latency: each message is 10 packets of 16 ns = 160 ns; one after the
 * other on their own links: 160 + 160 = 320 ns (both at once would be
 * 160 ns).  A schedule that sends both in step 0 has a budget of two and
 * takes 160 ns. */
Test(sim, dataflow_keeps_the_port_budget)
{
	struct pm_topo *t = topo_with("full:3", BW, 0);
	struct pm_params p = plain_params(0, 0, BW, 0);
	struct pm_sched s;
	struct pm_err err;

	p.flow = PM_FLOW_PACKET;
	p.flit_B = 0;
	sched_by_hand(&s, 3, 2);
	pm_sched_add(&s, 0, 0, 1, 0, 1, PM_COPY, 0);
	pm_sched_add(&s, 1, 0, 2, 1, 1, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	assert_rel(sim_time(t, &s, 5120, &p, 1), 320e-9, 1e-12);
	pm_sched_release(&s);

	sched_by_hand(&s, 3, 2);
	pm_sched_add(&s, 0, 0, 1, 0, 1, PM_COPY, 0);
	pm_sched_add(&s, 0, 0, 2, 1, 1, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	assert_rel(sim_time(t, &s, 5120, &p, 1), 160e-9, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}
