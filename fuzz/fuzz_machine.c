/* fuzz_machine.c: a machine description (the CSV hier reads) searched by
 * hier and built as a network (machine:PATH:2). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const search[] = {"hier", "--machine", "@", "--procs", "64",
				     "--size", "1M", "--layers", "4x16", NULL};
static const char *const net[] = {"allreduce", "--topo", "@", "--size", "1M",
				  "--algo", "ring,hring", "--model", "closed,contention", NULL};
static const char *const *const first[] = {search, NULL};
static const char *const *const second[] = {net, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size, ".csv");
	char spec[96];
	fuzz_templates(first, path);
	snprintf(spec, sizeof spec, "machine:%s:2", path);
	fuzz_templates(second, spec);
	return 0;
}
