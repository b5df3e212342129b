/* fuzz_machine.c: a machine description searched by hier, built as a
 * network (machine:PATH:2) and priced there by NCCL's model and the
 * schedules of switches that reduce: read as JSON when it starts with
 * '{' (after blanks), as CSV otherwise. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const search[] = {"hier", "--machine", "@", "--procs", "64",
				     "--size", "1M", "--layers", "4x16", NULL};
static const char *const net[] = {"allreduce", "--topo", "@", "--size", "1M",
				  "--algo", "ring,hring", "--model", "closed,contention", NULL};
/* NCCL's model and the schedules of switches that reduce (NVLS, SHARP)
 * read the description's NCCL params */
static const char *const nccl[] = {"allreduce", "--topo", "@", "--size", "8:64M:x4096",
				   "--algo", "nccl,nvls,nvlstree,collnet,collnet:nodes=nvls", "--model", "closed,contention",
				   NULL};
static const char *const *const first[] = {search, NULL};
static const char *const *const second[] = {net, nccl, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i = 0;
	while (i < size && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' || data[i] == '\r'))
		i++;
	const char *path = fuzz_file(data, size, i < size && data[i] == '{' ? ".json" : ".csv");
	char spec[96];
	fuzz_templates(first, path);
	snprintf(spec, sizeof spec, "machine:%s:2", path);
	fuzz_templates(second, spec);
	return 0;
}
