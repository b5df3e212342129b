/* test_eval.c: the per-step contention evaluator on hand-made schedules
 * whose cost is worked out by hand in each comment. */
#include "helpers.h"
#include "model/eval.h"

/* Non-round parameters (GSL style): alpha 2.385 us, delta 0.31 us per
 * link, 12.5 GB/s links (beta = 0.08 ns/B), gamma 0.0731 ns/B. */
#define ALPHA 2.385e-6
#define DELTA 0.31e-6
#define BW 12.5e9
#define GAMMA 0.0731e-9

static void build(struct pm_sched *s, int P, const int (*x)[4], int nx)
{
	struct pm_err err;
	cr_assert_eq(pm_sched_init(s, P, 1, &err), PM_OK);
	for (int i = 0; i < nx; i++)
		pm_sched_add(s, x[i][0], x[i][1], x[i][2], 0, 1, (enum pm_op)x[i][3], 0);
	cr_assert_eq(pm_sched_finish(s, &err), PM_OK);
}

/* ring:4, one step: 0->2 and 1->3, both going + (a tie goes +), so both
 * cross link 1->2.  n = 1000 B, both reduce:
 *   alpha 2.385 + 2 links x 0.31 + 2 x 1000 B / 12.5 GB/s (0.16 us)
 *   + 1000 B x 0.0731 ns (0.0731 us) = 3.2381 us.
 * Links used: 0->1, 1->2, 2->3 of 8 = 37.5%; link 1->2 carries 2000 B;
 * wire bytes 2 messages x 2 links x 1000 B = 4000. */
Test(eval, shared_link_doubles_the_load)
{
	const int x[][4] = {{0, 0, 2, PM_REDUCE}, {0, 1, 3, PM_REDUCE}};
	struct pm_sched s;
	struct pm_topo *t = topo_with("ring:4", BW, DELTA);
	struct pm_params p = plain_params(ALPHA, DELTA, BW, GAMMA);
	struct pm_cost c;
	struct pm_step_cost sc[1];
	struct pm_err err;

	build(&s, 4, x, 2);
	cr_assert_eq(pm_eval_contention(t, &s, 1000, &p, &c, sc, &err), PM_OK);
	assert_rel(c.time_s, 3.2381e-6, 1e-12);
	assert_rel(c.bw_s, 0.16e-6, 1e-12);
	assert_rel(c.lat_s, 0.62e-6, 1e-12);
	assert_rel(c.red_s, 0.0731e-6, 1e-12);
	assert_rel(c.links_used, 0.375, 1e-12);
	assert_rel(c.max_link_B, 2000, 1e-12);
	assert_rel(c.wire_B, 4000, 1e-12);
	assert_rel(c.sent_B, 1000, 1e-12);
	cr_assert_eq(sc[0].busy_links, 3);
	cr_assert_eq(sc[0].hops_max, 2);
	assert_rel(sc[0].time_s, c.time_s, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* full:3, rank 0 copies 1000 B to ranks 1 and 2 in one step: each link
 * carries 1000 B (0.08 us), but with a 12.5 GB/s injection port rank 0
 * must push 2000 B through it (0.16 us). */
Test(eval, injection_bandwidth)
{
	const int x[][4] = {{0, 0, 1, PM_COPY}, {0, 0, 2, PM_COPY}};
	struct pm_sched s;
	struct pm_topo *t = topo_with("full:3", BW, 0);
	struct pm_params p = plain_params(0, 0, BW, 0);
	struct pm_cost c;
	struct pm_err err;

	build(&s, 3, x, 2);
	cr_assert_eq(pm_eval_contention(t, &s, 1000, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.time_s, 0.08e-6, 1e-12);
	p.inj_bw_Bps = BW;
	cr_assert_eq(pm_eval_contention(t, &s, 1000, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.time_s, 0.16e-6, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Packet flow control puts 1000 B on the wire as 1000 + 4 x 16 = 1064 B. */
Test(eval, flow_control_on_the_wire)
{
	const int x[][4] = {{0, 0, 1, PM_COPY}};
	struct pm_sched s;
	struct pm_topo *t = topo_with("full:2", BW, 0);
	struct pm_params p = plain_params(0, 0, BW, 0);
	struct pm_cost c;
	struct pm_err err;

	p.flow = PM_FLOW_PACKET;
	p.payload_B = 256;
	p.flit_B = 16;
	build(&s, 2, x, 1);
	cr_assert_eq(pm_eval_contention(t, &s, 1000, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.time_s, 1064 / BW, 1e-12);
	assert_rel(c.sent_B, 1000, 1e-12);	/* payload, not wire bytes */
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Time-weighted utilisation over two steps on ring:4 (8 links), no alpha
 * or latency: step 0 moves 1000 B on 4 links (0.08 us), step 1 moves
 * 3000 B on 1 link (0.24 us): (4 x 0.08 + 1 x 0.24) / (8 x 0.32) = 0.21875.
 * Each step's startup is paid once: 2 x alpha. */
Test(eval, utilisation_and_alpha_per_step)
{
	const int x[][4] = {{0, 0, 1, PM_COPY}, {0, 1, 2, PM_COPY}, {0, 2, 3, PM_COPY},
			    {0, 3, 0, PM_COPY}};
	struct pm_sched s;
	struct pm_topo *t = topo_with("ring:4", BW, 0);
	struct pm_params p = plain_params(0, 0, BW, 0);
	struct pm_cost c;
	struct pm_err err;

	cr_assert_eq(pm_sched_init(&s, 4, 3, &err), PM_OK);
	for (int i = 0; i < 4; i++)
		pm_sched_add(&s, 0, x[i][1], x[i][2], 0, 1, PM_COPY, 0);
	pm_sched_add(&s, 1, 0, 1, 0, 3, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	cr_assert_eq(pm_eval_contention(t, &s, 3000, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.time_s, 0.32e-6, 1e-12);
	assert_rel(c.util_avg, 0.21875, 1e-12);
	assert_rel(c.links_used, 0.5, 1e-12);
	p.alpha_s = ALPHA;
	cr_assert_eq(pm_eval_contention(t, &s, 3000, &p, &c, NULL, &err), PM_OK);
	assert_rel(c.alpha_s, 2 * ALPHA, 1e-12);
	pm_sched_release(&s);
	pm_topo_free(t);
}

Test(eval, empty_schedule_costs_nothing)
{
	struct pm_sched s;
	struct pm_topo *t = topo_or_die("full:1");
	struct pm_params p = plain_params(ALPHA, DELTA, BW, GAMMA);
	struct pm_cost c;
	struct pm_err err;

	build(&s, 1, NULL, 0);
	cr_assert_eq(pm_eval_contention(t, &s, 1e6, &p, &c, NULL, &err), PM_OK);
	cr_assert_eq(c.time_s, 0);
	cr_assert_eq(c.steps, 0);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* nccl-tests: busbw = algbw x 2(P-1)/P; 1 GB in 0.1 s on 8 ranks is
 * 10 GB/s algbw and 17.5 GB/s busbw. */
Test(eval, nccl_tests_bandwidths)
{
	assert_rel(pm_algbw(1e9, 0.1), 1e10, 1e-12);
	assert_rel(pm_busbw(1e9, 0.1, 8), 1.75e10, 1e-12);
	cr_assert_eq(pm_busbw(1e9, 0.1, 1), 0);
}
