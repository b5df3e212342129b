/* main.c: the perfmodel executable's entry point.  Output that could not
 * be written (a full disk, a closed pipe) is an error, not a success:
 * stdout is flushed and closed here and checked. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rc = cli_run(argc, argv);

	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
		fprintf(stderr, "perfmodel: could not write the output: %s (expected a writable standard output with free space)\n",
			strerror(errno ? errno : EIO));
		return rc ? rc : 1;
	}
	return rc;
}
