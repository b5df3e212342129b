/* fuzz_astrasim.c: an ASTRA-sim network.yml (--topo astrasim:PATH),
 * described, then priced by every algorithm with the contention
 * evaluator. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const describe[] = {"topo", "--topo", "@", NULL};
static const char *const price[] = {"allreduce", "--topo", "@", "--size", "64K",
				    "--model", "both", NULL};
static const char *const *const cmds[] = {describe, price, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char spec[96];
	snprintf(spec, sizeof spec, "astrasim:%s", fuzz_file(data, size, ".yml"));
	fuzz_templates(cmds, spec);
	return 0;
}
