/* fuzz_topofile.c: a network given as an edge list (--topo file:PATH),
 * described, then priced by every algorithm and every evaluator. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const describe[] = {"topo", "--topo", "@", NULL};
static const char *const price[] = {"allreduce", "--topo", "@", "--size", "64K",
				    "--model", "all", NULL};
static const char *const show[] = {"schedule", "--topo", "@", "--algo", "multitree",
				   "--view", "transfers", NULL};
static const char *const *const cmds[] = {describe, price, show, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char spec[96];
	snprintf(spec, sizeof spec, "file:%s", fuzz_file(data, size, ".csv"));
	fuzz_templates(cmds, spec);
	return 0;
}
