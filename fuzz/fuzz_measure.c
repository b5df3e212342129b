/* fuzz_measure.c: a measurement file (OSU, nccl-tests or CSV, detected)
 * fitted by fit (its regimes, and a machine's NCCL rates), and used as
 * train's all-reduce cost. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fit[] = {"fit", "@", NULL};
static const char *const train[] = {"train", "--model", "resnet50", "--workers", "8",
				    "--fit", "@", NULL};
static const char *const nccl[] = {"fit", "@", "--procs", "16", "--machine", "dgx-h100", NULL};
static const char *const *const cmds[] = {fit, train, nccl, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_templates(cmds, fuzz_file(data, size, ".log"));
	return 0;
}
