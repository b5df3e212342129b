/* train.c: DNN profiles, the WFBP timeline and the merge policies of seed
 * 002 (eqs. 3-9, Theorem 1, Algorithm 1) and the optimum. */
#include "search/train.h"
#include "model/grow.h"
#include "model/units.h"
#include "model/csvread.h"
#include "model/preset.h"
#include "model/text.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- profiles -------------------------------------------------------- */

struct preader {
	struct pm_profile *p;
	int cname, cparams, ctb, ctf, cpar;
	size_t cap;
	double tf_sum;
};

static int num(const char *s, double *v)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	*v = strtod(s, &end);
	return errno || *end || !isfinite(*v) || *v < 0 ? -1 : 0;
}

static int grow(struct preader *r, struct pm_err *err)
{
	struct pm_profile *p = r->p;
	size_t cap = pm_grow_cap(r->cap, r->cap + 1, 64);

	if (pm_resize(&p->names, cap, sizeof(char *)) || pm_resize(&p->params, cap, sizeof(double)) ||
	    pm_resize(&p->tb_s, cap, sizeof(double)) || pm_resize(&p->model_par, cap, 1))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	r->cap = cap;
	return PM_OK;
}

static int profile_row(void *ctx, int row, char *const *cell, int n, struct pm_err *err)
{
	struct preader *r = ctx;
	struct pm_profile *p = r->p;
	double params, tb, tf = 0;

	if (row == 0) {
		r->cname = pm_csv_column(cell, n, "name");
		r->cparams = pm_csv_column(cell, n, "params");
		r->ctb = pm_csv_column(cell, n, "backward_us");
		r->ctf = pm_csv_column(cell, n, "forward_us");
		r->cpar = pm_csv_column(cell, n, "parallel");
		if (r->cname < 0 || r->cparams < 0 || r->ctb < 0)
			return pm_fail(err, PM_EINPUT,
				       "model file '%s' has no '%s' column (expected the header name,params,backward_us[,forward_us])",
				       p->path, r->cname < 0 ? "name" : r->cparams < 0 ? "params" : "backward_us");
		return PM_OK;
	}
	const char *sp = r->cparams < n ? cell[r->cparams] : "";
	const char *stb = r->ctb < n ? cell[r->ctb] : "";
	const char *stf = r->ctf >= 0 && r->ctf < n ? cell[r->ctf] : "";
	if (num(sp, &params) || num(stb, &tb) || (r->ctf >= 0 && num(stf, &tf)))
		return pm_fail(err, PM_EINPUT,
			       "model file '%s' row %d: invalid numbers '%s', '%s' (expected non-negative params and microseconds)",
			       p->path, row, sp, stb);
	if (params > 1e12 || tb > PM_MAX_TIME_S * 1e6 || tf > PM_MAX_TIME_S * 1e6)
		return pm_fail(err, PM_EINPUT,
			       "model file '%s' row %d: params %g, backward %g us, forward %g us (expected at most 10^12 parameters and 3600 s per layer)",
			       p->path, row, params, tb, tf);
	const char *spar = r->cpar >= 0 && r->cpar < n ? cell[r->cpar] : "";
	if (*spar && strcmp(spar, "data") && strcmp(spar, "model"))
		return pm_fail(err, PM_EINPUT,
			       "model file '%s' row %d: parallel '%s' (expected data or model)",
			       p->path, row, spar);
	if ((size_t)p->L == r->cap && grow(r, err))
		return PM_EINTERNAL;
	p->model_par[p->L] = strcmp(spar, "model") == 0;
	if (!(p->names[p->L] = strdup(r->cname < n ? cell[r->cname] : "")))
		return pm_fail(err, PM_EINTERNAL, "out of memory");
	p->params[p->L] = params;
	p->tb_s[p->L] = tb * 1e-6;
	p->L++;
	r->tf_sum += tf * 1e-6;
	return PM_OK;
}

/* "# key: value" lines carry the profile's provenance. */
static void meta(struct pm_profile *p, const char *line)
{
	double v;
	char *end;

	if (strncmp(line, "# alltoall_values:", 18) == 0) {
		errno = 0;
		v = strtod(line + 18, &end);
		end += strspn(end, " \t\r\n");
		p->a2a_values = !errno && end > line + 18 && !*end && isfinite(v) && v >= 0 &&
				v <= 1e15 ? v : -1;	/* refused at load when -1 */
		return;
	}
	static const struct { const char *key; size_t off, size; } keys[] = {
		{"kind", offsetof(struct pm_profile, kind), sizeof ((struct pm_profile *)0)->kind},
		{"device", offsetof(struct pm_profile, device), sizeof ((struct pm_profile *)0)->device},
		{"batch", offsetof(struct pm_profile, batch), sizeof ((struct pm_profile *)0)->batch},
		{"method", offsetof(struct pm_profile, method), sizeof ((struct pm_profile *)0)->method},
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		size_t k = strlen(keys[i].key);
		if (strncmp(line + 2, keys[i].key, k) == 0 && line[2 + k] == ':') {
			char *dst = (char *)p + keys[i].off;
			const char *v = line + 3 + k;
			while (*v == ' ')
				v++;
			pm_strlcpy(dst, v, keys[i].size);
			dst[strcspn(dst, "\r\n")] = '\0';
		}
	}
}

static void profile_comment(void *ctx, const char *line)
{
	meta(((struct preader *)ctx)->p, line);
}

int pm_profile_load(const char *spec, struct pm_profile *p, struct pm_err *err)
{
	struct preader r = {.p = p};

	memset(p, 0, sizeof *p);
	if (pm_preset_find(spec, "models", "model", p->path, sizeof p->path,
			   p->name, sizeof p->name, err))
		return PM_EINPUT;
	int rc = pm_csv_read(p->path, "model file", profile_row, profile_comment, &r, err);
	if (!rc && p->L == 0)
		rc = pm_fail(err, PM_EINPUT, "model file '%s' has no layers (expected one row per gradient tensor)", p->path);
	if (rc) {
		pm_profile_release(p);
		return rc;
	}
	int models = 0;
	for (int l = 0; l < p->L; l++)
		models += p->model_par[l];
	if (p->a2a_values < 0 || (models > 0) != (p->a2a_values > 0)) {
		rc = pm_fail(err, PM_EINPUT,
			     "model file '%s': %s (expected model-parallel rows and a '# alltoall_values: N' line together, N at most 10^15, or neither)",
			     p->path, p->a2a_values < 0 ? "invalid alltoall_values" :
			     models ? "model-parallel rows but no alltoall_values" : "alltoall_values but no model-parallel row");
		pm_profile_release(p);
		return rc;
	}
	double tb = 0;
	for (int l = 0; l < p->L; l++)
		tb += p->tb_s[l];
	p->forward_assumed = r.ctf < 0;
	p->tf_s = p->forward_assumed ? tb / 2 : r.tf_sum;
	if (!p->kind[0])
		strcpy(p->kind, "unstated");
	return PM_OK;
}

void pm_profile_split(struct pm_profile *p, struct pm_hybrid *h)
{
	int n = 0, last = -1;

	memset(h, 0, sizeof *h);
	for (int l = 0; l < p->L; l++)
		if (p->model_par[l])
			last = l;
	for (int l = 0; l < p->L; l++) {
		if (p->model_par[l]) {
			h->rows++;
			h->params += p->params[l];
			h->tb_s += p->tb_s[l];
			free(p->names[l]);
			continue;
		}
		h->a2a_pos += l > last && last >= 0;
		p->names[n] = p->names[l];
		p->params[n] = p->params[l];
		p->tb_s[n] = p->tb_s[l];
		p->model_par[n++] = 0;
	}
	p->L = n;
}

void pm_profile_release(struct pm_profile *p)
{
	for (int l = 0; l < p->L; l++)
		free(p->names[l]);
	free(p->names);
	free(p->params);
	free(p->tb_s);
	free(p->model_par);
	memset(p, 0, sizeof *p);
}

/* ---- plans and the timeline ------------------------------------------ */

void pm_plan_release(struct pm_plan *p)
{
	free(p->end);
	p->end = NULL;
	p->n = 0;
}

static int plan_alloc(struct pm_plan *p, int L)
{
	p->n = 0;
	p->end = malloc(sizeof(int) * (size_t)(L > 0 ? L : 1));
	return p->end ? 0 : -1;
}

int pm_plan_each(int L, struct pm_plan *p)
{
	if (plan_alloc(p, L))
		return PM_EINTERNAL;
	for (int k = 1; k <= L; k++)
		p->end[p->n++] = k;
	return PM_OK;
}

int pm_plan_single(int L, struct pm_plan *p)
{
	if (plan_alloc(p, L))
		return PM_EINTERNAL;
	if (L > 0)
		p->end[p->n++] = L;
	return PM_OK;
}

int pm_plan_buckets(const struct pm_iter *it, double cap, double first_cap,
		    struct pm_plan *p)
{
	double fill = 0;

	if (plan_alloc(p, it->L))
		return PM_EINTERNAL;
	for (int k = 0; k < it->L; k++) {
		fill += it->bytes[it->L - 1 - k];
		if (fill >= (p->n == 0 ? first_cap : cap) || k == it->L - 1) {
			p->end[p->n++] = k + 1;
			fill = 0;
		}
	}
	return PM_OK;
}

/* What queues for the network: the all-reduce groups and, with hybrid
 * parallelism, the backward all-to-all (item n), ready at ready[i],
 * costing a[i] (startup) and bm[i] (bandwidth term). */
struct queue {
	int n, items;		/* groups; groups + all-to-all */
	double *ready, *a, *bm, *at, *end;
	int *order, *wait;
};

/* The items in the order they start: whenever a slot frees, FIFO takes
 * the waiting item that became ready first, LIFO the one that became
 * ready last.  order[s] is the s-th item to start, at[s] when; end[i]
 * when item i ends. */
static void start_order(const struct pm_iter *it, struct queue *q)
{
	double free_at = 0, *ends = q->at + q->items;	/* ends[s]: end of the s-th started */
	int N = it->inflight > 1 ? it->inflight : 1, m = q->items, *byready = q->wait + m;
	int head = 0, top = 0, next = 0;	/* wait[head .. top): ready, not started */

	if (N > PM_MAX_INFLIGHT)
		N = PM_MAX_INFLIGHT;
	/* items by ready time: the groups are in order; the all-to-all goes
	 * after the groups ready no later than it */
	for (int i = 0, g = 0, placed = m == q->n; i < m; i++) {
		if (!placed && (g == q->n || q->ready[q->n] < q->ready[g])) {
			byready[i] = q->n;
			placed = 1;
		} else {
			byready[i] = g++;
		}
	}
	for (int s = 0; s < m; s++) {
		double t = s >= N ? ends[s - N] : 0;	/* a slot frees */
		if (head == top && t < q->ready[byready[next]])
			t = q->ready[byready[next]];	/* nothing waits: the next one */
		while (next < m && q->ready[byready[next]] <= t)
			q->wait[top++] = byready[next++];
		int i = it->lifo ? q->wait[--top] : q->wait[head++];
		q->order[s] = i;
		q->at[s] = t;
		free_at = fmax(t + q->a[i], free_at) + q->bm[i];
		ends[s] = q->end[i] = free_at;
	}
}

static void queue_free(struct queue *q)
{
	free(q->ready);
	free(q->order);
}

/* Fill the queue: each group's ready time and bytes; the all-to-all. */
static int queue_fill(const struct pm_iter *it, const struct pm_plan *plan,
		      int after_backward, double *ready_g, struct queue *q)
{
	int n = plan->n, m = n + (it->a2a_B > 0), k = 0;
	double ready = it->tf, comp = it->tf;

	q->n = n;
	q->items = m;
	q->ready = malloc(sizeof(double) * (size_t)(6 * m + 1));
	q->order = malloc(sizeof(int) * (size_t)(3 * m + 1));
	if (!q->ready || !q->order) {
		queue_free(q);
		return PM_EINTERNAL;
	}
	q->a = q->ready + m;
	q->bm = q->ready + 2 * m;
	q->end = q->ready + 3 * m;
	q->at = q->ready + 4 * m;	/* 2m: at, then ends in start order */
	q->wait = q->order + m;		/* 2m: wait, then byready */
	for (int l = 0; l < it->L; l++)
		comp += it->tb[l];
	double a2a_ready = it->tf;
	for (int j = 0; j < it->a2a_pos && j < it->L; j++)
		a2a_ready += it->tb[it->L - 1 - j];
	for (int g = 0; g < n; g++) {
		double bytes = 0;
		for (; k < plan->end[g]; k++) {
			ready += it->tb[it->L - 1 - k];
			bytes += it->bytes[it->L - 1 - k];
		}
		q->ready[g] = after_backward ? comp : ready;
		q->a[g] = it->a;
		q->bm[g] = it->b * bytes;
		if (ready_g)
			ready_g[g] = ready;
	}
	if (m > n) {
		q->ready[n] = after_backward ? comp : a2a_ready;
		q->a[n] = it->a2a_a;
		q->bm[n] = it->a2a_b * it->a2a_B;
	}
	return PM_OK;
}

/* What a queue run says besides the groups' times. */
struct run_sums {
	double a2a_end;		/* the backward all-to-all's end (0 without one) */
	double comm;		/* the all-reduces' time in all, sum of a + b M */
	double end;		/* the last all-reduce's end */
};

/* The queue run: per group its start and end (each may be NULL), and the
 * sums. */
static int run_queue(const struct pm_iter *it, const struct pm_plan *plan,
		     int after_backward, double *ready_g, double *start_g, double *end_g,
		     struct run_sums *sum)
{
	struct queue q;

	if (queue_fill(it, plan, after_backward, ready_g, &q))
		return PM_EINTERNAL;
	start_order(it, &q);
	*sum = (struct run_sums){0};
	for (int s = 0; s < q.items; s++) {
		int i = q.order[s];
		if (i == q.n)
			continue;
		if (start_g)
			start_g[i] = q.at[s];
		if (end_g)
			end_g[i] = q.end[i];
		sum->comm += q.a[i] + q.bm[i];
		sum->end = fmax(sum->end, q.end[i]);
	}
	sum->a2a_end = q.items > q.n ? q.end[q.n] : 0;
	queue_free(&q);
	return PM_OK;
}

int pm_plan_detail(const struct pm_iter *it, const struct pm_plan *plan,
		   int after_backward, double *ready_g, double *start_g, double *end_g)
{
	struct run_sums sum;
	return run_queue(it, plan, after_backward, ready_g, start_g, end_g, &sum);
}

/* When the next forward ends, its layer l waiting for group of l. */
static double next_forward_end(const struct pm_iter *it, const struct pm_plan *plan,
			       const double *e, double comp)
{
	double tbsum = 0, f = comp;
	int g = plan->n - 1;

	for (int l = 0; l < it->L; l++)
		tbsum += it->tb[l];
	for (int l = 0; l < it->L; l++) {
		/* layer l is backward position L-1-l: find its group */
		while (g > 0 && plan->end[g - 1] > it->L - 1 - l)
			g--;
		double tf_l = tbsum > 0 ? it->tf * it->tb[l] / tbsum : it->tf / it->L;
		f = fmax(f, e[g]) + tf_l;
	}
	return f;
}

int pm_plan_time(const struct pm_iter *it, const struct pm_plan *plan,
		 int after_backward, struct pm_timing *out)
{
	double comp = it->tf;
	double *e = malloc(sizeof(double) * (size_t)(plan->n + 1));
	struct run_sums sum;

	if (!e || run_queue(it, plan, after_backward, NULL, NULL, e, &sum)) {
		free(e);
		return PM_EINTERNAL;
	}
	for (int l = 0; l < it->L; l++)
		comp += it->tb[l];
	/* hybrid: the embeddings' update after the backward and its
	 * all-to-all; the forward's all-to-all blocks the forward */
	double a2a = it->a2a_B > 0 ? it->a2a_a + it->a2a_b * it->a2a_B : 0;
	double done = (it->a2a_B > 0 ? fmax(comp, sum.a2a_end) : comp) + it->emb_tb;
	out->t_comp = comp + it->emb_tb;
	out->t_iter = fmax(done, sum.end) + a2a;
	if (it->next_forward && plan->n > 0 && !(it->a2a_B > 0))	/* not with hybrid */
		out->t_iter = comp + next_forward_end(it, plan, e, comp) - (comp + it->tf);
	free(e);
	out->t_c_no = out->t_iter - out->t_comp;
	out->t_comm = sum.comm + 2 * a2a;
	out->calls = plan->n;
	return PM_OK;
}

/* ---- MG-WFBP ---------------------------------------------------------- */

/* Merge flags (merged[l]: layer l's gradients go with layer l-1's, forward
 * order) to groups in backward order. */
static int plan_from_merges(int L, const char *merged, struct pm_plan *p)
{
	if (plan_alloc(p, L))
		return PM_EINTERNAL;
	for (int k = 0; k < L; k++) {
		int l = L - 1 - k;
		if (!merged[l])
			p->end[p->n++] = k + 1;
	}
	return PM_OK;
}

/* Algorithm 1 of Shi et al. (MG-WFBP), line by line (1-based arrays, tau_b[L] = 0). */
int pm_mgwfbp_alg1(const struct pm_iter *it, struct pm_plan *plan)
{
	int L = it->L, rc;
	double *tc = calloc((size_t)L + 2, sizeof(double));
	double *taub = calloc((size_t)L + 2, sizeof(double));
	double *tauc = calloc((size_t)L + 2, sizeof(double));
	double *p = calloc((size_t)L + 2, sizeof(double));
	double *tb = calloc((size_t)L + 2, sizeof(double));
	char *m = calloc((size_t)L + 2, 1);

	if (!tc || !taub || !tauc || !p || !tb || !m) {
		rc = PM_EINTERNAL;
		goto out;
	}
	for (int l = 1; l <= L; l++) {
		p[l] = it->bytes[l - 1];
		tb[l] = it->tb[l - 1];
		tc[l] = it->a + it->b * p[l];	/* line 5 */
	}
	taub[L] = 0;	/* lines 6-8 */
	for (int l = L - 1; l >= 1; l--)
		taub[l] = taub[l + 1] + tb[l + 1];
	for (int l = L; l >= 2; l--) {	/* lines 9-14 */
		/* CALCULATECOMMSTART (lines 20-25), recomputed every turn */
		tauc[L] = taub[L] + tb[L];
		for (int j = L - 1; j >= 1; j--)
			tauc[j] = fmax(tauc[j + 1] + tc[j + 1], taub[j] + tb[j]);
		if (taub[l - 1] + tb[l - 1] - tauc[l] < it->a) {	/* Eq. (38) */
			tc[l] = 0;	/* MERGE, lines 16-19 */
			p[l - 1] += p[l];
			tc[l - 1] = it->a + it->b * p[l - 1];
			m[l] = 1;
		}
	}
	char *merged = malloc((size_t)L + 1);
	if (!merged) {
		rc = PM_EINTERNAL;
		goto out;
	}
	for (int l = 0; l < L; l++)
		merged[l] = m[l + 1];
	rc = plan_from_merges(L, merged, plan);
	free(merged);
out:
	free(tc);
	free(taub);
	free(tauc);
	free(p);
	free(tb);
	free(m);
	return rc;
}

/* The same decisions in one pass: whether layer l merges depends only on
 * tau_c[l], which depends only on the layers above l and their (already
 * final) decisions; a merge changes layers below l only. */
int pm_mgwfbp_fast(const struct pm_iter *it, struct pm_plan *plan)
{
	int L = it->L, rc;
	char *merged = calloc((size_t)L + 1, 1);
	double ready, tauc, pending;

	if (!merged)
		return PM_EINTERNAL;
	if (L > 0) {
		ready = it->tb[L - 1];	/* end of layer L's backward (tau_b[L] = 0) */
		tauc = ready;
		pending = it->bytes[L - 1];	/* bytes of the group layer L is in */
		for (int l = L - 1; l >= 1; l--) {	/* 0-based: decide layer l */
			double ready_below = ready + it->tb[l - 1];
			double tcl;
			if (ready_below - tauc < it->a) {
				merged[l] = 1;
				tcl = 0;
				pending += it->bytes[l - 1];
			} else {
				tcl = it->a + it->b * pending;
				pending = it->bytes[l - 1];
			}
			tauc = fmax(tauc + tcl, ready_below);
			ready = ready_below;
		}
	}
	rc = plan_from_merges(L, merged, plan);
	free(merged);
	return rc;
}

/* ---- the optimum ------------------------------------------------------ */

/* Prefix sums in backward order: ready[k] after k layers, bytes S[k]. */
static int prefixes(const struct pm_iter *it, double **ready, double **S)
{
	*ready = malloc(sizeof(double) * ((size_t)it->L + 1));
	*S = malloc(sizeof(double) * ((size_t)it->L + 1));
	if (!*ready || !*S) {
		free(*ready);
		free(*S);
		return -1;
	}
	(*ready)[0] = it->tf;
	(*S)[0] = 0;
	for (int k = 1; k <= it->L; k++) {
		(*ready)[k] = (*ready)[k - 1] + it->tb[it->L - k];
		(*S)[k] = (*S)[k - 1] + it->bytes[it->L - k];
	}
	return 0;
}

static int plan_from_pred(int L, const int *pred, struct pm_plan *p)
{
	int n = 0;
	if (plan_alloc(p, L))
		return PM_EINTERNAL;
	for (int j = L; j > 0; j = pred[j])
		n++;
	p->n = n;
	for (int j = L; j > 0; j = pred[j])
		p->end[--n] = j;
	return PM_OK;
}

/* E[j] = a + min_i max(E[i], ready_j) + b (S_j - S_i), E[0] = 0. */
int pm_optimal_plan_quadratic(const struct pm_iter *it, struct pm_plan *p)
{
	int L = it->L, rc;
	double *ready, *S, *E = malloc(sizeof(double) * ((size_t)L + 1));
	int *pred = malloc(sizeof(int) * ((size_t)L + 1));

	if (!E || !pred || prefixes(it, &ready, &S)) {
		free(E);
		free(pred);
		return PM_EINTERNAL;
	}
	E[0] = 0;
	for (int j = 1; j <= L; j++) {
		E[j] = INFINITY;
		for (int i = j - 1; i >= 0; i--) {
			double v = fmax(E[i], ready[j]) + it->b * (S[j] - S[i]);
			if (v < E[j]) {
				E[j] = v;
				pred[j] = i;
			}
		}
		E[j] += it->a;
	}
	rc = plan_from_pred(L, pred, p);
	free(E);
	free(pred);
	free(ready);
	free(S);
	return rc;
}

/* E is non-decreasing and ready_j too, so the i with E[i] <= ready_j form
 * a prefix [0, i*] whose best member is i* (largest S_i), and the rest
 * (i*, j-1] is a window sliding right over which E[i] - b S_i is
 * minimised with a monotone deque: O(L) in all. */
int pm_optimal_plan(const struct pm_iter *it, struct pm_plan *p)
{
	int L = it->L, rc, head = 0, tail = 0, istar = 0;
	double *ready, *S, *E = malloc(sizeof(double) * ((size_t)L + 1));
	int *pred = malloc(sizeof(int) * ((size_t)L + 1));
	int *dq = malloc(sizeof(int) * ((size_t)L + 1));

	if (!E || !pred || !dq || prefixes(it, &ready, &S)) {
		free(E);
		free(pred);
		free(dq);
		return PM_EINTERNAL;
	}
	E[0] = 0;
	for (int j = 1; j <= L; j++) {
		/* window gains i = j-1 */
		int i = j - 1;
		double vi = E[i] - it->b * S[i];
		while (tail > head && E[dq[tail - 1]] - it->b * S[dq[tail - 1]] >= vi)
			tail--;
		dq[tail++] = i;
		/* i* = last i with E[i] <= ready_j; those leave the window */
		while (istar + 1 < j && E[istar + 1] <= ready[j])
			istar++;
		while (tail > head && dq[head] <= istar)
			head++;
		double best = ready[j] + it->b * (S[j] - S[istar]);
		pred[j] = istar;
		if (tail > head) {
			int w = dq[head];
			double v = E[w] + it->b * (S[j] - S[w]);
			if (v < best) {
				best = v;
				pred[j] = w;
			}
		}
		E[j] = best + it->a;
	}
	rc = plan_from_pred(L, pred, p);
	free(E);
	free(pred);
	free(dq);
	free(ready);
	free(S);
	return rc;
}
