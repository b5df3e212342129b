/* parallel.c: sharded data parallelism on the training timeline (see
 * parallel.h). */
#include "search/parallel.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[PM_NPAR] = {"ddp", "zero1", "zero2", "zero3"};
static const char *const summaries[PM_NPAR] = {
	"all-reduce of the gradients, bucket by bucket during backward",
	"ZeRO stage 1: reduce-scatter of the gradients during backward, all-gather of the parameters after it",
	"ZeRO stage 2: the collectives of stage 1, gradients sharded too",
	"ZeRO stage 3 / FSDP FULL_SHARD: per layer all-gather before forward and before backward, reduce-scatter after backward",
};

const char *pm_parallel_name(enum pm_parallel s) { return names[s]; }
const char *pm_parallel_summary(enum pm_parallel s) { return summaries[s]; }

int pm_parallel_find(const char *name)
{
	if (strcmp(name, "fsdp") == 0)
		return PM_PAR_ZERO3;
	for (int s = 0; s < PM_NPAR; s++)
		if (strcmp(names[s], name) == 0)
			return s;
	return -1;
}

/* A reduce-scatter or an all-gather of M bytes: half an all-reduce. */
static double half(const struct pm_iter *it, double M)
{
	return it->a / 2 + it->b / 2 * M;
}

/* One collective on the stream, issued at t: returns when it ends. */
static double comm(struct pm_timing *tm, double *stream_free, double t, double d)
{
	double s = t > *stream_free ? t : *stream_free;
	*stream_free = s + d;
	tm->t_comm += d;
	tm->calls++;
	return *stream_free;
}

/* ZeRO-3 / FSDP: layer by layer, one layer of prefetch each way. */
static void zero3(const struct pm_iter *it, struct pm_timing *tm)
{
	double tbsum = 0, stream = 0, fend = 0, issue = 0;
	int L = it->L;
	double *ag_b = malloc(sizeof(double) * (size_t)(L > 0 ? L : 1));

	for (int l = 0; l < L; l++)
		tbsum += it->tb[l];
	for (int l = 0; l < L; l++) {	/* forward: gather l, then run it */
		double ready = comm(tm, &stream, issue, half(it, it->bytes[l]));
		double fs = fend > ready ? fend : ready;
		double share = tbsum > 0 ? it->tb[l] / tbsum : 1.0 / L;
		fend = fs + it->tf * share;
		issue = fs;	/* the next layer's gather once this one runs */
	}
	double bend = fend;
	if (L > 0)
		ag_b[L - 1] = comm(tm, &stream, fend, half(it, it->bytes[L - 1]));
	for (int l = L - 1; l >= 0; l--) {	/* backward, last layer first */
		double bs = bend > ag_b[l] ? bend : ag_b[l];
		if (l > 0)	/* prefetch the next gather before this reduce-scatter */
			ag_b[l - 1] = comm(tm, &stream, bs, half(it, it->bytes[l - 1]));
		bend = bs + it->tb[l];
		comm(tm, &stream, bend, half(it, it->bytes[l]));
	}
	tm->t_comp = it->tf + tbsum;
	tm->t_iter = bend > stream ? bend : stream;
	tm->t_c_no = tm->t_iter - tm->t_comp;
	free(ag_b);
}

int pm_parallel_time(enum pm_parallel s, const struct pm_iter *it, const struct pm_plan *plan,
		     double params, int N, struct pm_par_result *r)
{
	static const double per_param[PM_NPAR][2] = {	/* bytes: replicated, sharded over N */
		{16, 0}, {4, 12}, {2, 14}, {0, 16},
	};
	struct pm_iter rs = *it;
	double total = 0;
	int rc = PM_OK;

	memset(r, 0, sizeof *r);
	r->state_B = params * (per_param[s][0] + per_param[s][1] / (N > 0 ? N : 1));
	if (s == PM_PAR_ZERO3) {
		zero3(it, &r->tm);
		return PM_OK;
	}
	if (s == PM_PAR_DDP)
		return pm_plan_time(it, plan, 0, &r->tm);
	rs.a = it->a / 2;	/* the gradients are reduce-scattered */
	rs.b = it->b / 2;
	if ((rc = pm_plan_time(&rs, plan, 0, &r->tm)))
		return rc;
	for (int l = 0; l < it->L; l++)
		total += it->bytes[l];
	double d = half(it, total);	/* then every parameter gathered */
	r->tm.t_iter += d;
	r->tm.t_comm += d;
	r->tm.t_c_no += d;
	r->tm.calls++;
	return PM_OK;
}
