/* test_sched.c: the schedule container and its all-reduce checker.  The
 * checker is the independent judge the algorithm tests rely on, so it is
 * itself tested here on hand-made right and wrong schedules. */
#include "helpers.h"
#include "model/msccl.h"
#include "model/ringlib.h"
#include "model/sched.h"

static void init(struct pm_sched *s, int P, uint32_t chunks)
{
	struct pm_err err;
	cr_assert_eq(pm_sched_init(s, P, chunks, &err), PM_OK);
}

static int check(struct pm_sched *s, struct pm_err *err)
{
	cr_assert_eq(pm_sched_finish(s, err), PM_OK, "%s", err->msg);
	return pm_sched_check_allreduce(s, err);
}

/* Two ranks swapping and reducing the whole vector is an all-reduce. */
Test(sched, exchange_of_two)
{
	struct pm_sched s;
	struct pm_err err;
	init(&s, 2, 1);
	pm_sched_add(&s, 0, 0, 1, 0, 1, PM_REDUCE, 0);
	pm_sched_add(&s, 0, 1, 0, 0, 1, PM_REDUCE, 0);
	cr_assert_eq(check(&s, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(s.nsteps, 1);
	pm_sched_release(&s);
}

/* Reducing to one rank without broadcasting back is not an all-reduce. */
Test(sched, reduce_only_is_incomplete)
{
	struct pm_sched s;
	struct pm_err err;
	init(&s, 2, 1);
	pm_sched_add(&s, 0, 0, 1, 0, 1, PM_REDUCE, 0);
	cr_assert_eq(check(&s, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "rank 0 ends with chunk 0 reduced over 1 of 2"), "%s", err.msg);
	pm_sched_release(&s);
}

/* Sending the same contribution twice counts it twice. */
Test(sched, double_count_detected)
{
	struct pm_sched s;
	struct pm_err err;
	init(&s, 2, 1);
	pm_sched_add(&s, 0, 0, 1, 0, 1, PM_REDUCE, 0);
	pm_sched_add(&s, 1, 0, 1, 0, 1, PM_REDUCE, 0);
	cr_assert_eq(check(&s, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "twice"), "%s", err.msg);
	pm_sched_release(&s);
}

/* Lockstep: a transfer sees data as it was when its step began, so a
 * chain 0->1->2 in one step does not carry rank 0's data to rank 2. */
Test(sched, lockstep_semantics)
{
	struct pm_sched s;
	struct pm_err err;
	init(&s, 3, 1);
	pm_sched_add(&s, 0, 0, 1, 0, 1, PM_REDUCE, 0);
	pm_sched_add(&s, 0, 1, 2, 0, 1, PM_REDUCE, 0);
	pm_sched_add(&s, 1, 2, 0, 0, 1, PM_COPY, 0);
	pm_sched_add(&s, 1, 2, 1, 0, 1, PM_COPY, 0);
	cr_assert_eq(check(&s, &err), PM_EINPUT);
	pm_sched_release(&s);
}

Test(sched, malformed_transfer)
{
	struct pm_sched s;
	struct pm_err err;
	init(&s, 2, 2);
	pm_sched_add(&s, 0, 0, 1, 1, 2, PM_REDUCE, 0);	/* units 1..3 of 2 */
	cr_assert_eq(check(&s, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "malformed"), "%s", err.msg);
	pm_sched_release(&s);
}

/* Steps must come in order; gaps are empty steps. */
Test(sched, steps_in_order)
{
	struct pm_sched s;
	struct pm_err err;
	init(&s, 4, 4);
	pm_sched_add(&s, 0, 1, 2, 0, 1, PM_COPY, 1);
	pm_sched_add(&s, 0, 3, 0, 0, 1, PM_COPY, 2);
	pm_sched_add(&s, 2, 0, 1, 0, 1, PM_COPY, 7);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	cr_assert_eq(s.nsteps, 3);
	cr_assert_eq(pm_sched_step_len(&s, 0), 2);
	cr_assert_eq(pm_sched_step_len(&s, 1), 0);
	cr_assert_eq(pm_sched_step_len(&s, 2), 1);
	cr_assert_eq(s.x[2].flow, 7);
	pm_sched_add(&s, 1, 0, 1, 0, 1, PM_COPY, 0);	/* back in time */
	cr_assert_eq(pm_sched_finish(&s, &err), PM_EINTERNAL);
	cr_assert(strstr(err.msg, "out of order"), "%s", err.msg);
	pm_sched_release(&s);
}

Test(sched, size_limit_is_an_input_error)
{
	struct pm_sched s;
	struct pm_err err;
	init(&s, 4, 1);
	s.limit = 3;
	for (int i = 0; i < 5; i++)
		pm_sched_add(&s, i, 0, 1, 0, 1, PM_COPY, 0);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "schedule too large: more than 3 transfers"), "%s", err.msg);
	cr_assert(strstr(err.msg, "--model closed"));
	pm_sched_release(&s);
}

Test(sched, checker_size_limit)
{
	struct pm_sched s;
	struct pm_err err;
	init(&s, 600, 1);
	cr_assert_eq(check(&s, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "too large to check"));
	pm_sched_release(&s);
}

/* The ring reduce-scatter of Patarasuk & Yuan: in step t member i sends
 * part (i - t - 1) mod p, so step 0 of a 4-ring has member 0 send part 3
 * (units 6..8 of 8) to member 1; RS + AG is an all-reduce both ways. */
Test(sched, ring_building_block)
{
	int members[4] = {3, 1, 0, 2};	/* any rank order */
	for (int dir = -1; dir <= 1; dir += 2) {
		struct pm_sched s;
		struct pm_err err;
		init(&s, 4, 8);
		pm_ring_rs(&s, members, 4, 0, 8, 0, dir, 0);
		pm_ring_ag(&s, members, 4, 0, 8, 3, dir, 0);
		cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
		cr_assert_eq(s.nsteps, 6);
		if (dir == 1) {
			cr_assert_eq(s.x[0].src, 3);
			cr_assert_eq(s.x[0].dst, 1);
			cr_assert_eq(s.x[0].lo, 6);
			cr_assert_eq(s.x[0].cnt, 2);
		}
		cr_assert_eq(pm_sched_check_allreduce(&s, &err), PM_OK, "%s", err.msg);
		pm_sched_release(&s);
	}
}

/* A repeated ring step plays out as the p-1 steps Patarasuk & Yuan list:
 * with dir = +1 member i sends part (i - t - 1) mod 4 in step t.  Window
 * [8, 16) in parts of 2 units: in step t = 2 member 0 sends part
 * (0 - 3) mod 4 = 1, units [10, 12); member 3 sends part 0, units [8, 10). */
Test(sched, repeated_step_rotates_its_parts)
{
	int members[4] = {0, 1, 2, 3};
	struct pm_sched s, e;
	struct pm_err err;

	init(&s, 4, 16);
	pm_ring_rs(&s, members, 4, 8, 8, 0, +1, 0);
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	cr_assert_eq(s.nstored, 1);
	cr_assert_eq(s.nsteps, 3);
	cr_assert_eq(s.nx, 4);
	cr_assert_float_eq(s.nx_played, 12, 0);
	cr_assert(pm_sched_is_compact(&s));
	cr_assert_eq(pm_sched_lo(&s, 0, 2), 10);
	cr_assert_eq(pm_sched_lo(&s, 3, 2), 8);
	cr_assert_eq(pm_sched_expand(&s, &e, 1000, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(e.nsteps, 3);
	cr_assert_eq(e.nstored, 3);
	cr_assert_eq(e.nx, 12);
	cr_assert(!pm_sched_is_compact(&e));
	cr_assert_eq(e.x[e.step_off[2]].lo, 10);
	cr_assert_eq(e.x[e.step_off[2]].src, 0);
	cr_assert_eq(e.x[e.step_off[2] + 3].lo, 8);
	/* expansion is refused above its limit, naming the count */
	pm_sched_release(&e);
	cr_assert_eq(pm_sched_expand(&s, &e, 11, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "12 transfers"), "%s", err.msg);
	pm_sched_release(&s);
}

/* A block of two steps played three times: logical steps 1..6 after step
 * 0; a transfer may not be added inside the repeated block afterwards. */
Test(sched, repeated_block_and_order)
{
	struct pm_sched s;
	struct pm_err err;

	init(&s, 3, 3);
	pm_sched_add(&s, 0, 0, 1, 0, 1, PM_COPY, 0);
	pm_sched_add(&s, 1, 1, 2, 0, 1, PM_COPY, 0);
	pm_sched_add(&s, 2, 2, 0, 0, 1, PM_COPY, 0);
	pm_sched_repeat(&s, 2, 3);
	cr_assert_eq(s.nsteps, 7);
	cr_assert_eq(s.nstored, 3);
	cr_assert_eq(s.nruns, 2);
	cr_assert_float_eq(s.nx_played, 7, 0);
	pm_sched_add(&s, 7, 0, 2, 0, 1, PM_COPY, 0);	/* after the block: fine */
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	pm_sched_add(&s, 7, 0, 1, 0, 1, PM_COPY, 0);	/* same last step: fine */
	cr_assert_eq(pm_sched_finish(&s, &err), PM_OK);
	pm_sched_repeat(&s, 1, 2);
	pm_sched_add(&s, 8, 0, 1, 0, 1, PM_COPY, 0);	/* inside a repeat */
	cr_assert_eq(pm_sched_finish(&s, &err), PM_EINTERNAL);
	cr_assert(strstr(err.msg, "out of order"), "%s", err.msg);
	pm_sched_release(&s);
}

/* MSCCL export read back (issue 13): the XML is parsed by libxml2 and
 * every send is paired with its peer's receive, per (src, dst) pair in
 * order; the transfers come back exactly as the schedule has them (ranks,
 * units, reduce or copy), for algorithms with one, several and routed
 * transfers per step. */
static int by_pair_order(const void *a, const void *b)
{
	const struct pm_msccl_xfer *x = a, *y = b;
	if (x->src != y->src)
		return x->src - y->src;
	return x->dst - y->dst;
}

Test(sched, msccl_round_trip)
{
	static const char *const algos[] = {"ring", "multitree", "hring", "dbtree", "rabenseifner"};
	struct pm_topo *t = topo_or_die("torus:4x4");

	for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
		struct pm_inst in;
		struct pm_sched s, e;
		struct pm_err err;
		char path[] = "/tmp/perfmodel-msccl-XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");

		resolve_or_die(algos[a], t, 0, &in);
		cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
		cr_assert_eq(pm_sched_expand(&s, &e, PM_SCHED_MAX_XFERS, &err), PM_OK);
		cr_assert_eq(pm_msccl_write(f, &e, in.label, "allreduce", &(struct pm_msccl_opts){"Simple", 0, 1e12, 64}, &err), PM_OK, "%s", err.msg);
		fclose(f);

		struct pm_msccl_xfer *x;
		size_t n;
		int ngpus;
		unsigned nchunks;
		cr_assert_eq(pm_msccl_read(path, &ngpus, &nchunks, &x, &n, &err), PM_OK, "%s: %s", algos[a], err.msg);
		cr_assert_eq(ngpus, e.nranks);
		cr_assert_eq(nchunks, e.nchunks);
		cr_assert_eq(n, e.nx, "%s: %zu transfers read back, %zu in the schedule", algos[a], n, e.nx);
		/* the schedule's transfers, stably ordered by (src, dst) */
		struct pm_msccl_xfer *want = malloc(sizeof *want * e.nx);
		for (size_t i = 0; i < e.nx; i++)
			want[i] = (struct pm_msccl_xfer){e.x[i].src, e.x[i].dst, e.x[i].lo, e.x[i].cnt, e.x[i].op == PM_REDUCE};
		for (size_t i = 1; i < e.nx; i++)	/* insertion sort: stable */
			for (size_t j = i; j > 0 && by_pair_order(&want[j - 1], &want[j]) > 0; j--) {
				struct pm_msccl_xfer tmp = want[j];
				want[j] = want[j - 1];
				want[j - 1] = tmp;
			}
		for (size_t i = 0; i < n; i++)
			cr_assert(x[i].src == want[i].src && x[i].dst == want[i].dst && x[i].lo == want[i].lo &&
				  x[i].cnt == want[i].cnt && x[i].reduce == want[i].reduce,
				  "%s transfer %zu: read %d->%d [%u,+%u) %d, schedule %d->%d [%u,+%u) %d", algos[a], i,
				  x[i].src, x[i].dst, x[i].lo, x[i].cnt, x[i].reduce,
				  want[i].src, want[i].dst, want[i].lo, want[i].cnt, want[i].reduce);
		free(want);
		free(x);
		unlink(path);
		pm_sched_release(&e);
		pm_sched_release(&s);
	}
	pm_topo_free(t);
}

/* Malformed MSCCL files are refused with the file and what was wrong. */
Test(sched, msccl_bad_files)
{
	static const struct { const char *text, *needle; } cases[] = {
		{"<algo ngpus=\"2\"", "not well-formed XML"},
		{"<graph/>", "no <algo> root"},
		{"<algo ngpus=\"2\" nchunksperloop=\"1\"><gpu id=\"0\"><tb send=\"1\" recv=\"-1\"><step type=\"s\" srcoff=\"0\" cnt=\"1\"/></tb></gpu></algo>",
		 "1 sends and 0 receives"},
		{"<algo ngpus=\"x\" nchunksperloop=\"1\"/>", "malformed attribute"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char path[] = "/tmp/perfmodel-msccl-XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");
		struct pm_msccl_xfer *x;
		size_t n;
		int ngpus;
		unsigned nchunks;
		struct pm_err err;
		fputs(cases[i].text, f);
		fclose(f);
		cr_assert_eq(pm_msccl_read(path, &ngpus, &nchunks, &x, &n, &err), PM_EINPUT, "case %zu", i);
		cr_assert(strstr(err.msg, cases[i].needle), "case %zu: '%s'", i, err.msg);
		cr_assert(strstr(err.msg, path), "case %zu: '%s'", i, err.msg);
		unlink(path);
	}
}
