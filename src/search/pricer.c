/* pricer.c: one owner for pricing an algorithm at a size (pricer.h). */
#include "search/pricer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct pm_eval_row pm_evals[PM_NEVAL] = {
	[PM_EVAL_CLOSED] = {"closed", 0},
	[PM_EVAL_CONTENTION] = {"contention", 1},
	[PM_EVAL_SIM] = {"sim", 1},
	[PM_EVAL_DATAFLOW] = {"dataflow", 1},
};

static int wants_schedule(const struct pm_pricer_cfg *c)
{
	for (int e = 0; e < PM_NEVAL; e++)
		if ((c->evals >> e & 1) && pm_evals[e].schedule)
			return 1;
	return 0;
}

static void drop_schedule(struct pm_pricer *q)
{
	pm_profile_free(q->prof);
	q->prof = NULL;
	if (q->have_sched)
		pm_sched_release(&q->sched);
	q->have_sched = 0;
}

/* validate checks every step's records: a compact schedule (a ring's
 * repeated steps stored once) is expanded where it fits */
static int expand(struct pm_pricer *q, struct pm_err *e)
{
	struct pm_sched full;
	int rc;

	if (!pm_sched_is_compact(&q->sched))
		return PM_OK;
	if ((rc = pm_sched_expand(&q->sched, &full, PM_SCHED_MAX_XFERS, e)))
		return rc;
	pm_sched_release(&q->sched);
	q->sched = full;
	return PM_OK;
}

/* Several sizes priced by the contention evaluator: the schedule's
 * profile prices them without routing (NULL where it does not hold). */
static void profile_for_sizes(struct pm_pricer *q)
{
	if (q->have_sched && (q->cfg.evals >> PM_EVAL_CONTENTION & 1) && q->cfg.nsizes > 1)
		q->prof = pm_algo_profile(&q->at, &q->sched, q->cfg.p);
}

/* Build the schedule of q->at: have_sched, or the refusal in no_sched. */
static int build(struct pm_pricer *q, struct pm_err *err)
{
	struct pm_err e;
	int rc = pm_algo_schedule(&q->at, &q->sched, &e);

	q->no_sched[0] = 0;
	if (rc && rc != PM_EINPUT) {
		*err = e;
		return rc;
	}
	q->have_sched = rc == PM_OK;
	if (q->have_sched && q->cfg.expand && expand(q, &e)) {
		drop_schedule(q);
		rc = PM_EINPUT;
	}
	if (rc)
		snprintf(q->no_sched, sizeof q->no_sched, "%s", e.msg);
	return PM_OK;
}

int pm_pricer_open(struct pm_pricer *q, const struct pm_inst *in, const struct pm_pricer_cfg *cfg,
		   struct pm_pricer *prev, struct pm_err *err)
{
	memset(q, 0, sizeof *q);
	q->base = q->at = *in;
	q->cfg = *cfg;
	if (prev && prev->have_sched && !prev->base.sized && pm_algo_same_schedule(&prev->base, in)) {
		q->sched = prev->sched;	/* handed over, not copied */
		q->have_sched = 1;
		prev->have_sched = 0;
	}
	if (prev)
		drop_schedule(prev);
	if (in->sized || !wants_schedule(cfg))
		return PM_OK;
	int rc = q->have_sched ? PM_OK : build(q, err);
	if (!rc)
		profile_for_sizes(q);
	return rc;
}

int pm_pricer_size(struct pm_pricer *q, double n, struct pm_err *why, struct pm_err *err)
{
	struct pm_inst next;

	if (!q->base.sized)
		return PM_OK;
	if (pm_algo_at_size(&q->base, n, &next, why)) {
		drop_schedule(q);
		q->at = next;
		return PM_ENOTAPPLICABLE;
	}
	/* a size whose instance is the last one's (dbtree's chunk count is
	 * the same for a whole octave) keeps its schedule and its profile */
	if (q->have_sched && memcmp(&next, &q->at, sizeof next) == 0)
		return PM_OK;
	drop_schedule(q);
	q->at = next;
	int rc = wants_schedule(&q->cfg) ? build(q, err) : PM_OK;
	if (!rc)
		profile_for_sizes(q);
	return rc;
}

static int simulate(struct pm_pricer *q, int dataflow, double n, struct pm_cost *c, struct pm_err *err)
{
	struct pm_sim_opts o = *q->cfg.so;
	struct pm_params p = pm_inst_params(&q->at, q->cfg.p);
	struct pm_sim_result r;
	int rc;

	o.dataflow = dataflow;
	o.lockstep = dataflow ? PM_LOCK_BARRIER : q->cfg.so->lockstep;
	if (q->cfg.sim_spent) {
		double limit = o.routers ? PM_SIM_MAX_PACKET_HOPS : PM_SIM_MAX_EVENTS;
		o.budget = limit - *q->cfg.sim_spent;
		if (o.budget < 1)
			o.budget = 1;
	}
	if ((rc = pm_sim_run(q->cfg.t, &q->sched, n, &p, &o, &r, err)))
		return rc == PM_EINPUT ? PM_ENOTAPPLICABLE : rc;
	if (q->cfg.sim_spent)
		*q->cfg.sim_spent += r.events;
	pm_cost_closed_init(c);
	c->time_s = r.time_s;
	c->steps = q->sched.nsteps;
	c->util_avg = r.link_busy;
	return PM_OK;
}

int pm_pricer_price(struct pm_pricer *q, enum pm_evaluator e, double n, struct pm_cost *c,
		    struct pm_step_cost *steps, struct pm_err *err)
{
	if (e == PM_EVAL_CLOSED) {
		pm_algo_closed(&q->at, n, q->cfg.p, c);
		return PM_OK;
	}
	if (!q->have_sched)
		return pm_fail(err, PM_ENOTAPPLICABLE, "%s",
			       q->no_sched[0] ? q->no_sched : "no schedule was built for this evaluator");
	if (e == PM_EVAL_CONTENTION && q->prof && !steps) {
		pm_profile_price(q->prof, n, c, NULL);
		return PM_OK;
	}
	if (e == PM_EVAL_CONTENTION)
		return pm_algo_contention(&q->at, &q->sched, n, q->cfg.p, c, steps, err);
	return simulate(q, e == PM_EVAL_DATAFLOW, n, c, err);
}

void pm_pricer_close(struct pm_pricer *q)
{
	drop_schedule(q);
}

/* The transfers chain [first, end) stores (pm_algo.xfers). */
static double chain_xfers(const struct pm_inst *const *ins, int first, int end)
{
	double x = 0;

	for (int i = first; i < end; i++)
		if (ins[i] && ins[i]->P > 1)
			x += ins[i]->algo->xfers(ins[i]);
	return x;
}

int pm_pricer_chains(const struct pm_inst *const *ins, int n, int *chain, int *order)
{
	int nc = 0;
	double *w = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));

	for (int i = 0; i < n; i++)
		if (i == 0 || !ins[i] || !ins[i - 1] || !pm_algo_same_schedule(ins[i - 1], ins[i]))
			chain[nc++] = i;
	chain[nc] = n;
	for (int c = 0; c < nc; c++) {	/* insertion by weight, stable */
		int k = c;
		double x = chain_xfers(ins, chain[c], chain[c + 1]);
		if (w)
			w[c] = x;
		for (; w && k > 0 && w[order[k - 1]] < x; k--)
			order[k] = order[k - 1];
		order[k] = c;
	}
	free(w);
	return nc;
}
