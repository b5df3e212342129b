/* params.c: defaults, flow-control overhead and its syntax. */
#include "model/params.h"
#include "model/topo.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pm_params_default(struct pm_params *p)
{
	memset(p, 0, sizeof *p);
	p->link_bw_Bps = PM_DEFAULT_LINK_BW;
	p->link_lat_s = PM_DEFAULT_LINK_LAT;
	p->pipeline_s = 1;
	p->host_gpus = 1;
	p->flow = PM_FLOW_PACKET;
	p->payload_B = 256;
	p->flit_B = 16;
}

static double wire_of(const struct pm_params *p, double m)
{
	switch (p->flow) {
	case PM_FLOW_PACKET:
		return m + ceil(m / p->payload_B - 1e-9) * p->flit_B;
	case PM_FLOW_MESSAGE:
		return m + p->flit_B;
	default:
		return m;
	}
}

double pm_wire_bytes(const struct pm_params *p, double m)
{
	if (m <= 0)
		return 0;
	return wire_of(p, m);
}

double pm_switch_scale(const struct pm_params *p)
{
	return p->switch_scale > 0 ? p->switch_scale : 1;
}

static int flow_error(const char *s, struct pm_err *err)
{
	return pm_fail(err, PM_EINPUT,
		       "invalid flow control '%s' (expected none, message, packet:PAYLOAD or packet:PAYLOAD/FLIT such as packet:256/16)",
		       s);
}

int pm_parse_flow(const char *s, struct pm_params *p, struct pm_err *err)
{
	char buf[64], *slash;
	double payload, flit = 16;
	struct pm_err sub;

	if (strcmp(s, "none") == 0) {
		p->flow = PM_FLOW_NONE;
		return PM_OK;
	}
	if (strcmp(s, "message") == 0) {
		p->flow = PM_FLOW_MESSAGE;
		p->flit_B = 16;
		return PM_OK;
	}
	if (strncmp(s, "packet:", 7) != 0 || strlen(s + 7) >= sizeof buf)
		return flow_error(s, err);
	strcpy(buf, s + 7);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (pm_parse_size(buf, &payload, &sub) ||
	    (slash && pm_parse_size(slash + 1, &flit, &sub)))
		return flow_error(s, err);
	p->flow = PM_FLOW_PACKET;
	p->payload_B = payload;
	p->flit_B = flit;
	return PM_OK;
}

void pm_fmt_flow(const struct pm_params *p, char *buf, size_t n)
{
	if (p->flow == PM_FLOW_PACKET)
		snprintf(buf, n, "packet:%g/%g", p->payload_B, p->flit_B);
	else if (p->flow == PM_FLOW_MESSAGE)
		snprintf(buf, n, "message (one %g-byte head flit per message)", p->flit_B);
	else
		snprintf(buf, n, "none");
}
