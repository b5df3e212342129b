/* fuzz_topofile.c: a network given as an edge list (--topo file:PATH),
 * described, priced by every algorithm in the closed form and the
 * contention evaluator, run through the packet simulator (both modes) by
 * two algorithms at a small size, and MULTITREE's schedule shown.  The
 * simulator at 64K by every algorithm took 7 s an input under the
 * sanitizers (one packet event costs about 5 us there); at 4K by ring and
 * MULTITREE it reaches nearly the same code (over the corpus: coverage
 * 8,343, against 8,350 with every algorithm simulated at 4K) about 20
 * times faster. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const describe[] = {"topo", "--topo", "@", NULL};
static const char *const price[] = {"allreduce", "--topo", "@", "--size", "64K",
				    "--model", "both", NULL};
static const char *const simulate[] = {"allreduce", "--topo", "@", "--size", "4K",
				       "--algo", "ring,multitree", "--model", "sim,dataflow",
				       NULL};
static const char *const show[] = {"schedule", "--topo", "@", "--algo", "multitree",
				   "--view", "transfers", NULL};
/* MULTITREE's fabric construction reads route tables of every endpoint
 * pair: any network a file can describe */
static const char *const fabric[] = {"allreduce", "--topo", "@", "--size", "64K",
				     "--algo", "multitree:fabric,multitree-msg:fabric",
				     "--model", "both", NULL};
static const char *const *const cmds[] = {describe, price, simulate, show, fabric, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char spec[96];
	snprintf(spec, sizeof spec, "file:%s", fuzz_file(data, size, ".csv"));
	fuzz_templates(cmds, spec);
	return 0;
}
