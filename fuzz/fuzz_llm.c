/* fuzz_llm.c: a transformer description (plan --model PATH) and a device
 * description (plan --device PATH), each priced over a small layout
 * search and once with every axis fixed and --explain. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const model[] = {"plan", "--model", "@", "--topo", "machine:dgx-h100:2", "--global-batch",
				    "64", "--top", "3", "--format", "json", NULL};
static const char *const fixed[] = {"plan", "--model", "@", "--topo", "machine:dgx-h100:2", "--global-batch",
				    "16", "--tp", "2", "--pp", "2", "--cp", "1", "--vpp", "1", "--micro-batch", "1",
				    "--recompute", "full", "--zero", "1", "--explain", NULL};
static const char *const device[] = {"plan", "--model", "llama3-8b", "--device", "@", "--topo",
				     "machine:dgx-h100:2", "--global-batch", "64", "--top", "2", NULL};
static const char *const *const cmds[] = {model, fixed, device, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_templates(cmds, fuzz_file(data, size, ".csv"));
	return 0;
}
