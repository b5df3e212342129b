/* sweep_nompi.c: a build without MPI runs sweeps on threads only. */
#include "cli/sweep.h"

int sweep_mpi(struct sweep *w, struct sweep_opts *o, struct pm_err *err)
{
	(void)w, (void)o, (void)err;
	return -1;
}
