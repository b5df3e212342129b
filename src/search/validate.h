/* validate.h: the evaluators checked against each other (perfmodel
 * validate).  A matrix of networks x algorithms x sizes, each priced by
 * the closed form, the contention evaluator and the router-level packet
 * simulator (barrier lockstep and dataflow), with two checks whose
 * tolerances docs/validation/09-validate.md derives:
 *
 *  exact   where every step's transfers cross one link each, no link
 *          carries two in a step and no rank receives more than its ports
 *          in a step, the simulator equals the contention evaluator plus,
 *          per step, the router's fixed cost: injection and ejection
 *          channels and two router pipelines (6 ns with the defaults), to
 *          1e-9 relative;
 *  bound   everywhere else, barrier lockstep is never below the sum over
 *          steps of the step's slowest link (its bytes at its own rate) +
 *          the network's shortest link latency, and dataflow never below
 *          the busiest link's bytes over the whole run at the fastest
 *          link's rate (1e-9 relative slack).
 * Zero alpha and gamma, packet flow control: the cases where both checks
 * are theorems of the router model; the exact check on uniform networks
 * (one link bandwidth and latency), the bounds on any (a GPU cluster's
 * NVLink and NICs too).
 */
#ifndef PM_VALIDATE_H
#define PM_VALIDATE_H

#include "model/err.h"
#include "model/params.h"

struct pm_validate_row {
	char topo[48], algo[96];
	double size_B;
	double closed_s, contention_s, sim_s, dataflow_s;
	double bound_s;		/* the check's reference: exact value or lower bound */
	int exact;		/* 1: the exact check applies; 0: the bound */
	int links_sim;		/* 1: simulated on the link network (a switch that
				 * reduces or multicasts, which the router network
				 * does not run); the bound check */
	int ok;			/* the check holds */
	char note[512];		/* why a row has no check (not applicable, refused) */
};

struct pm_validate {
	struct pm_validate_row *rows;
	int nrows, failed;
};

/* quick: the small matrix the test suite runs (2 networks x 4 algorithms
 * x 2 sizes); otherwise the full one (docs/validation/09-validate.md).
 * The (network, algorithm) pairs are priced on `threads` threads; the
 * rows come out in the matrix's order whatever their number. */
int pm_validate_run(int quick, const struct pm_params *p, int threads, struct pm_validate *v,
		    struct pm_err *err);
void pm_validate_release(struct pm_validate *v);

/* The matrix pm_validate_run checks: its networks and sizes (NULL- and
 * 0-terminated) and its algorithms, NULL-terminated into algos (room for
 * PM_VALIDATE_MAX_ALGOS + 1); returns their count.  The full matrix
 * takes every all-reduce algorithm of the table with a schedule of its
 * own, all but NCCL's model, which prices a machine's NCCL: a new
 * algorithm is never skipped. */
#define PM_VALIDATE_MAX_ALGOS 63
int pm_validate_matrix(int quick, const char *const **topos, const char **algos,
		       const double **sizes);

#endif
