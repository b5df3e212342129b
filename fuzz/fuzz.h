/* fuzz.h: what every libFuzzer harness of perfmodel shares.  A harness
 * turns the fuzzer's bytes into one or more perfmodel command lines and
 * runs them in-process through cli_run, the same code the executable runs.
 * Any exit status other than 0 or 2 is a finding (1 means an internal
 * failure, which bad input must never cause), as is anything the address
 * and undefined-behaviour sanitizers report, a leak, a time-out or memory
 * past the limit scripts/fuzz sets. */
#ifndef PM_FUZZ_H
#define PM_FUZZ_H

#include "cli/cli.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_MAX_ARGS 40

#include "model/limits.h"

/* The scratch file the current input was written to (fuzz_file), so that
 * nothing a command writes may take its name. */
static char fuzz_input_path[64];

/* Volume mode (scripts/fuzz --volume): PM_FUZZ_LIMIT_SCALE in (0, 1]
 * scales the work limits (model/limits.h), so large networks and long
 * simulations are refused at once and a campaign spends its time on many
 * cheap inputs.  libFuzzer calls this once before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *s = getenv("PM_FUZZ_LIMIT_SCALE");
	double v = s ? strtod(s, NULL) : 0;

	(void)argc;
	(void)argv;
	if (v > 0 && v <= 1)
		pm_limit_scale = v;
	return 0;
}

/* Run argv (argv[0] = "perfmodel"); abort on an exit status other than
 * 0 or 2 so the fuzzer keeps the input as a crash. */
static inline void fuzz_run(int argc, char **argv)
{
	/* options that write files write this process's scratch file only */
	static char trace[64], trace_opt[80], plot[64], plot_opt[80], out[64];
	/* not fuzz_file's name: that is the input, which must survive */
	snprintf(out, sizeof out, "/tmp/perfmodel-fuzz-%d-out.csv", (int)getpid());
	snprintf(trace, sizeof trace, "/tmp/perfmodel-fuzz-%d.json", (int)getpid());
	snprintf(trace_opt, sizeof trace_opt, "--trace=%s", trace);
	snprintf(plot, sizeof plot, "/tmp/perfmodel-fuzz-%d.svg", (int)getpid());
	snprintf(plot_opt, sizeof plot_opt, "--plot=%s", plot);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc)
			argv[++i] = trace;
		else if (strncmp(argv[i], "--trace=", 8) == 0)
			argv[i] = trace_opt;
		else if (strcmp(argv[i], "--plot") == 0 && i + 1 < argc)
			argv[++i] = plot;
		else if (strncmp(argv[i], "--plot=", 7) == 0)
			argv[i] = plot_opt;
		else if ((!strcmp(argv[i], "--out") || !strcmp(argv[i], "--summary") || !strcmp(argv[i], "--merge") ||
			  !strcmp(argv[i], "--write-machine")) && i + 1 < argc)
			argv[++i] = out;	/* sweep and fit write only the scratch file */
		else if (!strncmp(argv[i], "--out=", 6) || !strncmp(argv[i], "--summary=", 10) ||
			 !strncmp(argv[i], "--merge=", 8) || !strncmp(argv[i], "--write-machine=", 16))
			argv[i] = "--jobs=1";
	}
	if (strcmp(out, fuzz_input_path) == 0) {
		fprintf(stderr, "fuzz: the output scratch file is the input's (%s)\n", out);
		abort();
	}
	remove(out);	/* a sweep would resume from the last input's table */
	/* the full validation matrix takes minutes by design: fuzz the quick one */
	if (argc > 1 && strcmp(argv[1], "validate") == 0) {
		int quick = 0;
		for (int i = 2; i < argc; i++)
			quick |= strcmp(argv[i], "--quick") == 0;
		if (!quick)
			return;
	}
	int rc = cli_run(argc, argv);
	if (rc != 0 && rc != 2) {
		fprintf(stderr, "fuzz: perfmodel exited %d on:", rc);
		for (int i = 1; i < argc; i++)
			fprintf(stderr, " '%s'", argv[i]);
		fputc('\n', stderr);
		abort();
	}
}

/* The bytes as a NUL-terminated string (a NUL inside ends it early, as
 * it would on a real command line). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Write the bytes to this process's scratch file ending in ext. */
static inline const char *fuzz_file(const uint8_t *data, size_t size, const char *ext)
{
	snprintf(fuzz_input_path, sizeof fuzz_input_path, "/tmp/perfmodel-fuzz-%d%s", (int)getpid(), ext);
	FILE *f = fopen(fuzz_input_path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	return fuzz_input_path;
}

/* Run each template command line with "@" replaced by value. */
static inline void fuzz_templates(const char *const *const *cmds, const char *value)
{
	for (int c = 0; cmds[c]; c++) {
		char *argv[FUZZ_MAX_ARGS];
		int argc = 0;
		argv[argc++] = "perfmodel";
		for (int i = 0; cmds[c][i] && argc < FUZZ_MAX_ARGS; i++)
			argv[argc++] = strcmp(cmds[c][i], "@") ? (char *)cmds[c][i] : (char *)value;
		fuzz_run(argc, argv);
	}
}

#endif
