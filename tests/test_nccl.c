/* test_nccl.c: NCCL's cost model (model/nccl.c) and the nccl algorithm
 * (model/algo_nccl.c).  Expected values are derived by hand in the
 * comments from NCCL 2.30.7's src/graph/tuning.cc and src/enqueue.cc
 * (the constants are quoted where used), or are identities. */
#include "helpers.h"
#include "model/machine.h"
#include "model/nccl.h"

/* 8 H100-class GPUs on one NVSwitch node, rates as a user would give
 * them (not a preset): 370 GB/s ring busbw, 480 GB/s NVLS, 2 us launch. */
static struct pm_nccl_sys one_node(void)
{
	struct pm_nccl_sys s = {
		.ranks = 8, .nodes = 1, .ppn = 8, .arch = PM_NCCL_HOPPER,
		.ring_Bps = 370e9, .nvls_Bps = 480e9, .net_Bps = 0, .launch_s = 2e-6,
		.net_lat_s = 0, .channels = 16, .collnet = 0, .ll128 = 1,
	};
	return s;
}

/* N such nodes joined by 8 x 48 GB/s NICs each (384 GB/s a node). */
static struct pm_nccl_sys nodes_of(int N)
{
	struct pm_nccl_sys s = one_node();
	s.ranks = 8 * N;
	s.nodes = N;
	s.net_Bps = 384e9;
	return s;
}

static struct pm_nccl_cost price(const struct pm_nccl_sys *s, enum pm_coll c,
				 enum pm_nccl_algo a, enum pm_nccl_proto p, double n)
{
	struct pm_nccl_cost k;
	struct pm_err err;
	int rc = pm_nccl_price(s, c, a, p, n, &k, &err);
	cr_assert_eq(rc, PM_OK, "%s", err.msg);
	return k;
}

/* An 8-byte LL ring all-reduce on 8 GPUs.  Latency: base 6.6 us (Ring,
 * LL) + 2(P-1) = 14 steps x 0.6 us (NVLink, Ring, LL) = 15.0 us.  LL bus
 * bandwidth: min(llMaxBw Hopper 1 node 141 GB/s, 0.5 x 370) = 141 GB/s,
 * algbw = 141 x 8/14 = 80.571 GB/s.  Channels: 8 B < nc x 512 threads x
 * (8 B x 8 ranks) until nc = 1 (the threads then halve too, which takes
 * no rate from the channel).  The one channel moves its 1/16 of the
 * open LL rate, 0.5 x 370 / 16 = 11.5625 GB/s, under the node's 141
 * GB/s limit: algbw 11.5625 x 8/14 = 6.6071 GB/s, so 8 B take 1.2108 ns
 * and T = 2 + 15 + 0.0012 = 17.0012 us.  At 32 KiB the ring still runs
 * one channel (32768 = 1 x 512 x 64, not below it): 32768 / 6.6071e9 =
 * 4.9595 us (nccl-tests' single-channel LL rings on Azure ND H100 v5
 * add 7.9 us from 1 KiB to 32 KiB: 25.6 to 33.5 us). */
Test(nccl, ll_ring_8_bytes_by_hand)
{
	struct pm_nccl_sys s = one_node();
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_LL, 8);

	cr_assert(rel_close(k.lat_s, 15.0e-6, 1e-9), "latency %g", k.lat_s);
	cr_assert(rel_close(k.bw_s, 8 / (0.5 * 370e9 / 16 * 8 / 14), 1e-9), "bw %g", k.bw_s);
	cr_assert(rel_close(k.time_s, 17.0012e-6, 1e-5), "time %g", k.time_s);
	cr_assert_eq(k.channels, 1);
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_LL, 32768);
	cr_assert_eq(k.channels, 1);
	cr_assert(rel_close(k.bw_s, 4.9595e-6, 1e-3), "bw %g", k.bw_s);
}

/* A rooted ring pays one hop.  NCCL's ring search keeps the same ring on
 * every channel where its first pass reaches the optimum (search.cc,
 * sameChannels; NVIDIA/nccl issue 1197 prints "Pattern 4 ... sameChannels
 * 1" for two H100 nodes), and tuning.cc then charges a broadcast or reduce
 * base + one hop's hwLat, its chunks pipelined down the ring.  By hand,
 * NCCL 2.30.7's constants: four nodes, 8-byte Ring/LL broadcast: 6.6 us
 * (base, Ring, LL) + 2.7 (network, Ring, LL) = 9.3 us; one node, Ring/Simple
 * reduce: 8.4 + 3.4 (NVLink, Ring, Simple) = 11.8 us.  The all-gather on
 * the same ring still pays each of its 31 steps: 6.6 + 28 x max(0.6, 1.0
 * network overhead) + 3 x 2.7 = 42.7 us. */
Test(nccl, rooted_ring_pays_one_hop)
{
	struct pm_nccl_sys four = nodes_of(4), one = one_node();
	struct pm_nccl_cost k = price(&four, PM_COLL_BROADCAST, PM_NCCL_RING, PM_NCCL_LL, 8);

	cr_assert(rel_close(k.lat_s, 9.3e-6, 1e-9), "broadcast latency %g", k.lat_s);
	k = price(&one, PM_COLL_REDUCE, PM_NCCL_RING, PM_NCCL_SIMPLE, 8);
	cr_assert(rel_close(k.lat_s, 11.8e-6, 1e-9), "reduce latency %g", k.lat_s);
	k = price(&four, PM_COLL_ALLGATHER, PM_NCCL_RING, PM_NCCL_LL, 8);
	cr_assert(rel_close(k.lat_s, 42.7e-6, 1e-9), "all-gather latency %g", k.lat_s);
}

/* NCCL selects with the latency its network plugin reports (graph
 * latencyInter), not what a step costs: aws-ofi-nccl reports 75 us on p5
 * (src/platform-aws), where a step costs about 20 us.  Tree/LL on two
 * Hopper nodes, by hand: 6.8 + 2 x (7 x 0.6 + 1 x (5.0 + L)) = 25.2 + 2L
 * us: the time's latency with L = 20 is 65.2 us, NCCL's estimate adds
 * 25.2 + 150 = 175.2 us to its bytes term. */
Test(nccl, selects_with_the_plugins_latency)
{
	struct pm_nccl_sys s = nodes_of(2);
	s.net_lat_s = 20e-6;
	s.tuner_lat_s = 75e-6;
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_LL, 8);

	cr_assert(rel_close(k.lat_s, 65.2e-6, 1e-9), "latency %g", k.lat_s);
	cr_assert(rel_close(k.model_s - 8 / k.algbw_Bps, 175.2e-6, 1e-9), "estimate %g", k.model_s);
}

/* ll128_net 0 (GPUs that reach their NICs through the CPU): LL128 runs in
 * a node, not across nodes, as NCCL's tuning.cc enables it.  An
 * all-gather on four nodes (Intel hosts, NCCL 2.30.7) then runs Ring/LL
 * and Ring/Simple; by hand, estimates in us:
 *   LL: 6.6 + 28 x max(0.6, 1.0) + 3 x 2.7 = 42.7 latency; bus
 *       min(llMaxBw 20.4 GB/s, 0.5 x 370) x 32/31 = 21.06 GB/s algbw;
 *   Simple: 8.4 + 28 x max(3.4, 3.0) + 3 x 14 = 145.6; 370 x 32/31 =
 *       381.94 GB/s.
 * 1 MiB: LL 42.7 + 49.8 = 92.5 against Simple 148.3: LL.  4 MiB: LL
 * 42.7 + 199.2 = 241.9 against Simple 145.6 + 10.98 = 156.6: Simple.
 * With LL128 on, Ring/LL128 (79.2 + 11.9) would take 4 MiB. */
Test(nccl, ll128_off_across_nodes)
{
	struct pm_nccl_sys s = nodes_of(4), one = one_node();
	struct pm_nccl_cost k;
	struct pm_err err;

	s.ll128_local = one.ll128_local = 1;
	cr_assert_eq(pm_nccl_price(&s, PM_COLL_ALLGATHER, PM_NCCL_RING, PM_NCCL_LL128, 4 << 20, &k, &err),
		     PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "ll128_net 0"), "%s", err.msg);
	cr_assert_eq(pm_nccl_price(&one, PM_COLL_ALLGATHER, PM_NCCL_RING, PM_NCCL_LL128, 4 << 20, &k, &err), PM_OK);
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLGATHER, ~0u, ~0u, 1 << 20, &k, &err), PM_OK);
	cr_assert(k.algo == PM_NCCL_RING && k.proto == PM_NCCL_LL);
	cr_assert(rel_close(k.model_s, 42.7e-6 + 1048576 / (20.4e9 * 32 / 31), 1e-9), "%g", k.model_s);
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLGATHER, ~0u, ~0u, 4 << 20, &k, &err), PM_OK);
	cr_assert(k.algo == PM_NCCL_RING && k.proto == PM_NCCL_SIMPLE);
	cr_assert(rel_close(k.model_s, 145.6e-6 + 4194304 / (370e9 * 32 / 31), 1e-9), "%g", k.model_s);
	s.ll128_local = 0;
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLGATHER, ~0u, ~0u, 4 << 20, &k, &err), PM_OK);
	cr_assert(k.algo == PM_NCCL_RING && k.proto == PM_NCCL_LL128);
}

/* NVLS at its bound: 8 GiB on 8 GPUs runs at the 480 GB/s bus bandwidth
 * (algbw 480 x 8/14 = 274.29 GB/s: 31.317 ms) plus its 25 us latency
 * (NVLink, NVLS, Simple; NVLS has no base latency) and the launch. */
Test(nccl, nvls_at_its_bound)
{
	struct pm_nccl_sys s = one_node();
	double n = 8589934592.0;
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_NVLS, PM_NCCL_SIMPLE, n);

	cr_assert(rel_close(k.lat_s, 25e-6, 1e-9));
	cr_assert(rel_close(k.bw_s, n / (480e9 * 8 / 14), 1e-9));
	cr_assert(rel_close(k.busbw_Bps, 480e9, 2e-3), "busbw %g", k.busbw_Bps);
	/* the reduction is in the switch: every GPU sends n once, not
	 * 2(P-1)/P n, so NVLS beats the ring's endpoint bound 2(P-1)/P n / 370 GB/s */
	cr_assert_lt(k.time_s, 2.0 * 7 / 8 * n / 370e9);
}

/* The channel count: a 64 KiB LL ring gives each channel 512 threads x
 * 64 B = 32 KiB, so 2 of the 16 channels run (65536 < 3 x 32768, not < 2
 * x 32768), at 2/16 of the open LL rate 0.5 x 370 GB/s = 23.125 GB/s
 * (under the node's 141 GB/s LL limit); 512 KiB fills all 16, and the
 * limit holds: 141 GB/s. */
Test(nccl, channels_follow_the_size)
{
	struct pm_nccl_sys s = one_node();
	struct pm_nccl_cost small = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_LL, 65536);
	struct pm_nccl_cost full = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_LL, 524288);

	cr_assert_eq(small.channels, 2);
	cr_assert(rel_close(small.bw_s, 65536 / (23.125e9 * 8 / 14), 1e-9));
	cr_assert_eq(full.channels, 16);
	cr_assert(rel_close(full.bw_s, 524288 / (141e9 * 8 / 14), 1e-9));
	/* more channels of a machine help only where the size fills them */
	s.channels = 32;
	struct pm_nccl_cost wide = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_LL, 65536);
	cr_assert_eq(wide.channels, 2);
	cr_assert(rel_close(wide.bw_s, 2 * small.bw_s, 1e-9), "half the share of a wider machine");
}

/* LL's limit (llMaxBws) is the node's, not each channel's: on four
 * nodes (Intel hosts) it is 20.4 GB/s, below the open LL rate 0.5 x
 * min(370, 384) = 185 GB/s.  A 512 KiB all-gather on 32 GPUs gives each
 * channel 512 threads x 8 B x 32 ranks = 128 KiB, so 4 channels run:
 * 4/16 x 185 = 46.25 GB/s of open rate, more than the limit, so they
 * move the whole 20.4 GB/s (algbw x 32/31 = 21.058 GB/s: 24.897 us).
 * At 128 KiB one channel runs: 185/16 = 11.5625 GB/s, under the limit
 * (algbw 11.935 GB/s: 10.982 us). */
Test(nccl, ll_limit_is_the_nodes)
{
	struct pm_nccl_sys s = nodes_of(4);
	struct pm_nccl_cost four = price(&s, PM_COLL_ALLGATHER, PM_NCCL_RING, PM_NCCL_LL, 524288);
	struct pm_nccl_cost one = price(&s, PM_COLL_ALLGATHER, PM_NCCL_RING, PM_NCCL_LL, 131072);

	cr_assert_eq(four.channels, 4);
	cr_assert(rel_close(four.bw_s, 24.897e-6, 1e-4), "bw %g", four.bw_s);
	cr_assert_eq(one.channels, 1);
	cr_assert(rel_close(one.bw_s, 10.982e-6, 1e-4), "bw %g", one.bw_s);
}

/* A channel moves its chunk at its own rate, however many run.  A 4 KiB
 * tree/LL all-reduce on four 8-GPU nodes runs one channel (8 B x 512
 * threads = 4 KiB a channel).  Its chunk is the whole 4 KiB; each
 * NVLink stage takes 4096 x 16 / (370e9 x 1/2) = 0.35424 us (one of 16
 * channels' share, LL's half of the lines data) and each network send
 * 4096 x 2 x 16 / (384e9 x 1/2) = 0.68267 us.  LL has one NVLink stage
 * before each of the 2 log2 4 = 4 network sends, half up, half down:
 * 2 x 0.35424 + 2 x 0.35424 + 4 x 0.68267 = 4.14764, less the slowest
 * hop once: fill 3.46497 us.  Bytes: the tree's LL rate 0.92 x 370 / 3.8
 * = 89.579 GB/s, 1/16 of it for the one channel (under the 20.4 GB/s
 * LL limit), x 1/2 (tree) x 0.7 (NCCL's tree correction at 4 KiB):
 * 1.9595 GB/s, 2.0903 us. */
Test(nccl, one_channel_fills_at_its_own_rate)
{
	struct pm_nccl_sys s = nodes_of(4);
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_LL, 4096);

	cr_assert_eq(k.channels, 1);
	cr_assert(rel_close(k.fill_s, 3.46497e-6, 1e-4), "fill %g", k.fill_s);
	cr_assert(rel_close(k.bw_s, 2.0903e-6, 1e-4), "bw %g", k.bw_s);
}

/* The pipeline's fill, by hand (docs/model.md, NCCL, fill).  NVLS on one
 * node at 8 MiB: 16 channels x 8 heads = 128 concurrent chunks; the chunk
 * starts at the 128 KiB NVLS chunk and enqueue.cc cuts it to 64 KiB (8 MiB
 * < 64 x 128 x 128 KiB) and to 32 KiB (< 8 x 128 x 64 KiB), not to 16 KiB
 * (8 MiB is not < 2 x 128 x 32 KiB).  Two hops (the switch's reduction
 * and its multicast) of 7/8 x 128 x 32 KiB / 480 GB/s = 7.6459 us each;
 * the fill is every hop but the slowest: 7.6459 us.  A ring has none. */
Test(nccl, nvls_fill_by_hand)
{
	struct pm_nccl_sys s = one_node();
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_NVLS, PM_NCCL_SIMPLE, 8388608);

	cr_assert(rel_close(k.fill_s, 7.0 / 8 * 128 * 32768 / 480e9, 1e-9), "fill %g", k.fill_s);
	cr_assert(rel_close(k.time_s, k.launch_s + k.lat_s + k.bw_s + k.fill_s, 1e-12));
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_SIMPLE, 8388608);
	cr_assert_eq(k.fill_s, 0);
}

/* Tree/LL128 across two 8-GPU nodes (16 channels, 370 GB/s NVLink ring,
 * 8 x 48 GB/s NICs) at 16 MiB.  The chunk (enqueue.cc, 2.19 on): the
 * LL128 step is 614,400 B of lines, 576,000 B of data; nstepsLL128 = 1 +
 * log2 2 + 0.1 x 8 = 2.8; halved while 16 MiB / (16 x chunk) (integer) <
 * 2.8 x 64 / 8 = 22.4 and chunk > 131,072: 288,000 (1), 144,000 (3),
 * 72,000 (7); then 14 is not < 2.8 x 16 / 8.  Hops: 2 network ones (up
 * and down the node tree), each 72,000 x 2 x 16 / (2 x 384 GB/s x
 * 120/128) = 3.2 us, and, LL128 forwarding its lines as they arrive
 * inside a node, one NVLink stage before each network send: on the way
 * up the first chunks have the GPUs' NVLink to themselves, 72,000 x 16 /
 * (370 GB/s x 120/128) = 3.3211 us; on the way down the next chunks go
 * up beside them (16 MiB is 14.6 chunks a channel), 6.6422 us.  Fill =
 * 3.3211 + 6.6422 + 2 x 3.2 - 6.6422 = 9.7211 us.  With 2.18's rules (no
 * LL128 loop) the chunk is 576,000 B (1.8 a channel): 26.5687 + 2 x 25.6
 * = 77.7687 us. */
Test(nccl, tree_fill_by_hand)
{
	struct pm_nccl_sys s = nodes_of(2);
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_LL128, 16777216);

	cr_assert_eq(k.channels, 16);
	cr_assert(rel_close(k.fill_s, 1152000 / 346.875e9 + 2 * 3.2e-6, 1e-9), "fill %g", k.fill_s);
	s.version = pm_nccl_version_find("2.18.5");
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_LL128, 16777216);
	cr_assert(rel_close(k.fill_s, 9216000 / 346.875e9 + 2 * 25.6e-6, 1e-9), "fill %g", k.fill_s);
	/* one node: no network hop, and LL128 streams its chain */
	s = one_node();
	cr_assert_eq(price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_LL128, 16777216).fill_s, 0);
}

/* Tree/Simple on the same two nodes, forced (as Google's TCPXO profile
 * does): the chunk is Simple's 4 MiB / 8 = 524,288 B step (no tree/Simple
 * cut from 2.19 on).  At 8 MiB each of the 16 channels has one chunk, so
 * it crosses the node's chain alone: 7 NVLink hops up and 7 down, each
 * 524,288 x 16 / 370 GB/s = 22.6717 us, and 2 network sends of 524,288 x
 * 2 x 16 / (2 x 384 GB/s) = 21.8453 us.  Fill = 13 x 22.6717 + 2 x
 * 21.8453 = 338.4 us.  At 16 MiB (two chunks a channel) the way down
 * shares each GPU's NVLink with the second chunk's way up: 7 x 22.6717 +
 * 7 x 45.3434 + 2 x 21.8453 - 45.3434 = 477.8 us. */
Test(nccl, tree_simple_fill_by_hand)
{
	struct pm_nccl_sys s = nodes_of(2);
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_SIMPLE, 8388608);

	cr_assert_eq(k.channels, 16);
	cr_assert_eq(k.chunk_B, 524288);
	cr_assert(rel_close(k.fill_s, 13 * 524288 * 16 / 370e9 + 2 * 524288 * 32 / 768e9, 1e-9), "fill %g", k.fill_s);
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_SIMPLE, 16777216);
	cr_assert(rel_close(k.fill_s, (7 + 14 - 2) * 524288 * 16 / 370e9 + 2 * 524288 * 32 / 768e9, 1e-9), "fill %g",
		  k.fill_s);
}

/* NVLSTree on four nodes at 128 MiB: the chunk is NVLS's 128 KiB capped
 * at 64 KiB from four nodes on (2.20 on), and no cut applies (128 MiB is
 * not < 4 x 128 x 64 KiB).  Hops: NVLS's two, 7/8 x 128 x 64 KiB / 480
 * GB/s = 15.2917 us each, and 2 log2 4 = 4 network ones, 128 x 64 KiB /
 * 384 GB/s = 21.8453 us each.  Fill = 2 x 15.2917 + 3 x 21.8453 = 96.1195 us. */
Test(nccl, nvlstree_fill_by_hand)
{
	struct pm_nccl_sys s = nodes_of(4);
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_NVLS_TREE, PM_NCCL_SIMPLE, 134217728);

	cr_assert(rel_close(k.fill_s, 2 * 7340032 / 480e9 + 3 * 8388608 / 384e9, 1e-9), "fill %g", k.fill_s);
}

/* The proxy's bound.  Four Intel-hosted nodes (NCCL's network overhead
 * 1 us a step), NVLSTree at 8 GiB: 16 NVLS channels x 8 heads share the
 * bytes, 8 GiB / 128 = 64 MiB a head, in 64 KiB chunks (the four-node cap;
 * 8 GiB is not < 32 x 128 x 64 KiB, so no cut): 1024 chunks.  Each crosses
 * the 3 edges of the nodes' tree up and down, a send and a receive at
 * each end: 4 x 3 = 12 messages over 4 nodes, 3 a node; the node's 16 x
 * 8 x 1024 x 3 = 393,216 messages fall to 8 proxies: 49,152 each, and
 * all but the first (the latency's) take 49.151 ms at 1 us.  The links
 * alone would take 8 GiB / (384 GB/s x 32/62, NVLSTree's bus-to-algorithm
 * ratio R / steps) = 43.3 ms, so the proxy's bound is the bytes' time.
 * On one node there is no network message.  Two AMD-hosted nodes
 * (2 us a step), Tree/LL128 at 2 MiB on 16 channels: the chunk is 18,000
 * B (tree_fill_by_hand's rule: 576,000 halved to 72,000 while fewer than
 * 2.8 x 64 / 8 = 22.4 chunks a channel, then to 18,000 while fewer than
 * 5.6), so each channel's 131,072 B take ceil(7.28) = 8 chunks, and the
 * one edge 4 messages each over 2 nodes: 16 x 8 x 2 = 256 a node, 32 a
 * proxy, 31 x 2 = 62 us, against the bytes' 2 MiB / 95.7 GB/s = 21.9 us.
 * At 8 bytes one channel runs one chunk: a quarter message a proxy, no
 * bound beyond the latency. */
Test(nccl, proxy_bounds_the_tree_across_nodes)
{
	struct pm_nccl_sys s = nodes_of(4);
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_NVLS_TREE, PM_NCCL_SIMPLE, 8589934592.0);

	cr_assert(rel_close(k.proxy_msgs, 49152, 1e-12), "messages %g", k.proxy_msgs);
	cr_assert(rel_close(k.proxy_s, 49.151e-3, 1e-12), "proxy %g", k.proxy_s);
	cr_assert(rel_close(k.bw_s, 49.151e-3, 1e-12), "bytes %g", k.bw_s);
	cr_assert(rel_close(k.time_s, k.launch_s + k.lat_s + k.fill_s + 49.151e-3, 1e-12));
	s = nodes_of(2);
	s.amd_cpu = 1;
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_LL128, 2097152);
	cr_assert_eq(k.channels, 16);
	cr_assert_eq(k.chunk_B, 18000);
	cr_assert(rel_close(k.proxy_msgs, 32, 1e-12), "messages %g", k.proxy_msgs);
	cr_assert(rel_close(k.bw_s, 62e-6, 1e-12), "bytes %g", k.bw_s);
	/* the bound is ours: NCCL's own estimate, which it selects by, keeps the bytes at its rate */
	cr_assert(rel_close(k.model_s, k.lat_s + 2097152 / k.algbw_Bps, 1e-9), "model %g", k.model_s);
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_LL, 8);
	cr_assert(k.channels == 1 && rel_close(k.proxy_msgs, 0.25, 1e-12), "%d channels, %g messages", k.channels,
		  k.proxy_msgs);
	cr_assert_eq(k.proxy_s, 0);
	s = one_node();
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_LL128, 2097152);
	cr_assert_eq(k.proxy_msgs, 0);
	cr_assert_eq(k.proxy_s, 0);
}

/* --explain's note for an nccl row names the closed form's terms, and
 * they add up to its time (identity): on two DGX H100 nodes (8 x 48 GB/s
 * NICs, as nodes_of) a 16 MiB all-reduce runs tree/LL128 in 72,000-byte
 * chunks through 2 network sends and 2 NVLink stages (tree_fill_by_hand). */
Test(nccl, explain_names_the_terms)
{
	struct pm_topo *t = topo_or_die("machine:dgx-h100:2");
	struct pm_params p = plain_params(0, 0, 1e9, 0);
	struct pm_inst in, at;
	struct pm_cost c;
	struct pm_err err;
	char note[400];
	double launch, lat, fill, chunk, bytes;
	int hops;

	resolve_or_die("nccl:tree/ll128", t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 16777216, &at, &err), PM_OK);
	at.algo->terms(&at, 16777216, &p, note, sizeof note);
	cr_assert_eq(sscanf(note, "launch %lf us + NCCL latency %lf us + fill %lf us (%lf-byte chunks through %d hops) + bytes %lf us",
			    &launch, &lat, &fill, &chunk, &hops, &bytes), 6, "%s", note);
	cr_assert_eq(chunk, 72000);
	cr_assert_eq(hops, 4);
	pm_algo_closed(&at, 16777216, &p, &c);
	cr_assert(rel_close((launch + lat + fill + bytes) * 1e-6, c.time_s, 1e-3), "%s: %g us", note, c.time_s * 1e6);
	/* the all-to-all has no fill; its bytes move at the busier of NVLink
	 * and the NICs.  At 1 MiB on 2 x 8 GPUs a node sends 8 x 1 MiB x 8/16
	 * = 4 MiB across at 384 GB/s (10.92 us) and a GPU 1 MiB x 7/16 over
	 * NVLink at 370 GB/s (1.24 us): the NICs bind, algbw = 384 GB/s x
	 * 16 / (8 x 8) = 96 GB/s. */
	double algbw, rate;
	int run, of;
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_ALLTOALL, "nccl", t, 0, &in, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_at_size(&in, 1048576, &at, &err), PM_OK);
	at.algo->terms(&at, 1048576, &p, note, sizeof note);
	cr_assert_eq(sscanf(note, "launch %lf us + NCCL latency %lf us + bytes %lf us (%d/%d channels: %lf GB/s of NCCL's algbw %lf GB/s",
			    &launch, &lat, &bytes, &run, &of, &rate, &algbw), 7, "%s", note);
	cr_assert(rel_close(algbw, 96, 1e-3), "%s", note);
	cr_assert(rel_close(rate, 96, 1e-3), "%s", note);
	cr_assert(rel_close(bytes, 4194304 / 384e9 * 1e6, 1e-3), "%s", note);
	pm_algo_closed(&at, 1048576, &p, &c);
	cr_assert(rel_close((launch + lat + bytes) * 1e-6, c.time_s, 1e-3), "%s: %g us", note, c.time_s * 1e6);
	pm_topo_free(t);
	/* where NCCL's tuner sees another network latency than a step costs
	 * (aws-p5: 75 us reported, 20 us a step), the note gives both: Tree/LL
	 * on two nodes at 8 B pays 6.8 + 2 x (7 x 0.6 + 5.0 + 20) = 65.2 us,
	 * and NCCL's estimate carries 2 x 55 = 110 us more (and 8 B of bytes) */
	double est, plugin;
	t = topo_or_die("machine:aws-p5:2");
	resolve_or_die("nccl:tree/ll", t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 8, &at, &err), PM_OK);
	at.algo->terms(&at, 8, &p, note, sizeof note);
	cr_assert_eq(sscanf(note, "launch %lf us + NCCL latency %lf us (NCCL selects by its own estimate, %lf us, with the %lf us",
			    &launch, &lat, &est, &plugin), 4, "%s", note);
	cr_assert(rel_close(lat, 65.2, 1e-3), "%s", note);
	cr_assert(fabs(est - lat - 110) < 0.01, "%s", note);
	cr_assert(rel_close(plugin, 75, 1e-9), "%s", note);
	pm_topo_free(t);
	/* where the proxy bounds the bytes, the note says so and counts its
	 * messages: NVLSTree at 1 GiB on four DGX H100 nodes (Intel hosts, 1 us
	 * a step) is 1 GiB / 128 heads = 8 MiB a head in 64 KiB chunks, 128
	 * chunks, 3 messages each a node (proxy_bounds_the_tree_across_nodes):
	 * 16 x 8 x 128 x 3 / 8 = 6,144 a proxy, 6,143 us */
	double msgs, each;
	t = topo_or_die("machine:dgx-h100:4");
	resolve_or_die("nccl:nvlstree", t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 1073741824, &at, &err), PM_OK);
	at.algo->terms(&at, 1073741824, &p, note, sizeof note);
	const char *b = strstr(note, " + bytes ");
	cr_assert(b && sscanf(b, " + bytes %lf us (bound by each GPU's proxy: %lf network messages at %lf us", &bytes,
			      &msgs, &each) == 3, "%s", note);
	cr_assert(rel_close(msgs, 6144, 1e-9) && rel_close(each, 1, 1e-9), "%s", note);
	cr_assert(rel_close(bytes, 6143, 1e-3), "%s", note);
	pm_topo_free(t);
}

/* NCCL's choice on 8 H200s (stas00/ml-engineering, NCCL 2.27: Ring/LL up
 * to 1 MiB, NVLS from 2 MiB), by its own estimate lat + n / algbw:
 * 1 MiB: ring/LL 15 + 1048576 / 80.571e3 = 28.01 us < NVLS 25 + 1048576 /
 * 274.29e3 = 28.82 us; 2 MiB: ring/LL 41.03 us > NVLS 32.65 us. */
Test(nccl, choice_ll_then_nvls)
{
	struct pm_nccl_sys s = one_node();
	unsigned all_a = (1u << PM_NCCL_NALGO) - 1, all_p = (1u << PM_NCCL_NPROTO) - 1;
	struct pm_nccl_cost k;
	struct pm_err err;

	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, all_a, all_p, 1048576, &k, &err), PM_OK);
	cr_assert_eq(k.algo, PM_NCCL_RING);
	cr_assert_eq(k.proto, PM_NCCL_LL);
	cr_assert(rel_close(k.model_s, 28.014e-6, 1e-4), "%g", k.model_s);
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, all_a, all_p, 2097152, &k, &err), PM_OK);
	cr_assert_eq(k.algo, PM_NCCL_NVLS);
	cr_assert(rel_close(k.model_s, 32.646e-6, 1e-4), "%g", k.model_s);
	/* without NVLS (A100-like) the ring stays; LL128 takes over later */
	s.nvls_Bps = 0;
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, all_a, all_p, 2097152, &k, &err), PM_OK);
	cr_assert_eq(k.algo, PM_NCCL_RING);
}

/* NCCL_PROTO=LL128 as the mask: the ring's LL128 latency is 14 + 14 x
 * 1.9 = 40.6 us; bus bandwidth min(0.92 x 370, 16 x 36.7) = 340.4 GB/s. */
Test(nccl, protocol_mask)
{
	struct pm_nccl_sys s = one_node();
	struct pm_nccl_cost k;
	struct pm_err err;

	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, 1u << PM_NCCL_RING, 1u << PM_NCCL_LL128,
				    8, &k, &err), PM_OK);
	cr_assert_eq(k.proto, PM_NCCL_LL128);
	cr_assert(rel_close(k.lat_s, 40.6e-6, 1e-9));
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_LL128, 1 << 30);
	cr_assert(rel_close(k.bw_s, (1 << 30) / (340.4e9 * 8 / 14), 1e-9));
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, 1u << PM_NCCL_PAT, 1u << PM_NCCL_SIMPLE,
				    8, &k, &err), PM_ENOTAPPLICABLE);
	/* the refusal says why: PAT is NCCL's all-gather and reduce-scatter
	 * (its 2.23 release notes), and one node has no tree of nodes for
	 * NVLSTree; asked with every protocol, the reason is the algorithm's,
	 * not "Simple only" */
	cr_assert(strstr(err.msg, "on all-reduce here (8 ranks on 1 node): PAT runs all-gather and reduce-scatter only"),
		  "%s", err.msg);
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, 1u << PM_NCCL_NVLS_TREE, 7, 8, &k, &err),
		     PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "NVLSTree needs more than one node"), "%s", err.msg);
}

/* NCCL_ALGO and NCCL_PROTO as a platform's setup exports them (param
 * nccl_algo, nccl_proto): NCCL's syntax (names in any case, "^" to
 * exclude), p2p kept (NCCL_ALGO does not govern it).  An 8-byte
 * all-reduce on one node, which NCCL runs as Ring/LL (protocol_mask's
 * latencies), runs Simple when the platform exports NCCL_PROTO=Simple;
 * a choice the user forces replaces the platform's, as a user's export
 * does, and the other dimension keeps the platform's. */
Test(nccl, platform_environment)
{
	unsigned m;
	cr_assert_eq(pm_nccl_mask_parse("Ring,Tree", 0, &m), 0);
	cr_assert_eq(m, 1u << PM_NCCL_RING | 1u << PM_NCCL_TREE | 1u << PM_NCCL_P2P);
	cr_assert_eq(pm_nccl_mask_parse("^LL128", 1, &m), 0);
	cr_assert_eq(m, 1u << PM_NCCL_LL | 1u << PM_NCCL_SIMPLE);
	cr_assert_eq(pm_nccl_mask_parse("simple", 1, &m), 0);
	cr_assert_eq(m, 1u << PM_NCCL_SIMPLE);
	cr_assert_eq(pm_nccl_mask_parse("ring,,tree", 0, &m), -1);
	cr_assert_eq(pm_nccl_mask_parse("p2p", 0, &m), -1);
	cr_assert_eq(pm_nccl_mask_parse("^", 1, &m), -1);
	cr_assert_eq(pm_nccl_mask_parse("fast", 1, &m), -1);

	struct pm_nccl_sys s = one_node();
	struct pm_nccl_cost k;
	struct pm_err err;
	s.algo_env = 1u << PM_NCCL_RING | 1u << PM_NCCL_TREE | 1u << PM_NCCL_P2P;
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, ~0u, ~0u, 8, &k, &err), PM_OK);
	cr_assert(k.algo == PM_NCCL_RING && k.proto == PM_NCCL_LL);
	/* at 1 GiB NVLS (480 GB/s) would win; the platform's list has none */
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, ~0u, ~0u, 1 << 30, &k, &err), PM_OK);
	cr_assert_neq(k.algo, PM_NCCL_NVLS);
	s.proto_env = 1u << PM_NCCL_SIMPLE;
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, ~0u, ~0u, 8, &k, &err), PM_OK);
	cr_assert_eq(k.proto, PM_NCCL_SIMPLE);
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, ~0u, 1u << PM_NCCL_LL, 8, &k, &err), PM_OK);
	cr_assert(k.algo == PM_NCCL_RING && k.proto == PM_NCCL_LL);
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, 1u << PM_NCCL_NVLS, ~0u, 8, &k, &err), PM_OK);
	cr_assert(k.algo == PM_NCCL_NVLS && k.proto == PM_NCCL_SIMPLE);
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLTOALL, ~0u, ~0u, 8, &k, &err), PM_OK);
	cr_assert_eq(k.algo, PM_NCCL_P2P);
}

/* Two nodes: a tree all-reduce node sends n/2 up and n/2 down per tree,
 * so its rate is capped by twice the node's NICs (46 GB/s: 4 x 11.5 on a
 * p4d-like node): bus min(232, 2 x 46) x 0.92 = 84.64 GB/s, algbw half
 * of it.  Latency (LL): 6.8 + 2 x (7 x 0.6 + 1 x (5.0 + 65)) = 155.2 us. */
Test(nccl, tree_across_two_nodes)
{
	struct pm_nccl_sys s = one_node();
	s.ranks = 16;
	s.nodes = 2;
	s.arch = PM_NCCL_AMPERE;
	s.ring_Bps = 232e9;
	s.nvls_Bps = 0;
	s.net_Bps = 46e9;
	s.net_lat_s = 65e-6;
	s.channels = 12;
	double n = 1u << 30;
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_SIMPLE, n);
	cr_assert(rel_close(k.bw_s, n / (92e9 * 0.92 / 2), 1e-9), "%g", k.bw_s);
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_LL, 8);
	cr_assert(rel_close(k.lat_s, 155.2e-6, 1e-9), "%g", k.lat_s);
}

/* Through the algorithm table on a preset: the label names the choice
 * and its channels; nccl:ring forces the ring as NCCL_ALGO=ring does. */
Test(nccl, algorithm_on_a_preset)
{
	struct pm_topo *t = topo_or_die("machine:hgx-h200:1");
	struct pm_inst in, at;
	struct pm_err err;
	struct pm_cost c;

	resolve_or_die("nccl", t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 1048576, &at, &err), PM_OK, "%s", err.msg);
	cr_assert_str_eq(at.label, "nccl:ring/ll(16ch)");
	cr_assert_eq(pm_algo_at_size(&in, 4194304, &at, &err), PM_OK);
	cr_assert_str_eq(at.label, "nccl:nvls/simple(16ch)");
	resolve_or_die("nccl:ring", t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 1 << 30, &at, &err), PM_OK);
	cr_assert_str_eq(at.label, "nccl:ring/simple(16ch)");
	/* 1 GiB on the preset's figures (launch 2 us, ring_busbw 370 GB/s):
	 * latency 8.4 + 14 x 3.4 = 56.0 us (Ring, Simple, NVLink); every
	 * channel full; bandwidth 2^30 / (370e9 x 8/14) = 5078.5 us; the
	 * per-link options play no part. */
	struct pm_params p = plain_params(1e-3, 1e-3, 1e6, 0);
	pm_algo_closed(&in, 1 << 30, &p, &c);
	cr_assert(rel_close(c.alpha_s, 2e-6, 1e-9), "%g", c.alpha_s);
	cr_assert(rel_close(c.lat_s, 56.0e-6, 1e-9), "%g", c.lat_s);
	cr_assert(rel_close(c.time_s, 58e-6 + 1073741824.0 / (370e9 * 8 / 14), 1e-9), "%g", c.time_s);
	pm_topo_free(t);
}

/* Every preset that describes NCCL at 1, 2, 4 and 16 nodes: the i-th
 * (i < NPRESET_NETS) as a network, its spec written to spec. */
static const char *const nccl_presets[] = {
	"dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200", "gb200-nvl72", "mi300x",
	"aws-p4d", "aws-p5", "aws-p6-b200", "gcp-a3-mega", "azure-nd-h100-v5",
};
static const int preset_nodes[] = {1, 2, 4, 16};
#define NPRESET_NODES (sizeof preset_nodes / sizeof preset_nodes[0])
#define NPRESET_NETS (sizeof nccl_presets / sizeof nccl_presets[0] * NPRESET_NODES)

static struct pm_topo *preset_net(size_t i, char *spec, size_t size)
{
	snprintf(spec, size, "machine:%s:%d", nccl_presets[i / NPRESET_NODES], preset_nodes[i % NPRESET_NODES]);
	return topo_or_die(spec);
}

/* Every preset that describes NCCL, at several node counts, for every
 * collective: a finite time no smaller than its launch, and a bus
 * bandwidth below twice the fastest rate the preset gives (NVLS moves
 * each byte once, so its busbw may exceed the ring's, never 2x a link). */
Test(nccl, every_preset_every_collective)
{
	for (size_t i = 0; i < NPRESET_NETS; i++) {
		char spec[64];
		struct pm_topo *t = preset_net(i, spec, sizeof spec);
		const struct pm_machine *m = pm_topo_machine_desc(t);
		cr_assert(m && m->nccl.arch >= 0, "%s has NCCL parameters", spec);
		double top = fmax(fmax(m->nccl.ring_Bps, m->nccl.nvls_Bps), m->level[0].inner_bw);
		for (int c = 0; c < PM_NCOLL; c++)
			for (double n = 8; n <= 17179869184.0; n *= 64) {
				struct pm_inst in, at;
				struct pm_err err;
				struct pm_cost k;
				cr_assert_eq(pm_algo_resolve_coll((enum pm_coll)c, "nccl", t, 0, &in, &err), PM_OK,
					     "%s: %s", spec, err.msg);
				cr_assert_eq(pm_algo_at_size(&in, n, &at, &err), PM_OK, "%s %d: %s", spec, c, err.msg);
				struct pm_params p = plain_params(0, 0, 1e9, 0);
				pm_algo_closed(&in, n, &p, &k);
				cr_assert(isfinite(k.time_s) && k.time_s >= m->nccl.launch_s, "%s %s %g B: %g",
					  spec, at.label, n, k.time_s);
				double bus = n / k.time_s * pm_coll_busbw_factor((enum pm_coll)c, in.P);
				cr_assert_lt(bus, 2 * top, "%s %s %g B: busbw %g", spec, at.label, n, bus);
			}
		pm_topo_free(t);
	}
}

/* RCCL on one node of 8 MI300X (ring_busbw 319 GB/s, LL128 off), by
 * hand from RCCL's tuning_model_5 (baseLat ring 12 us LL, 17 us Simple;
 * hwLat xGMI ring 0.8 us LL, 2.1 us Simple; bwRatio ring 0.08 LL, 1.0
 * Simple).  An all-reduce's 14 steps: LL latency 12 + 14 x 0.8 = 23.2 us,
 * LL algbw 0.08 x 319 x 8/14 = 14.583 GB/s; Simple 17 + 14 x 2.1 = 46.4
 * us at 319 x 8/14 = 182.29 GB/s.  RCCL's choice: at 256 KiB LL (23.2 +
 * 17.976 = 41.18 us) against Simple (46.4 + 1.438 = 47.84); at 512 KiB
 * Simple (46.4 + 2.876 = 49.28) against LL (23.2 + 35.95 = 59.15).  The
 * time is RCCL's estimate and the launch: 1 KiB on LL, 2 + 23.2 + 1024 /
 * 14.583e9 s = 25.2702 us.  A broadcast's LL rate is x 1.65 (gfx94x
 * rings on one node) and its 8 steps cost 12 + 8 x 0.8 = 18.4 us. */
Test(nccl, rccl_on_one_mi300x_node)
{
	struct pm_nccl_sys s = one_node();
	unsigned all_a = (1u << PM_NCCL_NALGO) - 1, all_p = (1u << PM_NCCL_NPROTO) - 1;
	struct pm_nccl_cost k;
	struct pm_err err;

	s.ring_Bps = 319e9, s.nvls_Bps = 0, s.ll128 = 0, s.amd_cpu = 1, s.rccl = 1;
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_LL, 1024);
	cr_assert(rel_close(k.lat_s, 23.2e-6, 1e-9), "latency %g", k.lat_s);
	cr_assert(rel_close(k.time_s, 25.2702e-6, 1e-5), "time %g", k.time_s);
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, all_a, all_p, 262144, &k, &err), PM_OK);
	cr_assert(k.algo == PM_NCCL_RING && k.proto == PM_NCCL_LL, "256 KiB: %d/%d", k.algo, k.proto);
	cr_assert(rel_close(k.model_s, 41.176e-6, 1e-4), "%g", k.model_s);
	cr_assert_eq(pm_nccl_select(&s, PM_COLL_ALLREDUCE, all_a, all_p, 524288, &k, &err), PM_OK);
	cr_assert(k.algo == PM_NCCL_RING && k.proto == PM_NCCL_SIMPLE, "512 KiB: %d/%d", k.algo, k.proto);
	cr_assert(rel_close(k.model_s, 49.276e-6, 1e-4), "%g", k.model_s);
	k = price(&s, PM_COLL_BROADCAST, PM_NCCL_RING, PM_NCCL_LL, 1024);
	cr_assert(rel_close(k.lat_s, 18.4e-6, 1e-9), "latency %g", k.lat_s);
	cr_assert(rel_close(k.bw_s, 1024 / (0.08 * 319e9 * 1.65), 1e-9), "bw %g", k.bw_s);
	/* what RCCL does not run here */
	cr_assert_eq(pm_nccl_price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_SIMPLE, 1 << 20, &k, &err),
		     PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "Tree/Simple"), "%s", err.msg);
	s.ll128 = 1;	/* a machine that enables LL128: the table has no rate for it */
	cr_assert_eq(pm_nccl_price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_LL128, 1 << 20, &k, &err),
		     PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "LL128"), "%s", err.msg);
	s.ppn = 1, s.ranks = 8, s.nodes = 8, s.net_Bps = 48e9;
	cr_assert_eq(pm_nccl_price(&s, PM_COLL_ALLGATHER, PM_NCCL_PAT, PM_NCCL_SIMPLE, 1 << 20, &k, &err),
		     PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "RCCL"), "%s", err.msg);
}

/* The library a machine names: mi300x says rccl, so one node of it is
 * priced by RCCL's table (a 1 KiB all-reduce on Ring/LL: 23.2 us of RCCL
 * latency, as derived above); a library that is neither is refused with
 * the value and what was expected. */
Test(nccl, machine_names_its_library)
{
	static struct pm_machine m;
	struct pm_nccl_sys s;
	struct pm_nccl_cost k;
	struct pm_err err;

	cr_assert_eq(pm_machine_load("mi300x", &m, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(m.nccl.library, 1);
	cr_assert_eq(pm_nccl_sys_of(&m, 8, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.rccl, 1);
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_LL, 1024);
	cr_assert(rel_close(k.lat_s, 23.2e-6, 1e-9), "latency %g", k.lat_s);
	cr_assert_eq(pm_machine_load("dgx-h100", &m, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(m.nccl.library, 0);

	char path[] = "/tmp/pm_libXXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	cr_assert(f);
	fputs("kind,name,count,inner_bw,egress_bw,flow_bw,value,source\n"
	      "param,arch,,,,,hopper,x\nparam,library,,,,,cuda,x\nlevel,node,8,450GB/s,400GB/s,,,x\n", f);
	fclose(f);
	cr_assert_eq(pm_machine_load(path, &m, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "'cuda'") && strstr(err.msg, "nccl or rccl"), "%s", err.msg);
	unlink(path);
}

/* Twice the bytes never take much less time: none of the 19 measured
 * tables in data/validation (given and held out) falls by more than 25%
 * from one size to the next (Voltage Park's reduce, 10.87 us at 8 B to
 * 8.14 us at 16 B; aws_p5_2node's all-reduce 135.1 us at 64 KiB to 108.9
 * us at 128 KiB, where NCCL changes its choice).  A size NCCL runs on few channels must
 * not price at twice a larger one it runs on all (LL's limit is the
 * node's: nccl::ll_limit_is_the_nodes); every preset, 1-16 nodes, every
 * collective, 8 B to 8 GiB: T(2n) >= 0.6 T(n). */
Test(nccl, twice_the_bytes_never_take_much_less_time)
{
	for (size_t i = 0; i < NPRESET_NETS; i++) {
		char spec[64];
		struct pm_topo *t = preset_net(i, spec, sizeof spec);
		struct pm_params p = plain_params(0, 0, 1e9, 0);
		for (int c = 0; c < PM_NCOLL; c++) {
			struct pm_inst in, at;
			struct pm_err err;
			struct pm_cost k;
			double last = 0;
			cr_assert_eq(pm_algo_resolve_coll((enum pm_coll)c, "nccl", t, 0, &in, &err), PM_OK,
				     "%s: %s", spec, err.msg);
			for (double n = 8; n <= 8589934592.0; n *= 2) {
				cr_assert_eq(pm_algo_at_size(&in, n, &at, &err), PM_OK, "%s: %s", spec, err.msg);
				pm_algo_closed(&in, n, &p, &k);
				cr_assert_geq(k.time_s, 0.6 * last, "%s %s %g B: %g s after %g s", spec,
					      at.label, n, k.time_s, last);
				last = k.time_s;
			}
		}
		pm_topo_free(t);
	}
}

Test(nccl, refusals)
{
	struct pm_topo *t = topo_or_die("torus:4x4"), *m = topo_or_die("machine:abci:2");
	struct pm_inst in;
	struct pm_err err;

	cr_assert_eq(pm_algo_resolve("nccl", t, 0, &in, &err), PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "machine:NAME:NODES"), "%s", err.msg);
	cr_assert_eq(pm_algo_resolve("nccl", m, 0, &in, &err), PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "gives no NCCL parameters"), "%s", err.msg);
	cr_assert_eq(pm_algo_resolve("nccl:rings", m, 0, &in, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "'rings'"), "%s", err.msg);
	cr_assert_eq(pm_algo_resolve("nccl:ring/ll256", m, 0, &in, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "'ll256'"), "%s", err.msg);
	pm_topo_free(t);
	pm_topo_free(m);
}

Test(nccl, machine_file_params_checked)
{
	char path[] = "/tmp/pm_nccl_machineXXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs("kind,name,count,inner_bw,egress_bw,flow_bw,value,source\n"
	      "param,arch,,,,,pascal,x\n"
	      "level,node,8,300GB/s,200GB/s,,,x\n", f);
	fclose(f);
	struct pm_machine mach;
	struct pm_err err;
	cr_assert_eq(pm_machine_load(path, &mach, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "'pascal'") && strstr(err.msg, "hopper"), "%s", err.msg);
	unlink(path);
}

/* Google's A3 Mega VMs run NCCL through the GPUDirect-TCPXO profile,
 * which exports NCCL_ALGO=Ring,Tree, NCCL_PROTO=Simple and
 * NCCL_NVLS_ENABLE=0 (its nccl-env-profile.sh, enforced by the plugin's
 * guest config checker): on two VMs every all-reduce from 8 B to 8 GiB
 * is Ring or Tree with Simple, never the NVLSTree and LL the hardware
 * alone would get; forcing LL (a user's own NCCL_PROTO) still works. */
Test(nccl, gcp_a3_mega_runs_googles_profile)
{
	struct pm_topo *t = topo_or_die("machine:gcp-a3-mega:2");
	struct pm_inst in, at;
	struct pm_err err;

	resolve_or_die("nccl", t, 0, &in);
	for (double n = 8; n <= 8.0 * (1 << 30); n *= 8) {
		cr_assert_eq(pm_algo_at_size(&in, n, &at, &err), PM_OK, "%s", err.msg);
		cr_assert(strstr(at.label, "nccl:ring/simple") || strstr(at.label, "nccl:tree/simple"), "%g: %s", n,
			  at.label);
	}
	resolve_or_die("nccl:ll", t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 8, &at, &err), PM_OK, "%s", err.msg);
	cr_assert(strstr(at.label, "/ll("), "%s", at.label);
	pm_topo_free(t);
}

/* AWS's network plugin exports NCCL_PROTO=simple on p4d and p4de (EFA
 * does not deliver 128-byte blocks in order over its send/receive
 * protocol; aws-ofi-nccl src/nccl_ofi_net.cpp), so two p4d nodes run
 * Simple at every size.  The 8-byte all-reduce by hand, NCCL 2.30.7's
 * constants (tuning.cc): Tree/Simple base latency 8.4 us; the tree in a
 * node of 8 is 7 NVLink hops at hwLat[NVLINK][TREE][SIMPLE] 4.0 us; one
 * network step (log2 of 2 nodes) at hwLat[NET][TREE][SIMPLE] 14 us plus
 * the preset's net_latency 17 us twice (the send and Simple's flush);
 * up and down: 8.4 + 2 (7 x 4.0 + 14 + 2 x 17) = 160.4 us, and the
 * launch 2 us: 162.4 us (8 bytes are one chunk: no fill, no bytes to
 * speak of).  The published run measures 161-164 us. */
Test(nccl, aws_p4d_runs_simple)
{
	struct pm_topo *t = topo_or_die("machine:aws-p4d:2");
	struct pm_inst in, at;
	struct pm_err err;
	struct pm_cost k;

	resolve_or_die("nccl", t, 0, &in);
	for (double n = 8; n <= 8.0 * (1 << 30); n *= 8) {
		cr_assert_eq(pm_algo_at_size(&in, n, &at, &err), PM_OK, "%s", err.msg);
		cr_assert(strstr(at.label, "/simple("), "%g: %s", n, at.label);
	}
	struct pm_params p = plain_params(0, 0, 1e9, 0);
	pm_algo_closed(&in, 8, &p, &k);
	cr_assert(rel_close(k.time_s, 162.4e-6, 1e-4), "%g", k.time_s);
	pm_topo_free(t);
}

/* What NCCL's tuner is told per network step, against what a step
 * costs: aws-ofi-nccl reports 75 us on p4d, p4de and p5 and 35 us on
 * p6-b200 (src/platform-aws); NCCL's InfiniBand transport reports 0, the
 * step's cost on a DGX (net_latency 0).  On two p5, NCCL's estimate for
 * Tree/LL (two network steps) then carries 2 x (75 - 20) = 110 us more
 * than the time's latency.  The plugin also exports 512 KiB as NVLS's
 * and NVLSTree's chunk on p5 and later (its platform table); p4d has no
 * NVLS, and NCCL's InfiniBand transport exports neither. */
Test(nccl, aws_presets_report_the_plugins_latency)
{
	static const struct {
		const char *preset;
		double net, tuner, chunk;
	} want[] = {{"aws-p5", 20e-6, 75e-6, 524288}, {"aws-p4d", 17e-6, 75e-6, 0}, {"aws-p6-b200", 20e-6, 35e-6, 524288},
		    {"dgx-h100", 0, 0, 0}};
	struct pm_machine m;
	struct pm_nccl_sys s;
	struct pm_err err;

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		cr_assert_eq(pm_machine_load(want[i].preset, &m, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(pm_nccl_sys_of(&m, 16, &s, &err), PM_OK, "%s", err.msg);
		cr_assert(rel_close(s.net_lat_s + 1e-12, want[i].net + 1e-12, 1e-9), "%s", want[i].preset);
		cr_assert(rel_close(s.tuner_lat_s + 1e-12, want[i].tuner + 1e-12, 1e-9), "%s", want[i].preset);
		cr_assert(s.nvls_chunk_B == want[i].chunk && s.nvlstree_chunk_B == want[i].chunk, "%s", want[i].preset);
	}
	cr_assert_eq(pm_machine_load("aws-p5", &m, &err), PM_OK);
	pm_nccl_sys_of(&m, 16, &s, &err);
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_TREE, PM_NCCL_LL, 8);
	cr_assert(rel_close(k.model_s - 8 / k.algbw_Bps - k.lat_s, 110e-6, 1e-9), "%g", k.model_s);
}

/* A platform's NCCL_PROTO that names no protocol is refused with the
 * value and what is expected. */
Test(nccl, machine_file_environment_checked)
{
	char path[] = "/tmp/pm_nccl_machineXXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs("kind,name,count,inner_bw,egress_bw,flow_bw,value,source\n"
	      "param,arch,,,,,hopper,x\n"
	      "param,nccl_proto,,,,,\"simple,fast\",x\n"
	      "level,node,8,300GB/s,200GB/s,,,x\n", f);
	fclose(f);
	struct pm_machine mach;
	struct pm_err err;
	cr_assert_eq(pm_machine_load(path, &mach, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "'simple,fast'") && strstr(err.msg, "NCCL_PROTO"), "%s", err.msg);
	unlink(path);
}

/* The LL limit across nodes follows the host CPU as tuning.cc's index1
 * does: AMD hosts take llMaxBws row 1, Intel and Arm (GB200's Grace) row
 * 0.  Two nodes of 8 Blackwell GPUs, ring busbw 370 GB/s, 8 x 48 GB/s of
 * NICs: Ring/LL's bus bandwidth is min(llMaxBw[row][N2], 0.5 x 370) =
 * 39.0 GB/s on Intel and Arm, 22.5 on AMD; at 1 GiB every channel and
 * thread runs, so the bandwidth term is n / (busbw x R / 2(R-1)). */
Test(nccl, ll_limit_follows_the_host_cpu)
{
	struct pm_nccl_sys s = one_node();
	const double want[3] = {39.0e9, 22.5e9, 39.0e9};	/* intel, amd, arm */

	s.ranks = 16, s.nodes = 2, s.arch = PM_NCCL_BLACKWELL, s.net_Bps = 8 * 48e9;
	for (int cpu = 0; cpu < 3; cpu++) {
		s.amd_cpu = cpu;
		struct pm_nccl_cost c = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_LL, 1073741824.0);
		double bus = 1073741824.0 / c.bw_s * (2.0 * 15 / 16);
		assert_rel(bus, want[cpu], 1e-9);
	}
}

/* One set of constants per NCCL release (tuning.cc at each tag): before
 * 2.21 the ring's LL protocol ran at a quarter of the bus (after: a half)
 * and Hopper's one-node LL limit was 87.7 GB/s (after: 141).  8 H100 on
 * NVSwitch, ring busbw 370 GB/s, 1 GiB (every channel and thread):
 * 2.18.5: min(87.7, 370/4 = 92.5) = 87.7 GB/s; 2.30.7: min(141, 185) =
 * 141 GB/s.  2.18's NVLS latency is its baseLat, 23 us (2.19 on: the
 * NVLink hwLat, 25 us, on a zero base).  Releases outside 2.18 to the
 * newest are refused. */
Test(nccl, constants_per_release)
{
	struct pm_nccl_sys s = one_node();
	const char *rel[] = {"2.18.5", "2.30.7"};
	const double ll[] = {87.7e9, 141e9}, nvls_lat[] = {23e-6, 25e-6};

	cr_assert_eq(pm_nccl_version_find("2.30.7"), 0);
	cr_assert_eq(pm_nccl_version_find("2.24"), pm_nccl_version_find("2.27.7"));
	cr_assert_neq(pm_nccl_version_find("2.21.5"), pm_nccl_version_find("2.20.3"));
	cr_assert_eq(pm_nccl_version_find("2.17.1"), -1);
	cr_assert_eq(pm_nccl_version_find("2.31.0"), -1);
	cr_assert_eq(pm_nccl_version_find("two"), -1);
	for (int k = 0; k < 2; k++) {
		s.version = pm_nccl_version_find(rel[k]);
		struct pm_nccl_cost c = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_RING, PM_NCCL_LL, 1073741824.0);
		assert_rel(1073741824.0 / c.bw_s * (14.0 / 8), ll[k], 1e-9);
		c = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_NVLS, PM_NCCL_SIMPLE, 8);
		assert_rel(c.lat_s, nvls_lat[k], 1e-9);
	}
}

/* Contention price of instance in (sized: made for n first) on its
 * network, with p. */
static struct pm_cost contention_of(const struct pm_inst *in, double n, const struct pm_params *p)
{
	struct pm_inst at;
	struct pm_sched s;
	struct pm_cost c;
	struct pm_err err;

	cr_assert_eq(pm_algo_at_size(in, n, &at, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s: %s", at.label, err.msg);
	cr_assert_eq(pm_algo_contention(&at, &s, n, p, &c, NULL, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	return c;
}

/* Where NCCL runs its ring, the contention row prices our ring's
 * schedule as the protocol puts it on the wire, an identity between two
 * evaluations of one schedule: on 2 DGX H100 nodes (16 GPUs, one channel
 * per NIC rail, ring:8), Simple moves the data alone, LL128 128-byte
 * lines of 120 data bytes (16/15 of the ring's bandwidth term where each
 * transfer, n / (16 ranks x 8 channels), is a multiple of 120 bytes), LL
 * 16-byte lines of 8 (twice it).  The alpha column is NCCL's launch plus
 * its latency, the closed form's two terms, spread over NCCL's 2(P-1) =
 * 30 steps.  Where the size fills one channel only, the ring is ring:1.
 * NVLS has no schedule: refused with the reason. */
Test(nccl, ring_schedule_priced_as_the_protocol_runs)
{
	struct pm_topo *t = topo_or_die("machine:dgx-h100:2");
	struct pm_params p = plain_params(5e-6, 0, 1e9, 0);
	struct pm_inst nc, ring, ring1, at;
	struct pm_cost k, c, r;
	struct pm_err err;
	const double n128 = 120.0 * 128 * 1024, nll = 2097152;

	resolve_or_die("ring", t, 0, &ring);
	resolve_or_die("ring:1", t, 0, &ring1);
	struct pm_params none = p;
	none.alpha_s = 0;
	resolve_or_die("nccl:ring/simple", t, 0, &nc);
	c = contention_of(&nc, 1 << 30, &p);
	r = contention_of(&ring, 1 << 30, &none);
	pm_algo_closed(&nc, 1 << 30, &p, &k);
	cr_assert(rel_close(c.bw_s, r.bw_s, 1e-12), "simple %g ring %g", c.bw_s, r.bw_s);
	cr_assert(rel_close(c.alpha_s, k.alpha_s + k.lat_s, 1e-9), "alpha %g, NCCL %g + %g", c.alpha_s,
		  k.alpha_s, k.lat_s);
	cr_assert_eq(c.steps, 30);
	resolve_or_die("nccl:ring/ll128", t, 0, &nc);
	c = contention_of(&nc, n128, &p);
	r = contention_of(&ring, n128, &none);
	cr_assert(rel_close(c.bw_s, r.bw_s * 16 / 15, 1e-12), "ll128 %g ring %g", c.bw_s, r.bw_s);
	resolve_or_die("nccl:ring/ll", t, 0, &nc);
	cr_assert_eq(pm_algo_at_size(&nc, nll, &at, &err), PM_OK);
	cr_assert_str_eq(at.label, "nccl:ring/ll(16ch)");
	c = contention_of(&nc, nll, &p);
	r = contention_of(&ring, nll, &none);
	cr_assert(rel_close(c.bw_s, 2 * r.bw_s, 1e-12), "ll %g ring %g", c.bw_s, r.bw_s);
	/* 8 KiB: LL fills one channel (8192 < 2 x 512 threads x 8 B x 16) */
	cr_assert_eq(pm_algo_at_size(&nc, 8192, &at, &err), PM_OK);
	cr_assert_str_eq(at.label, "nccl:ring/ll(1ch)");
	c = contention_of(&nc, 8192, &p);
	r = contention_of(&ring1, 8192, &none);
	cr_assert(rel_close(c.bw_s, 2 * r.bw_s, 1e-12), "ll 1ch %g ring:1 %g", c.bw_s, r.bw_s);
	/* its ring broadcast across nodes is a pipelined chain a channel, one
	 * per rail (railchain): at 1 GiB Simple on 16 channels, 8 chains (the
	 * rails), each 128 MiB in 32 KiB chunks capped at 1024 chunks: K =
	 * 1024, 1024 + 14 steps */
	struct pm_topo *two = topo_or_die("machine:dgx-h100:2");
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_BROADCAST, "nccl", two, 0, &nc, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_at_size(&nc, 1 << 30, &at, &err), PM_OK);
	struct pm_sched s;
	cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nsteps, 1038);
	cr_assert_eq(s.nchunks, 8 * 1024);
	pm_sched_release(&s);
	pm_topo_free(two);
	pm_topo_free(t);
}

/* railchain on two DGX H100 nodes (P = 16), railchain:1,channels=2, by
 * hand.  Channel 0 walks node 0 up from GPU 0 and node 1 down: 0..7, 15..8;
 * channel 1 starts node 0 at GPU 4: 4..7, 0..3, then 11..8, 15..12, which
 * turned to start at the root is 0 1 2 3 11 10 9 8 15 14 13 12 4 5 6 7.
 * K = 1, u = n/2, S = K + P - 2 = 15 broadcast steps, hop t in step t:
 *   steps 0-2 and 8-10 both channels take the same hop (0->1, 1->2, 2->3,
 *   15->14, 14->13, 13->12): 2u on one NVLink, 2u/370 GB/s each;
 *   steps 3, 7, 11 one channel crosses a rail (3->11, 7->15, 12->4): u on
 *   a NIC, u/48 GB/s;
 *   steps 4-6 and 12-14 the two on different GPUs: u/370 GB/s.
 * So 18u/370 + 3u/48 = 9n/370 + 1.5n/48; the reduce mirrors it hop for
 * hop.  2 C K (P-1) = 60 transfers for the whole. */
Test(nccl, railchain_by_hand)
{
	struct pm_topo *t = topo_or_die("machine:dgx-h100:2");
	struct pm_params p = plain_params(0, 0, 48e9, 0);
	double n = 64 << 20;
	const enum pm_coll colls[2] = {PM_COLL_BROADCAST, PM_COLL_REDUCE};

	for (int i = 0; i < 2; i++) {
		struct pm_inst in;
		struct pm_sched s;
		struct pm_cost c, k;
		struct pm_err err;
		cr_assert_eq(pm_algo_resolve_coll(colls[i], "railchain:1,channels=2", t, 0, &in, &err), PM_OK, "%s",
			     err.msg);
		cr_assert_eq(pm_algo_check(&in, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(s.nsteps, 15);
		cr_assert_eq(s.nx, 30);
		cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
		pm_sched_release(&s);
		cr_assert(rel_close(c.bw_s, 9 * n / 370e9 + 1.5 * n / 48e9, 1e-9), "%d: bw %g", i, c.bw_s);
		/* the closed form: every step at the steady pipeline's busiest
		 * link, 2 units a GPU at the slower of NVLink (370) and two
		 * rails (96 GB/s): 15 x 2u / 96 GB/s, an upper bound here */
		pm_algo_closed(&in, n, &p, &k);
		cr_assert(rel_close(k.bw_s, 15 * n / 96e9, 1e-9), "%d: closed %g", i, k.bw_s);
		cr_assert_geq(k.bw_s, c.bw_s);
		cr_assert(rel_close(c.sent_B, n, 1e-12), "%d: sent %g", i, c.sent_B);
	}
	struct pm_inst in;
	struct pm_err err;
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_BROADCAST, "railchain:channels=9", t, 0, &in, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "expected 1 to 8"), "%s", err.msg);
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_BROADCAST, "railchain:4,ch=2", t, 0, &in, &err), PM_EINPUT);
	pm_topo_free(t);
	t = topo_or_die("torus:4x4");
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_BROADCAST, "railchain", t, 0, &in, &err), PM_ENOTAPPLICABLE);
	pm_topo_free(t);
	/* a chain too long for its chunks to be NCCL's: on 512 nodes (4,096
	 * ranks) the 2^20 stored transfers allow 2 x 8 x K x 4095 <= 2^20,
	 * K = 16 (a power of two), so 1 GiB would go in 8 MiB chunks: no
	 * schedule; 64 MiB in 512 KiB chunks has one */
	t = topo_or_die("machine:dgx-h100:512");
	struct pm_inst at;
	struct pm_sched s;
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_BROADCAST, "railchain", t, 0, &in, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_at_size(&in, 1 << 30, &at, &err), PM_OK);
	cr_assert_str_eq(at.label, "railchain:16,channels=8");
	cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "8 MiB each") && strstr(err.msg, "closed form only"), "%s", err.msg);
	cr_assert_eq(pm_algo_at_size(&in, 64 << 20, &at, &err), PM_OK);
	cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* NVLS's reduce-scatter and all-gather on one DGX H100 node, nvls:2, 16
 * MiB, u = n / (C P) = 1 MiB: the reduce-scatter's two steps each carry
 * a rank's 7 contributions up its link (7u), the all-gather's two steps
 * 7 multicast copies down each link (7u): 14u at NVLS's rate (480 x 8/14
 * = 274.3 GB/s as the links' scale), two steps, 7 C P = 112 transfers
 * each.  A rank sends its 7/8 n of contributions, or its own block
 * once (n/8).  NCCL's NVLS reduce-scatter prices this schedule at its
 * own rate, nvls_busbw / 2 x (P-1)/P = 210 GB/s as busbw (tuning.cc: no
 * two pipelined operations), algbw 240 GB/s: at 1 GiB (C = 64) both
 * evaluators' bytes are n / 240 GB/s. */
Test(nccl, nvls_reducescatter_allgather_by_hand)
{
	struct pm_topo *t = topo_or_die("machine:dgx-h100:1");
	struct pm_params p = plain_params(0, 0, 370e9, 0);
	double n = 16 << 20, u = n / 16, alg = 480e9 * 8 / 14;
	const enum pm_coll colls[2] = {PM_COLL_REDUCESCATTER, PM_COLL_ALLGATHER};
	const double sent[2] = {7.0 / 8 * n, n / 8};

	for (int i = 0; i < 2; i++) {
		struct pm_inst in, at;
		struct pm_sched s;
		struct pm_cost c, k;
		struct pm_err err;
		cr_assert_eq(pm_algo_resolve_coll(colls[i], "nvls:2", t, 0, &in, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(in.steps, 2);
		cr_assert_eq(pm_algo_check(&in, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(s.nx, 112);
		cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
		pm_sched_release(&s);
		pm_algo_closed(&in, n, &p, &k);
		cr_assert(rel_close(c.bw_s, 14 * u / alg, 1e-9), "%d: bw %g", i, c.bw_s);
		cr_assert(rel_close(k.bw_s, c.bw_s, 1e-12), "%d: closed %g", i, k.bw_s);
		cr_assert_eq(c.steps, 2);
		cr_assert_eq(k.steps, 2);
		cr_assert(rel_close(c.sent_B, sent[i], 1e-12) && rel_close(k.sent_B, sent[i], 1e-12), "%d: sent %g %g", i,
			  c.sent_B, k.sent_B);

		cr_assert_eq(pm_algo_resolve_coll(colls[i], "nccl:nvls", t, 0, &in, &err), PM_OK, "%s", err.msg);
		double m = 1 << 30;
		cr_assert_eq(pm_algo_at_size(&in, m, &at, &err), PM_OK);
		cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(s.nsteps, 64);
		struct pm_params q = plain_params(0, 0, 370e9, 0);
		pm_algo_contention(&at, &s, m, &q, &c, NULL, &err);
		pm_sched_release(&s);
		cr_assert(rel_close(c.bw_s, m / 240e9, 1e-9), "%d: nccl bw %g want %g", i, c.bw_s, m / 240e9);
	}
	pm_topo_free(t);
}

/* NVLS on one DGX H100 node (P = 8, links 370 GB/s each way), by hand
 * with C = 2 chunks: unit u = n / (C P).  Step 0 reduces chunk 0: each
 * rank's uplink carries its 7 contributions, each downlink 1 sum (7u);
 * step 1 reduces chunk 1 and multicasts chunk 0: up 7 + 1, down 1 + 7
 * (8u); step 2 multicasts chunk 1: 7 copies down each link (7u).  So
 * 22u on the busiest link over 3 steps, where a ring moves 2 x 7 x n/8 =
 * 28u a link in 14; and each uplink carries n in all (7/8 n of
 * contributions, n/8 of multicast).  Each byte at the rate the machine
 * states for NVLS, nvls_busbw 480 GB/s as an all-reduce's algbw: 480 x
 * 8/14 = 274.3 GB/s.  2 C P (P-1) = 224 transfers. */
Test(nccl, nvls_schedule_by_hand)
{
	struct pm_topo *t = topo_or_die("machine:dgx-h100:1");
	struct pm_params p = plain_params(0, 0, 370e9, 0);
	double n = 16 << 20, u = n / 16;
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c, k;
	struct pm_err err;

	resolve_or_die("nvls:2", t, 0, &in);
	cr_assert_eq(in.steps, 3);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nx, 224);
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
	/* ports as fast as the links (370 GB/s) change nothing: a rank's
	 * port carries what its link does, not the copies the switch sends;
	 * the same in the size-profile evaluator */
	struct pm_params q = p;
	struct pm_cost ci, cp;
	q.inj_bw_Bps = 370e9;
	cr_assert_eq(pm_algo_contention(&in, &s, n, &q, &ci, NULL, &err), PM_OK, "%s", err.msg);
	cr_assert(rel_close(ci.time_s, c.time_s, 1e-12), "ports %g links %g", ci.time_s, c.time_s);
	struct pm_profile *f = pm_algo_profile(&in, &s, &q);
	cr_assert_not_null(f);
	pm_profile_price(f, n, &cp, NULL);
	pm_profile_free(f);
	cr_assert(rel_close(cp.time_s, c.time_s, 1e-12), "profile %g links %g", cp.time_s, c.time_s);
	cr_assert(rel_close(cp.sent_B, n, 1e-12), "profile sent %g", cp.sent_B);
	pm_sched_release(&s);
	cr_assert(rel_close(c.bw_s, 22 * u / (480e9 * 8 / 14), 1e-9), "bw %g", c.bw_s);
	/* n on each uplink, in wire bytes: n x 370 / 274.3 */
	cr_assert(rel_close(c.max_link_B, n * 370e9 / (480e9 * 8 / 14), 1e-9), "busiest link %g", c.max_link_B);
	/* a rank sends n: its 7 contributions and its block's multicast once
	 * (the switch sends the other 6 copies) */
	cr_assert(rel_close(c.sent_B, n, 1e-12), "sent %g", c.sent_B);
	pm_algo_closed(&in, n, &p, &k);
	cr_assert(rel_close(k.bw_s, 22 * u / (480e9 * 8 / 14), 1e-9), "closed %g", k.bw_s);
	/* never below the bound where the switch reduces, (P-1)/P n a link,
	 * growing with the size, and the closed form's bytes the contention
	 * evaluator's, at every chunk count the size picks (the closed form
	 * takes the links' latency from the parameters, 0 here, the
	 * evaluator from the network) */
	struct pm_inst at;
	double prev = 0;
	resolve_or_die("nvls", t, 0, &in);
	for (double m = 1024; m <= 4.0 * (1 << 30); m *= 8) {
		cr_assert_eq(pm_algo_at_size(&in, m, &at, &err), PM_OK);
		cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(pm_algo_contention(&at, &s, m, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
		pm_algo_closed(&at, m, &p, &k);
		pm_sched_release(&s);
		cr_assert(c.time_s >= 7.0 / 8 * m / 370e9 * (1 - 1e-12) && k.time_s >= 7.0 / 8 * m / 370e9 * (1 - 1e-12),
			  "%s at %g: contention %g closed %g", at.label, m, c.time_s, k.time_s);
		cr_assert(rel_close(k.bw_s, c.bw_s, 1e-9), "%s at %g: bytes closed %g contention %g", at.label, m,
			  k.bw_s, c.bw_s);
		cr_assert_gt(c.time_s, prev, "%s at %g", at.label, m);
		prev = c.time_s;
	}
	/* the default chunks: n/P in 2 MiB steps, 64 MiB -> C = 4 */
	resolve_or_die("nvls", t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 64 << 20, &at, &err), PM_OK);
	cr_assert_eq(at.steps, 5);
	/* the network's bound: where the switch reduces, an all-reduce's
	 * ranks need move only what a reduce-scatter's do, (P-1)/P n each */
	cr_assert(rel_close(pm_coll_bound(PM_COLL_ALLREDUCE, n, t, 0),
			    pm_coll_bound(PM_COLL_REDUCESCATTER, n, t, 0), 1e-12));
	/* NCCL's NVLS all-reduce on one node prices this schedule, each byte
	 * at the rate NCCL's NVLS reaches: algbw = nvls_busbw x P / 2(P-1) =
	 * 480 x 8/14 = 274.3 GB/s.  At 1 GiB, C = 128 MiB / 2 MiB = 64 and u =
	 * 2 MiB: (2 x 7 + 63 x 8) u = 518 u at that rate */
	resolve_or_die("nccl:nvls", t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 64 << 20, &at, &err), PM_OK);
	cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nsteps, 5);
	pm_sched_release(&s);
	c = contention_of(&in, 1 << 30, &p);
	cr_assert(rel_close(c.bw_s, 518.0 * (2 << 20) / (480e9 * 8 / 14), 1e-9), "nccl:nvls bytes %g", c.bw_s);
	pm_topo_free(t);
	/* a switch that reduces, all ranks on it */
	static const char *const no[][2] = {{"torus:4x4", "needs a switch that reduces"},
					    {"machine:dgx-a100:1", "needs a switch that reduces"},
					    {"machine:dgx-h100:2", "needs a switch that reduces"}};
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		t = topo_or_die(no[i][0]);
		cr_assert_eq(pm_algo_resolve("nvls", t, 0, &in, &err), PM_ENOTAPPLICABLE, "%s", no[i][0]);
		cr_assert(strstr(err.msg, no[i][1]), "%s: %s", no[i][0], err.msg);
		pm_topo_free(t);
	}
	/* where the GPUs reduce, an all-reduce's bound moves twice the bytes
	 * of a reduce-scatter's (2(P-1)/P n against (P-1)/P n; the same link
	 * latency added to both) */
	t = topo_or_die("machine:dgx-a100:1");
	double ar = pm_coll_bound(PM_COLL_ALLREDUCE, n, t, 0), rs = pm_coll_bound(PM_COLL_REDUCESCATTER, n, t, 0);
	cr_assert(ar > 1.99 * rs && ar < 2 * rs, "all-reduce %g, reduce-scatter %g", ar, rs);
	pm_topo_free(t);
}

/* nodetree, NCCL's tree on a GPU cluster, by hand on 2 DGX H100 nodes
 * (G = 8, N = 2, 8 rails): each node tree over 2 nodes is one edge, so a
 * channel's tree is 8 deep (7 in the chain, 1 across) and S = K - 1 + 2 x
 * 8.  At 1 MiB, K = 1 MiB / (8 channels x 32 KiB) = 4: S = 19 steps and
 * 2 x 8 x 4 x 15 = 960 transfers.  Its schedule is an all-reduce
 * (replayed) on 1 to 4 nodes at one chunk and at several.  Where NCCL
 * picks its tree across nodes, the nccl row's contention prices this
 * schedule, with NCCL's launch and latency as its alpha. */
Test(nccl, node_tree_by_hand)
{
	static const char *const specs[] = {"machine:dgx-h100:1", "machine:dgx-h100:2", "machine:dgx-h100:3",
					    "machine:dgx-h100:4"};
	struct pm_params p = plain_params(5e-6, 0, 1e9, 0);
	struct pm_inst in, at;
	struct pm_sched s;
	struct pm_cost c, k;
	struct pm_err err;

	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		struct pm_topo *t = topo_or_die(specs[i]);
		for (double n = 8; n <= 4e6; n *= 500) {
			resolve_or_die("nodetree", t, 0, &in);
			cr_assert_eq(pm_algo_at_size(&in, n, &at, &err), PM_OK);
			cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s: %s", specs[i], err.msg);
			cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s %s: %s", specs[i], at.label, err.msg);
			cr_assert_eq(s.nsteps, at.steps, "%s %s", specs[i], at.label);
			pm_sched_release(&s);
		}
		pm_topo_free(t);
	}
	struct pm_topo *t = topo_or_die("machine:dgx-h100:2");
	resolve_or_die("nodetree", t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 1 << 20, &at, &err), PM_OK);
	cr_assert_str_eq(at.label, "nodetree:8/4");
	cr_assert_eq(at.steps, 19);
	cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK);
	cr_assert_eq(s.nx, 960);
	pm_sched_release(&s);
	resolve_or_die("nccl:tree", t, 0, &in);
	c = contention_of(&in, 64 << 20, &p);
	pm_algo_closed(&in, 64 << 20, &p, &k);
	/* the schedule plays the pipeline itself: its alpha is NCCL's launch
	 * and latency, the closed form's latency less its pipeline fill */
	struct pm_nccl_sys sys;
	struct pm_nccl_cost nk;
	cr_assert_eq(pm_nccl_sys_of(pm_topo_machine_desc(t), 16, &sys, &err), PM_OK);
	cr_assert_eq(pm_nccl_select(&sys, PM_COLL_ALLREDUCE, 1u << PM_NCCL_TREE, ~0u, 64 << 20, &nk, &err), PM_OK);
	cr_assert_gt(nk.fill_s, 0);
	cr_assert(rel_close(k.lat_s, nk.lat_s + nk.fill_s, 1e-9));
	cr_assert(rel_close(c.alpha_s, k.alpha_s + k.lat_s - nk.fill_s, 1e-9), "alpha %g, NCCL %g + %g - %g",
		  c.alpha_s, k.alpha_s, k.lat_s, nk.fill_s);
	cr_assert_eq(c.steps, 271);	/* nodetree:8 at 64 MiB: K = 64 MiB / (8 x 32 KiB) = 256, S = 255 + 2 x 8 */
	pm_topo_free(t);
}

/* NVLSTree on two DGX H100 nodes, unpipelined (nvlstree:1), 16 MiB: GPU
 * g owns block g, u = n/8 = 2 MiB, each half (1 MiB) on one of the two
 * trees; on two nodes each node is the root of one tree and the leaf of
 * the other.  By hand, at the links' own rates (NVLink 370 GB/s, NIC
 * 48 GB/s), the bytes the switch carries at NVLS's rate (nvls_busbw 480
 * GB/s as 8 GPUs' algbw, 480 x 8/14 = 274.3 GB/s: s = 370 / 274.3 link
 * bytes a byte) and no alpha:
 *   step 0  each GPU sends its 7 other blocks' copies up its link to the
 *           switch: 7u on an uplink, 14 MiB x s / 370 GB/s;
 *   step 1  each leaf's halves go up their rail: 1 MiB / 48 GB/s;
 *   step 2  each root sends its half down the rail (1 MiB / 48 GB/s,
 *           21.8 us) and every GPU of the root's node multicasts its own
 *           block's half, so each downlink takes the 7 other GPUs' halves
 *           (7 MiB x s / 370 GB/s, 26.8 us: NVLink is the busier);
 *   step 3  the leaves' GPUs multicast the halves they received: 7 MiB
 *           x s on each downlink, / 370 GB/s.
 * S = K + 2H + 1 = 4 steps; 8 x (3 x 2 x 7 + 4) = 368 transfers (per
 * block: 7 reductions into its owner in each node, 7 multicast copies of
 * each half in each node, one half up and down each tree).  The closed
 * form charges every step the steady load: the busier of the rails' L = 2
 * halves on two nodes at 48 GB/s and NVLink's 2G = 16 halves at the
 * switch's rate, 16 x s / 370 against 2 / 48: 4 x 16 MiB x s / 370 GB/s. */
Test(nccl, nvlstree_schedule_by_hand)
{
	struct pm_topo *t = topo_or_die("machine:dgx-h100:2");
	struct pm_params p = plain_params(0, 0, 48e9, 0);	/* the closed form's one link, the slowest (the CLI's) */
	double n = 16 << 20, MiB = 1 << 20;
	struct pm_inst in, at;
	struct pm_sched s;
	struct pm_cost c, k;
	struct pm_err err;

	resolve_or_die("nvlstree:1", t, 0, &in);
	cr_assert_eq(in.steps, 4);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nx, 368);
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	double sw = 370e9 / (480e9 * 8 / 14);
	cr_assert(rel_close(c.bw_s, 28 * MiB * sw / 370e9 + 1 * MiB / 48e9, 1e-9), "bw %g", c.bw_s);
	pm_algo_closed(&in, n, &p, &k);
	cr_assert(rel_close(k.bw_s, 64 * MiB * sw / 370e9, 1e-9), "closed %g", k.bw_s);
	/* what a GPU sends: 7 copies (14 MiB) and its two halves' multicast
	 * once each (2 MiB) up to the switch, which sends the other copies;
	 * one half up its leaf tree and one down its root tree (2 MiB): 18
	 * MiB, in both evaluators */
	cr_assert(rel_close(c.sent_B, 18 * MiB, 1e-12), "sent %g", c.sent_B);
	cr_assert(rel_close(k.sent_B, 18 * MiB, 1e-12), "closed sent %g", k.sent_B);
	pm_topo_free(t);

	/* four nodes: NCCL's trees over 4 nodes are 2 edges tall, so S = K + 5;
	 * some node is inner in one tree (two children) and a leaf in the
	 * other, so the steady step moves L = 4 halves each way on its rail.
	 * Every chunk count replays as an all-reduce; the pipeline's middle
	 * steps, all but the 2H + 1 of fill, carry the full L */
	t = topo_or_die("machine:dgx-h100:4");
	for (int K = 1; K <= 16; K *= 4) {
		char spec[32];
		snprintf(spec, sizeof spec, "nvlstree:%d", K);
		resolve_or_die(spec, t, 0, &in);
		cr_assert_eq(in.steps, K + 5);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s: %s", spec, err.msg);
		cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
		pm_sched_release(&s);
		pm_algo_closed(&in, n, &p, &k);
		double half = n / (2.0 * 8 * K);
		cr_assert(rel_close(k.bw_s, (K + 5) * 4 * half / 48e9, 1e-9), "%s closed %g", spec, k.bw_s);
		cr_assert_leq(c.bw_s, k.bw_s * (1 + 1e-12), "%s", spec);
		cr_assert_geq(c.bw_s, (K > 5 ? K - 5 : 0) * 4 * half / 48e9 * (1 - 1e-12), "%s", spec);
	}
	/* NCCL's NVLSTree on four nodes prices this schedule: at 64 MiB the
	 * block (8 MiB) in steps of 16 x 64 KiB chunks (NCCL's NVLSTree chunk
	 * from four nodes), K = 8 */
	resolve_or_die("nccl:nvlstree", t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 64 << 20, &at, &err), PM_OK);
	cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nsteps, 13);
	pm_sched_release(&s);
	/* where it cannot run: one node (nvls), no NVLS (A100), part nodes */
	struct pm_topo *one = topo_or_die("machine:dgx-h100:1"), *a100 = topo_or_die("machine:dgx-a100:2");
	cr_assert_eq(pm_algo_resolve("nvlstree", one, 0, &in, &err), PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "two or more GPU nodes whose NVSwitch reduces"), "%s", err.msg);
	cr_assert_eq(pm_algo_resolve("nvlstree", a100, 0, &in, &err), PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "(got machine:dgx-a100:2)"), "%s", err.msg);
	pm_topo_free(one);
	pm_topo_free(a100);
	pm_topo_free(t);
}

/* A shipped machine description with the rows that start as subs[2i]
 * replaced by subs[2i+1] (NULL-ended), written to path (a mkstemp
 * template), as a network of `nodes` nodes. */
/* The platform's chunk variables are sizes NCCL could run: 512 bytes
 * or a word is refused, naming the value and what is expected. */
Test(nccl, machine_file_chunks_checked)
{
	static const char *const bad[] = {"512", "64Q", "-3", "1G"};
	for (int i = 0; i < 4; i++) {
		char path[] = "/tmp/pm_nccl_machineXXXXXX";
		int fd = mkstemp(path);
		cr_assert_geq(fd, 0);
		FILE *f = fdopen(fd, "w");
		fprintf(f, "kind,name,count,inner_bw,egress_bw,flow_bw,value,source\n"
			   "param,arch,,,,,hopper,x\n"
			   "param,nvlstree_chunk,,,,,%s,x\n"
			   "level,node,8,300GB/s,200GB/s,,,x\n", bad[i]);
		fclose(f);
		struct pm_machine mach;
		struct pm_err err;
		cr_assert_eq(pm_machine_load(path, &mach, &err), PM_EINPUT, "%s", bad[i]);
		char want[16];
		snprintf(want, sizeof want, "'%s'", bad[i]);
		cr_assert(strstr(err.msg, want) && strstr(err.msg, "NCCL_NVLSTREE_MAX_CHUNKSIZE") &&
			  strstr(err.msg, "4K to 16M"), "%s", err.msg);
		unlink(path);
	}
}

/* The platform's chunk sizes (aws-ofi-nccl exports 512 KiB for both on
 * p5 and later).  NVLSTree on four nodes at 8 GiB: NCCL's own rule caps
 * the chunk at 64 KiB from four nodes on (proxy_bounds_the_tree_across_
 * nodes: 49,152 messages a proxy); with NCCL_NVLSTREE_MAX_CHUNKSIZE 512 KiB
 * the cap is 512 KiB but the chunk is NVLS's, 128 KiB: 8 GiB / 128 heads /
 * 128 KiB = 512 chunks, 3 messages each a node, 16 x 512 x 3 = 24,576 a
 * proxy; with NCCL_NVLS_CHUNKSIZE 512 KiB as well, 512 KiB chunks (8 GiB is
 * not < 32 x 128 x 512 KiB = 2 GiB): 16 x 128 x 3 = 6,144.  Before 2.21
 * there is no NCCL_NVLS_CHUNKSIZE: 2.20's chunk is Simple's 512 KiB step.
 * On one node NVLS takes the NVLS chunk too: at 8 GiB (not < 64 x 128 x
 * 512 KiB) 512 KiB, whose fill is one of its two switch hops, 7/8 x 16 x
 * 8 x 512 KiB / 480 GB/s = 122.3 us (30.6 us with NCCL's 128 KiB). */
Test(nccl, platform_chunk_sizes)
{
	struct pm_nccl_sys s = nodes_of(4);
	double n = 8589934592.0;

	s.nvlstree_chunk_B = 524288;
	struct pm_nccl_cost k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_NVLS_TREE, PM_NCCL_SIMPLE, n);
	cr_assert_eq(k.chunk_B, 131072);
	cr_assert(rel_close(k.proxy_msgs, 24576, 1e-12), "messages %g", k.proxy_msgs);
	s.nvls_chunk_B = 524288;
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_NVLS_TREE, PM_NCCL_SIMPLE, n);
	cr_assert_eq(k.chunk_B, 524288);
	cr_assert(rel_close(k.proxy_msgs, 6144, 1e-12), "messages %g", k.proxy_msgs);
	s.version = pm_nccl_version_find("2.20.3");
	s.nvls_chunk_B = 0;
	cr_assert_eq(price(&s, PM_COLL_ALLREDUCE, PM_NCCL_NVLS_TREE, PM_NCCL_SIMPLE, n).chunk_B, 524288);
	s = one_node();
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_NVLS, PM_NCCL_SIMPLE, n);
	cr_assert(rel_close(k.fill_s, 7.0 / 8 * 128 * 131072 / 480e9, 1e-9), "fill %g", k.fill_s);
	s.nvls_chunk_B = 524288;
	k = price(&s, PM_COLL_ALLREDUCE, PM_NCCL_NVLS, PM_NCCL_SIMPLE, n);
	cr_assert_eq(k.chunk_B, 524288);
	cr_assert(rel_close(k.fill_s, 7.0 / 8 * 128 * 524288 / 480e9, 1e-9), "fill %g", k.fill_s);
}

static struct pm_topo *machine_variant(const char *preset, int nodes, char *path, const char *const *subs)
{
	char src[512], line[1024], spec[600];
	snprintf(src, sizeof src, "%s/data/machines/%s.csv", getenv("PM_SRCDIR"), preset);
	FILE *in = fopen(src, "r"), *out;
	int fd = mkstemp(path);
	cr_assert(in && fd >= 0 && (out = fdopen(fd, "w")));
	while (fgets(line, sizeof line, in)) {
		const char *row = line;
		for (int i = 0; subs[i]; i += 2)
			if (strncmp(line, subs[i], strlen(subs[i])) == 0)
				row = subs[i + 1];
		fputs(row, out);
	}
	fclose(in);
	fclose(out);
	snprintf(spec, sizeof spec, "machine:%s:%d", path, nodes);
	return topo_or_die(spec);
}

/* A shipped machine (dgx-h100 when preset is NULL) whose network reduces
 * (SHARP: param sharp 1). */
static struct pm_topo *sharp_machine(int nodes, char *path, const char *preset)
{
	static const char *const subs[] = {"param,sharp,", "param,sharp,,,,,1,test: SHARP on\n", NULL};
	return machine_variant(preset ? preset : "dgx-h100", nodes, path, subs);
}

/* pat on 5 ranks: m = 3 all-gather steps at distances 4, 2, 1 (far
 * first).  Rank r holds offsets {0}; step 1 (d = 4) brings offset 4, step
 * 2 (d = 2) offset 2 (4 + 2 = 6 is past P), step 3 (d = 1) offsets 1 and 3
 * (5 is past P): 1 + 1 + 2 = 4 = P - 1 blocks.  On full:5 each step's
 * blocks share the one link from rank r + d: the all-gather's bytes are 4
 * blocks of n/5 at the links' 16 GB/s in both evaluators; the all-reduce is twice
 * that, 2 P (P-1) = 40 transfers.  NCCL's PAT (one GPU a node) prices this
 * schedule: on 16 nodes lg 16 = 4 steps. */
Test(nccl, pat_by_hand)
{
	struct pm_topo *t = topo_or_die("full:5");
	struct pm_params p = plain_params(0, 0, 16e9, 0);	/* full:5's links' rate */
	double n = 5 << 20;
	struct pm_inst in, at;
	struct pm_sched s;
	struct pm_cost c, k;
	struct pm_err err;

	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_ALLGATHER, "pat", t, 0, &in, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nsteps, 3);
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	pm_algo_closed(&in, n, &p, &k);
	cr_assert(rel_close(c.bw_s, 4.0 * (1 << 20) / 16e9, 1e-12), "contention %g", c.bw_s);
	cr_assert(rel_close(k.bw_s, c.bw_s, 1e-12), "closed %g", k.bw_s);
	resolve_or_die("pat", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nx, 40);
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	pm_topo_free(t);

	static const char *const one_gpu[] = {"level,node,", "level,node,1,450GB/s,400GB/s,,,one GPU a node\n",
					      "param,nics,", "param,nics,,,,,1,one NIC\n", NULL};
	char path[] = "/tmp/pm_patXXXXXX";
	t = machine_variant("dgx-h100", 16, path, one_gpu);
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_REDUCESCATTER, "nccl:pat", t, 0, &in, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_at_size(&in, 1 << 20, &at, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nsteps, 4);
	pm_sched_release(&s);
	pm_topo_free(t);
	unlink(path);
}

/* CollNetDirect on two DGX H100 nodes whose switches reduce, unpipelined
 * (collnet:1), 16 MiB: GPU g owns block g, u = n/8 = 2 MiB.  By hand, at
 * the links' own rates (NVLink 370 GB/s, NIC 48 GB/s):
 *   step 0  each GPU sends its 7 other blocks' copies to their GPUs: 7u
 *           on its link to the switch, 14 MiB / 370 GB/s;
 *   step 1  node 1's GPU g sends the node's sum up rail g to node 0's: u
 *           on a NIC, 2 MiB / 48 GB/s;
 *   step 2  the sum comes back down: 2 MiB / 48 GB/s;
 *   step 3  each GPU sends its block to the 7 others: 14 MiB / 370 GB/s.
 * S = K + 3 = 4; 8 x (2 x 2 x 7 + 2) = 240 transfers.  The closed form
 * sums each step's busiest link the same way (identity with the
 * contention evaluator at every chunk count). */
Test(nccl, collnet_schedule_by_hand)
{
	char path[] = "/tmp/pm_sharpXXXXXX";
	struct pm_topo *t = sharp_machine(2, path, NULL);
	struct pm_params p = plain_params(0, 0, 48e9, 0);	/* the closed form's one link, the slowest */
	double n = 16 << 20, MiB = 1 << 20;
	struct pm_inst in, at;
	struct pm_sched s;
	struct pm_cost c, k;
	struct pm_err err;

	resolve_or_die("collnet:1", t, 0, &in);
	cr_assert_eq(in.steps, 4);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nx, 240);
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	cr_assert(rel_close(c.bw_s, 28 * MiB / 370e9 + 4 * MiB / 48e9, 1e-9), "bw %g", c.bw_s);
	pm_algo_closed(&in, n, &p, &k);
	cr_assert(rel_close(k.bw_s, c.bw_s, 1e-12), "closed %g", k.bw_s);
	/* what a GPU sends: 7 copies scattered and 7 gathered (28 MiB) and
	 * the block up the rail (2 MiB) */
	cr_assert(rel_close(c.sent_B, 30 * MiB, 1e-12) && rel_close(k.sent_B, 30 * MiB, 1e-12), "sent %g %g",
		  c.sent_B, k.sent_B);
	/* collnet:1,nodes=nvls, NVLS in the nodes (NCCL's NVLS across nodes with
	 * SHARP): step 0 each GPU's 7 copies up to its switch, 14 MiB at the
	 * switch's rate (s = 370 / 274.3 link bytes a byte, as nvls); steps 1
	 * and 2 the rails as above; step 3 each GPU's downlink takes the 7
	 * other blocks' multicast, 14 MiB x s.  A GPU sends 7 copies, one
	 * multicast and one block up the rail: 18 MiB */
	double sw = 370e9 / (480e9 * 8 / 14);
	resolve_or_die("collnet:1,nodes=nvls", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	cr_assert(rel_close(c.bw_s, 28 * MiB * sw / 370e9 + 4 * MiB / 48e9, 1e-9), "nvls bw %g", c.bw_s);
	pm_algo_closed(&in, n, &p, &k);
	cr_assert(rel_close(k.bw_s, c.bw_s, 1e-12), "nvls closed %g", k.bw_s);
	cr_assert(rel_close(c.sent_B, 18 * MiB, 1e-12) && rel_close(k.sent_B, 18 * MiB, 1e-12), "nvls sent %g %g",
		  c.sent_B, k.sent_B);
	/* collnet:1,nodes=chain (NCCL's CollNetChain): block g reduced along
	 * the node's chain g+1, ..., g+7, g, a hop a step (7 steps), up and
	 * down the rail (2), broadcast back along the chain (7): S = 2G = 16.
	 * In hop p's step every GPU sends one unit (it is at position p of
	 * exactly one block's chain): 14 steps of 2 MiB on NVLink, 28 MiB /
	 * 370 GB/s as the direct form's two steps of 7 units, and the two
	 * rail steps; the same 240 transfers (8 blocks x 2 nodes x 14 hops +
	 * 8 x 2 on the rails) and what a GPU sends (7 + 7 units and its block
	 * up: 30 MiB) */
	resolve_or_die("collnet:1,nodes=chain", t, 0, &in);
	cr_assert_eq(in.steps, 16);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nx, 240);
	cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	cr_assert(rel_close(c.bw_s, 28 * MiB / 370e9 + 4 * MiB / 48e9, 1e-9), "chain bw %g", c.bw_s);
	pm_algo_closed(&in, n, &p, &k);
	cr_assert(rel_close(k.bw_s, c.bw_s, 1e-12), "chain closed %g", k.bw_s);
	cr_assert(rel_close(c.sent_B, 30 * MiB, 1e-12) && rel_close(k.sent_B, 30 * MiB, 1e-12), "chain sent %g %g",
		  c.sent_B, k.sent_B);
	cr_assert_eq(pm_algo_resolve("collnet:2,", t, 0, &in, &err), PM_EINPUT);
	cr_assert_eq(pm_algo_resolve("collnet:nodes=ring", t, 0, &in, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "nodes=chain"), "%s", err.msg);
	pm_topo_free(t);
	unlink(path);

	/* three and four nodes: the switches' sums replay as an all-reduce,
	 * and each link of the rail carries one unit a step, so the closed
	 * form's bytes are the contention evaluator's */
	for (int N = 3; N <= 4; N++) {
		char p2[] = "/tmp/pm_sharpXXXXXX";
		t = sharp_machine(N, p2, NULL);
		for (int K = 1; K <= 30; K += 4) {
			char spec[32];
			static const char *const modes[] = {"", ",nodes=nvls", ",nodes=chain"};
			snprintf(spec, sizeof spec, "collnet:%d%s", K % 10, modes[K / 10]);
			resolve_or_die(spec, t, 0, &in);
			cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
			cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%d nodes %s: %s", N, spec, err.msg);
			cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
			pm_sched_release(&s);
			pm_algo_closed(&in, n, &p, &k);
			cr_assert(rel_close(k.bw_s, c.bw_s, 1e-12), "%d nodes %s: closed %g contention %g", N, spec,
				  k.bw_s, c.bw_s);
		}
		/* NCCL's CollNetDirect prices this schedule: at 64 MiB a block
		 * of 8 MiB in 2 MiB steps, K = 4, 7 steps; its NVLS across
		 * nodes the NVLS one, at 256 MiB K = 16 */
		resolve_or_die("nccl:collnetdirect", t, 0, &in);
		cr_assert_eq(pm_algo_at_size(&in, 64 << 20, &at, &err), PM_OK);
		cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(s.nsteps, 7);
		pm_sched_release(&s);
		resolve_or_die("nccl:nvls", t, 0, &in);
		cr_assert_eq(pm_algo_at_size(&in, 256 << 20, &at, &err), PM_OK);
		cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(s.nsteps, 19);
		cr_assert_eq(s.x[0].at_switch, 1);
		pm_sched_release(&s);
		/* its CollNetChain the chain: at 64 MiB K = 4, 4 + 2 x 8 - 1 = 19
		 * steps, none through a switch that reduces in the node */
		resolve_or_die("nccl:collnetchain", t, 0, &in);
		cr_assert_eq(pm_algo_at_size(&in, 64 << 20, &at, &err), PM_OK);
		cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(s.nsteps, 19);
		cr_assert_eq(s.x[0].at_switch, 0);
		pm_sched_release(&s);
		pm_topo_free(t);
		unlink(p2);
	}
	/* AWS p4d: two GPUs share each of the 4 NICs, so a rail step carries
	 * two units on a NIC; the closed form counts them as the evaluator does */
	char p3[] = "/tmp/pm_sharpXXXXXX";
	t = sharp_machine(3, p3, "aws-p4d");
	double lat;
	pm_topo_slowest(t, &p.link_bw_Bps, &lat);	/* the closed form's one link, as the CLI sets it */
	resolve_or_die("collnet:3", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_contention(&in, &s, n, &p, &c, NULL, &err), PM_OK, "%s", err.msg);
	pm_sched_release(&s);
	pm_algo_closed(&in, n, &p, &k);
	cr_assert(rel_close(k.bw_s, c.bw_s, 1e-12), "p4d: closed %g contention %g", k.bw_s, c.bw_s);
	pm_topo_free(t);
	unlink(p3);
	/* without SHARP (the shipped preset) it does not run */
	t = topo_or_die("machine:dgx-h100:2");
	cr_assert_eq(pm_algo_resolve("collnet", t, 0, &in, &err), PM_ENOTAPPLICABLE);
	cr_assert(strstr(err.msg, "switches that reduce (SHARP)"), "%s", err.msg);
	pm_topo_free(t);
}

/* NCCL's latency already counts every hop (its hwLat per step), so the
 * contention row of its schedule adds none of the links' own latency: at
 * 8 bytes, where the wire time is nanoseconds, the row is the closed
 * form's launch + latency (identity, to the wire's 0.1%); the same
 * schedule priced as a plain algorithm (nodetree) does count the routes'
 * latency. */
Test(nccl, schedule_rows_count_no_link_latency)
{
	struct pm_topo *t = topo_or_die("machine:dgx-h100:2");
	struct pm_params p = plain_params(5e-6, 0, 1e9, 0);
	struct pm_inst in;
	struct pm_cost c, k;

	resolve_or_die("nccl:tree", t, 0, &in);
	c = contention_of(&in, 8, &p);
	pm_algo_closed(&in, 8, &p, &k);
	cr_assert_eq(c.lat_s, 0);
	cr_assert(rel_close(c.time_s, k.time_s, 1e-3), "contention %g, closed %g", c.time_s, k.time_s);
	resolve_or_die("nodetree", t, 0, &in);
	c = contention_of(&in, 8, &p);
	cr_assert_gt(c.lat_s, 0);
	pm_topo_free(t);
}

/* On one node NCCL's ring broadcast (and its tree) is one pipelined chain (docs/model.md,
 * NCCL, Evaluators): at 2 GiB on 8 GPUs of a DGX H100 with Simple, the
 * chain takes K = 256 chunks (2 GiB / 32 KiB capped at max(P, 256)) and
 * S = K + P - 2 = 262 steps, every GPU but the last sends the whole 2 GiB
 * once (the busiest link carries 2^31 bytes), and the alpha column is
 * NCCL's launch plus latency, the closed form's two terms.  Across nodes
 * it is a chain a channel (railchain, railchain_by_hand): at 1 MiB
 * Simple all 16 channels run (1 MiB is not below 16 x 512 threads x
 * 64 B), so 8 chains (one per rail) of 128 KiB, 4 chunks of 32 KiB,
 * K + P - 2 = 18 steps. */
Test(nccl, ring_broadcast_is_a_chain_on_one_node)
{
	struct pm_topo *t = topo_or_die("machine:dgx-h100:1");
	struct pm_params p;
	struct pm_inst in;
	struct pm_cost c, k;
	struct pm_err err;

	pm_params_default(&p);
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_BROADCAST, "nccl:ring/simple", t, 0, &in, &err), PM_OK, "%s", err.msg);
	c = contention_of(&in, 2147483648.0, &p);
	pm_algo_closed(&in, 2147483648.0, &p, &k);
	cr_assert_eq(c.steps, 262);
	assert_rel(c.max_link_B, 2147483648.0, 1e-12);
	assert_rel(c.alpha_s, k.alpha_s + k.lat_s, 1e-9);
	/* its tree on one node is the same chain, reduced up and broadcast
	 * down: an all-reduce of 2 x 262 steps */
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_ALLREDUCE, "nccl:tree/simple", t, 0, &in, &err), PM_OK, "%s", err.msg);
	c = contention_of(&in, 2147483648.0, &p);
	cr_assert_eq(c.steps, 524);
	pm_topo_free(t);
	t = topo_or_die("machine:dgx-h100:2");
	struct pm_inst at;
	struct pm_sched s;
	cr_assert_eq(pm_algo_resolve_coll(PM_COLL_BROADCAST, "nccl:ring/simple", t, 0, &in, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_at_size(&in, 1 << 20, &at, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_schedule(&at, &s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nsteps, 18);
	cr_assert_eq(s.nchunks, 32);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* One process driving G GPUs (nccl-tests -g G) enqueues each collective
 * on them in turn: NCCL's row pays the host's cost of the G - 1 others on
 * top of the launch, 2.75 us each by default (nccl.h: nccl-tests on a DGX
 * A100, NVIDIA/nccl-tests issue 123).  By hand, 8 GPUs of one DGX H100
 * (launch 2 us), an 8-byte all-reduce: 7 x 2.75 = 19.25 us more than with
 * a process per GPU, in the closed form, in --explain's launch term and in
 * the ring schedule's contention price (its steps' alpha carries NCCL's
 * launch).  Hand-derived, not read back from the code: 7 GPUs past the
 * first x the 2.75 us constant. */
Test(nccl, a_process_driving_several_gpus_pays_their_enqueue)
{
	struct pm_topo *t = topo_or_die("machine:dgx-h100:1");
	struct pm_params one = plain_params(0, 0, 1e9, 0), eight = one;
	struct pm_inst in, at;
	struct pm_cost c1, c8;
	struct pm_err err;
	char note[400];
	double launch, base, each;
	int others;

	eight.host_gpus = 8;
	resolve_or_die("nccl", t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 8, &at, &err), PM_OK, "%s", err.msg);
	pm_algo_closed(&at, 8, &one, &c1);
	pm_algo_closed(&at, 8, &eight, &c8);
	cr_assert(rel_close(c8.time_s - c1.time_s, 7 * 2.75e-6, 1e-9), "%g us more", (c8.time_s - c1.time_s) * 1e6);
	at.algo->terms(&at, 8, &eight, note, sizeof note);
	cr_assert_eq(sscanf(note, "launch %lf us (%lf us + %d x %lf us", &launch, &base, &others, &each), 4, "%s", note);
	cr_assert(rel_close(launch, 2 + 19.25, 1e-6) && base == 2 && others == 7 && each == 2.75, "%s", note);
	/* whatever NCCL runs from 8 B to 8 GiB (ring and NVLS, LL to Simple),
	 * its launch carries the same 19.25 us (the same candidate compared:
	 * the host adds to every candidate alike, so the choice holds) */
	struct pm_nccl_sys y1, y8;
	struct pm_nccl_cost k1, k8;
	cr_assert_eq(pm_nccl_sys_of(pm_topo_machine_desc(t), 8, &y1, &err), PM_OK);
	y8 = y1;
	y8.host_gpus = 8;
	for (double n = 8; n <= 8.0 * (1 << 30); n *= 4) {
		cr_assert_eq(pm_nccl_select(&y1, PM_COLL_ALLREDUCE, ~0u, ~0u, n, &k1, &err), PM_OK);
		cr_assert_eq(pm_nccl_select(&y8, PM_COLL_ALLREDUCE, ~0u, ~0u, n, &k8, &err), PM_OK);
		cr_assert(k1.algo == k8.algo && k1.proto == k8.proto, "not the same candidate at %g B", n);
		cr_assert(rel_close(k8.launch_s - k1.launch_s, 19.25e-6, 1e-9), "%s/%s at %g B",
			  pm_nccl_algo_names[k8.algo], pm_nccl_proto_names[k8.proto], n);
	}
	/* a machine's host_enqueue replaces the 2.75 us: 5 us, 7 x 5 = 35 us */
	struct pm_machine m5 = *pm_topo_machine_desc(t);
	m5.nccl.host_s = 5e-6;
	cr_assert_eq(pm_nccl_sys_of(&m5, 8, &y8, &err), PM_OK);
	y8.host_gpus = 8;
	cr_assert(rel_close(pm_nccl_launch_s(&y8) - pm_nccl_launch_s(&y1), 35e-6, 1e-9));
	struct pm_cost s1 = contention_of(&in, 8, &one), s8 = contention_of(&in, 8, &eight);
	cr_assert(rel_close(s8.time_s - s1.time_s, 19.25e-6, 1e-6), "contention: %g us more", (s8.time_s - s1.time_s) * 1e6);
	pm_topo_free(t);
}
