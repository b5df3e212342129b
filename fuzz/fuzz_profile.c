/* fuzz_profile.c: a DNN profile (train --model PATH) under every merge
 * policy, with the merge plans printed. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const train[] = {"train", "--model", "@", "--workers", "8",
				    "--a", "10us", "--b", "0.5ns", "--groups", NULL};
static const char *const *const cmds[] = {train, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_templates(cmds, fuzz_file(data, size, ".csv"));
	return 0;
}
