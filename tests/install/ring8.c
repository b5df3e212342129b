/* ring8.c: a program outside the project linking the installed model
 * library through pkg-config (tests/install/check).  It prices ring on 8
 * ranks without a network, closed form, 1 MiB, alpha 1 us, 16 GB/s, no
 * link latency or flow control, and prints the time.  By hand (Patarasuk
 * & Yuan 2009): 2(P-1) alpha + 2(P-1)/P n / bw = 14 us + 1.75 x 1048576 B
 * / 16 GB/s = 14 + 114.688 = 128.688 us. */
#include "model/algo.h"

#include <stdio.h>

int main(void)
{
	struct pm_inst in;
	struct pm_params p;
	struct pm_cost c;
	struct pm_err err;

	if (pm_algo_resolve("ring", NULL, 8, &in, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	pm_params_default(&p);
	p.alpha_s = 1e-6;
	p.link_bw_Bps = 16e9;
	p.link_lat_s = 0;
	p.flow = PM_FLOW_NONE;
	pm_algo_closed(&in, 1048576, &p, &c);
	printf("%.3f\n", c.time_s * 1e6);
	return 0;
}
