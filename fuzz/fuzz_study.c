/* fuzz_study.c: a study file (perfmodel sweep STUDY.yml): read, checked,
 * and one point in a thousand run, on two threads, so a big grid's checks
 * are fuzzed without pricing all of it. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const sweep[] = {"sweep", "@", "--shard", "0/1000", "--jobs", "2", "--out", "@out", NULL};
static const char *const json[] = {"sweep", "@", "--shard", "1/1000", "--jobs", "1", "--format", "json", NULL};
static const char *const *const cmds[] = {sweep, json, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_templates(cmds, fuzz_file(data, size, ".yml"));
	return 0;
}
