/* fuzz_argv.c: the whole command line.  The input is the argument list,
 * one argument per line (up to 39), so seeds and dictionary entries read
 * as commands: "allreduce\n--topo\ntorus:4x4\n--size\n1M". */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_string(data, size), *argv[FUZZ_MAX_ARGS];
	int argc = 0;

	argv[argc++] = "perfmodel";
	for (char *p = buf; p && argc < FUZZ_MAX_ARGS;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		argv[argc++] = p;
		p = nl ? nl + 1 : NULL;
	}
	fuzz_run(argc, argv);
	free(buf);
	return 0;
}
