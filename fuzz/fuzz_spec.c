/* fuzz_spec.c: a topology spec (torus:4x4, fattree:8,2, machine:abci:2,
 * ...) described and priced by the ring's contention model. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const describe[] = {"topo", "--topo", "@", NULL};
static const char *const price[] = {"allreduce", "--topo", "@", "--size", "64K",
				    "--algo", "ring,recdoubling", "--model", "closed,contention", NULL};
static const char *const *const cmds[] = {describe, price, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = fuzz_string(data, size);
	fuzz_templates(cmds, spec);
	free(spec);
	return 0;
}
