/* algo_2d_ring.c: 2D-ring all-reduce on an A x B torus or mesh (Ying et
 * al. 2018, the TPU baseline of Huang et al. 2021 §I and §VI).
 *
 * Steps: the message is split in four streams of n/4.  Streams 0 and 1 run
 * a ring all-reduce along X (the rows, rings of A) and then along Y (the
 * columns, rings of B); streams 2 and 3 go Y first, then X.  Streams 0 and
 * 2 turn in the + direction, 1 and 3 in the - direction, so at every step
 * all four links of a node are busy.  Phase 1 takes max(2(A-1), 2(B-1))
 * steps, phase 2 the same again.  Each stream all-reduces its full quarter
 * twice, so a node sends 2N(N-1) units of n/N^2 per reduce-scatter +
 * all-gather pass where the flat ring sends N^2-1 (Huang et al. 2021 §I, N = A = B).
 * Cost:  for A = B = N:
 *          T = 4(N-1)(alpha + delta + w(n/4N) beta) + 2(N-1)(n/N) gamma;
 *        in general each step pays alpha + delta plus the larger message
 *        of the rings active in it (n/4A on X rings, n/4B on Y rings).
 * Restrictions: a 2-D torus or mesh.  On a mesh a ring's closing hop
 * crosses the whole row back, which the contention evaluator charges.
 * Ranks on endpoints in order.
 */
#include "model/algo.h"
#include "model/ringlib.h"

#include <stdlib.h>

struct r2_state {
	int dims[3], ndims;	/* grid shape */
};
_Static_assert(sizeof(struct r2_state) <= PM_PRIV_BYTES, "r2_state fits pm_inst.priv");

static struct r2_state *r2s_of(struct pm_inst *in)
{
	return (struct r2_state *)(void *)in->priv.bytes;
}

static const struct r2_state *cr2s_of(const struct pm_inst *in)
{
	return (const struct r2_state *)(const void *)in->priv.bytes;
}

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	struct r2_state *own = r2s_of(in);
	int wrap;

	(void)arg;
	(void)err;
	own->ndims = pm_topo_grid(in->topo, own->dims, &wrap);
	in->ports = 4;
	return PM_OK;
}

/* Step k of a ring all-reduce of units [lo, lo+len) along dimension d
 * (0 = X) on every line of the grid, added as schedule step `step`. */
static void allreduce_lines_step(struct pm_sched *s, int A, int B, int d,
				 uint32_t lo, uint32_t len, int step, int k,
				 int dir, int flow, int *members)
{
	int p = d == 0 ? A : B, lines = d == 0 ? B : A;

	if (p < 2 || k >= 2 * (p - 1))
		return;
	for (int l = 0; l < lines; l++) {
		for (int i = 0; i < p; i++)
			members[i] = d == 0 ? l * A + i : i * A + l;
		if (k < p - 1)
			pm_ring_rs_step(s, members, p, lo, len, step, k, dir, flow);
		else
			pm_ring_ag_step(s, members, p, lo, len, step, k - (p - 1), dir, flow);
	}
}

static int phase_steps(int A, int B)
{
	int a = 2 * (A - 1), b = 2 * (B - 1);
	return a > b ? a : b;
}

/* Sorted, distinct step numbers in [0, S1] where some ring changes from
 * reduce-scatter to all-gather or stops; between two of them every step
 * is the previous one rotated. */
static int breakpoints(int A, int B, int S1, int *bp)
{
	int c[6] = {0, A - 1, 2 * (A - 1), B - 1, 2 * (B - 1), S1}, n = 0;

	for (int v = 0; v <= S1; v++)
		for (int i = 0; i < 6; i++)
			if (c[i] == v) {
				bp[n++] = v;
				break;
			}
	return n;
}

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	const struct r2_state *own = cr2s_of(in);
	int A = own->dims[0], B = own->dims[1], S1 = phase_steps(A, B), bp[6];
	int nbp = breakpoints(A, B, S1, bp);
	uint32_t q = (uint32_t)(A * B);	/* units per stream */
	int *members = malloc(sizeof(int) * (size_t)(A > B ? A : B));

	if (!members)
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	s->nchunks = 4 * q;
	/* each stretch between breakpoints: its first step, played on */
	for (int phase = 0; phase < 2; phase++)
		for (int r = 0; r + 1 < nbp; r++) {
			int k = bp[r];
			for (int st = 0; st < 4; st++) {
				int first = st < 2 ? 0 : 1, dir = st % 2 ? -1 : +1;
				allreduce_lines_step(s, A, B, phase ? 1 - first : first,
						     (uint32_t)st * q, q, phase * S1 + k, k,
						     dir, st, members);
			}
			pm_sched_repeat(s, 1, bp[r + 1] - k);
		}
	s->second_phase = S1;
	free(members);
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	const struct r2_state *own = cr2s_of(in);
	int A = own->dims[0], B = own->dims[1], S1 = phase_steps(A, B);
	double mx = n / (4.0 * A), my = n / (4.0 * B);

	for (int k = 0; k < S1; k++) {	/* phase 1; phase 2 costs the same */
		int xa = k < 2 * (A - 1), ya = k < 2 * (B - 1);
		double m = xa && ya ? (mx > my ? mx : my) : xa ? mx : my;
		double red = (xa && k < A - 1 ? 2 * mx : 0) + (ya && k < B - 1 ? 2 * my : 0);
		c->alpha_s += 2 * p->alpha_s;
		c->lat_s += 2 * pm_hop_lat(in, p);
		c->bw_s += 2 * pm_msg_bw_s(p, m);
		c->red_s += 2 * red * p->gamma_spB;
	}
	c->steps = 2 * S1;
	c->sent_B = (2.0 * (A - 1) / A + 2.0 * (B - 1) / B) * n;
}

/* stored: one step per stretch between breakpoints and phase, each at
 * most 4 streams of P transfers (a stream whose rings have stopped adds
 * none) */
static double xfers(const struct pm_inst *in)
{
	const struct r2_state *own = cr2s_of(in);
	int A = own->dims[0], B = own->dims[1], S1 = phase_steps(A, B), bp[6];
	int nbp = breakpoints(A, B, S1, bp);
	double x = 0;

	for (int r = 0; r + 1 < nbp; r++)
		x += 2.0 * in->P * ((bp[r] < 2 * (A - 1)) + (bp[r] < 2 * (B - 1)));
	return 2.0 * x;
}

const struct pm_algo pm_algo_ring2d = {
	.name = "2d-ring",
	.summary = "ring all-reduce along X then Y (and Y then X), all four links busy (TPU)",
	.flags = PM_ALGO_GRID2D | PM_ALGO_NEEDS_TOPO,
	.formula = "A=B=N: 4(N-1)(a + d + w(n/4N) b) + 2(N-1)(n/N) g",
	.reference = "Ying et al. 2018; Huang et al. 2021 SI, SVI",
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
