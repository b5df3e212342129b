/* common.c: shared network and parameter options. */
#include "cli/common.h"
#include "model/units.h"

#include <stdio.h>
#include <string.h>

const char cli_units_help[] =
	"Units:\n"
	"  sizes      64M = 64 MiB, 32K = 32 KiB (binary, as the papers use); 64MiB the same;\n"
	"             1.5GB = 1.5e9 bytes and 100MB = 1e8 bytes (decimal); 4096 = 4096 bytes\n"
	"  ranges     START:END:xF (geometric, e.g. 32K:64M:x2) or START:END:+STEP\n"
	"  times      150ns, 4.8us, 2ms, 1s (a unit is required, except for 0)\n"
	"  bandwidth  16GB/s (decimal bytes), 16GiB/s (binary), 100Gbps or 100Gb/s (bits)\n";

int cli_net_opt_rows(struct cli_net_opts *o, struct cli_opt *rows)
{
	const struct cli_opt r[] = {
		{"topo", "SPEC", "network, e.g. torus:8x8, fattree:8,2, bigraph:4x8, file:net.csv (see perfmodel list)", &o->topo, NULL},
		{"link-bw", "BW", "bandwidth of every generated link (default 16GB/s, seed 000 Table III)", &o->link_bw, NULL},
		{"link-lat", "T", "latency delta of every generated link (default 150ns, seed 000 Table III)", &o->link_lat, NULL},
		{"inj-bw", "BW", "endpoint injection/ejection bandwidth (default: only the links limit)", &o->inj_bw, NULL},
		{"alpha", "T", "per-message startup alpha (default 0: hardware-issued messages; ~5us for MPI/NCCL)", &o->alpha, NULL},
		{"gamma", "T|BW", "reduction cost per byte, e.g. 0.05ns or a rate such as 20GB/s (default 0)", &o->gamma, NULL},
		{"flow", "F", "flow control: none, message, packet:PAYLOAD[/FLIT] (default packet:256/16)", &o->flow, NULL},
		{"pipeline", "S", "Ueno & Yokota's pipelining factor s for ring closed forms (default 1)", &o->pipeline, NULL},
	};
	memcpy(rows, r, sizeof r);
	return (int)(sizeof r / sizeof r[0]);
}

int cli_net_build(const struct cli_net_opts *o, struct pm_params *p,
		  struct pm_topo **topo, struct pm_err *err)
{
	struct pm_link_defaults ld = {PM_DEFAULT_LINK_BW, PM_DEFAULT_LINK_LAT};
	long s;

	pm_params_default(p);
	if (o->link_bw && pm_parse_bw(o->link_bw, &ld.bw_Bps, err))
		return PM_EINPUT;
	if (o->link_lat && pm_parse_time(o->link_lat, &ld.lat_s, err))
		return PM_EINPUT;
	if (o->inj_bw && pm_parse_bw(o->inj_bw, &p->inj_bw_Bps, err))
		return PM_EINPUT;
	if (o->alpha && pm_parse_time(o->alpha, &p->alpha_s, err))
		return PM_EINPUT;
	if (o->gamma && pm_parse_per_byte(o->gamma, &p->gamma_spB, err))
		return PM_EINPUT;
	if (o->flow && pm_parse_flow(o->flow, p, err))
		return PM_EINPUT;
	if (o->pipeline) {
		if (pm_parse_int(o->pipeline, 1, 1 << 20, "pipelining factor", &s, err))
			return PM_EINPUT;
		p->pipeline_s = (int)s;
	}
	p->link_bw_Bps = ld.bw_Bps;
	p->link_lat_s = ld.lat_s;
	if (topo && o->topo)
		return pm_topo_parse(o->topo, &ld, topo, err);
	return PM_OK;
}

void cli_net_meta(struct cli_table *t, const struct pm_topo *topo,
		  const struct pm_params *p)
{
	char bw[32], lat[32], alpha[32], flow[64], inj[32];

	pm_fmt_bw(p->link_bw_Bps, bw, sizeof bw);
	pm_fmt_time(p->link_lat_s, lat, sizeof lat);
	pm_fmt_time(p->alpha_s, alpha, sizeof alpha);
	pm_fmt_flow(p, flow, sizeof flow);
	if (p->inj_bw_Bps > 0)
		pm_fmt_bw(p->inj_bw_Bps, inj, sizeof inj);
	else
		strcpy(inj, "links only");
	if (topo)
		cli_table_meta(t, "network: %s, %d endpoints, %d switches, %d links",
			       pm_topo_spec(topo), pm_topo_endpoints(topo),
			       pm_topo_vertices(topo) - pm_topo_endpoints(topo),
			       pm_topo_nlinks(topo));
	cli_table_meta(t, "links: %s, delta %s per link; injection: %s", bw, lat, inj);
	cli_table_meta(t, "alpha %s per message; gamma %.4g ns/B; flow control %s; pipelining s = %d",
		       alpha, p->gamma_spB * 1e9, flow, p->pipeline_s);
}
