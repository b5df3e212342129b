/* pipetree.h: the pipelined trees of dbtree, tree and chain
 * (pipetree.c): one construction, one schedule writer and one closed
 * form for the three algorithm rows (algo_dbtree.c, algo_tree.c,
 * algo_chain.c), which tell their shape apart by their row. */
#ifndef PM_PIPETREE_H
#define PM_PIPETREE_H

#include "model/algo.h"

extern const struct pm_algo pm_algo_dbtree, pm_algo_tree, pm_algo_chain;

/* The struct pm_algo hooks (algo.h) every pipelined tree shares. */
int pm_pipetree_prepare(struct pm_inst *in, const char *arg, struct pm_err *err);
int pm_pipetree_at_size(struct pm_inst *in, double n, struct pm_err *err);
int pm_pipetree_build(const struct pm_inst *in, struct pm_sched *s, struct pm_err *err);
void pm_pipetree_closed(const struct pm_inst *in, double n, const struct pm_params *p,
			struct pm_cost *c);
double pm_pipetree_xfers(const struct pm_inst *in);

#endif
