/* algo_hdrm.c: halving-doubling with rank mapping (HDRM), the all-reduce
 * EFLOPS co-designs with its BiGraph (Dong et al., HPCA 2020; Huang et al. 2021
 * §I, §II-C, §VI).
 *
 * Steps: Rabenseifner's recursive halving and doubling (algo_rabenseifner.c), with
 * ranks placed so that every exchange pairs an upper-layer node with a
 * lower-layer node and no switch-to-switch link carries two messages in
 * one step.  Placement on bigraph:MxN (N switches, U = N/2 per layer):
 * write rank r = j*N + x (0 <= x < N).  Partners r XOR 2^k differ in one
 * bit, so the parity of popcount(r) decides the layer: even -> upper.
 * With h = x/2, rank r sits in slot j of upper switch (h + j) mod U, or of
 * lower switch h.  For every step the M nodes of one switch then talk to M
 * different switches of the other layer, which is contention free while
 * M <= N/2 (checked by the tests on 4x8 and 4x16).
 * Cost:  as Rabenseifner with three links per exchange (endpoint, switch,
 *        switch, endpoint):
 *          T = 2 lg P (alpha + 3 delta) + 2 sum_k w(n/2^k) beta + (P-1)/P n gamma
 * Restrictions: a BiGraph with a power-of-two number of endpoints per
 * switch and of switches.
 */
#include "model/algo.h"

#include <stdio.h>
#include <string.h>

extern const struct pm_algo pm_algo_rhd;

static int prepare(struct pm_inst *in, const char *arg, struct pm_err *err)
{
	int m, n;

	(void)arg;
	pm_topo_bigraph(in->topo, &m, &n);
	if (!pm_is_pow2(m) || !pm_is_pow2(n))
		return pm_fail(err, PM_ENOTAPPLICABLE,
			       "not applicable: HDRM needs power-of-two endpoints per switch and switches (got %s)",
			       pm_topo_spec(in->topo));
	in->hop_links = n > 2 ? 3 : pm_topo_min_hops(in->topo);
	return PM_OK;
}

/* Endpoint of rank r on bigraph:MxN. */
static int place(int r, int m, int n)
{
	int u = n / 2, j = r / n, x = r % n, h = x / 2;
	int upper = __builtin_popcount((unsigned)r) % 2 == 0;
	int sw = upper ? (h + j) % u : u + h;
	(void)m;
	return sw * m + j;
}

static int build(const struct pm_inst *in, struct pm_sched *s,
		 struct pm_err *err)
{
	int m, n, rc = pm_algo_rhd.build(in, s, err);

	if (rc)
		return rc;
	pm_topo_bigraph(in->topo, &m, &n);
	for (int r = 0; r < in->P; r++)
		s->map[r] = place(r, m, n);
	snprintf(s->mapping, sizeof s->mapping,
		 "HDRM: even-popcount ranks on upper switches, odd on lower");
	return PM_OK;
}

static void closed(const struct pm_inst *in, double n,
		   const struct pm_params *p, struct pm_cost *c)
{
	pm_algo_rhd.closed(in, n, p, c);
}

static double xfers(const struct pm_inst *in)
{
	return pm_algo_rhd.xfers(in);
}

const struct pm_algo pm_algo_hdrm = {
	.name = "hdrm",
	.summary = "halving-doubling with rank mapping, contention free on BiGraph (EFLOPS)",
	.flags = PM_ALGO_BIGRAPH | PM_ALGO_POW2 | PM_ALGO_NEEDS_TOPO,
	.formula = "2 lg P (a + 3d) + 2 sum_k w(n/2^k) b + (P-1)/P n g",
	.reference = "Dong et al., EFLOPS, HPCA 2020; Huang et al. 2021 SII-C, SVI",
	.prepare = prepare,
	.build = build,
	.closed = closed,
	.xfers = xfers,
};
