/* main.c: the perfmodel executable's entry point. */
#include "cli/cli.h"

int main(int argc, char **argv)
{
	return cli_run(argc, argv);
}
