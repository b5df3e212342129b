/* test_units.c: parsing and printing of sizes, times and bandwidths.
 * Expected values are the unit definitions in DESIGN.md §3 worked out by
 * hand (64M = 64 * 2^20 = 67108864, 100 Gb/s = 100e9 / 8 = 12.5e9 B/s). */
#include "helpers.h"
#include "model/params.h"
#include "model/units.h"

static double size_of(const char *s)
{
	double v;
	struct pm_err err;
	cr_assert_eq(pm_parse_size(s, &v, &err), PM_OK, "%s: %s", s, err.msg);
	return v;
}

Test(units, binary_and_decimal_sizes)
{
	cr_assert_eq(size_of("64M"), 67108864.0);
	cr_assert_eq(size_of("64MiB"), 67108864.0);
	cr_assert_eq(size_of("32K"), 32768.0);
	cr_assert_eq(size_of("1.5GB"), 1.5e9);
	cr_assert_eq(size_of("100MB"), 1e8);
	cr_assert_eq(size_of("4096"), 4096.0);
	cr_assert_eq(size_of("4096B"), 4096.0);
	cr_assert_eq(size_of("2.385K"), 2.385 * 1024);
	cr_assert_eq(size_of("1T"), 1099511627776.0);
}

Test(units, bad_sizes_name_the_value)
{
	const char *bad[] = {"-3", "0", "abc", "", "64Q", "0x10", "nan", "inf",
			     "1e300", "64 M", "+5"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		double v;
		struct pm_err err;
		cr_assert_eq(pm_parse_size(bad[i], &v, &err), PM_EINPUT, "%s accepted", bad[i]);
		cr_assert(strstr(err.msg, bad[i]) != NULL, "message '%s' lacks the value", err.msg);
		cr_assert(strstr(err.msg, "expected") != NULL);
	}
}

Test(units, times)
{
	double v;
	struct pm_err err;
	cr_assert_eq(pm_parse_time("150ns", &v, &err), PM_OK);
	cr_assert_float_eq(v, 150e-9, 1e-20);
	cr_assert_eq(pm_parse_time("4.8us", &v, &err), PM_OK);
	cr_assert_float_eq(v, 4.8e-6, 1e-18);
	cr_assert_eq(pm_parse_time("2ms", &v, &err), PM_OK);
	cr_assert_float_eq(v, 2e-3, 1e-15);
	cr_assert_eq(pm_parse_time("0", &v, &err), PM_OK);
	cr_assert_eq(v, 0);
	cr_assert_eq(pm_parse_time("5", &v, &err), PM_EINPUT, "a bare number has no unit");
	cr_assert(strstr(err.msg, "'5'"));
	cr_assert_eq(pm_parse_time("-1us", &v, &err), PM_EINPUT);
}

Test(units, bandwidths)
{
	double v;
	struct pm_err err;
	cr_assert_eq(pm_parse_bw("16GB/s", &v, &err), PM_OK);
	cr_assert_eq(v, 16e9);
	cr_assert_eq(pm_parse_bw("100Gbps", &v, &err), PM_OK);
	cr_assert_eq(v, 12.5e9);
	cr_assert_eq(pm_parse_bw("100Gb/s", &v, &err), PM_OK);
	cr_assert_eq(v, 12.5e9);
	cr_assert_eq(pm_parse_bw("9301.19MB/s", &v, &err), PM_OK);
	cr_assert_float_eq(v, 9301.19e6, 1e-3);
	cr_assert_eq(pm_parse_bw("1GiB/s", &v, &err), PM_OK);
	cr_assert_eq(v, 1073741824.0);
	cr_assert_eq(pm_parse_bw("0GB/s", &v, &err), PM_EINPUT);
	cr_assert_eq(pm_parse_bw("16", &v, &err), PM_EINPUT);
	cr_assert_eq(pm_parse_bw("16GB", &v, &err), PM_EINPUT);
}

Test(units, per_byte_cost_as_time_or_rate)
{
	double v;
	struct pm_err err;
	cr_assert_eq(pm_parse_per_byte("0.05ns", "reduction cost", &v, &err), PM_OK);
	cr_assert_float_eq(v, 0.05e-9, 1e-22);
	/* a 20 GB/s reduction rate is 1/20e9 = 5e-11 s per byte */
	cr_assert_eq(pm_parse_per_byte("20GB/s", "reduction cost", &v, &err), PM_OK);
	cr_assert_float_eq(v, 5e-11, 1e-24);
	cr_assert_eq(pm_parse_per_byte("fast", "reduction cost", &v, &err), PM_EINPUT);
}

Test(units, ranges)
{
	double *s;
	int n;
	struct pm_err err;

	/* 32K, 64K, ..., 64M: 2^15 .. 2^26 is 12 points */
	cr_assert_eq(pm_parse_size_range("32K:64M:x2", &s, &n, &err), PM_OK);
	cr_assert_eq(n, 12);
	cr_assert_eq(s[0], 32768.0);
	cr_assert_eq(s[11], 67108864.0);
	free(s);
	cr_assert_eq(pm_parse_size_range("1M:4M:+1M", &s, &n, &err), PM_OK);
	cr_assert_eq(n, 4);
	cr_assert_eq(s[3], 4194304.0);
	free(s);
	cr_assert_eq(pm_parse_size_range("3M", &s, &n, &err), PM_OK);
	cr_assert_eq(n, 1);
	free(s);
	const char *bad[] = {"64M:32K:x2", "32K:64M:x1", "32K:64M", "32K:64M:2",
			     "1:1T:+1", "a:b:x2", "1K:2K:x2:x3"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(pm_parse_size_range(bad[i], &s, &n, &err), PM_EINPUT,
			     "%s accepted", bad[i]);
}

Test(units, integers)
{
	long v;
	struct pm_err err;
	cr_assert_eq(pm_parse_int("12", 1, 100, "count", &v, &err), PM_OK);
	cr_assert_eq(v, 12);
	cr_assert_eq(pm_parse_int("0", 1, 100, "count", &v, &err), PM_EINPUT);
	cr_assert_eq(pm_parse_int("12x", 1, 100, "count", &v, &err), PM_EINPUT);
	cr_assert_eq(pm_parse_int("99999999999999999999", 1, 100, "count", &v, &err), PM_EINPUT);
}

Test(units, formatting)
{
	char b[32];
	pm_fmt_size(67108864, b, sizeof b);
	cr_assert_str_eq(b, "64M");
	pm_fmt_size(1536, b, sizeof b);
	cr_assert_str_eq(b, "1.5K");
	pm_fmt_size(1000, b, sizeof b);
	cr_assert_str_eq(b, "1000B");
	pm_fmt_time(4.8e-6, b, sizeof b);
	cr_assert_str_eq(b, "4.8 us");
	pm_fmt_time(150e-9, b, sizeof b);
	cr_assert_str_eq(b, "150 ns");
}

/* Seed 000 §II-C: 16-byte head flits on 64..256-byte payloads cost 6-25%
 * of the bandwidth; Fig. 2's end points: 16/256 = 6.25%, 16/64 = 25%. */
Test(units, flow_control_overhead)
{
	struct pm_params p;
	struct pm_err err;

	pm_params_default(&p);
	cr_assert_eq(pm_parse_flow("packet:256/16", &p, &err), PM_OK);
	cr_assert_eq(pm_wire_bytes(&p, 256 * 1000), 256 * 1000 * (1 + 16.0 / 256));
	cr_assert_eq(pm_parse_flow("packet:64", &p, &err), PM_OK);
	cr_assert_eq(pm_wire_bytes(&p, 6400), 6400 * 1.25);
	/* a partial packet still pays a whole head flit: 1000 B = 4 packets */
	cr_assert_eq(pm_parse_flow("packet:256", &p, &err), PM_OK);
	cr_assert_eq(pm_wire_bytes(&p, 1000), 1000 + 4 * 16);
	cr_assert_eq(pm_parse_flow("message", &p, &err), PM_OK);
	cr_assert_eq(pm_wire_bytes(&p, 1000), 1016);
	cr_assert_eq(pm_parse_flow("none", &p, &err), PM_OK);
	cr_assert_eq(pm_wire_bytes(&p, 1000), 1000);
	cr_assert_eq(pm_parse_flow("packets", &p, &err), PM_EINPUT);
	cr_assert_eq(pm_parse_flow("packet:-1", &p, &err), PM_EINPUT);
}
