/* test_topo.c: topology construction, routing and properties.  Link
 * counts and diameters are derived by hand in each comment; routes are
 * checked link by link and against independent distance formulas. */
#include "helpers.h"
#include "model/edgecolor.h"

#include <unistd.h>

static void info_of(const char *spec, struct pm_topo_info *info)
{
	struct pm_topo *t = topo_or_die(spec);
	pm_topo_describe(t, info);
	pm_topo_free(t);
}

Test(topo, counts_by_hand)
{
	struct pm_topo_info i;

	/* 4x4 torus: 16 nodes x 4 ports = 64 directed links; diameter 2+2 */
	info_of("torus:4x4", &i);
	cr_assert_eq(i.endpoints, 16);
	cr_assert_eq(i.links, 64);
	cr_assert_eq(i.degree, 4);
	cr_assert_eq(i.diameter, 4);
	/* cut across X: 4 rows, each crossed twice (wrap) = 8 links x 16 GB/s */
	cr_assert_float_eq(i.bisection_Bps, 8 * 16e9, 1);
	/* 3x3x3 torus: 27 x 6 = 162 links, diameter 1+1+1 */
	info_of("torus:3x3x3", &i);
	cr_assert_eq(i.links, 162);
	cr_assert_eq(i.diameter, 3);
	/* a size-2 dimension keeps both cables: 2x4 torus = 8 x 4 links */
	info_of("torus:2x4", &i);
	cr_assert_eq(i.links, 32);
	/* 4x4 mesh: 2 directions x (4 rows x 3 + 4 columns x 3) = 48; diameter 6 */
	info_of("mesh:4x4", &i);
	cr_assert_eq(i.links, 48);
	cr_assert_eq(i.diameter, 6);
	cr_assert_float_eq(i.bisection_Bps, 4 * 16e9, 1);
	info_of("ring:5", &i);
	cr_assert_eq(i.links, 10);
	cr_assert_eq(i.diameter, 2);
	/* full:5: 5 x 4 links; best cut 2|3 is crossed by 2 x 3 links */
	info_of("full:5", &i);
	cr_assert_eq(i.links, 20);
	cr_assert_eq(i.diameter, 1);
	cr_assert_float_eq(i.bisection_Bps, 6 * 16e9, 1);
	info_of("switch:8", &i);
	cr_assert_eq(i.switches, 1);
	cr_assert_eq(i.links, 16);
	cr_assert_eq(i.radix, 8);
	cr_assert_eq(i.diameter, 2);
	/* fattree:8,2: 64 endpoints, 2 levels of 8 switches; links: 64 x 2
	 * (endpoint) + 8 leaves x 8 up x 2 = 256; radix 16; up and down 4 */
	info_of("fattree:8,2", &i);
	cr_assert_eq(i.endpoints, 64);
	cr_assert_eq(i.switches, 16);
	cr_assert_eq(i.links, 256);
	cr_assert_eq(i.radix, 16);
	cr_assert_eq(i.diameter, 4);
	/* fattree:4,3: 64 endpoints, 3 levels of 16 switches, 2 x 64 x 3 links */
	info_of("fattree:4,3", &i);
	cr_assert_eq(i.switches, 48);
	cr_assert_eq(i.links, 384);
	cr_assert_eq(i.diameter, 6);
	/* bigraph:4x8: 8 switches (4 up, 4 down) x 4 endpoints = 32; links:
	 * 32 x 2 + 4 x 4 x 2 = 96; upper to upper goes down and up: 4 links */
	info_of("bigraph:4x8", &i);
	cr_assert_eq(i.endpoints, 32);
	cr_assert_eq(i.switches, 8);
	cr_assert_eq(i.links, 96);
	cr_assert_eq(i.diameter, 4);
	cr_assert_eq(i.min_hops, 2);
	/* bisection: 2 of 4 up and 2 of 4 down per side: 2 x 2 x 2 = 8 links */
	cr_assert_float_eq(i.bisection_Bps, 8 * 16e9, 1);
}

/* Every route is a chain of links from src to dst of at most max_hops. */
static void check_routes(const char *spec, int (*expect)(int, int, const int *))
{
	struct pm_topo *t = topo_or_die(spec);
	int P = pm_topo_endpoints(t), links[256], dims[3];

	pm_topo_grid(t, dims, NULL);
	for (int a = 0; a < P; a++)
		for (int b = 0; b < P; b++) {
			int h = pm_topo_route(t, a, b, links), v = a;
			cr_assert(h <= pm_topo_max_hops(t), "%s %d->%d: %d hops", spec, a, b, h);
			for (int j = 0; j < h; j++) {
				const struct pm_link *l = pm_topo_link(t, links[j]);
				cr_assert_eq(l->src, v, "%s %d->%d: broken chain", spec, a, b);
				v = l->dst;
			}
			cr_assert_eq(v, b, "%s %d->%d ends at %d", spec, a, b, v);
			if (expect)
				cr_assert_eq(h, expect(a, b, dims), "%s %d->%d: %d hops", spec, a, b, h);
		}
	pm_topo_free(t);
}

static int torus_dist(int a, int b, const int *dims)
{
	int h = 0;
	for (int d = 0; d < 3; d++) {
		int k = dims[d], x = a % k, y = b % k, e = abs(x - y);
		h += e < k - e ? e : k - e;
		a /= k;
		b /= k;
	}
	return h;
}

static int mesh_dist(int a, int b, const int *dims)
{
	int h = 0;
	for (int d = 0; d < 3; d++) {
		h += abs(a % dims[d] - b % dims[d]);
		a /= dims[d];
		b /= dims[d];
	}
	return h;
}

/* fattree:4,3: same leaf (a/4 == b/4) 2 links, same pod (a/16) 4, else 6 */
static int fat43_dist(int a, int b, const int *dims)
{
	(void)dims;
	return a == b ? 0 : a / 4 == b / 4 ? 2 : a / 16 == b / 16 ? 4 : 6;
}

/* bigraph:4x8: same switch 2, upper-lower 3, same layer 4 */
static int bigraph_dist(int a, int b, const int *dims)
{
	(void)dims;
	int sa = a / 4, sb = b / 4;
	return a == b ? 0 : sa == sb ? 2 : (sa < 4) != (sb < 4) ? 3 : 4;
}

Test(topo, routes)
{
	check_routes("torus:4x4", torus_dist);
	check_routes("torus:5x3", torus_dist);
	check_routes("torus:2x3x4", torus_dist);
	check_routes("ring:7", torus_dist);
	check_routes("mesh:4x3", mesh_dist);
	check_routes("mesh:3x2x2", mesh_dist);
	check_routes("full:6", NULL);
	check_routes("switch:5", NULL);
	check_routes("fattree:4,3", fat43_dist);
	check_routes("fattree:3,2", NULL);
	check_routes("bigraph:4x8", bigraph_dist);
	check_routes("bigraph:2x6", NULL);
}

/* On a torus a tie (distance k/2) goes in the + direction. */
Test(topo, torus_tie_goes_plus)
{
	struct pm_topo *t = topo_or_die("ring:4");
	int links[8];
	cr_assert_eq(pm_topo_route(t, 0, 2, links), 2);
	cr_assert_eq(pm_topo_link(t, links[0])->dst, 1);
	cr_assert_eq(pm_topo_route(t, 2, 0, links), 2);
	cr_assert_eq(pm_topo_link(t, links[0])->dst, 3);
	pm_topo_free(t);
}

/* Fat tree routes to one destination climb to the same top switch
 * (destination-mod-K), so their down paths coincide. */
Test(topo, fattree_dmodk)
{
	struct pm_topo *t = topo_or_die("fattree:4,2");
	int l1[8], l2[8];
	int h1 = pm_topo_route(t, 0, 13, l1), h2 = pm_topo_route(t, 6, 13, l2);
	cr_assert_eq(h1, 4);
	cr_assert_eq(h2, 4);
	cr_assert_eq(l1[2], l2[2], "down paths differ");
	cr_assert_eq(l1[3], l2[3]);
	pm_topo_free(t);
}

/* A small deterministic generator for the property tests below. */
static unsigned lcg(unsigned *x)
{
	*x = *x * 1103515245u + 12345u;
	return (*x >> 16) & 0x7fff;
}

static void shuffle(int *a, int n, unsigned *x)
{
	for (int i = 0; i < n; i++)
		a[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(lcg(x) % (unsigned)(i + 1)), y = a[i];
		a[i] = a[j];
		a[j] = y;
	}
}

/* König (1916): a bipartite multigraph whose vertices have at most D
 * edges is properly D-edge-colourable.  The union of D random perfect
 * matchings on 12 + 12 vertices (parallel edges allowed) has every degree
 * exactly D; it must come out with D colours, none twice at a vertex,
 * and one edge more at a vertex (degree D + 1) must be refused. */
Test(topo, edge_colouring_koenig)
{
	enum { N = 12, D = 5, E = N * D };
	int u[E + 1], v[E + 1], pref[E + 1], col[E + 1], perm[N];
	unsigned x = 7;
	struct pm_ecolor g;

	for (int d = 0; d < D; d++) {
		shuffle(perm, N, &x);
		for (int i = 0; i < N; i++) {
			u[d * N + i] = i;
			v[d * N + i] = perm[i];
		}
	}
	for (int e = 0; e < E; e++)
		pref[e] = (int)(lcg(&x) % D);
	cr_assert_eq(pm_ecolor_init(&g, N, N, D), 0);
	for (int round = 0; round < 2; round++) {	/* the tables come back empty */
		cr_assert_eq(pm_ecolor_run(&g, E, u, v, round ? pref : NULL, col), 0);
		for (int a = 0; a < E; a++) {
			cr_assert(col[a] >= 0 && col[a] < D);
			for (int b = a + 1; b < E; b++)
				cr_assert(col[a] != col[b] || (u[a] != u[b] && v[a] != v[b]),
					  "edges %d and %d share a vertex and colour %d", a, b, col[a]);
		}
	}
	/* an edge alone takes its preferred colour */
	cr_assert_eq(pm_ecolor_run(&g, 1, u, v, pref, col), 0);
	cr_assert_eq(col[0], pref[0]);
	u[E] = 0;
	v[E] = 0;
	cr_assert_eq(pm_ecolor_run(&g, E + 1, u, v, NULL, col), -1);
	pm_ecolor_free(&g);
}

/* fattree:4,2 by hand: leaf i holds endpoints 4i .. 4i+3 and its up port j
 * leads to top switch j; D-mod-K climbs by port dst % 4.  0 -> 4 and 1 -> 8
 * both climb leaf 0's port 0, so their own routes share that link; sent
 * at once, the first keeps its route and the second takes the first port
 * free at both leaves, 1: 4 links each, none shared.  0 -> 4 and 1 -> 9
 * climb ports 0 and 1: their own routes, nothing to move. */
Test(topo, fattree_route_set_by_hand)
{
	struct pm_topo *t = topo_or_die("fattree:4,2");
	int H = pm_topo_max_hops(t), src[2] = {0, 1}, dst[2] = {4, 8}, len[2], own[8];
	int *links = malloc(sizeof(int) * 2 * (size_t)H);

	cr_assert_eq(pm_topo_route_set(t, 2, src, dst, links, len), 1);
	cr_assert_eq(len[0], 4);
	cr_assert_eq(len[1], 4);
	cr_assert_eq(pm_topo_route(t, 0, 4, own), 4);
	cr_assert_arr_eq(links, own, sizeof(int) * 4);
	const struct pm_link *up = pm_topo_link(t, links[H + 1]);
	cr_assert_eq(up->dst, pm_topo_link(t, own[1])->dst + 1, "1 -> 8 climbs port 1");
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			cr_assert_neq(links[a], links[H + b]);
	dst[1] = 9;
	cr_assert_eq(pm_topo_route_set(t, 2, src, dst, links, len), 0);
	cr_assert_eq(pm_topo_route(t, 1, 9, own), 4);
	cr_assert_arr_eq(links + H, own, sizeof(int) * 4);
	/* a network without a set router gives its own routes */
	struct pm_topo *b = topo_or_die("bigraph:4x8");
	cr_assert_eq(pm_topo_route_set(b, 2, src, dst, NULL, len), 0);
	pm_topo_free(b);
	free(links);
	pm_topo_free(t);
}

/* A K-ary L-tree is rearrangeably non-blocking (Benes 1965): any
 * permutation of its endpoints can be routed with no link carrying two
 * transfers.  Random permutations on four fat trees, odd and even K,
 * two to four levels: every route a chain of links from its source to
 * its destination, as long as the network's own, and no link used
 * twice. */
Test(topo, fattree_route_set_permutations)
{
	const char *specs[] = {"fattree:3,3", "fattree:6,3", "fattree:5,2", "fattree:3,4"};
	unsigned x = 11;
	for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
		struct pm_topo *t = topo_or_die(specs[k]);
		int P = pm_topo_endpoints(t), H = pm_topo_max_hops(t), L = pm_topo_nlinks(t);
		int *src = malloc(sizeof(int) * (size_t)P), *dst = malloc(sizeof(int) * (size_t)P);
		int *len = malloc(sizeof(int) * (size_t)P), *links = malloc(sizeof(int) * (size_t)(P * H));
		int *used = calloc((size_t)L, sizeof(int)), own[64], n = 0, moved = 0;
		for (int round = 0; round < 3; round++) {
			shuffle(dst, P, &x);
			n = 0;
			for (int i = 0; i < P; i++)
				if (dst[i] != i) {
					src[n] = i;
					dst[n++] = dst[i];
				}
			int rc = pm_topo_route_set(t, n, src, dst, links, len);
			cr_assert(rc == 0 || rc == 1);
			memset(used, 0, sizeof(int) * (size_t)L);
			for (int i = 0; i < n; i++) {
				const int *l = links + (size_t)i * (size_t)H;
				cr_assert_eq(len[i], pm_topo_route(t, src[i], dst[i], own), "%s", specs[k]);
				int at = src[i];
				for (int j = 0; j < len[i]; j++) {
					cr_assert_eq(pm_topo_link(t, l[j])->src, at, "%s: route %d breaks", specs[k], i);
					at = pm_topo_link(t, l[j])->dst;
					cr_assert_eq(used[l[j]]++, 0, "%s: link %d carries two", specs[k], l[j]);
				}
				cr_assert_eq(at, dst[i]);
				moved |= memcmp(l, own, sizeof(int) * (size_t)len[i]) != 0;
			}
			cr_assert_eq(rc, moved, "%s: the answer says whether a route moved", specs[k]);
			moved = 0;
		}
		free(src);
		free(dst);
		free(len);
		free(links);
		free(used);
		pm_topo_free(t);
	}
}

/* Ring order: a permutation; neighbours one link apart where a
 * Hamiltonian cycle exists (torus with an even dimension, mesh with an
 * even dimension), and the closing hop 2 links on an odd x odd torus. */
static void check_ring_order(const char *spec, int max_hop, int closing)
{
	struct pm_topo *t = topo_or_die(spec);
	int P = pm_topo_endpoints(t), links[256];
	int *order = malloc(sizeof(int) * (size_t)P), *seen = calloc((size_t)P, sizeof(int));

	pm_topo_ring_order(t, order);
	for (int i = 0; i < P; i++) {
		cr_assert(order[i] >= 0 && order[i] < P && !seen[order[i]], "%s: not a permutation", spec);
		seen[order[i]] = 1;
		int h = pm_topo_route(t, order[i], order[(i + 1) % P], links);
		cr_assert(h <= (i == P - 1 ? closing : max_hop),
			  "%s: ring hop %d -> %d takes %d links", spec, order[i],
			  order[(i + 1) % P], h);
	}
	free(order);
	free(seen);
	pm_topo_free(t);
}

Test(topo, ring_orders)
{
	check_ring_order("torus:4x4", 1, 1);
	check_ring_order("torus:8x8", 1, 1);
	check_ring_order("torus:3x4", 1, 1);
	check_ring_order("torus:4x3", 1, 1);
	check_ring_order("torus:3x3", 1, 2);
	check_ring_order("torus:4x4x4", 1, 1);
	check_ring_order("mesh:4x4", 1, 1);
	check_ring_order("mesh:8x8", 1, 1);
	check_ring_order("mesh:4x3", 1, 1);
	check_ring_order("mesh:3x4", 1, 1);
	check_ring_order("mesh:3x3", 1, 4);
	check_ring_order("ring:9", 1, 1);
	/* BiGraph: every ring hop crosses between layers (3 links) */
	check_ring_order("bigraph:4x8", 3, 3);
	check_ring_order("bigraph:4x16", 3, 3);
}

/* BiGraph ring order uses each switch-to-switch link once (M <= N/2). */
Test(topo, bigraph_ring_no_shared_link)
{
	struct pm_topo *t = topo_or_die("bigraph:4x8");
	int P = 32, order[32], links[8], *use = calloc(96, sizeof(int));
	pm_topo_ring_order(t, order);
	for (int i = 0; i < P; i++) {
		int h = pm_topo_route(t, order[i], order[(i + 1) % P], links);
		for (int j = 0; j < h; j++)
			cr_assert_eq(++use[links[j]], 1, "link %d used twice", links[j]);
	}
	free(use);
	pm_topo_free(t);
}

static const char *write_tmp(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof path, "/tmp/pm_topo_%d_%s", (int)getpid(), name);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

/* A 4-endpoint network: two pairs on switches joined by one slow cable. */
Test(topo, file_edge_list)
{
	const char *path = write_tmp("ok.csv",
		"# two switches\n"
		"src,dst,bandwidth,latency\n"
		"0,sA,16GB/s,100ns\n"
		"1,sA,,\n"
		"2,sB,16GB/s,100ns\n"
		"3,sB,16GB/s,100ns\n"
		"sA,sB,\"8GB/s\",1us\n");
	char spec[300];
	snprintf(spec, sizeof spec, "file:%s", path);
	struct pm_topo *t = topo_or_die(spec);
	struct pm_topo_info i;
	int links[8];

	pm_topo_describe(t, &i);
	cr_assert_eq(i.endpoints, 4);
	cr_assert_eq(i.switches, 2);
	cr_assert_eq(i.links, 10);
	cr_assert_eq(i.diameter, 3);
	cr_assert_eq(pm_topo_route(t, 0, 3, links), 3);
	cr_assert_eq(pm_topo_link(t, links[1])->bw_Bps, 8e9);
	cr_assert_float_eq(pm_topo_link(t, links[1])->lat_s, 1e-6, 1e-15);
	/* the empty cells of endpoint 1 took the defaults */
	cr_assert_eq(pm_topo_route(t, 1, 0, links), 2);
	cr_assert_eq(pm_topo_link(t, links[0])->bw_Bps, 16e9);
	pm_topo_free(t);
	remove(path);
}

static void expect_bad(const char *spec, const char *needle)
{
	struct pm_topo *t = NULL;
	struct pm_err err;
	int rc = pm_topo_parse(spec, NULL, &t, &err);
	cr_assert_eq(rc, PM_EINPUT, "%s accepted", spec);
	cr_assert(strstr(err.msg, needle), "%s: '%s' lacks '%s'", spec, err.msg, needle);
	cr_assert_null(t);
}

Test(topo, bad_specs)
{
	expect_bad("tours:8x8", "did you mean 'torus'");
	expect_bad("hypercube:4", "unknown topology kind 'hypercube' (expected one of ring, full");
	expect_bad("torus:0x4", "torus:0x4");
	expect_bad("torus:8x", "torus:8x");
	expect_bad("torus:", "no arguments");
	expect_bad("torus", "no arguments");
	expect_bad("", "missing topology");
	expect_bad("torus:2x2x2x2", "expected torus:AxB");
	expect_bad("torus:100000x100000", "too large");
	expect_bad("full:1000000000", "expected an integer");
	expect_bad("full:5000", "too large");
	expect_bad("fattree:1,2", "fattree:K,L");
	expect_bad("fattree:64,5", "too large");
	expect_bad("bigraph:4x7", "even number");
	expect_bad("ring:-3", "ring:-3");
	expect_bad("file:/nonexistent/net.csv", "cannot read");
}

Test(topo, bad_files)
{
	struct { const char *name, *text, *needle; } cases[] = {
		{"nocol.csv", "src,dst,bandwidth\n0,1,16GB/s\n", "no 'latency' column"},
		{"badbw.csv", "src,dst,bandwidth,latency\n0,1,fast,1ns\n", "row 1: invalid bandwidth 'fast'"},
		{"badlat.csv", "src,dst,bandwidth,latency\n0,1,1GB/s,soon\n", "invalid latency 'soon'"},
		{"gap.csv", "src,dst,bandwidth,latency\n0,2,1GB/s,1ns\n", "no endpoint 1"},
		{"island.csv", "src,dst,bandwidth,latency\n0,1,1GB/s,1ns\n2,3,1GB/s,1ns\n", "cannot reach"},
		{"empty.csv", "", "is empty"},
		{"header.csv", "src,dst,bandwidth,latency\n", "no links"},
		{"self.csv", "src,dst,bandwidth,latency\n0,0,1GB/s,1ns\n", "two different vertices"},
		{"dir.csv", "src,dst,bandwidth,latency,direction\n0,1,1GB/s,1ns,up\n", "both or one"},
		{"noend.csv", "src,dst,bandwidth,latency\nsa,sb,1GB/s,1ns\n", "no endpoints"},
		{"quote.csv", "src,dst,bandwidth,latency\n0,\"1,1GB/s,1ns\n", "malformed CSV"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char spec[300];
		snprintf(spec, sizeof spec, "file:%s", write_tmp(cases[i].name, cases[i].text));
		expect_bad(spec, cases[i].needle);
		remove(spec + 5);
	}
}

/* A one-way link list: a directed ring 0->1->2->0 routes 1->0 the long
 * way round (2 links). */
Test(topo, file_directed)
{
	const char *path = write_tmp("dir.csv",
		"src,dst,bandwidth,latency,direction\n"
		"0,1,1GB/s,1ns,one\n1,2,1GB/s,1ns,one\n2,0,1GB/s,1ns,one\n");
	char spec[300];
	int links[8];
	snprintf(spec, sizeof spec, "file:%s", path);
	struct pm_topo *t = topo_or_die(spec);
	cr_assert_eq(pm_topo_nlinks(t), 3);
	cr_assert_eq(pm_topo_route(t, 1, 0, links), 2);
	pm_topo_free(t);
	remove(path);
}

Test(topo, link_defaults_apply)
{
	struct pm_topo *t = topo_with("torus:4x4", 25e9, 90e-9);
	cr_assert_eq(pm_topo_link(t, 0)->bw_Bps, 25e9);
	cr_assert_float_eq(pm_topo_link(t, 0)->lat_s, 90e-9, 1e-18);
	pm_topo_free(t);
}

/* Per-dimension links (Rashidi et al. 2021 Table V: 200 GB/s local ring, 25 GB/s
 * vertical and horizontal rings).  On torus:4x4x4 every X link is fast and
 * every Y and Z link slow; the cheapest bisection cuts across Y (or Z):
 * 16 endpoints per plane x 2 cuts (wrap-around) x 25 GB/s = 800 GB/s,
 * where the cut across X would cross 16 x 2 x 200 = 6400 GB/s. */
Test(topo, per_dimension_links)
{
	struct pm_link_defaults ld = {.bw_Bps = 16e9, .lat_s = 150e-9, .ndim_bw = 3, .ndim_lat = 2,
				      .dim_bw_Bps = {200e9, 25e9, 25e9}, .dim_lat_s = {72e-9, 402e-9}};
	struct pm_topo *t = NULL;
	struct pm_topo_info info;
	struct pm_err err;
	int dims[3], wrap, fast = 0, slow = 0;

	cr_assert_eq(pm_topo_parse("torus:4x4x4", &ld, &t, &err), PM_OK, "%s", err.msg);
	pm_topo_grid(t, dims, &wrap);
	for (int l = 0; l < pm_topo_nlinks(t); l++) {
		const struct pm_link *k = pm_topo_link(t, l);
		int dx = (k->src % 4) != (k->dst % 4);	/* X coordinate changes */
		int dz = k->src / 16 != k->dst / 16;
		cr_assert_eq(k->bw_Bps, dx ? 200e9 : 25e9, "link %d -> %d", k->src, k->dst);
		/* latency given for X and Y only: Z keeps the default */
		cr_assert_float_eq(k->lat_s, dx ? 72e-9 : dz ? 150e-9 : 402e-9, 1e-18);
		fast += dx;
		slow += !dx;
	}
	cr_assert_eq(fast, 128);	/* 64 nodes x 2 X links */
	cr_assert_eq(slow, 256);
	pm_topo_describe(t, &info);
	cr_assert_float_eq(info.bisection_Bps, 800e9, 1);
	pm_topo_free(t);

	/* more values than dimensions, or a network without dimensions */
	ld.ndim_lat = 0;
	cr_assert_eq(pm_topo_parse("torus:4x4", &ld, &t, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "has 2 dimensions but 3 per-dimension bandwidths"), "%s", err.msg);
	ld.ndim_bw = 1;
	cr_assert_eq(pm_topo_parse("fattree:4,2", &ld, &t, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "expected a ring, torus or mesh"), "%s", err.msg);
}

/* machine:dgx-h100:4 by hand: 4 nodes x 8 GPUs = 32 endpoints; switches:
 * 4 node crossbars + 8 rail leaves (one scalable unit, one NIC per GPU)
 * + 1 unit spine = 13; links: 32 GPU-crossbar cables + 32 GPU-leaf
 * cables + 8 leaf-spine cables = 72 cables = 144 directed links.  Longest
 * route GPU -> leaf -> spine -> leaf -> GPU = 4 links.  Links run at the
 * rates the description says are achieved: a NIC 48 GB/s (nic_bw; 400
 * Gb/s nominal), a GPU's NVLink 370 GB/s (ring_busbw).  The spine's 8
 * children are the leaves; half of them carry 4 nodes x 48 GB/s each:
 * 4 x 192 GB/s = 768 GB/s, also 2 nodes x 8 x 48 GB/s of NICs. */
Test(topo, machine_network_by_hand)
{
	struct pm_topo_info i;
	struct pm_topo *t = topo_or_die("machine:dgx-h100:4");
	int links[16], order[32], h;

	pm_topo_describe(t, &i);
	cr_assert_eq(i.endpoints, 32);
	cr_assert_eq(i.switches, 13);
	cr_assert_eq(i.links, 144);
	cr_assert_eq(i.diameter, 4);
	cr_assert_eq(i.min_hops, 2);
	cr_assert_float_eq(i.bisection_Bps, 768e9, 1);
	/* GPU 0 (rail 0) to GPU 9 (node 1, rail 1): up to the spine */
	h = pm_topo_route(t, 0, 9, links);
	cr_assert_eq(h, 4);
	cr_assert_float_eq(pm_topo_link(t, links[0])->bw_Bps, 48e9, 1);
	cr_assert_float_eq(pm_topo_link(t, links[1])->bw_Bps, 4 * 48e9, 1);
	cr_assert_eq(pm_topo_link(t, links[3])->dst, 9);
	/* GPU 0 to GPU 8 (node 1, rail 0): one leaf; GPU 0 to 5: the crossbar */
	cr_assert_eq(pm_topo_route(t, 0, 8, links), 2);
	cr_assert_eq(pm_topo_route(t, 0, 5, links), 2);
	cr_assert_float_eq(pm_topo_link(t, links[0])->bw_Bps, 370e9, 1);
	/* rail-aware snake: node 1 runs 15..8, so 7 -> 15 stays on rail 7 */
	pm_topo_ring_order(t, order);
	cr_assert_eq(order[7], 7);
	cr_assert_eq(order[8], 15);
	cr_assert_eq(order[15], 8);
	cr_assert_eq(order[16], 16);
	pm_topo_free(t);
	/* ABCI: 2 HCAs per 4-GPU node, so a GPU reaches the leaf through a
	 * shared NIC vertex: GPU -> NIC -> leaf -> rack spine -> leaf -> NIC
	 * -> GPU = 6 links; switches 4 + 8 NICs + 2 leaves + 1 = 15 */
	t = topo_or_die("machine:abci:4");
	pm_topo_describe(t, &i);
	cr_assert_eq(i.endpoints, 16);
	cr_assert_eq(i.switches, 15);
	cr_assert_eq(i.diameter, 6);
	pm_topo_free(t);
}

/* Bad machine networks are refused with what was expected. */
Test(topo, machine_network_errors)
{
	struct pm_topo *t = NULL;
	struct pm_err err;

	cr_assert_eq(pm_topo_parse("machine:dgx-h100:0", NULL, &t, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "machine:NAME:NODES"), "%s", err.msg);
	cr_assert_eq(pm_topo_parse("machine:dgx-h100:17000", NULL, &t, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "at most the 16384"), "%s", err.msg);
	cr_assert_eq(pm_topo_parse("machine:nosuch", NULL, &t, &err), PM_EINPUT);
	cr_assert_eq(pm_topo_parse("machine:tpu-v4-like:2", NULL, &t, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "not a switched cluster (expected a GPU cluster description; as a network it is --topo torus:16x16x16"), "%s", err.msg);
}

/* astrasim:FILE.yml against hand-built equivalents.  A 1-D Ring of 8 at
 * 16 GB/s (ASTRA-sim's GB: 2^30 B) and 150 ns is ring:8 with 16GiB/s
 * links: every algorithm prices the same to the last bit (to 1e-12 for the
 * full network, whose latency is written as 1000 ns).  A 1-D
 * FullyConnected of 6 is full:6.  A [Switch, Ring] of 8 x 4 has, by hand,
 * 4 switches, 4 x 2 x 8 switch links + 8 x 2 x 4 ring links = 128 links,
 * 3 links per NPU (its switch and two ring neighbours), and routes of at
 * most 2 (switch) + 2 (half a ring of 4) = 4 links. */
static double contention_of(const char *spec, const char *algo, const struct pm_link_defaults *ld)
{
	struct pm_topo *t = NULL;
	struct pm_inst in;
	struct pm_sched s;
	struct pm_cost c;
	struct pm_err err;
	struct pm_params p;

	cr_assert_eq(pm_topo_parse(spec, ld, &t, &err), PM_OK, "%s: %s", spec, err.msg);
	pm_params_default(&p);
	double time = -1;
	if (pm_algo_resolve(algo, t, 0, &in, &err) == PM_OK) {
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(pm_algo_contention(&in, &s, 1 << 20, &p, &c, NULL, &err), PM_OK);
		time = c.time_s;
		pm_sched_release(&s);
	}
	pm_topo_free(t);
	return time;
}

Test(topo, astrasim_yaml_equals_hand_built)
{
	static const char *const algos[] = {"ring", "bidir-ring", "recdoubling", "rabenseifner",
					    "binomial", "dbtree", "hring", "multitree"};
	struct pm_link_defaults ring_ld = {.bw_Bps = 16.0 * 1073741824, .lat_s = 150e-9};
	struct pm_link_defaults full_ld = {.bw_Bps = 25.0 * 1073741824, .lat_s = 1e-6};
	char path[] = "/tmp/perfmodel-astra-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fputs("topology: [ FullyConnected ]\nnpus_count: [ 6 ]\nbandwidth: [ 25 ]\nlatency: [ 1000 ]\n", f);
	fclose(f);
	char full_spec[64];
	snprintf(full_spec, sizeof full_spec, "astrasim:%s", path);
	const char *src = getenv("PM_SRCDIR") ? getenv("PM_SRCDIR") : ".";
	char ring_spec[600], hgx_spec[600];
	snprintf(ring_spec, sizeof ring_spec, "astrasim:%s/data/astrasim/ring8.yml", src);
	snprintf(hgx_spec, sizeof hgx_spec, "astrasim:%s/data/astrasim/hgx8x4.yml", src);
	for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
		double x = contention_of(ring_spec, algos[a], NULL);
		double y = contention_of("ring:8", algos[a], &ring_ld);
		cr_assert_eq(x, y, "%s: astrasim %.17g, ring:8 %.17g", algos[a], x, y);
		x = contention_of(full_spec, algos[a], NULL);
		y = contention_of("full:6", algos[a], &full_ld);
		/* 1000 ns x 1e-9 and 1 us differ in the last bit */
		cr_assert(rel_close(x, y, 1e-12), "%s: astrasim full %.17g, full:6 %.17g", algos[a], x, y);
	}
	unlink(path);

	struct pm_topo *t = topo_or_die(hgx_spec);
	struct pm_topo_info info;
	pm_topo_describe(t, &info);
	cr_assert_eq(info.endpoints, 32);
	cr_assert_eq(info.switches, 4);
	cr_assert_eq(info.links, 128);
	cr_assert_eq(info.degree, 3);
	cr_assert_eq(info.diameter, 4);
	pm_topo_free(t);
}

/* Bad ASTRA-sim files: the file, the line and what was expected. */
Test(topo, astrasim_bad_files)
{
	static const struct { const char *text, *needle; } cases[] = {
		{"topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\n", "no 'latency'"},
		{"topology: [ Torus ]\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n", "unknown topology 'Torus' (expected Ring, FullyConnected or Switch)"},
		{"topology: [ Ring, Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 1, 1 ]\nlatency: [ 1, 1 ]\n", "line 2: 'npus_count' has 1 items and 'topology' 2"},
		{"topology: [ Ring ]\nnpus_count: [ 4.5 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n", "invalid npus_count '4.5'"},
		{"topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ -1 ]\nlatency: [ 1 ]\n", "invalid bandwidth '-1' (expected GB/s from 1e-9 (1 B/s) to 1e6 (1 PB/s))"},
		{"topology: [ Ring\n", "not YAML"},
		{"topology: [ Ring, Ring ]\nnpus_count: [ 2000, 2000 ]\nbandwidth: [ 1, 1 ]\nlatency: [ 1, 1 ]\n", "more than"},
		/* hostile input, round three */
		{"topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 1e-300 ]\nlatency: [ 1 ]\n", "invalid bandwidth '1e-300'"},
		{"topology: [ Ring ]\nnpus_count: [ 1 ]\nbandwidth: [ 50 ]\nlatency: [ 1 ]\n", "has 1 NPU (expected at least 2"},
		{"topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: &b [ 50 ]\nlatency: *b\n", "line 4: a YAML alias"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char path[] = "/tmp/perfmodel-astra-XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");
		fputs(cases[i].text, f);
		fclose(f);
		char spec[64];
		struct pm_topo *t = NULL;
		struct pm_err err;
		snprintf(spec, sizeof spec, "astrasim:%s", path);
		cr_assert_eq(pm_topo_parse(spec, NULL, &t, &err), PM_EINPUT, "case %zu accepted", i);
		cr_assert(strstr(err.msg, cases[i].needle), "case %zu: '%s' lacks '%s'", i, err.msg, cases[i].needle);
		cr_assert(strstr(err.msg, path), "case %zu: no file name in '%s'", i, err.msg);
		unlink(path);
	}
}

/* Routing ties on a file network are balanced as OpenSM's default MinHop
 * engine balances them (InfiniBand subnet manager: among ports with the
 * same hop count to a destination, the one fewest destinations already
 * use).  tests/data/leaf_spine.csv: leaves of four endpoints, every leaf
 * cabled to two spines; switches are numbered after the 16 endpoints in
 * order of first mention: leaf0 16, spine0 17, spine1 18.  By hand: leaf0
 * routes destinations in endpoint order; 0..3 hang below it, each of
 * 4..15 has two routes up with equal counts before it when d is even, so
 * 4 takes spine0 (listed first), 5 spine1, 6 spine0 ...: destination d
 * crosses spine d mod 2.  Leaf1 routes 0..3, then 8..15: again d mod 2.
 * Taking the first listed link instead sent every destination through
 * spine0 and left spine1 idle. */
Test(topo, file_routes_balance_ties)
{
	char spec[4200];
	int links[8];
	snprintf(spec, sizeof spec, "file:%s/tests/data/leaf_spine.csv",
		 getenv("PM_SRCDIR") ? getenv("PM_SRCDIR") : ".");
	struct pm_topo *t = topo_or_die(spec);
	for (int d = 4; d < 16; d++) {
		cr_assert_eq(pm_topo_route(t, 0, d, links), 4);
		cr_assert_eq(pm_topo_link(t, links[1])->dst, 17 + d % 2, "0 -> %d", d);
	}
	for (int d = 0; d < 16; d++)
		if (d / 4 != 1) {
			cr_assert_eq(pm_topo_route(t, 5, d, links), 4);
			cr_assert_eq(pm_topo_link(t, links[1])->dst, 17 + d % 2, "5 -> %d", d);
		}
	pm_topo_free(t);
}

/* Recursive doubling on that network, 1 MiB, 16 GB/s and 150 ns links,
 * packets of 256 bytes with a 16-byte head flit (1 MiB is 4,096 packets
 * of 272 bytes on the wire: 1,114,112 bytes, 69.632 us a link).  Steps at
 * distance 1 and 2 stay in a leaf: one message a link, 2 links, 69.932
 * us.  At distance 4 and 8 a leaf's four endpoints send to another leaf's
 * four; destinations alternate spines, so each up and down link carries
 * two messages: 139.264 us + 4 x 150 ns = 139.864 us.  Total 2 x 69.932 +
 * 2 x 139.864 = 419.592 us (all four up a spine0 link would give 4
 * messages: 279.128 us a step, 698.12 us in all). */
Test(topo, file_ties_recdoubling_by_hand)
{
	char spec[4200];
	snprintf(spec, sizeof spec, "file:%s/tests/data/leaf_spine.csv",
		 getenv("PM_SRCDIR") ? getenv("PM_SRCDIR") : ".");
	double x = contention_of(spec, "recdoubling", NULL);
	cr_assert(rel_close(x, 419.592e-6, 1e-12), "%.17g", x);
}

/* pm_topo_mirrored: the kinds that claim it by construction (one link
 * per endpoint; machine networks, up to the lowest common switch and
 * down the same cables) checked pair by pair from their routes; a file
 * network of single-homed endpoints is mirrored; three rails with
 * balanced ties are not (p -> c crosses rail (c - [c > p]) mod 3,
 * c -> p rail (p - [p > c]) mod 3: 0 -> 2 crosses r1 = vertex 65, 2 -> 0
 * crosses r0 = vertex 64). */
Test(topo, mirrored_routes)
{
	const char *claimed[] = {"machine:dgx-h100:4", "machine:abci:4", "fattree:4,3", "bigraph:4x8", "switch:8"};
	char rails[4200], leaves[4200];
	const char *src = getenv("PM_SRCDIR") ? getenv("PM_SRCDIR") : ".";
	int a[32], b[32];

	for (size_t i = 0; i < sizeof claimed / sizeof *claimed; i++) {
		struct pm_topo *t = topo_or_die(claimed[i]);
		int P = pm_topo_endpoints(t);
		cr_assert_eq(pm_topo_mirrored(t), 1, "%s", claimed[i]);
		for (int p = 0; p < P; p++)
			for (int c = 0; c < P; c++)
				if (c != p) {
					int n = pm_topo_route(t, p, c, a), m = pm_topo_route(t, c, p, b);
					const struct pm_link *f = pm_topo_link(t, a[0]), *l = pm_topo_link(t, a[n - 1]);
					const struct pm_link *f2 = pm_topo_link(t, b[0]), *l2 = pm_topo_link(t, b[m - 1]);
					cr_assert(f2->src == l->dst && f2->dst == l->src && l2->src == f->dst &&
						  l2->dst == f->src, "%s: %d -> %d", claimed[i], p, c);
				}
		pm_topo_free(t);
	}
	snprintf(rails, sizeof rails, "file:%s/tests/data/three_rails.csv", src);
	snprintf(leaves, sizeof leaves, "file:%s/tests/data/leaf_spine.csv", src);
	struct pm_topo *t = topo_or_die(rails);
	cr_assert_eq(pm_topo_route(t, 0, 2, a), 2);
	cr_assert_eq(pm_topo_route(t, 2, 0, b), 2);
	cr_assert_eq(pm_topo_link(t, a[0])->dst, 65);	/* r1 */
	cr_assert_eq(pm_topo_link(t, b[0])->dst, 64);	/* r0 */
	cr_assert_eq(pm_topo_mirrored(t), 0);
	pm_topo_free(t);
	t = topo_or_die(leaves);
	cr_assert_eq(pm_topo_mirrored(t), 1);
	pm_topo_free(t);
}

/* 100k GPUs on dgx-h100: 12,500 nodes are 390 full 32-node scalable units
 * and one of 20 (the last unit partial); the hierarchy it suggests keeps
 * the unit level as the largest divisor of 12,500 no larger than 32, 25:
 * 8 x 25 x 500.  1000 nodes: 8 x 25 x 40, not 8 x 1000. */
Test(topo, partial_units_keep_their_level)
{
	struct pm_topo *t = topo_or_die("machine:dgx-h100:12500");
	int h[PM_TOPO_MAX_LAYERS], n = pm_topo_layers(t, h);
	cr_assert_eq(pm_topo_endpoints(t), 100000);
	cr_assert_eq(n, 3);
	cr_assert(h[0] == 8 && h[1] == 25 && h[2] == 500, "%dx%dx%d", h[0], h[1], h[2]);
	pm_topo_free(t);
	t = topo_or_die("machine:dgx-h100:1000");
	n = pm_topo_layers(t, h);
	cr_assert(n == 3 && h[0] == 8 && h[1] == 25 && h[2] == 40, "%d layers: %dx%dx%d", n, h[0], h[1], h[2]);
	pm_topo_free(t);
}

/* Each kind's natural groups, innermost first, from its definition: a
 * grid's dimensions longer than 1, a fat tree's arity once per level, a
 * BiGraph's endpoints per switch then its switches (1 per switch
 * dropped), an ASTRA-sim file's dimensions, none for one switch or full
 * connection. */
Test(topo, each_kind_names_its_layers)
{
	static const struct {
		const char *spec;
		int n, l[4];
	} want[] = {
		{"torus:4x1x8", 2, {4, 8}},
		{"mesh:3x5", 2, {3, 5}},
		{"ring:6", 1, {6}},
		{"fattree:4,3", 3, {4, 4, 4}},
		{"bigraph:4x8", 2, {4, 8}},
		{"bigraph:1x8", 1, {8}},
		{"switch:8", 0, {0}},
		{"full:5", 0, {0}},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct pm_topo *t = topo_or_die(want[i].spec);
		int h[PM_TOPO_MAX_LAYERS], n = pm_topo_layers(t, h);
		cr_assert_eq(n, want[i].n, "%s: %d layers", want[i].spec, n);
		for (int k = 0; k < n; k++)
			cr_assert_eq(h[k], want[i].l[k], "%s layer %d: %d", want[i].spec, k, h[k]);
		pm_topo_free(t);
	}
	/* an ASTRA-sim file: its dimensions, dimension 0 first (npus_count: [ 8, 4 ]) */
	char spec[600];
	snprintf(spec, sizeof spec, "astrasim:%s/data/astrasim/hgx8x4.yml",
		 getenv("PM_SRCDIR") ? getenv("PM_SRCDIR") : ".");
	struct pm_topo *t = topo_or_die(spec);
	int h[PM_TOPO_MAX_LAYERS], n = pm_topo_layers(t, h);
	cr_assert(n == 2 && h[0] == 8 && h[1] == 4, "%d layers: %d, %d", n, h[0], h[1]);
	pm_topo_free(t);
}

/* Grid routes are arithmetic on coordinates: every route, on tori, meshes
 * and the ACE torus, for every pair, is a chain of links each leaving
 * where the last arrived (the links' own endpoints), from src to dst, of
 * the shortest length the coordinates give. */
Test(topo, grid_routes_follow_the_links)
{
	static const char *const specs[] = {"torus:5x4x3", "torus:8", "mesh:4x3", "mesh:2x3x2", "torus:2x2", "ace:2x2x2"};
	for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
		struct pm_topo *t = topo_or_die(specs[k]);
		int n = pm_topo_endpoints(t), links[64], dims[3], wrap, nd = pm_topo_grid(t, dims, &wrap);
		for (int a = 0; a < n; a++)
			for (int b = 0; b < n; b++) {
				int h = pm_topo_route(t, a, b, links), v = a, want = 0;
				for (int j = 0; j < h; j++) {
					cr_assert_eq(pm_topo_link(t, links[j])->src, v, "%s %d->%d hop %d", specs[k], a, b, j);
					v = pm_topo_link(t, links[j])->dst;
				}
				cr_assert_eq(v, b, "%s %d->%d ends at %d", specs[k], a, b, v);
				for (int d = 0, ia = a, ib = b; d < nd; d++) {
					int x = ia % dims[d] - ib % dims[d];
					x = x < 0 ? -x : x;
					want += wrap && dims[d] - x < x ? dims[d] - x : x;
					ia /= dims[d], ib /= dims[d];
				}
				cr_assert_eq(h, want, "%s %d->%d: %d hops, %d by coordinates", specs[k], a, b, h, want);
			}
		pm_topo_free(t);
	}
}

/* ASTRA-sim networks route by arithmetic, dimension by dimension: every
 * route of every pair equals the breadth-first tables' (the routing these
 * networks had, pm_topo_route_shortest, among equal next hops the link
 * added first) on rings even and odd (the half-way tie), fully connected
 * and switch dimensions, two-NPU rings (parallel links) and mixes. */
#include "model/topo_impl.h"
Test(topo, astrasim_routes_equal_the_tables)
{
	static const char *const files[] = {
		"topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
		"topology: [ Ring, Ring ]\nnpus_count: [ 5, 4 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 700 ]\n",
		"topology: [ Ring, FullyConnected, Switch ]\nnpus_count: [ 4, 3, 2 ]\nbandwidth: [ 50, 25, 12.5 ]\nlatency: [ 500, 500, 500 ]\n",
		"topology: [ Switch, Ring ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 500 ]\n",
		"topology: [ FullyConnected, Ring, Ring ]\nnpus_count: [ 2, 2, 6 ]\nbandwidth: [ 50, 25, 10 ]\nlatency: [ 5, 5, 5 ]\n",
	};
	for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
		char path[] = "/tmp/perfmodel-astra-route-XXXXXX", spec[64];
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");
		fputs(files[k], f);
		fclose(f);
		snprintf(spec, sizeof spec, "astrasim:%s", path);
		struct pm_topo *t = NULL;
		struct pm_err err;
		cr_assert_eq(pm_topo_parse(spec, NULL, &t, &err), PM_OK, "%s", err.msg);
		cr_assert_eq(pm_topo_route_shortest(t, 0, &err), PM_OK, "%s", err.msg);
		int n = pm_topo_endpoints(t), a1[64], a2[64];
		for (int a = 0; a < n; a++)
			for (int b = 0; b < n; b++) {
				int h1 = pm_topo_route(t, a, b, a1), h2 = pm_topo_route_table(t, a, b, a2);
				cr_assert_eq(h1, h2, "file %zu %d->%d: %d hops, tables %d", k, a, b, h1, h2);
				for (int j = 0; j < h1; j++)
					cr_assert_eq(a1[j], a2[j], "file %zu %d->%d hop %d: link %d, tables %d", k, a, b, j, a1[j], a2[j]);
			}
		pm_topo_free(t);
		unlink(path);
	}
}
