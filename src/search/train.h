/* train.h: the training iteration and gradient merging (Shi et al. (MG-WFBP)).
 *
 * A DNN profile lists its gradient tensors ("layers") in forward order
 * with parameter counts and backward times.  Backward runs from the last
 * layer to the first; each layer's gradients can be all-reduced once they
 * exist, one all-reduce at a time, and an all-reduce of M bytes costs
 * T(M) = a + b M (Shi et al. (MG-WFBP) eq. 10).  A plan groups consecutive layers (in
 * backward order) into one all-reduce each; every policy is a plan:
 * WFBP one layer per group, SyncEASGD one group, buckets by size, MG-WFBP
 * by Theorem 1, and the optimum over all groupings.
 */
#ifndef PM_TRAIN_H
#define PM_TRAIN_H

#include "model/err.h"

struct pm_profile {
	char name[64];
	char path[512];
	char kind[32];		/* measured / estimated */
	char device[320];
	char batch[32];
	char method[512];
	int L;
	char **names;		/* forward order */
	double *params;
	double *tb_s;		/* backward time of each layer */
	double tf_s;		/* forward time of the iteration */
	int forward_assumed;	/* no forward column: tf = tb / 2 */
	/* Hybrid parallelism (a DLRM): rows whose parallel column says
	 * "model" are sharded over the workers (embedding tables), never
	 * all-reduced; the workers exchange their outputs in one all-to-all
	 * of a2a_values values each in the forward, and the gradients in one
	 * in the backward ("# alltoall_values:" in the profile). */
	char *model_par;	/* per row: 1 model-parallel, 0 data-parallel */
	double a2a_values;
};

int pm_profile_load(const char *name_or_path, struct pm_profile *p,
		    struct pm_err *err);

/* What pm_profile_split took out of a hybrid profile. */
struct pm_hybrid {
	int rows;		/* model-parallel rows (0: a data-parallel profile) */
	double params;		/* their parameters */
	double tb_s;		/* their backward (the embeddings' update) */
	int a2a_pos;		/* data rows after the last of them, forward order:
				 * the backward all-to-all is ready once these are
				 * done */
};

/* Remove the model-parallel rows from p (the all-reduce timeline sees
 * only data-parallel rows) and say what they were. */
void pm_profile_split(struct pm_profile *p, struct pm_hybrid *h);
void pm_profile_release(struct pm_profile *p);

/* Inputs of a timeline.  Layer l (forward order, 0-based) carries
 * bytes[l] of gradients and takes tb[l] of backward. */
#define PM_MAX_INFLIGHT 1024

struct pm_iter {
	int L;
	const double *bytes;
	const double *tb;
	double tf;		/* forward */
	double a, b;		/* T(M) = a + b M */
	int inflight;		/* all-reduces outstanding at once: their
				 * startups a overlap, their bandwidth terms
				 * b M queue on the network; 0 or 1: one at a
				 * time, Shi et al.'s timeline */
	/* Hybrid parallelism (a DLRM, Rashidi et al. 2021 §V): an all-to-all
	 * of a2a_B bytes, T = a2a_a + a2a_b M, blocks the forward; its
	 * backward twin is ready once backward positions [0, a2a_pos) are
	 * done (the layers above the embeddings), queues with the all-reduces,
	 * and the embeddings' update (emb_tb) runs after it and after the
	 * backward.  a2a_B = 0: none (pure data parallelism).  next_forward
	 * does not apply to hybrid iterations (ignored). */
	double a2a_B, a2a_a, a2a_b, emb_tb;
	int a2a_pos;
	int lifo;		/* 1: of the groups waiting, the last ready
				 * goes first (Rashidi et al. 2021 §V: LIFO
				 * favours the first layers); 0: in order */
	int next_forward;	/* 1: communication may run into the next
				 * iteration's forward, whose layer l waits
				 * for its gradients' all-reduce (Rashidi et
				 * al. 2021 §V, exposed communication); 0:
				 * Shi et al.'s iteration, t = max(compute,
				 * last all-reduce) */
};

/* Groups in backward order: group g covers backward positions
 * [end[g-1], end[g]) (end[-1] = 0); position k is layer L-1-k. */
struct pm_plan {
	int n;
	int *end;
};

struct pm_timing {
	double t_iter;		/* forward + backward + what communication adds */
	double t_comp;		/* forward + backward */
	double t_c_no;		/* non-overlapped communication = t_iter - t_comp */
	double t_comm;		/* all communication, overlapped or not */
	int calls;		/* all-reduce operations */
};

/* The timeline of a plan (Shi et al. (MG-WFBP) eqs. 6-8 generalised to groups): group
 * g starts at max(its last layer's gradients ready, group g-1 done).
 * With N = inflight > 1: group g starts at max(ready, group g-N done);
 * its bandwidth term starts at max(start + a, group g-1 done) and takes
 * b M (N = 1 is the line above).  With lifo, when a slot frees the group
 * that became ready last among those waiting starts, and "g-1", "g-N"
 * read as the groups started before it.
 * after_backward: every group waits for the whole backward (naive S-SGD,
 * eq. 3).
 * next_forward: the iteration is forward + backward + the time the next
 * forward waits: its layer l (forward time tf tb[l] / sum tb, the
 * profile giving the forward only in total) starts when layer l-1 is done
 * and layer l's group is all-reduced.  Never longer than Shi et al.'s. */
int pm_plan_time(const struct pm_iter *it, const struct pm_plan *plan,
		 int after_backward, struct pm_timing *out);

/* Per group: when its gradients are all ready, when its all-reduce starts
 * and when it ends (arrays of plan->n, each may be NULL).  PM_EINTERNAL
 * when out of memory. */
int pm_plan_detail(const struct pm_iter *it, const struct pm_plan *plan,
		   int after_backward, double *ready, double *start, double *end);

void pm_plan_release(struct pm_plan *p);
int pm_plan_each(int L, struct pm_plan *p);	/* WFBP: one layer per group */
int pm_plan_single(int L, struct pm_plan *p);	/* SyncEASGD */
/* Buckets filled in backward order and closed once they reach cap bytes
 * (the first bucket first_cap), as PyTorch DDP assigns them. */
int pm_plan_buckets(const struct pm_iter *it, double cap, double first_cap,
		    struct pm_plan *p);

/* MG-WFBP: Shi et al. (MG-WFBP) Algorithm 1 as written (O(L^2)), and one O(L) pass
 * that makes the same decisions. */
int pm_mgwfbp_alg1(const struct pm_iter *it, struct pm_plan *p);
int pm_mgwfbp_fast(const struct pm_iter *it, struct pm_plan *p);

/* The fastest grouping of consecutive layers: a dynamic programme over
 * prefixes (the end time of the best prefix never decreases, so a sliding
 * window minimum makes it O(L)), and the plain O(L^2) form. */
int pm_optimal_plan(const struct pm_iter *it, struct pm_plan *p);
int pm_optimal_plan_quadratic(const struct pm_iter *it, struct pm_plan *p);

#endif
