/* machine_write.c: a machine description back to its CSV form (machine.h),
 * so that a fitted machine (perfmodel fit --write-machine) is a file that
 * --topo machine:FILE:N and hier --machine FILE read like any preset. */
#include "model/machine.h"

#include <csv.h>
#include <string.h>
#include <stdio.h>

/* One CSV cell, quoted by libcsv where the text needs it. */
static void cell(FILE *f, const char *s, int last)
{
	csv_fwrite(f, s, strlen(s));
	fputc(last ? '\n' : ',', f);
}

static void param(FILE *f, const char *name, const char *value, const char *source)
{
	fputs("param,", f);
	cell(f, name, 0);
	fputs(",,,,", f);
	cell(f, value, 0);
	cell(f, source, 1);
}

static void bw(char *buf, size_t n, double Bps)
{
	if (Bps > 0)
		snprintf(buf, n, "%.17gGB/s", Bps / 1e9);
	else
		buf[0] = '\0';
}

int pm_machine_write(FILE *f, const struct pm_machine *m)
{
	char v[64], in[64], eg[64], fl[64];

	fputs("kind,name,count,inner_bw,egress_bw,flow_bw,value,source\n", f);
	param(f, "description", m->description, "");
	if (m->alpha_s > 0 || m->alpha_source[0]) {
		snprintf(v, sizeof v, "%.17gus", m->alpha_s * 1e6);
		param(f, "alpha", v, m->alpha_source);
	}
	snprintf(v, sizeof v, "%d", m->pipeline_s);
	param(f, "pipeline", v, "");
	if (m->nics > 0) {
		snprintf(v, sizeof v, "%d", m->nics);
		param(f, "nics", v, "");
	}
	if (m->device[0])
		param(f, "device", m->device, m->device_source);
	if (m->network[0])
		param(f, "network", m->network, "");
	for (int i = 0; i < m->nccl.nsrc; i++)
		param(f, m->nccl.src[i][0], m->nccl.src[i][1], m->nccl.src[i][2]);
	for (int i = 0; i < m->nlevels; i++) {
		const struct pm_level *l = &m->level[i];
		snprintf(v, sizeof v, "%lld", l->count);
		bw(in, sizeof in, l->inner_bw);
		bw(eg, sizeof eg, l->egress_bw);
		bw(fl, sizeof fl, l->flow_bw);
		fputs("level,", f);
		cell(f, l->name, 0);
		fprintf(f, "%s,%s,%s,%s,,", v, in, eg, fl);
		cell(f, l->source, 1);
	}
	return ferror(f) ? PM_EINTERNAL : PM_OK;
}
