/* common.h: options every network-facing command shares: the topology,
 * the link and cost parameters, and how to print them as meta lines. */
#ifndef PM_COMMON_H
#define PM_COMMON_H

#include "cli/args.h"
#include "cli/out.h"
#include "model/coll.h"
#include "model/params.h"
#include "model/topo.h"

struct cli_net_opts {
	const char *topo, *link_bw, *link_lat, *inj_bw, *dim_bw, *dim_lat;
	const char *alpha, *gamma, *flow, *pipeline, *gpus_per_process;
	const char *endpoint, *mem_bw, *sms;
};

/* The option rows for struct cli_net_opts (count returned in *n). */
int cli_net_opt_rows(struct cli_net_opts *o, struct cli_opt *rows);

/* Parse the parameters, then the topology if o->topo is set. */
int cli_net_build(const struct cli_net_opts *o, struct pm_params *p,
		  struct pm_topo **topo, struct pm_err *err);

/* A collective needs two ranks: refuse a network of one endpoint. */
int cli_need_two(const struct pm_topo *t, struct pm_err *err);


/* "X 200 GB/s 72ns, Y ..." for a grid network into buf; returns whether
 * any dimension differs from the single link of p. */
int cli_dim_links(const struct pm_topo *topo, const struct pm_params *p,
		  char *buf, size_t size);

/* What the nccl rows are priced with: the NCCL version and the machine's
 * NCCL parameters (with their sources when explain is set). */
void cli_nccl_meta(struct cli_table *t, const struct pm_topo *topo, int explain);

/* Meta lines stating the network and parameters behind the numbers. */
void cli_net_meta(struct cli_table *t, const struct pm_topo *topo,
		  const struct pm_params *p);

/* A progress line on stderr for work past a second, only when stderr is
 * a terminal (pipes and logs see nothing): "perfmodel: multitree (9/12)". */
/* A progress line on stderr, only on a terminal, from a second in: the
 * job (cli_progress_step) and what the model reports inside it
 * (model/progress.h) while the progress is started. */
struct cli_progress {
	double t0, last;
	int tty, shown;
	char job[160];
};
void cli_progress_start(struct cli_progress *pr);
void cli_progress_step(struct cli_progress *pr, const char *what, int i, int n);
void cli_progress_end(struct cli_progress *pr);

/* Split an --algo list in place (buf holds a copy of it) into at most max
 * items.  Commas separate algorithms, and also the options inside one
 * algorithm's argument (multitree:ports=1,priority): a comma-separated
 * piece that does not start with an algorithm's name continues the
 * argument of the item before it.  Returns the number of items, or -1
 * (with err) when there are more than max or buf is too small. */
/* For --help: "TITLE in DATA/KIND: a, b, c", the presets of one kind
 * (machines, models, llms, devices); nothing if there are none. */
void cli_print_presets(const char *title, const char *kind);

/* Of the algorithms of a named --algo list, resolved in order (rc and
 * errs from pm_pool_resolve), the first that is neither usable nor merely
 * unable to run on the network (not an algorithm, a bad argument, an
 * internal failure): its error in err and its code; PM_OK if none, or if
 * the list is "all" (all).  One rule for every command: a named algorithm
 * that cannot run here is left out with the reason, anything else wrong
 * with the list is the command's error. */
int cli_first_refusal(const int *rc, const struct pm_err *errs, int n, int all, struct pm_err *err);

int cli_split_algos(const char *list, char *buf, size_t size, char **items,
		    int max, struct pm_err *err);

/* The algorithm specs of an --algo list for collective coll: "all" gives
 * every algorithm that implements it, by name; otherwise the list split
 * as cli_split_algos does.  Returns their number, -1 with err. */
int cli_algo_names(enum pm_coll coll, const char *list, char *buf, size_t size,
		   char **names, int max, struct pm_err *err);

/* The help paragraph on units, shared by several --help texts. */
extern const char cli_units_help[];

#endif
