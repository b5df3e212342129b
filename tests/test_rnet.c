/* test_rnet.c: the router-level network of the packet simulator.
 *
 * Every expected time is derived by hand in the comment above its test,
 * from the router model stated in src/sim/rnet.h and docs/simulator.md:
 * 16 GB/s links and 16-byte flits (one flit per ns), 150 ns links, a
 * 1 GHz router with a 2-cycle pipeline (VC + switch allocation), credits
 * back after the link latency + 1 cycle, 1-cycle injection and ejection
 * channels.  A packet of 256 B payload + 16 B head is 17 flits = 17 ns
 * on any channel.  One packet over h links, no contention:
 *   1 (injection) + h x (2 + 150) + 2 + 17 (ejection channel) + 1
 * and each further packet of the same message adds 17 ns.
 */
#include "helpers.h"
#include "sim/psim.h"

#include <jansson.h>

#define BW 16e9
#define LAT 150e-9

static struct pm_params packet_params(void)
{
	struct pm_params p = plain_params(0, LAT, BW, 0);
	p.flow = PM_FLOW_PACKET;
	p.payload_B = 256;
	p.flit_B = 16;
	return p;
}

/* The simulated time on the router network: dataflow, or lockstep by
 * the given discipline; cfg NULL: the defaults. */
static double run_sim(const struct pm_topo *t, const struct pm_sched *s, double n,
		      const struct pm_params *p, int dataflow, enum pm_lockstep lockstep,
		      const struct pm_router_cfg *cfg)
{
	struct pm_sim_opts o = {.dataflow = dataflow, .routers = 1, .lockstep = lockstep};
	struct pm_sim_result r;
	struct pm_err err;

	if (cfg)
		o.router = *cfg;
	else
		pm_router_cfg_default(&o.router);
	cr_assert_eq(pm_sim_run(t, s, n, p, &o, &r, &err), PM_OK, "%s", err.msg);
	return r.time_s;
}

static double run_routers(const struct pm_topo *t, const struct pm_sched *s, double n,
			  const struct pm_params *p, int dataflow,
			  const struct pm_router_cfg *cfg)
{
	return run_sim(t, s, n, p, dataflow, PM_LOCK_BARRIER, cfg);
}

/* One transfer from rank 0 on endpoint 0 to rank 1 on endpoint `to`. */
static void one_transfer(struct pm_sched *s, int to)
{
	struct pm_err err;
	cr_assert_eq(pm_sched_init(s, 2, 1, &err), PM_OK);
	s->map[1] = to;
	pm_sched_add(s, 0, 0, 1, 0, 1, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(s, &err), PM_OK);
}

/* ring:8, endpoint 0 to endpoint 3: three links.  One 256-byte packet:
 * 1 + 3 x 152 + 2 + 17 + 1 = 477 ns.  Sixteen packets (4 KiB) follow
 * each other 17 ns apart: 477 + 15 x 17 = 732 ns. */
Test(rnet, one_transfer_over_three_hops)
{
	struct pm_topo *t = topo_with("ring:8", BW, LAT);
	struct pm_params p = packet_params();
	struct pm_sched s;

	one_transfer(&s, 3);
	assert_rel(run_routers(t, &s, 256, &p, 0, NULL), 477e-9, 1e-9);
	assert_rel(run_routers(t, &s, 4096, &p, 0, NULL), 732e-9, 1e-9);
	assert_rel(run_routers(t, &s, 4096, &p, 1, NULL), 732e-9, 1e-9);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Credits: one VC of 17 flits holds one packet, so each packet on link
 * 0 -> 1 waits for the previous one's credits.  Packet j leaves router 0
 * at s_j, is at router 1 at s_j + 150, leaves it (ejection) at s_j + 152;
 * its 17 credits come back one per ns from s_j + 152 + 150 + 1, the last
 * at s_j + 303 + 16 = s_j + 319, so s_(j+1) = s_j + 319 and s_0 = 3.
 * Four packets: the last leaves at 3 + 3 x 319 = 960 and arrives at
 * 960 + 152 + 17 + 1 = 1130 ns.  With 318-flit VCs: 173 + 3 x 17 = 224 ns. */
Test(rnet, credits_by_hand)
{
	struct pm_topo *t = topo_with("ring:4", BW, LAT);
	struct pm_params p = packet_params();
	struct pm_router_cfg c;
	struct pm_sched s;

	pm_router_cfg_default(&c);
	c.vcs = 1;
	c.vc_flits = 17;
	c.vc_auto = 0;
	one_transfer(&s, 1);
	assert_rel(run_routers(t, &s, 1024, &p, 0, &c), 1130e-9, 1e-9);
	assert_rel(run_routers(t, &s, 1024, &p, 0, NULL), 224e-9, 1e-9);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Two flows on one link and who wins it.  ring:8, 4 KiB chunks (16
 * packets of 17 ns), dataflow:
 *   step 0  B: rank 1 -> 2, chunk 0 (link 1->2)
 *   step 1  A: rank 0 -> 2, chunk 1 (links 0->1, 1->2), needs nothing
 *   step 2  C: rank 2 -> 3, chunk 0 (link 2->3), needs B.
 * B's packets are ready at link 1->2 at 3 + 17j, A's at 155 + 17j.
 * By schedule (B is step 0), B keeps the link: its last packet leaves at
 * 3 + 15 x 17 = 258 and is delivered at 258 + 152 + 18 = 428; C then
 * takes 428 more (one hop, 16 packets: 173 + 15 x 17): 856 ns.  A's
 * packets use the link from 275 to 547 and A is delivered at 700.
 * First come, first served: A's first packet (at router 1 since 153)
 * beats B's tenth (since 154) at 156, and the two alternate; B's last
 * packet leaves in slot 22, at 3 + 22 x 17 = 377, and is delivered at
 * 377 + 152 + 18 = 547; C ends at 547 + 428 = 975 ns (A at 700).
 * iSLIP (BookSim's allocator, priorities ignored between inputs): B
 * comes from endpoint 1's injection channel, A over link 0->1, two
 * inputs.  At 156 the arbiter last granted B's input, so round robin
 * passes to A's, then back to B's: the same alternation as first come,
 * first served, 975 ns, although B's step is the earlier one. */
Test(rnet, schedule_priority_against_fcfs)
{
	struct pm_topo *t = topo_with("ring:8", BW, LAT);
	struct pm_params p = packet_params();
	struct pm_router_cfg c;
	struct pm_sched s;
	struct pm_err err;

	cr_assert_eq(pm_sched_init(&s, 4, 2, &err), PM_OK);
	pm_sched_add(&s, 0, 1, 2, 0, 1, PM_COPY, 0);
	pm_sched_add(&s, 1, 0, 2, 1, 1, PM_COPY, 0);
	pm_sched_add(&s, 2, 2, 3, 0, 1, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	pm_router_cfg_default(&c);
	assert_rel(run_routers(t, &s, 8192, &p, 1, &c), 856e-9, 1e-9);
	c.fcfs = 1;
	assert_rel(run_routers(t, &s, 8192, &p, 1, &c), 975e-9, 1e-9);
	c.fcfs = 0;
	c.islip = 1;
	assert_rel(run_routers(t, &s, 8192, &p, 1, &c), 975e-9, 1e-9);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Ring all-reduce on ring:4 in lockstep: 2(P-1) = 6 steps, each a
 * 4096-byte chunk (16 packets) over one link with nothing else on it:
 * 173 + 15 x 17 = 428 ns a step, 6 x 428 = 2568 ns for n = 16 KiB.  The
 * closed form of the same network says 6 x (150 + 16 x 17) = 2532 ns:
 * the router adds 6 x (1 + 2 + 2 + 1) ns of channels and pipeline. */
Test(rnet, ring_allreduce_by_hand)
{
	struct pm_topo *t = topo_with("ring:4", BW, LAT);
	struct pm_params p = packet_params();
	struct pm_inst in;
	struct pm_sched s;
	struct pm_err err;

	resolve_or_die("ring", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	assert_rel(run_routers(t, &s, 16384, &p, 0, NULL), 2568e-9, 1e-9);
	/* no two inputs ever ask for one output: the allocator cannot matter */
	struct pm_router_cfg c;
	pm_router_cfg_default(&c);
	c.islip = 1;
	assert_rel(run_routers(t, &s, 16384, &p, 0, &c), 2568e-9, 1e-9);
	/* each step's transfer needs the one before it, which every rank
	 * receives at once: in-order issue is the barrier lockstep here */
	assert_rel(run_sim(t, &s, 16384, &p, 0, PM_LOCK_ORDER, NULL), 2568e-9, 1e-9);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* In-order issue (the MULTITREE artifact's endpoints without lockstep)
 * against dataflow.  ring:4, 4 KiB chunks (16 packets: 428 ns over one
 * free link, 173 + 15 x 17), two ports at rank 0 (it sends two transfers
 * in step 1):
 *   step 0  A: rank 1 -> 0, chunk 0
 *   step 1  D: rank 0 -> 3, chunk 0 (needs A)   D2: rank 0 -> 1, chunk 1
 *   step 2  E: rank 0 -> 3, chunk 1 (needs nothing)
 * Dataflow: D2 and E start at 0 on links 0->1 and 0->3, A on 1->0, all
 * done at 428; D starts when A has arrived, at 428, alone on 0->3: 856.
 * In order: rank 0 has no step 0 to send, so its counter is at step 1 at
 * once; D2 starts at 0, D at 428, and only then (the step's last start)
 * may E, at 428: D and E share link 0->3, 32 packets back to back, the
 * last leaving router 0 at 428 + 3 + 31 x 17 = 958 and delivered at
 * 958 + 150 + 2 + 17 + 1 = 1128 ns. */
Test(rnet, in_order_issue_against_dataflow)
{
	struct pm_topo *t = topo_with("ring:4", BW, LAT);
	struct pm_params p = packet_params();
	struct pm_sched s;
	struct pm_err err;

	cr_assert_eq(pm_sched_init(&s, 4, 2, &err), PM_OK);
	pm_sched_add(&s, 0, 1, 0, 0, 1, PM_COPY, 0);
	pm_sched_add(&s, 1, 0, 3, 0, 1, PM_COPY, 0);
	pm_sched_add(&s, 1, 0, 1, 1, 1, PM_COPY, 0);
	pm_sched_add(&s, 2, 0, 3, 1, 1, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	assert_rel(run_routers(t, &s, 8192, &p, 1, NULL), 856e-9, 1e-9);
	assert_rel(run_sim(t, &s, 8192, &p, 0, PM_LOCK_ORDER, NULL), 1128e-9, 1e-9);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* A virtual cut-through buffer must hold a whole packet. */
Test(rnet, refuses_buffers_smaller_than_a_packet)
{
	struct pm_topo *t = topo_with("ring:4", BW, LAT);
	struct pm_params p = packet_params();
	struct pm_router_cfg c;
	struct pm_sched s;
	struct pm_sim_opts o = {.routers = 1};
	struct pm_sim_result r;
	struct pm_err err;

	pm_router_cfg_default(&c);
	c.vc_flits = 16;
	c.vc_auto = 0;
	o.router = c;
	one_transfer(&s, 1);
	cr_assert_eq(pm_sim_run(t, &s, 1024, &p, &o, &r, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "17 flits"), "%s", err.msg);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Same input, same output, for every algorithm on a torus with
 * contention (dbtree and recdoubling cross several links). */
Test(rnet, deterministic)
{
	static const char *const algos[] = {"dbtree", "recdoubling", "multitree", "2d-ring"};
	struct pm_topo *t = topo_with("torus:4x4", BW, LAT);
	struct pm_params p = packet_params();

	for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
		struct pm_inst in;
		struct pm_sched s;
		struct pm_err err;
		resolve_or_die(algos[a], t, 0, &in);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
		double t1 = run_routers(t, &s, 262144, &p, 1, NULL);
		double t2 = run_routers(t, &s, 262144, &p, 1, NULL);
		cr_assert_eq(t1, t2, "%s: %.17g then %.17g", algos[a], t1, t2);
		pm_sched_release(&s);
	}
	pm_topo_free(t);
}

/* The three ways to start a step, on ring:8 with 4 KiB chunks (16
 * packets; one hop takes 173 + 15 x 17 = 428 ns; a chunk's 16 x 17 =
 * 272 flits serialize in 272 ns, the NOP step estimate):
 *   step 0  A: rank 0 -> 1, chunk 0
 *   step 1  B: rank 2 -> 3, chunk 1
 *   step 2  C: rank 0 -> 1, chunk 2      (nothing depends on anything)
 * barrier: 3 x 428 = 1284 ns.
 * NOP lockstep: rank 0's counter leaves step 0 when A's last packet has
 * left its injection channel (272 ns), waits out step 1 as a NOP (272 ns)
 * and starts C at 544: 544 + 428 = 972 ns (B: NOP step 0, then 272 + 428).
 * dataflow: C only waits for rank 0's one port: 272 + 428 = 700 ns. */
Test(rnet, barrier_nop_and_dataflow_by_hand)
{
	struct pm_topo *t = topo_with("ring:8", BW, LAT);
	struct pm_params p = packet_params();
	struct pm_sched s;
	struct pm_err err;

	cr_assert_eq(pm_sched_init(&s, 4, 3, &err), PM_OK);
	pm_sched_add(&s, 0, 0, 1, 0, 1, PM_COPY, 0);
	pm_sched_add(&s, 1, 2, 3, 1, 1, PM_COPY, 0);
	pm_sched_add(&s, 2, 0, 1, 2, 1, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	assert_rel(run_routers(t, &s, 3 * 4096, &p, 0, NULL), 1284e-9, 1e-9);
	assert_rel(run_routers(t, &s, 3 * 4096, &p, 1, NULL), 700e-9, 1e-9);
	assert_rel(run_sim(t, &s, 3 * 4096, &p, 0, PM_LOCK_NOP, NULL), 972e-9, 1e-9);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* The network interface buffer (--ni-buffer, pm_rnet_send), dataflow, on
 * ring:8, ranks 0, 1, 2 on endpoints 0, 1, 7, 256-byte units:
 *   step 0  x0: rank 0 -> 1, 16 units (16 packets)
 *           w:  rank 0 -> 2, 1 unit   (so rank 0 has two ports)
 *           z:  rank 1 -> 0, 1 unit (unit 16)
 *   step 1  y:  rank 0 -> 2, unit 16 (forwards what z brought)
 * z reaches rank 0 at 173 ns.  Without a buffer, port 0 sends x0's
 * packets until 272 ns and port 1 is free since w left (17 ns): y takes
 * port 1 at 173 and arrives at 346; the run ends with x0's last packet,
 * 173 + 15 x 17 = 428 ns.  With a buffer of 16 packets both ports count
 * as free when y is ready (x0 was handed over after 16 cycles, w after
 * 1), and y takes the lowest-numbered one, port 0, behind x0's packets:
 * it leaves at 272 and arrives at 272 + 173 = 445 ns, the run's end.
 * This is how the MULTITREE artifact's interfaces stack messages on a
 * low-numbered port (docs/validation/08-booksim.md). */
Test(rnet, interface_buffer_stacks_on_the_lowest_port)
{
	struct pm_topo *t = topo_with("ring:8", BW, LAT);
	struct pm_params p = packet_params();
	struct pm_router_cfg cfg;
	struct pm_sched s;
	struct pm_err err;

	cr_assert_eq(pm_sched_init(&s, 3, 18, &err), PM_OK);
	s.map[2] = 7;
	pm_sched_add(&s, 0, 0, 1, 0, 16, PM_COPY, 0);
	pm_sched_add(&s, 0, 0, 2, 17, 1, PM_COPY, 0);
	pm_sched_add(&s, 0, 1, 0, 16, 1, PM_COPY, 0);
	pm_sched_add(&s, 1, 0, 2, 16, 1, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	pm_router_cfg_default(&cfg);
	assert_rel(run_routers(t, &s, 18 * 256, &p, 1, &cfg), 428e-9, 1e-9);
	cfg.ni_buffer = 16;
	assert_rel(run_routers(t, &s, 18 * 256, &p, 1, &cfg), 445e-9, 1e-9);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* --trace: the file is JSON a parser reads back (jansson), with one
 * transfer event per transfer of the schedule, one step event per step
 * in lockstep, and link events whose durations add up to the busy time
 * the simulator reports (link_busy x time x links). */
Test(rnet, trace_reads_back_and_adds_up)
{
	struct pm_topo *t = topo_with("torus:4x4", BW, LAT);
	struct pm_params p = packet_params();
	struct pm_inst in;
	struct pm_sched s;
	struct pm_err err;
	struct pm_sim_opts o = {.routers = 1};
	struct pm_sim_result r;
	char path[] = "/tmp/perfmodel-trace-XXXXXX";
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	close(fd);
	resolve_or_die("multitree", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	pm_router_cfg_default(&o.router);
	cr_assert_eq(pm_trace_open(path, "test", &o.trace, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_sim_run(t, &s, 65536, &p, &o, &r, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_trace_close(o.trace, &err), PM_OK, "%s", err.msg);

	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	cr_assert(root, "%s line %d: %s", path, je.line, je.text);
	json_t *ev = json_object_get(root, "traceEvents");
	size_t nx = 0, nsteps = 0, i;
	double busy_us = 0;
	json_t *e;
	json_array_foreach(ev, i, e) {
		const char *cat = json_string_value(json_object_get(e, "cat"));
		if (!cat)
			continue;
		if (!strcmp(cat, "transfer"))
			nx++;
		else if (!strcmp(cat, "step"))
			nsteps++;
		else if (!strcmp(cat, "link"))
			busy_us += json_number_value(json_object_get(e, "dur"));
	}
	cr_assert_eq(nx, s.nx);
	cr_assert_eq(nsteps, (size_t)s.nsteps);
	assert_rel(busy_us * 1e-6, r.link_busy * r.time_s * pm_topo_nlinks(t), 1e-9);
	json_decref(root);
	unlink(path);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* Deadlock and its avoidance.  Recursive doubling on torus:8x8 sends over
 * wrap-around links in both directions; with one VC of one packet the
 * rings of buffers fill and wait on each other in a cycle, which the
 * simulator reports instead of a time.  With two VCs the dateline classes
 * break every cycle and the run ends.  On bigraph:4x8 routes turn from
 * down to up (same-layer switches through the other layer), which closed
 * a cycle with the default buffers before VCs were classed by hop. */
Test(rnet, deadlock_reported_and_avoided)
{
	struct pm_topo *t = topo_with("torus:8x8", BW, LAT);
	struct pm_params p = packet_params();
	struct pm_inst in;
	struct pm_sched s;
	struct pm_err err;
	struct pm_router_cfg c;
	struct pm_sim_opts o = {.routers = 1};
	struct pm_sim_result r;

	resolve_or_die("recdoubling", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	pm_router_cfg_default(&c);
	c.vcs = 1;
	c.vc_flits = 17;
	c.vc_auto = 0;
	o.router = c;
	cr_assert_eq(pm_sim_run(t, &s, 1048576, &p, &o, &r, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "deadlocked"), "%s", err.msg);
	c.vcs = 2;
	cr_assert_gt(run_routers(t, &s, 1048576, &p, 0, &c), 0);
	pm_sched_release(&s);
	pm_topo_free(t);

	t = topo_with("bigraph:4x8", BW, LAT);
	resolve_or_die("recdoubling", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert_gt(run_routers(t, &s, 32768, &p, 0, NULL), 0);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* The endpoint in the loop (--endpoint baseline --mem-bw 8GB/s): before a
 * packet leaves, its sender reads its data from memory, 1 byte a byte
 * sent for a copy and 2 for a reduction (Rashidi et al., ISCA 2021,
 * SVI-A), one read at a time.  One 1 KiB transfer, 4 packets of 256 B:
 * a copy's reads of packet j end at 32 (j+1) ns (256 B at 8 GB/s), so the
 * last packet leaves at 128 and arrives at 128 + 173 = 301 ns; a
 * reduction reads twice as much, 64 (j+1): 256 + 173 = 429 ns.  With the
 * ideal endpoint: 173 + 3 x 17 = 224 ns. */
Test(rnet, endpoint_memory_gates_the_packets)
{
	struct pm_topo *t = topo_with("ring:4", BW, LAT);
	struct pm_params p = packet_params();
	struct pm_sched s;
	struct pm_err err;

	for (int op = 0; op < 2; op++) {
		cr_assert_eq(pm_sched_init(&s, 2, 1, &err), PM_OK);
		s.map[1] = 1;
		pm_sched_add(&s, 0, 0, 1, 0, 1, op ? PM_REDUCE : PM_COPY, 0);
		cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
		p.endpoint = PM_END_IDEAL;
		assert_rel(run_routers(t, &s, 1024, &p, 0, NULL), 224e-9, 1e-9);
		p.endpoint = PM_END_BASELINE;
		p.mem_bw_Bps = 8e9;
		assert_rel(run_routers(t, &s, 1024, &p, 0, NULL), op ? 429e-9 : 301e-9, 1e-9);
		pm_sched_release(&s);
	}
	pm_topo_free(t);
}

/* Buffers follow the link: on ace:4x4x4 (200 GB/s, 72 ns inside a
 * package) 318 flits would cover 25 ns of a 150 ns credit loop and
 * throttle every stream; sized to the loop, the contention-free
 * multiphase and ring schedules run at the links' speed and the
 * simulator agrees with the contention evaluator within 1% at 1 MiB (the
 * router adds its pipeline and channels and cuts through where the
 * evaluator charges a whole latency a step; with 318-flit buffers the
 * simulator took 2.25x as long). */
Test(rnet, buffers_cover_the_credit_loop)
{
	struct pm_topo *t = topo_or_die("ace:4x4x4");
	struct pm_params p = packet_params();
	const char *const algos[] = {"multiphase", "ring"};

	for (int a = 0; a < 2; a++) {
		struct pm_inst in;
		struct pm_sched s;
		struct pm_cost c;
		struct pm_err err;
		resolve_or_die(algos[a], t, 0, &in);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
		cr_assert_eq(pm_algo_contention(&in, &s, 1 << 20, &p, &c, NULL, &err), PM_OK);
		double sim = run_routers(t, &s, 1 << 20, &p, 0, NULL);
		cr_assert(rel_close(sim, c.time_s, 1e-2), "%s: sim %.9g, contention %.9g", algos[a], sim, c.time_s);
		pm_sched_release(&s);
	}
	pm_topo_free(t);
}
