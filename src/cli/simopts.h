/* simopts.h: the packet simulator's command-line options, shared by the
 * collective commands. */
#ifndef PM_CLI_SIMOPTS_H
#define PM_CLI_SIMOPTS_H

#include "cli/args.h"
#include "cli/out.h"
#include "sim/psim.h"

/* The options as given (NULL: not given). */
struct cli_sim_args {
	const char *net, *segs, *vcs, *vc_flits, *pipe, *arb, *alloc, *lockstep, *trace, *reduce, *nib;
};

/* Append the simulator's option rows to o; returns how many. */
int cli_sim_opt_rows(struct cli_sim_args *a, struct cli_opt *o);

/* The options checked and turned into the simulator's settings. */
int cli_sim_parse(const struct cli_sim_args *a, struct pm_sim_opts *o, struct pm_err *err);

/* What the simulator was configured with, as lines of the table's head. */
void cli_sim_meta(struct cli_table *tab, const struct pm_sim_opts *o);

#endif
