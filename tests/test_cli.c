/* test_cli.c: the perfmodel command end to end: the checked-in outputs of
 * tests/expected/CASES (derivations of their numbers are in that file),
 * every error path with its exit status and message, and --help. */
#include "helpers.h"

#include <ctype.h>

#include <libxml/parser.h>
#include "cli/out.h"

/* Outputs that name a file under the source tree (models prints its data
 * directory) are stored with that prefix written as $SRCDIR, so the checked-in
 * files hold wherever the clone lives. */
static char *unroot(char *out, const char *root)
{
	size_t n = strlen(root), len = strlen(out), hits = 0;
	const char *p, *q;

	if (!n)
		return out;
	for (p = out; (p = strstr(p, root)); p += n)
		hits++;
	char *res = malloc(len + hits * 7 + 1), *w = res;
	cr_assert(res);
	for (p = out; (q = strstr(p, root)); p = q + n) {
		memcpy(w, p, (size_t)(q - p));
		w += q - p;
		memcpy(w, "$SRCDIR", 7);
		w += 7;
	}
	strcpy(w, p);
	free(out);
	return res;
}

Test(cli, expected_outputs)
{
	char path[1024], line[2048];
	snprintf(path, sizeof path, "%s/tests/expected/CASES", getenv("PM_SRCDIR"));
	FILE *f = fopen(path, "r");
	int cases = 0;

	cr_assert(f, "cannot open %s", path);
	while (fgets(line, sizeof line, f)) {
		char file[256], *bar = strchr(line, '|');
		if (line[0] == '#' || !bar)
			continue;
		*bar = '\0';
		sscanf(line, "%255s", file);
		line[strcspn(bar + 1, "\n") + (size_t)(bar + 1 - line)] = '\0';
		struct run r = run_perfmodel(bar + 1);
		char want_path[1024];
		snprintf(want_path, sizeof want_path, "%s/tests/expected/%s", getenv("PM_SRCDIR"), file);
		char *want = slurp(want_path);
		cr_assert_eq(r.status, 0, "%s: exit %d: %s", bar + 1, r.status, r.err);
		r.out = unroot(r.out, getenv("PM_SRCDIR"));
		cr_assert_str_eq(r.out, want, "%s differs from tests/expected/%s", bar + 1, file);
		cr_assert_str_eq(r.err, "", "%s wrote to stderr: %s", bar + 1, r.err);
		free(want);
		run_free(&r);
		cases++;
	}
	fclose(f);
	cr_assert(cases >= 8, "only %d cases read", cases);
}

/* Bad input: exit 2, nothing on stdout, "perfmodel: <what> (<expected>)"
 * on stderr naming the bad value. */
Test(cli, bad_input_exits_2)
{
	struct { const char *args, *needle; } cases[] = {
		{"allreduce --topo tours:8x8 --size 1M", "unknown topology kind 'tours' (expected one of ring, full"},
		{"allreduce --topo torus:8x8 --size -3", "invalid size '-3' (expected a positive byte count"},
		{"allreduce --topo torus:8x8 --size 0", "invalid size '0'"},
		{"allreduce --topo torus:8x8 --size 64X", "invalid size '64X'"},
		{"allreduce --topo torus:8x8", "missing --size"},
		{"allreduce --size 1M", "missing --topo"},
		{"allreduce --topo torus:1000000000x1 --size 1M", "network too large"},
		{"allreduce --topo full:1000000000 --size 1M", "invalid endpoint count '1000000000'"},
		{"allreduce --topo torus:8x8 --size 1M --algo rign", "did you mean 'ring'"},
		{"allreduce --topo torus:8x8 --size 1M --algo hring:3x3", "multiplies to 9"},
		{"allreduce --topo torus:8x8 --size 1M --algo ,", "invalid --algo ',': an empty item"},
		{"allreduce --topo torus:8x8 --size 1M --algo ring,,dbtree", "invalid --algo 'ring,,dbtree'"},
		{"allreduce --sise 1M", "unknown option '--sise' for allreduce (did you mean '--size'?"},
		{"allreduce -s 1M", "unknown option '-s'"},
		{"allreduce --topo torus:8x8 --size", "option '--size' needs a value"},
		{"allreduce --topo torus:8x8 --size 1M --format xml", "invalid format 'xml'"},
		{"allreduce --topo torus:8x8 --size 1M --model fast", "invalid model 'fast'"},
		{"allreduce --topo torus:8x8 --size 1M --model sim,fast", "invalid model 'fast' (expected closed, contention, sim, dataflow"},
		{"allreduce --topo torus:8x8 --size 1M --model ,", "invalid --model ','"},
		{"allreduce --topo torus:8x8 --size 1M --model sim,", "invalid --model 'sim,': an empty item"},
		{"allreduce --topo torus:8x8 --size 1M --model sim --sim-segments 0", "invalid segment count '0'"},
		{"allreduce --topo torus:8x8 --size 1M --model sim --sim-net wires", "invalid --sim-net 'wires' (expected routers or links)"},
		{"allreduce --topo torus:8x8 --size 1M --model sim --vcs 0", "invalid virtual channel count '0'"},
		{"allreduce --topo torus:8x8 --size 1M --model sim --vc-flits 8", "does not fit a virtual channel of 8 flits"},
		{"allreduce --topo torus:8x8 --size 1M --model sim --arbitration random", "invalid --arbitration 'random'"},
		{"allreduce --topo torus:8x8 --size 1M --model sim --lockstep loose", "invalid --lockstep 'loose'"},
		{"allreduce --topo torus:8x8 --size 1M --algo ring,bogus", "unknown algorithm 'bogus'"},
		{"reducescatter --topo torus:8x8 --size 1M --algo binomial", "binomial is not a reduce-scatter algorithm"},
		{"alltoall --topo torus:8x8 --size 1M --algo ring", "ring is not an all-to-all algorithm"},
		{"allgather --topo torus:8x8 --size -3", "invalid size '-3'"},
		{"broadcast --size 1M", "missing --topo"},
		{"best --topo torus:4x4 --op gather", "invalid --op 'gather'"},
		{"allreduce --topo torus:4x4 --size 1M --plot /tmp/perfmodel-never.svg", "--plot draws a size sweep"},
		{"train --profile resnet50 --workers 8 --a 1us --b 1ns --plot /tmp/perfmodel-never.svg", "--plot draws a --workers-sweep"},
		{"allreduce --topo torus:4x4 --size 1M:4M:x2 --plot /tmp/perfmodel-never.gif", "invalid plot file '/tmp/perfmodel-never.gif' (expected a name ending in .svg, .png or .pdf)"},
		{"train --profile resnet50 --workers 4 --a 1us --b 1ns --parallel zero4", "invalid --parallel 'zero4'"},
		{"fit tests/data/nccl_allreduce_tagged.log --op broadcast", "--op broadcast, but the file measures all_reduce_perf (expected --op allreduce"},
		{"fit tests/data/nccl_allreduce_tagged.log --op gather", "invalid --op 'gather' (expected allreduce, reducescatter"},
		{"allreduce --topo torus:4x4 --size 1M --model sim --reduce-at both", "invalid --reduce-at 'both' (expected serial or parallel)"},
		{"hier --machine tests/data/machine_bad_key.json --procs 4 --size 1M", "machine file 'tests/data/machine_bad_key.json' at levels[0]: invalid key 'speed'"},
		{"hier --machine tests/data/machine_bad_syntax.json --procs 4 --size 1M", "machine file 'tests/data/machine_bad_syntax.json' line 3:"},
		{"hier --machine abci --procs 64 --size 64M --plot /tmp/x.svg", "--plot draws against the size: give --size a range"},
		{"hier --machine abci --procs 64 --size 1M:64M:x2 --plot /tmp/x.gif", "x.gif"},
		{"train --profile resnet50 --workers 4 --a 1us --b 1ns --endpoint ace", "--endpoint ace prices the all-reduces with the endpoint in the loop (expected --algo NAME"},
		{"train --profile resnet50 --topo ace:4x2x2 --algo ring --endpoint baseline-nooverlap --policy wfbp", "policy synceasgd (expected no --policy"},
		{"train --profile resnet50 --topo ace:4x2x2 --algo ring --endpoint baseline-commopt --mem-bound 2", "invalid --mem-bound '2'"},
		{"train --profile resnet50 --workers 4 --a 1us --b 1ns --in-flight 0", "invalid all-reduces in flight '0'"},
		{"train --profile resnet50 --workers 4 --a 1us --b 1ns --in-flight 2 --parallel zero1", "--in-flight, --order and --overlap apply to the all-reduce timeline"},
		{"train --profile resnet50 --workers 4 --a 1us --b 1ns --order lilo", "invalid order 'lilo' (expected fifo or lifo)"},
		{"train --profile dlrm --workers 4 --a 1us --b 1ns", "profile 'dlrm' is hybrid parallel"},
		{"train --profile dlrm --workers 4 --algo ring --overlap next-forward", "--overlap next-forward and --parallel are for data-parallel profiles"},
		{"train --profile dlrm --workers 4 --algo ring --a2a-algo ring", "ring is not an all-to-all algorithm"},
		{"train --profile resnet50 --workers 4 --a 1us --b 1ns --overlap next", "invalid overlap 'next' (expected backward or next-forward)"},
		{"train --profile resnet50 --topo ace:4x2x2 --algo ring --endpoint baseline-comopt", "invalid endpoint 'baseline-comopt' (expected ideal, ace, baseline-commopt"},
		{"train --profile resnet50 --topo ace:4x2x2 --algo ring --endpoint baseline --mem-bw 900GB/s", "would hold 900 GB/s of the NPU's 900 GB/s"},
		{"train --profile resnet50 --topo ace:4x2x2 --algo ring --endpoint baseline-compopt --npu-sms 2", "would hold 2 of the NPU's 2 SMs"},
		{"train --profile resnet50 --workers 4 --a 1us --b 1ns --parallel zero3 --groups", "does not combine with --parallel"},
		{"allreduce --topo torus:8x8 --size 1M --model sim --trace /tmp/perfmodel-never.json", "--trace records one simulation"},
		{"allreduce --topo torus:8x8 --size 1M --algo ring --model sim --trace /nonexistent/dir/t.json", "cannot write trace file '/nonexistent/dir/t.json'"},
		{"allreduce --topo torus:8x8 --size 1M --algo multitree:ports=1,bogus", "invalid MULTITREE option 'bogus'"},
		{"allreduce --topo torus:8x8 --size 1M --link-bw 16", "invalid bandwidth '16'"},
		{"allreduce --topo torus:8x8 --size 1M --link-lat 150", "invalid time '150'"},
		{"allreduce --topo torus:8x8 --size 1M --alpha -1us", "invalid time '-1us'"},
		{"allreduce --topo torus:8x8 --size 1M --gamma fast", "invalid reduction cost 'fast'"},
		{"allreduce --topo torus:8x8 --size 1M --flow packets", "invalid flow control 'packets'"},
		{"allreduce --topo torus:8x8 --size 1M --pipeline 0", "invalid pipelining factor '0'"},
		{"allreduce --topo torus:8x8 --size 1M --inj-bw 0GB/s", "invalid bandwidth '0GB/s'"},
		{"allreduce --topo torus:8x8 --size 64M:1K:x2", "expected END >= START"},
		{"allreduce --topo torus:8x8 --size 1:1T:x1.0001", "too many points"},
		{"allreduce --topo file:/nonexistent.csv --size 1M", "cannot read topology file '/nonexistent.csv'"},
		{"allreduce --topo file:tests/expected/CASES --size 1M", "has no 'src' column"},
		{"allreduce --topo torus:8x8 --size 1M --explain=yes", "takes no value"},
		{"topo --topo fattree:4,2 --dim-bw 1GB/s", "per-dimension links given for 'fattree:4,2'"},
		{"topo --topo torus:4x4 --dim-bw 1GB/s,2GB/s,3GB/s", "has 2 dimensions but 3 per-dimension bandwidths"},
		{"topo --topo torus:4x4 --dim-bw 1GB/s,", "invalid --dim-bw '1GB/s,'"},
		{"topo --topo torus:4x4x4 --dim-bw 1GB/s,,2GB/s", "invalid --dim-bw '1GB/s,,2GB/s'"},
		{"topo --topo torus:4x4x4 --dim-bw 1,2,3", "invalid bandwidth '1'"},
		{"topo --topo torus:4x4x4 --dim-lat 1ns,2ns,3ns,4ns", "too many values in --dim-lat"},
		{"train --model googlenet --table2 ring --workers 8 --dim-bw 1GB/s", "--dim-bw needs a network"},
		{"topo", "missing --topo"},
		{"topo --topo mesh:0x2", "invalid topology 'mesh:0x2'"},
		{"list extra", "unexpected argument 'extra'"},
		{"alreduce", "unknown command 'alreduce' (expected one of"},
		{"help bogus", "unknown command 'bogus'"},
		{"allreduce --topo full:4 --size 1M --endpoint ace", "--endpoint ace needs the memory bandwidth"},
		{"allreduce --topo full:4 --size 1M --endpoint gpu --mem-bw 1GB/s", "invalid endpoint 'gpu' (expected ideal, baseline or ace)"},
		{"allreduce --topo full:4 --size 1M --mem-bw 1GB/s", "--mem-bw needs --endpoint"},
		{"allreduce --topo full:4 --size 1M --endpoint ace --sms 4", "--sms applies to --endpoint baseline"},
		{"best --size 1M", "missing --topo"},
		{"best --topo torus:4x4 --model sim", "invalid model 'sim' (expected closed or contention)"},
		{"best --topo torus:4x4 --algo hdrm", "needs a BiGraph"},
		{"best --topo torus:4x4 --size 1M:1K:x2", "expected END >= START"},
		{"allreduce --topo torus:8x8 --size 1M --algo hdrm", "none of the algorithms asked for applies: hdrm: not applicable: needs a BiGraph"},
		{"train --profile resnet5 --workers 8 --a 1us --b 1ns", "did you mean 'resnet50'"},
		{"allreduce --topo ring:1 --size 1M", "network 'ring:1' has one endpoint: nothing to reduce"},
		{"schedule --topo torus:1x1 --algo ring", "has one endpoint"},
		{"schedule --topo torus:3x3", "missing --algo"},
		{"schedule --algo ring", "missing --topo"},
		{"schedule --topo torus:3x3 --algo ring --view trees", "invalid view 'trees'"},
		{"schedule --topo torus:3x3 --algo ring --format svg", "invalid format 'svg' (expected table, csv, json, dot or msccl)"},
		{"schedule --topo torus:3x3 --algo hdrm", "not applicable: needs a BiGraph"},
		{"schedule --topo torus:3x3 --algo multitree:ports=x", "invalid port count 'x'"},
		{"schedule --topo torus:128x64 --algo ring", "schedule too large"},
		{"hier --procs 8 --size 1M", "missing --machine"},
		{"hier --machine abci --size 1M", "missing --procs"},
		{"hier --machine abci --procs 8", "missing --size"},
		{"hier --machine abcd --procs 8 --size 1M", "did you mean 'abci'"},
		{"hier --machine abci --procs 5000 --size 1M", "it holds 4096 accelerators"},
		{"hier --machine abci --procs 0 --size 1M", "invalid process count '0'"},
		{"hier --machine abci --procs 8 --size 1M --top 0", "invalid --top '0'"},
		{"hier --machine abci --procs 8 --size 1M --method fast", "invalid method 'fast'"},
		{"hier --machine abci --procs 6 --size 1M --aligned", "a node holds 4"},
		{"hier --machine tests/expected/CASES --procs 8 --size 1M", "no 'kind' column"},
		{"fit", "missing measurement file"},
		{"fit /nonexistent.log", "cannot read measurement file"},
		{"fit data/measurements/osu_allreduce_2nodes.log --input-format xls", "invalid input format 'xls'"},
		{"fit data/measurements/osu_allreduce_2nodes.log --format xls", "invalid format 'xls'"},
		{"fit data/measurements/osu_allreduce_2nodes.log --procs 1", "invalid process count '1'"},
		{"fit tests/data/nccl_bad_row.log", "line 6: expected an nccl-tests result row"},
		{"fit data/measurements/osu_allreduce_2nodes.log --range 1M", "invalid range '1M'"},
		{"fit data/measurements/osu_allreduce_2nodes.log --range 1G:2G", "too few points"},
		{"fit data/measurements/osu_allreduce_2nodes.log --range 1M:2M --fit-range 1M:4M", "both given"},
		{"fit data/measurements/osu_allreduce_2nodes.log extra", "unexpected argument 'extra'"},
		{"train --workers 8 --a 1us --b 1ns", "missing --profile"},
		{"train --model resnet50 --workers 8", "missing all-reduce cost"},
		{"train --model resnet50 --workers 8 --a 1us --b 1ns --table2 ring", "more than one all-reduce cost"},
		{"train --model resnet50 --a 1us --b 1ns", "missing --workers"},
		{"train --model resnet5 --workers 8 --a 1us --b 1ns", "did you mean 'resnet50'"},
		{"train --model resnet50 --workers 8 --a 1us", "give both --a and --b"},
		{"train --model resnet50 --workers 8 --a 1us --b 1ns --policy fastest", "unknown policy 'fastest'"},
		{"train --model resnet50 --workers 8 --a 1us --b 1ns --policy bucket:huge", "invalid bucket policy"},
		{"train --model resnet50 --workers 8 --table2 tree --alpha 1us --link-bw 1GB/s", "unknown --table2 'tree'"},
		{"train --model resnet50 --workers 8 --table2 ring", "--table2 needs --link-bw"},
		{"train --model resnet50 --workers-sweep 4:64:x2 --a 1us --b 1ns", "--workers-sweep needs a cost"},
		{"train --model resnet50 --topo torus:4x4 --workers 8 --algo ring", "does not match the 16 endpoints"},
		{"train --model resnet50 --topo torus:4x4 --algo 2d-rign", "did you mean '2d-ring'"},
		{"train --model resnet50 --topo fattree:4,2 --algo 2d-ring", "not applicable"},
		{"train --model resnet50 --workers 8 --a 1us --b 1ns --bytes-per-param 0", "invalid bytes per parameter '0'"},
		{"train --model resnet50 --workers 8 --a 1us --b 1ns --compute-scale -1", "invalid compute scale '-1'"},
		{"train --model resnet50 --workers 8 --fit data/measurements/osu_allreduce_8nodes.log --fit-range 1:16", "negative all-reduce cost"},
		{"models extra", "unexpected argument 'extra'"},
		/* hostile input, round three */
		{"allreduce --topo torus:4x4 --algo dbtree:,shift --size 1M", "empty option in 'dbtree:,shift'"},
		{"allreduce --topo torus:4x4 --algo multitree:ports=2,,priority --size 1M", "an empty item"},
		{"train --profile resnet50 --model vgg16 --workers 8 --a 1us --b 1ns", "two profiles: --profile resnet50 and --model vgg16"},
		{"allreduce --topo ring:4 --size 2P", "too large (expected at most 1 PiB)"},
		{"train --profile resnet50 --procs 8 --workers 8 --a 1us --b 1ns", "--procs 8 and --workers 8 both given"},
		{"schedule --topo full:2048 --algo ring --view nodes --format json", "the nodes view would list 8384512 transfers (expected at most 1048576"},
		{"schedule --topo full:2048 --algo ring --format msccl", "the MSCCL XML would list 8384512 transfers"},
		{"allreduce --topo machine:dgx-h100:1 --size 1M --algo nccl:3.1", "invalid NCCL release '3.1' in 'nccl:3.1' (expected 2.18 to"},
		{"allreduce --topo machine:dgx-h100:1 --size 1M --algo nccl:ring,2.17", "invalid NCCL release '2.17'"},
		{"hier --topo machine:dgx-h100:16 --machine abci --size 1G", "both given"},
		{"hier --topo torus:4x4 --size 1G", "expected machine:NAME or machine:NAME:NODES"},
		/* issue 9 regressions: each crashed, hung or printed inf before */
		{"train --model resnet50 --algo ring --workers 4 --cost-model contention", "--cost-model contention needs --topo"},
		{"allreduce --topo file:/dev/zero --size 1M", "not a regular file"},
		{"fit /dev/zero", "not a regular file"},
		{"hier --machine /dev/zero --procs 8 --size 1M", "not a regular file"},
		{"train --model /dev/zero --workers 4 --algo ring", "not a regular file"},
		{"allreduce --topo file:tests --size 1M", "it is a directory"},
		{"hier --machine abci --procs 4294967296 --size 1M", "invalid process count '4294967296'"},
		{"hier --machine abci --procs 8 --size 1M --layers 1073741824x1073741824x1073741824", "multiplies to more than 8"},
		{"allreduce --topo torus:4x4 --algo ring --size 1:2:x1.0000000000000002", "too many points"},
		{"allreduce --topo torus:4x4 --algo ring --size 1:1e15:x1.000000001", "too many points"},
		{"allreduce --topo torus:4x4 --size 1M --link-bw 1e308GB/s", "out of range (expected 1 B/s to 1 PB/s)"},
		{"allreduce --topo torus:4x4 --size 1M --link-bw 1e-300B/s", "out of range"},
		{"allreduce --topo torus:4x4 --size 1M --link-lat 1e308s", "too long (expected at most 3600 s)"},
		{"allreduce --topo torus:4x4 --size 1M --alpha 1e308s", "too long"},
		{"allreduce --topo torus:4x4 --size 1M --gamma 1e308s", "invalid reduction cost '1e308s'"},
		{"allreduce --topo torus:4x4x4 --size 1M --dim-bw 1e308GB/s,1GB/s,1GB/s", "out of range"},
		{"allreduce --topo torus:4x4 --size 1M --inj-bw 1e308GB/s", "out of range"},
		{"topo --topo torus:4x4 --link-bw 1e308GB/s", "out of range"},
		{"schedule --topo file:tests/data/oneway_cycle.csv --algo multitree", "has no link back"},
		/* issue 9: hangs and messages that misled */
		{"allreduce --topo bigraph:1000x1000 --size 1M --model closed", "1001000 vertices of 1500 ports each"},
		{"allreduce --topo torus:99999999999999999999x2 --size 1M", "a dimension of 99999999999999999999 endpoints"},
		{"train --model resnet50 --workers 4 --a 1us --b 1ns --policy all,mgwfbp,optimal", "policy 'all' in the list"},
		{"train --model resnet50 --workers 4 --a 1us --b 1ns --policy bucket:1M/0", "invalid bucket policy 'bucket:1M/0'"},
		{"train --model resnet50 --workers 4 --a 1us --b -1ns", "invalid all-reduce time per byte '-1ns'"},
		{"train --model resnet50 --workers 4 --a 1us --b 1ns --policy \"\"", "invalid --policy '': an empty item"},
		{"train --model resnet50 --workers 4 --a 1us --b 1ns --policy ,", "invalid --policy ','"},
		{"train --model resnet50 --workers-sweep 0:10:x2 --algo ring", "invalid --workers-sweep '0:10:x2'"},
		{"hier --machine abci --procs 64 --size 1M --layers \"\"", "invalid --layers ''"},
		{"hier --machine abci --procs 64 --size 1M --layers 4xx16", "invalid --layers '4xx16'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct run r = run_perfmodel(cases[i].args);
		cr_assert_eq(r.status, 2, "%s: exit %d", cases[i].args, r.status);
		cr_assert_str_eq(r.out, "", "%s printed to stdout", cases[i].args);
		cr_assert(strncmp(r.err, "perfmodel: ", 11) == 0, "%s: stderr '%s'", cases[i].args, r.err);
		cr_assert(strstr(r.err, cases[i].needle), "%s: '%s' lacks '%s'", cases[i].args, r.err,
			  cases[i].needle);
		cr_assert(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "one line: %s", r.err);
		run_free(&r);
	}
}

Test(cli, no_arguments_is_usage_error)
{
	struct run r = run_perfmodel("");
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "usage: perfmodel"));
	cr_assert(strstr(r.err, "perfmodel: missing command"), "%s", r.err);
	run_free(&r);
}

/* The router-level simulator in the MULTITREE artifact's discipline
 * against the artifact's own BookSim2 runs (Huang et al., ISCA 2021, its
 * simulator rerun with one-cycle reductions: data/validation/
 * booksim_1cycle.csv, cycles at 1 GHz; docs/validation/08-booksim.md):
 * within 10%, the issue's tolerance, at six points of its 4x4 torus. */
Test(cli, booksim_artifact_points)
{
	static const char net[] = "allreduce --topo torus:4x4 --link-bw 16GB/s --link-lat 150ns --alpha 0 --flow packet:256/16 --ni-buffer 52 --allocator islip --format csv";
	static const char order[] = "--model sim --lockstep order --arbitration fcfs";
	static const char nop[] = "--model sim --lockstep nop";
	struct { const char *algo, *size, *disc; double booksim_ns; } c[] = {
		{"ring", "256K", order, 37664},
		{"dbtree:16", "1M", order, 240554},
		{"2d-ring", "1M", order, 54478},
		{"multitree:ports=1", "1M", nop, 131020},
		{"multitree", "4M", nop, 180826},
		{"multitree-msg", "256K", nop, 16624},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char args[1024];
		double us = -1;
		snprintf(args, sizeof args, "%s %s --algo %s --size %s", net, c[i].disc, c[i].algo, c[i].size);
		struct run r = run_perfmodel(args);
		cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
		const char *row = strchr(r.out, '\n');	/* the header, then the row */
		cr_assert(row && sscanf(row + 1, "%*[^,],%*[^,],%*[^,],%lf", &us) == 1, "%s", r.out);
		cr_assert(fabs(us * 1e3 / c[i].booksim_ns - 1) <= 0.10, "%s %s: %g us against BookSim's %g",
			  c[i].algo, c[i].size, us, c[i].booksim_ns / 1e3);
		run_free(&r);
	}
}

/* Every shipped machine preset answers hier at several P (issue 13: the
 * TPU v4-like description failed from P = 32 on). */
Test(cli, every_machine_preset_answers)
{
	const char *machines[] = {"abci", "dgx-a100", "dgx-h100", "tpu-v4-like"};
	const int ps[] = {8, 16, 32, 64, 256, 1024};	/* dgx-a100 holds 4480 */
	for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++)
		for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
			char cmd[128];
			snprintf(cmd, sizeof cmd, "hier --machine %s --procs %d --size 64M --top 1 --format csv",
				 machines[i], ps[j]);
			struct run r = run_perfmodel(cmd);
			cr_assert_eq(r.status, 0, "%s: %s", cmd, r.err);
			run_free(&r);
		}
}

/* --help teaches: syntax, units and an example, and exits 0. */
Test(cli, help_texts)
{
	const char *cmds[] = {"--help", "allreduce --help", "topo --help", "list --help",
			      "help allreduce", "allreduce -h", "schedule --help", "hier --help",
			      "fit --help", "train --help", "models --help"};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		struct run r = run_perfmodel(cmds[i]);
		cr_assert_eq(r.status, 0, "%s", cmds[i]);
		cr_assert(strstr(r.out, "usage: perfmodel"), "%s", cmds[i]);
		run_free(&r);
	}
	struct run r = run_perfmodel("allreduce --help");
	cr_assert(strstr(r.out, "64M = 64 MiB"));
	cr_assert(strstr(r.out, "busbw = algbw x 2(P-1)/P"));
	cr_assert(strstr(r.out, "perfmodel allreduce --topo torus:8x8 --size 64M"));
	run_free(&r);
}

/* Same input, same output, byte for byte. */
Test(cli, deterministic)
{
	struct run a = run_perfmodel("allreduce --topo bigraph:4x8 --size 32K:4M:x8 --format csv");
	struct run b = run_perfmodel("allreduce --topo bigraph:4x8 --size 32K:4M:x8 --format csv");
	cr_assert_eq(a.status, 0);
	cr_assert_str_eq(a.out, b.out);
	run_free(&a);
	run_free(&b);
}

/* An algorithm's options are comma separated like the list itself: a
 * piece that names no algorithm continues the argument before it (issue
 * 10: "multitree:ports=1,priority" failed in allreduce). */
Test(cli, algorithm_arguments_with_commas)
{
	struct run r = run_perfmodel("allreduce --topo torus:4x4 --size 1M --algo ring,multitree:ports=1,priority,dbtree:4 --model closed --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\n1048576,ring,closed,"), "%s", r.out);
	cr_assert(strstr(r.out, "\n1048576,\"multitree:ports=1,priority\",closed,"), "%s", r.out);
	cr_assert(strstr(r.out, "\n1048576,dbtree:4,closed,"), "%s", r.out);
	run_free(&r);
}

/* perfmodel validate --quick: the evaluators agree where they must (an
 * identity between the contention evaluator and the router simulator on
 * contention-free one-hop schedules, and the simulator never below the
 * links' lower bound elsewhere); exit 0 and no FAIL row.  By hand for
 * MULTITREE on torus:4x4 at 1 MiB: 10 steps of one 64 KiB chunk per link,
 * 256 packets of 272 wire bytes = 4.352 us at 16 GB/s + 0.15 us latency
 * = 4.502 us a step, 45.02 us (closed and contention); the router adds
 * 6 ns a step: 45.08 us. */
Test(cli, validate_quick_passes)
{
	struct run r = run_perfmodel("validate --quick --format csv");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert(!strstr(r.out, "FAIL"), "%s", r.out);
	cr_assert(strstr(r.out, "torus:4x4,multitree,1048576,45.02,45.02,45.08,"), "%s", r.out);
	cr_assert(strstr(r.out, ",exact,") && strstr(r.out, ",bound,"), "%s", r.out);
	run_free(&r);
}

/* --plot: a real SVG file (libxml2 parses it, root <svg>) with the axis
 * labels, a size tick and one legend entry per algorithm in its text. */
/* Run args (which --plot into path), check the SVG is well-formed XML
 * whose text holds every string of want, and remove it. */
static void check_svg(const char *args, const char *path, const char *const *want, size_t n)
{
	struct run r = run_perfmodel(args);
	cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
	xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	cr_assert(doc, "%s is not well-formed XML", path);
	xmlNodePtr root = xmlDocGetRootElement(doc);
	cr_assert(root && !xmlStrcmp(root->name, BAD_CAST "svg"));
	xmlChar *text = xmlNodeGetContent(root);
	for (size_t i = 0; i < n; i++)
		cr_assert(strstr((const char *)text, want[i]), "%s: no '%s' in the figure", args, want[i]);
	xmlFree(text);
	xmlFreeDoc(doc);
	unlink(path);
	run_free(&r);
}

Test(cli, plot_writes_an_svg)
{
	char path[64], args[256];
	snprintf(path, sizeof path, "/tmp/perfmodel-plot-%d.svg", (int)getpid());
	snprintf(args, sizeof args, "allreduce --topo torus:4x4 --size 32K:1M:x4 --algo ring,multitree --model contention --plot %s", path);
	const char *want[] = {"bus bandwidth (GB/s)", "message size per rank", "ring", "multitree", "32K", "all-reduce on torus:4x4"};
	check_svg(args, path, want, sizeof want / sizeof *want);

	/* train: speedup per policy against a worker sweep */
	snprintf(args, sizeof args, "train --profile resnet50 --workers-sweep 4:64:x2 --table2 ring --link-bw 1.25GB/s --alpha 10us --policy wfbp,mgwfbp --plot %s", path);
	const char *twant[] = {"mgwfbp", "workers", "64"};
	check_svg(args, path, twant, sizeof twant / sizeof *twant);

	/* best: the winner, named where it changes, the runner-up, the bound */
	snprintf(args, sizeof args, "best --topo torus:4x4 --size 1K:1G:x8 --algo ring,recdoubling,multitree --plot %s", path);
	const char *bwant[] = {"fastest (named where it changes)", "runner-up", "bound: the network's links", "recdoubling", "torus:4x4"};
	check_svg(args, path, bwant, sizeof bwant / sizeof *bwant);

	/* hier: bus bandwidth per hierarchy against the size */
	snprintf(args, sizeof args, "hier --machine abci --procs 64 --size 1M:64M:x4 --layers 4x16 --plot %s", path);
	const char *hwant[] = {"best hierarchy (named where it changes)", "flat ring", "Rabenseifner", "4x16", "bus bandwidth", "64 processes on abci"};
	check_svg(args, path, hwant, sizeof hwant / sizeof *hwant);
}

/* A schedule too large to price leaves the closed form and says why. */
Test(cli, schedule_too_large_keeps_closed_form)
{
	struct run r = run_perfmodel("allreduce --topo torus:64x64 --size 1M --algo dbtree:65536,rabenseifner --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "dbtree:65536~,closed"), "%s", r.out);
	cr_assert(strstr(r.out, "rabenseifner,contention"), "%s", r.out);
	cr_assert(strstr(r.out, "no contention row: schedule too large"), "%s", r.out);
	cr_assert(strstr(r.err, "warning"), "%s", r.err);
	run_free(&r);
}

/* Found by scripts/fuzz (fuzz_spec, torus:13x0048576): recdoubling on a
 * 631,488-endpoint torus whose partners sit up to 24,288 links apart
 * would cross about 2.4e10 links when priced (hours).  Refused after the
 * schedule is built and before pricing; the closed form stays. */
Test(cli, pricing_refused_when_routes_are_too_long)
{
	struct run r = run_perfmodel("allreduce --topo torus:13x0048576 --size 64K --algo recdoubling --model closed,contention --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "recdoubling,closed"), "%s", r.out);
	cr_assert(strstr(r.out, "no contention row: schedule too costly to price"), "%s", r.out);
	run_free(&r);
}

/* Routes longer than any fixed buffer (601 links through a chain of
 * switches) are built, printed and priced whole (issue 9: a path[256]
 * and a links[512] array overflowed). */
Test(cli, long_routes)
{
	struct run r = run_perfmodel("schedule --topo file:tests/data/switch_chain.csv --algo multitree --view transfers --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "s598->s599->1"), "%.200s", r.out);
	cr_assert(strstr(r.out, "1->s599->s598"), "%.200s", r.out);
	run_free(&r);
	/* ring on it, P = 2: one reduce-scatter and one all-gather step, each
	 * a 2^19-byte message per rank over 601 links of 150 ns and 16 GB/s:
	 * 2 x (601 x 150 ns + 524288 B / 16e9 B/s) = 180.3 + 65.536 us */
	r = run_perfmodel("allreduce --topo file:tests/data/switch_chain.csv --size 1M --algo ring --model contention --flow none --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, ",245.836,"), "%s", r.out);
	cr_assert(strstr(r.out, ",180.3,65.536,"), "%s", r.out);
	run_free(&r);
}

/* One description, one truth: hier's model (Ueno & Yokota, CCGrid 2019,
 * SIV-C with the layer bandwidth rule) and the contention evaluator on
 * machine:dgx-h100:4 price hring:8x4 the same when their models coincide:
 * alpha 0, s = 1, no link latency, no flow control, one NIC per GPU on a
 * non-blocking fabric (so hier's 8 rings sharing 8 x 48 = 384 GB/s of
 * achieved egress get 48 GB/s each, the NIC link).  By hand, at the
 * achieved rates (ring_busbw 370 GB/s, nic_bw 48 GB/s): layer 1, 8 GPUs:
 * 2 x 7 x (64 MiB/8)/370e9 = 317.4068 us; layer 2, 4 nodes:
 * 2 x 3 x (8 MiB/4)/48e9 = 262.144 us; 579.551 us in all. */
Test(cli, hier_and_machine_network_agree)
{
	struct run h = run_perfmodel("hier --machine dgx-h100 --procs 32 --size 64M --layers 8x4 --pipeline 1 --alpha 0 --format csv");
	struct run a = run_perfmodel("allreduce --topo machine:dgx-h100:4 --size 64M --algo hring:8x4 --flow none --link-lat 0 --alpha 0 --model contention --format csv");
	cr_assert_eq(h.status, 0, "%s", h.err);
	cr_assert_eq(a.status, 0, "%s", a.err);
	cr_assert(strstr(h.out, "given,8x4,579.551,"), "%s", h.out);
	cr_assert(strstr(a.out, "hring:8x4,contention,579.551,"), "%s", a.out);
	run_free(&h);
	run_free(&a);
}

/* Two tree edges on a link twice as fast cost what one costs on the
 * slowest link: tests/data/fat_link.csv (test_algos.c derives its 3 steps
 * a phase by hand).  1 MiB over 4 ranks: 262,144 B a chunk at 10 GB/s =
 * 26.2144 us a step, 6 steps; latency 150 ns a link (the default), 2
 * links in steps 1, 3, 4, 6 and 3 links in steps 2 and 5: 2.1 us.
 * 157.2864 + 2.1 = 159.3864 us. */
Test(cli, multitree_fat_link_priced_at_slowest_rate)
{
	struct run r = run_perfmodel("allreduce --topo file:tests/data/fat_link.csv --size 1M --algo multitree --model contention --flow none --alpha 0 --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "multitree,contention,159.386,"), "%s", r.out);
	run_free(&r);
}

/* A network with its own link rates gives the closed forms its slowest
 * link, not the --link-bw default it never uses.  machine:dgx-h100:2: 16
 * GPUs, a single ring (ring:1) of 30 steps, each moving 16 MiB / 16 = 1
 * MiB over at least one NIC link at the 48 GB/s a 400 Gb/s CX-7 achieves
 * (nic_bw; 21.845333 us) and two links of 150 ns (GPU - switch - GPU):
 * 30 x 22.145333 = 664.36 us, in both evaluators.  With the 16 GB/s
 * default the closed form said 30 x 65.8 us.  --link-bw given is what the
 * closed form then uses: 30 x (1 MiB / 100 GB/s + 0.3 us) = 323.573 us. */
Test(cli, closed_forms_see_the_networks_slowest_link)
{
	struct run r = run_perfmodel("allreduce --topo machine:dgx-h100:2 --size 16M --algo ring:1 --model closed,contention --flow none --alpha 0 --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "ring:1,closed,664.36,"), "%s", r.out);
	cr_assert(strstr(r.out, "ring:1,contention,664.36,"), "%s", r.out);
	run_free(&r);
	r = run_perfmodel("allreduce --topo machine:dgx-h100:2 --size 16M --algo ring:1 --model closed");
	cr_assert(strstr(r.out, "# links: the network's own, 48 GB/s to 370 GB/s; closed forms that see one link use the slowest: 48 GB/s"), "%s", r.out);
	run_free(&r);
	r = run_perfmodel("allreduce --topo machine:dgx-h100:2 --size 16M --algo ring:1 --model closed --flow none --alpha 0 --link-bw 100GB/s --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "ring:1,closed,323.573,"), "%s", r.out);
	run_free(&r);
}

/* The default ring on a GPU cluster runs one channel per NIC rail, as
 * NCCL does, and its closed form takes the channels' bottleneck:
 * machine:dgx-h100:2, 8 channels of 16 MiB / 8 = 2 MiB; each of the 30
 * steps moves 2 MiB / 16 = 128 KiB per channel; each GPU sends one
 * channel's part by its NIC (48 GB/s: 2.730667 us) and seven over NVLink
 * (370 GB/s: 7 x 131072 / 370e9 = 2.479741 us), so the NIC bounds the
 * step: 30 x (2.730667 + 0.3) = 90.92 us in both evaluators, the rate of
 * 8 NICs (384 GB/s) where the single ring had one.  The machine's own
 * alpha (5 us) is the default there: 30 x 5 us more. */
Test(cli, ring_channels_on_a_gpu_cluster)
{
	struct run r = run_perfmodel("allreduce --topo machine:dgx-h100:2 --size 16M --algo ring --model closed,contention --flow none --alpha 0 --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "ring:8,closed,90.92,"), "%s", r.out);
	cr_assert(strstr(r.out, "ring:8,contention,90.92,"), "%s", r.out);
	run_free(&r);
	r = run_perfmodel("allreduce --topo machine:dgx-h100:2 --size 16M --algo ring --model closed --flow none --format csv");
	cr_assert(strstr(r.out, "ring:8,closed,240.92,"), "%s", r.out);
	run_free(&r);
}

/* multiphase's sram=: ACE's SRAM split by link bandwidth x chunk size
 * (Rashidi et al. 2021 SIV-I).  ace:4x4x4: X 200 GB/s, Y and Z 25 GB/s,
 * L = 4.  Chunk c = n / 4096; weights 200c : 25c/4 : 25c/4 : 200c/4 :
 * 200c/4 (terminal) = 200 : 6.25 : 6.25 : 50 : 50, sum 312.5, so X-RS
 * gets 4 MiB x 200/312.5 = 2,684,354.56 B (chunks of c), Y-AR and Z-AR
 * 83,886.08 B each (chunks of c/4), X-AG 671,088.64 B (chunks of c).
 * Four FSMs run 4 chunks in Y-AR while 4 x n/16384 <= 83,886.08, that is
 * n <= 327.68 MiB: 256 MiB prices as without sram= (Y takes its 4,096
 * chunks 4 at a time, 6 steps each: 3 + 6 x 1024 + 6 + 3 = 6,156 steps).
 * At 1 GiB (c = 256 KiB) the partitions hold 10, 1, 1 and 2 chunks, so
 * the phases run 4, 1, 1, 2 at once: Y takes the chunks one by one, 6
 * steps each, from step 3 (X-RS, 3 steps, keeps ahead); Z and X-AG follow
 * each chunk without waiting: 3 + 6 x 4096 + 6 + 3 = 24,588 steps.
 * Y-AR holds no chunk once n/16384 > 83,886.08 B, n > 1.28 GiB: 2 GiB is
 * declined and best marks 1.28 GiB as a limit, not a crossover. */
Test(cli, multiphase_sram_limit)
{
	struct run r = run_perfmodel("allreduce --topo ace:4x4x4 --size 256M:2G:x2 --algo multiphase:4096,fsm=4,sram=4M,multiphase:4096,fsm=4 --model closed --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	const char *a = strstr(r.out, "268435456,\"multiphase:4096,fsm=4,sram=4M\",closed,");
	const char *b = strstr(r.out, "268435456,\"multiphase:4096,fsm=4\",closed,");
	cr_assert(a && b, "%s", r.out);
	a = strchr(a, '\"');
	a = strchr(a + 1, '\"');	/* past the label: the same numbers */
	b = strchr(b, '\"');
	b = strchr(b + 1, '\"');
	cr_assert(strncmp(a, b, strcspn(b, "\n")) == 0, "%.80s against %.80s", a, b);
	cr_assert(strstr(b, ",6156,"), "%s", b);
	const char *g = strstr(r.out, "1073741824,\"multiphase:4096,fsm=4,sram=4M\",closed,");
	cr_assert(g && strstr(g, ",24588,") && strstr(g, ",24588,") < strchr(g, '\n'), "%s", r.out);
	cr_assert(strstr(r.out, "not applicable to 2G: the SRAM of 4M (split by link bandwidth x chunk size, Rashidi et al. 2021 SIV-I) gives Y-AR a partition of 81.92K, less than one chunk of 128K"), "%s", r.out);
	run_free(&r);
	r = run_perfmodel("best --topo ace:4x4x4 --size 256M:2G:x2 --algo multiphase:4096,fsm=4,sram=4M,ring --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "limit,137438"), "%s", r.out);	/* bisection to 0.01%% */
	run_free(&r);
	r = run_perfmodel("best --topo ace:4x4x4 --size 256M:2G:x2 --algo multiphase:4096,fsm=4,sram=4M,ring");
	cr_assert(strstr(r.out, "# limit at 1.28G: multiphase:4096,fsm=4,sram=4M beyond it: not applicable to 1.28G: "), "%s", r.out);
	run_free(&r);
	/* train fits T(M) over its buckets' sizes: one the SRAM cannot hold
	 * ends it, exit 2 (ace:4x2x2, K = 16: Y-AR gets 64 KiB x 6.25/312.5
	 * = 1,310.72 B and holds chunks of n/64: none past 83,886 B) */
	r = run_perfmodel("train --profile resnet50 --topo ace:4x2x2 --algo multiphase:16,fsm=4,sram=64K");
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "gives Y-AR a partition of 1.28K, less than one chunk of "), "%s", r.err);
	run_free(&r);
	r = run_perfmodel("allreduce --topo ace:4x4x4 --size 1M --algo multiphase:16,sram=lots");
	cr_assert_eq(r.status, 2, "%s", r.out);
	cr_assert(strstr(r.err, "'lots'"), "%s", r.err);
	run_free(&r);
}

/* The SRAM slowing a short pipeline, by hand: ace:4x4x4, K = 4 chunks of
 * c = 64 KiB (n = 256 KiB), sram = 960 KiB = 15 x 64 KiB.  With the
 * weights above X-RS gets 0.64 x 960K = 9.6 c (9 chunks), Y-AR and Z-AR
 * 0.02 x 960K = 1.2 c/4 (1 chunk of c/4 each), X-AG 0.16 x 960K = 2.4 c
 * (2 chunks): fsm=4 runs 4, 1, 1, 2 chunks at once.  Phases of 3, 6, 6, 3
 * steps; start(c,k) = max(end(c,k-1), end(c-F_k,k)): X-RS all four at
 * 0-3; Y one by one at 3, 9, 15, 21; Z at 9, 15, 21, 27; X-AG at 15, 21,
 * 27, 33, the last ending at 36.  Without the SRAM all four move
 * together: 3 + 6 + 6 + 3 = 18 steps.  Every evaluator runs the same
 * schedule, so all three count 36 (18).
 * Time (closed form = contention, Table V's links: X 200 GB/s 72.289 ns,
 * Y and Z 25 GB/s 401.606 ns; 256-byte packets, w(m) = 17/16 m): per
 * chunk and direction m_X = 64K/8 = 8192 B, m_Y = m_Z = 64K/32 = 2048 B.
 * Steps 0-2, X-RS with 4 chunks: 4 x 8704 B / 200 GB/s + 72.289 =
 * 246.369 ns; steps 3-32 have Y or Z busy with one chunk (2176 B / 25
 * GB/s = 87.04 ns, more than X-AG's one chunk, 43.52 ns): 488.646 ns;
 * steps 33-35, X-AG alone: 115.809 ns.  T = 3 x 246.369 + 30 x 488.646 +
 * 3 x 115.809 = 15,745.9 ns.  Without the SRAM: X-RS and X-AG 3 steps
 * each at 246.369, Y and Z 6 each with 4 chunks, 4 x 87.04 + 401.606 =
 * 749.766: T = 6 x 246.369 + 12 x 749.766 = 10,475.4 ns. */
Test(cli, multiphase_sram_slows_pipeline)
{
	struct run r = run_perfmodel("allreduce --topo ace:4x4x4 --size 256K --algo multiphase:4,fsm=4,sram=960K,multiphase:4,fsm=4 --model closed,contention,sim --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"multiphase:4,fsm=4,sram=960K\",closed,15.7459,16.6484,32.7765,36,"), "%s", r.out);
	cr_assert(strstr(r.out, "\"multiphase:4,fsm=4,sram=960K\",contention,15.7459,16.6484,32.7765,36,"), "%s", r.out);
	cr_assert(strstr(r.out, "\"multiphase:4,fsm=4,sram=960K\",sim,"), "%s", r.out);
	cr_assert(strstr(r.out, "\"multiphase:4,fsm=4\",closed,10.4754,25.0247,49.2674,18,"), "%s", r.out);
	run_free(&r);
}

/* chunk=BYTES: K = ceil(n / BYTES) chunks, made size by size (Table III's
 * 64 KB chunks).  1 MiB / 64 KiB = 16, so multiphase:chunk=64K,fsm=4 at
 * 1M is multiphase:16,fsm=4; 100 KiB needs ceil(1.5625) = 2 chunks of
 * 50 KiB: multiphase:2,fsm=4.  Each pair must print the same time, in the
 * closed form and the contention evaluator.  8 GiB would need 131,072
 * chunks, past the 65,536 a schedule may have: declined with the count. */
Test(cli, multiphase_chunk_size)
{
	static const char *const sizes[] = {"1M", "100K"};
	static const char *const same[] = {"multiphase:16,fsm=4", "multiphase:2,fsm=4"};
	for (int i = 0; i < 2; i++) {
		char cmd[256], a[64], b[64];
		snprintf(cmd, sizeof cmd, "allreduce --topo ace:4x4x4 --size %s --algo multiphase:chunk=64K,fsm=4,%s --model closed,contention --format csv", sizes[i], same[i]);
		struct run r = run_perfmodel(cmd);
		cr_assert_eq(r.status, 0, "%s", r.err);
		for (int m = 0; m < 2; m++) {
			const char *model = m ? "contention" : "closed";
			snprintf(a, sizeof a, "\"multiphase:chunk=64K,fsm=4\",%s,", model);
			snprintf(b, sizeof b, "\"%s\",%s,", same[i], model);
			const char *x = strstr(r.out, a), *y = strstr(r.out, b);
			cr_assert(x && y, "%s", r.out);
			x += strlen(a);
			y += strlen(b);
			cr_assert(strncmp(x, y, strcspn(y, "\n")) == 0, "%s: %.60s against %.60s", sizes[i], x, y);
		}
		run_free(&r);
	}
	struct run r = run_perfmodel("allreduce --topo ace:4x4x4 --size 8G --algo multiphase:chunk=64K --model closed");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "not applicable to 8G: chunk=64K cuts it into 131072 chunks (expected at most 65536"), "%s", r.out);
	run_free(&r);
	r = run_perfmodel("allreduce --topo ace:4x4x4 --size 1M --algo multiphase:chunk=0");
	cr_assert_eq(r.status, 2, "%s", r.out);
	run_free(&r);
}

/* MULTITREE on a switch network past the searching construction's reach
 * (2000^2 x 4000 links = 1.6e10 > 6e9) is declined before any work, with
 * the estimate, the limit and the way out (it used to run for minutes:
 * issue 8); multitree:fabric builds it.  On one switch every endpoint has one port and every route
 * two links, so a phase needs at least P - 1 = 1999 steps (P(P-1) tree
 * edges, at most P a step) and moves n/P a step, as the ring: the same
 * 3998 steps and the same time, in both evaluators (the switch is
 * non-blocking: contention adds nothing). */
Test(cli, multitree_fabric_past_the_search)
{
	struct run r = run_perfmodel("allreduce --topo switch:2000 --size 1M --algo multitree,multitree:fabric,ring --model closed,contention --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "P^3 = 8e+09 searches of up to 4000 links here; answered up to 512 endpoints, or where P^2 x links <= 6e+09 (got 2000 endpoints, P^2 x links = 1.6e+10); multitree:fabric builds trees without the search"), "%s", r.out);
	const char *kind[] = {"closed", "contention"};
	for (int i = 0; i < 2; i++) {
		char mt[64], ring[64];
		snprintf(mt, sizeof mt, "multitree:fabric,%s,", kind[i]);
		snprintf(ring, sizeof ring, "ring,%s,", kind[i]);
		const char *a = strstr(r.out, mt), *b = strstr(r.out, ring);
		cr_assert(a && b, "%s", r.out);
		double ta, tb;
		int sa, sb;
		cr_assert_eq(sscanf(a + strlen(mt), "%lf,%*[^,],%*[^,],%d", &ta, &sa), 2, "%s", a);
		cr_assert_eq(sscanf(b + strlen(ring), "%lf,%*[^,],%*[^,],%d", &tb, &sb), 2, "%s", b);
		cr_assert_eq(sa, 3998, "%s: %d steps", kind[i], sa);
		cr_assert_eq(sb, 3998);
		cr_assert_float_eq(ta, tb, 1e-9 * tb, "%s: %g against the ring's %g", kind[i], ta, tb);
	}
	run_free(&r);
}

/* Issue 9: a file topology of 4,096 endpoints hung.  A chain of 4,096
 * endpoints is answered: ring, closed form, --flow none, one link per
 * ring hop: 2(P-1) steps of (150 ns + (1 MiB / 4096) / 16 GB/s) =
 * 8190 x (150 + 16) ns = 1359.54 us.  The same endpoints with 260,000
 * random links are refused before routing (4096 x (4096 + 2 x 130000)
 * search steps exceed the budget of 2^30), not after minutes. */
Test(cli, large_file_topologies)
{
	const char *chain = "/tmp/pm_test_chain.csv", *dense = "/tmp/pm_test_dense.csv";
	FILE *f = fopen(chain, "w");
	cr_assert(f);
	fprintf(f, "src,dst,bandwidth,latency\n");
	for (int i = 0; i + 1 < 4096; i++)
		fprintf(f, "%d,%d,,\n", i, i + 1);
	fclose(f);
	f = fopen(dense, "w");
	cr_assert(f);
	fprintf(f, "src,dst,bandwidth,latency\n");
	unsigned x = 12345;
	for (int i = 0; i < 130000; i++) {
		int a = i % 4096, b;
		x = x * 1103515245u + 12345u;
		b = (int)((x >> 8) % 4096);
		fprintf(f, "%d,%d,,\n", a, b == a ? (a + 1) % 4096 : b);
	}
	fclose(f);
	struct run r = run_perfmodel("allreduce --topo file:/tmp/pm_test_chain.csv --size 1M --algo ring --model closed --flow none --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "1048576,ring,closed,1359.54,"), "%s", r.out);
	cr_assert(strstr(r.out, ",1228.5,131.04,"), "%s", r.out);	/* 8190 x 150 ns, 8190 x 16 ns */
	run_free(&r);
	r = run_perfmodel("allreduce --topo file:/tmp/pm_test_dense.csv --size 1M --algo ring");
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "too large to route: 4096 endpoints x (4096 vertices + 260000 links)"), "%s", r.err);
	run_free(&r);
	remove(chain);
	remove(dense);
}

/* Output integrity (issue 9): a value that is not a finite number never
 * reaches a table, CSV or JSON; the writer refuses and writes nothing. */
static char *write_to_string(const struct cli_table *t, enum cli_format fmt, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	struct pm_err err;
	FILE *f = open_memstream(&buf, &len);
	cr_assert(f);
	*rc = cli_table_write(f, t, fmt, &err);
	fclose(f);
	return buf;
}

Test(cli, writer_refuses_inf_and_nan)
{
	static const char *const names[] = {"time_us", "note"};
	static const unsigned flags[] = {COL_NUM, 0};
	const char *bad[][2] = {{"inf", ""}, {"-nan", ""}, {"1e400", ""}, {"12x", ""},
				{"1", "inf us"}, {"1", "nan"}};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		for (int fmt = FMT_TABLE; fmt <= FMT_JSON; fmt++) {
			struct cli_table t;
			int rc;
			cli_table_init(&t, 2, names, flags);
			cr_assert_eq(cli_table_row(&t), 0);
			cli_table_set(&t, 0, "%s", bad[i][0]);
			cli_table_set(&t, 1, "%s", bad[i][1]);
			char *out = write_to_string(&t, (enum cli_format)fmt, &rc);
			cr_assert_eq(rc, PM_EINTERNAL, "'%s' '%s' format %d passed", bad[i][0], bad[i][1], fmt);
			cr_assert_str_eq(out, "", "wrote '%s'", out);
			free(out);
			cli_table_release(&t);
		}
	/* text that merely contains the letters passes: "information", "per rack;inf" */
	struct cli_table t;
	int rc;
	cli_table_init(&t, 2, names, flags);
	cr_assert_eq(cli_table_row(&t), 0);
	cli_table_set(&t, 0, "%s", "-1.5e-3");
	cli_table_set(&t, 1, "%s", "information per rack;inf of nodes");
	char *out = write_to_string(&t, FMT_JSON, &rc);
	cr_assert_eq(rc, PM_OK);
	cr_assert(strstr(out, "\"time_us\": -0.0015"), "%s", out);	/* the number, as jansson prints it */
	free(out);
	cli_table_release(&t);
}

/* The text table by hand: numbers right-aligned to their column's widest
 * cell or name, text left-aligned, the last text column unpadded, an
 * empty cell "-".  Column widths here: size 4 ("size", "1.5K"), algo 9
 * ("multitree"), t_us 4, bw 2.  A byte count fills the table's size
 * (1536 B = 1.5K, 64 MiB = 64M) and CSV's number (cli_table_bytes); two
 * numbers share a format (cli_table_nums). */
Test(cli, writer_aligns_text_and_fills_size_and_number_cells)
{
	static const char *const names[] = {"size", "size_B", "algo", "t_us", "bw", "note"};
	static const unsigned flags[] = {COL_TABLE, COL_DATA | COL_NUM, 0, COL_NUM, COL_NUM, 0};
	struct cli_table t;
	int rc;

	cli_table_init(&t, 6, names, flags);
	cr_assert_eq(cli_table_row(&t), 0);
	cli_table_bytes(&t, 0, 1, 67108864);
	cli_table_set(&t, 2, "%s", "ring");
	cli_table_nums(&t, 3, (const double[]){12.5, 3}, 2, "%.6g");
	cr_assert_eq(cli_table_row(&t), 0);
	cli_table_bytes(&t, 0, 1, 1536);
	cli_table_set(&t, 2, "%s", "multitree");
	cli_table_set(&t, 5, "%s", "no row");
	char *out = write_to_string(&t, FMT_TABLE, &rc);
	cr_assert_eq(rc, PM_OK);
	cr_assert_str_eq(out, "size  algo       t_us  bw  note\n"
			      "64M   ring       12.5   3  -\n"
			      "1.5K  multitree     -   -  no row\n");
	free(out);
	out = write_to_string(&t, FMT_CSV, &rc);
	cr_assert_str_eq(out, "size_B,algo,t_us,bw,note\n67108864,ring,12.5,3,\n1536,multitree,,,no row\n");
	free(out);
	cli_table_release(&t);
}

/* A text cell with a comma, quotes and a backslash: RFC 4180 quoting in
 * CSV (the field in quotes, each quote doubled), JSON escaping. */
Test(cli, writer_quotes_csv_and_escapes_json)
{
	static const char *const names[] = {"algo", "note"};
	struct cli_table t;
	int rc;
	cli_table_init(&t, 2, names, NULL);
	cr_assert_eq(cli_table_row(&t), 0);
	cli_table_set(&t, 0, "%s", "ring");
	cli_table_set(&t, 1, "%s", "got file:a,\"b\"\\c.csv");
	char *out = write_to_string(&t, FMT_CSV, &rc);
	cr_assert_eq(rc, PM_OK);
	cr_assert_str_eq(out, "algo,note\nring,\"got file:a,\"\"b\"\"\\c.csv\"\n");
	free(out);
	out = write_to_string(&t, FMT_JSON, &rc);
	cr_assert(strstr(out, "\"note\": \"got file:a,\\\"b\\\"\\\\c.csv\""), "%s", out);
	free(out);
	cli_table_release(&t);
}

/* nccl-tests output as it really comes (issue 13): tests/data/
 * nccl_allreduce_tagged.log has the layout of nccl-tests 2.13 under
 * mpirun --tag-output with NCCL_DEBUG=INFO (3 NCCL INFO lines and the
 * version line between the header and the rows, "[1,0]<stdout>:" before
 * most lines) and times made as 20 us + n / 10 GB/s, printed to 0.01 us.
 * The fit recovers that line; ring on the 8 ranks of the header converts
 * it to alpha_link = 20 us / 14 = 1.42857 us and bw_link = 14 / (8 x
 * 0.1 ns/B) = 17.5 GB/s, and those options priced by allreduce give the
 * measured 64 MiB row back: 6730.89 us (20 + 67108864 B / 10 GB/s). */
Test(cli, fit_reads_real_nccl_logs_and_round_trips)
{
	struct run r = run_perfmodel("fit tests/data/nccl_allreduce_tagged.log --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "test_in_header,all_reduce_perf\n"), "%s", r.out);
	cr_assert(strstr(r.out, "collective,all-reduce (the nccl-tests header)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "ranks_in_header,8\n"), "%s", r.out);
	cr_assert(strstr(r.out, "rows_read,11\n"), "%s", r.out);
	cr_assert(strstr(r.out, "lines_skipped,4\n"), "%s", r.out);
	cr_assert(strstr(r.out, "alpha_us,20.0008\n"), "%s", r.out);	/* 20, rounding of the printed times */
	cr_assert(strstr(r.out, "beta_ns_per_B,0.1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "as_options,--alpha 1.42863us --link-bw 17.5GB/s --link-lat 0 --flow none\n"), "%s", r.out);
	run_free(&r);
	for (int i = 0; i < 2; i++) {
		char cmd[256];
		snprintf(cmd, sizeof cmd, "allreduce --topo %s --size 64M --algo ring --model closed --alpha 1.42863us --link-bw 17.5GB/s --link-lat 0 --flow none --format csv",
			 i ? "switch:8" : "full:8");
		r = run_perfmodel(cmd);
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_assert(strstr(r.out, "67108864,ring,closed,6730.89,"), "%s: %s", cmd, r.out);
		run_free(&r);
	}
	/* nccl-tests 2.9 broadcast_perf: root but no redop column, the time
	 * found from the header line; same line, 12 rows; no test name and
	 * busbw = algbw, so not taken for an all-reduce */
	r = run_perfmodel("fit tests/data/nccl_broadcast_old.log --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "rows_read,12\n"), "%s", r.out);
	cr_assert(strstr(r.out, "beta_ns_per_B,0.1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "collective,unknown: the file does not name its test (give --op NAME)\n"), "%s", r.out);
	run_free(&r);
	/* the same log as the broadcast it is, on 8 ranks, converted through
	 * what NCCL runs, its pipelined ring: chain with 64 chunks a rank,
	 * K = 512.  Its broadcast takes S = K + P - 2 = 518 steps of
	 * (alpha + (n/K)/bw), so alpha = 20.0001/518 = 0.0386102 us and
	 * bw = (518/512) / 0.1 ns = 10.1172 GB/s, about the measured 10 GB/s
	 * (the binomial tree gave 30 GB/s, three times the rate any link
	 * needs); priced back at 1 MiB it gives the measured line, 20 +
	 * 104.858 us */
	r = run_perfmodel("fit tests/data/nccl_broadcast_old.log --op broadcast --procs 8 --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "as_options,--alpha 0.0386102us --link-bw 10.1172GB/s --link-lat 0 --flow none\n"), "%s", r.out);
	cr_assert(strstr(r.out, "chain:512 broadcast on 8 ranks"), "%s", r.out);
	run_free(&r);
	r = run_perfmodel("broadcast --topo full:8 --algo chain:512 --alpha 0.0386102us --link-bw 10.1172GB/s --link-lat 0 --flow none --size 1M --model closed --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "1048576,chain:512,closed,124.858,"), "%s", r.out);
	run_free(&r);
	/* --algo binomial keeps the tree's conversion: half the all-reduce's
	 * closed form, 3 (alpha + n/bw): alpha = 20.0001/3 = 6.6667 us and
	 * bw = 3 / 0.1 ns = 30 GB/s */
	r = run_perfmodel("fit tests/data/nccl_broadcast_old.log --op broadcast --procs 8 --algo binomial --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "as_options,--alpha 6.6667us --link-bw 30GB/s --link-lat 0 --flow none\n"), "%s", r.out);
	run_free(&r);
	/* OSU names its benchmark: osu_allgather's SIZE is per process, so no
	 * per-link options unless --op says how to read it */
	r = run_perfmodel("fit tests/data/osu_allgather8.log --procs 8 --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "test_in_header,osu_allgather\n"), "%s", r.out);
	cr_assert(strstr(r.out, "none: the file measures osu_allgather, which perfmodel does not convert"), "%s", r.out);
	run_free(&r);
	/* OSU logs do not say how many ranks ran: no per-link options */
	r = run_perfmodel("fit data/measurements/osu_allreduce_8nodes.log");
	cr_assert(strstr(r.out, "none: how many ranks ran is not known"), "%s", r.out);
	run_free(&r);
}

/* Every example in every --help runs (issue 13: hier's did not). */
Test(cli, help_examples_run)
{
	const char *cmds[] = {"--help", "allreduce --help", "best --help", "schedule --help", "hier --help",
			      "fit --help", "train --help", "topo --help", "list --help", "models --help"};
	int ran = 0;
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		struct run h = run_perfmodel(cmds[i]);
		cr_assert_eq(h.status, 0, "%s: %s", cmds[i], h.err);
		for (char *line = strtok(h.out, "\n"); line; line = strtok(NULL, "\n")) {
			char args[512], *redirect;
			if (strncmp(line, "  perfmodel ", 12) != 0)
				continue;
			snprintf(args, sizeof args, "%s", line + 12);
			if ((redirect = strchr(args, '>')))
				*redirect = '\0';	/* "> trees.dot": print instead */
			char *plot = strstr(args, "--plot ");
			if (plot) {	/* draw into a scratch file, not the working directory */
				char rest[512], *after = strchr(plot + 7, ' ');
				snprintf(rest, sizeof rest, "%s", after ? after : "");
				snprintf(plot, sizeof args - (size_t)(plot - args), "--plot /tmp/perfmodel-example-%d.svg%s",
					 (int)getpid(), rest);
			}
			struct run r = run_perfmodel(args);
			if (plot) {
				char path[64];
				snprintf(path, sizeof path, "/tmp/perfmodel-example-%d.svg", (int)getpid());
				unlink(path);
			}
			cr_assert_eq(r.status, 0, "example '%s' from '%s' exits %d: %s", args, cmds[i], r.status, r.err);
			run_free(&r);
			ran++;
		}
		run_free(&h);
	}
	cr_assert_geq(ran, 15, "only %d examples found", ran);
}

/* perfmodel best on full:8, closed forms, alpha 5 us, 16 GB/s, no link
 * latency or flow control (beta = 1/16e9 s/B), by hand (Thakur,
 * Rabenseifner & Gropp 2005): recursive doubling 3 alpha + 3 n beta,
 * Rabenseifner 6 alpha + 1.75 n beta, ring 14 alpha + 1.75 n beta.
 * Recursive doubling wins below 3 alpha = 1.25 n beta, i.e. n = 2.4
 * alpha / beta = 192,000 B, where both take 15 + 36 = 51 us;
 * Rabenseifner wins above (ring never: same bandwidth term, more alpha). */
/* best --op alltoall, closed forms on full:8, 150 ns links, 16 GB/s, no
 * flow control: direct = 7 (150 ns) + 7 (n/8) b, Bruck = 3 (150 ns) +
 * (4 + 4 + 4)(n/8) b; equal where 600 ns = 5 n b / 8, n = 600 ns x 8/5 x
 * 16 GB/s = 15,360 B.  Bruck below, direct above (Thakur, Rabenseifner &
 * Gropp 2005 use Bruck for short messages). */
Test(cli, best_alltoall_crossover_by_hand)
{
	struct run r = run_perfmodel("best --topo full:8 --op alltoall --model closed --flow none --size 1K:1M:x2 --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	char *c = strstr(r.out, "\ncrossover,");
	cr_assert(c, "%s", r.out);
	assert_rel(strtod(c + 11, NULL), 15360, 1e-4);
	cr_assert(strstr(r.out, "size,1024,bruck,"), "%s", r.out);
	cr_assert(strstr(r.out, "size,1048576,direct,"), "%s", r.out);
	run_free(&r);
}

Test(cli, best_crossover_by_hand)
{
	struct run r = run_perfmodel("best --topo full:8 --size 4K:64M:x2 --alpha 5us --link-lat 0 --flow none --model closed --algo ring,recdoubling,rabenseifner --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	char *c = strstr(r.out, "\ncrossover,");
	cr_assert(c, "%s", r.out);
	double size = strtod(c + 11, NULL);
	assert_rel(size, 192000, 1e-4);
	cr_assert(strstr(c, ",rabenseifner,"), "%s", c);
	cr_assert(strstr(c, ",recdoubling,"), "%s", c);
	cr_assert(!strstr(c + 1, "\ncrossover,"), "one crossover only: %s", r.out);
	cr_assert(strstr(r.out, "size,4096,recdoubling,"), "%s", r.out);
	cr_assert(strstr(r.out, "size,67108864,rabenseifner,"), "%s", r.out);
	run_free(&r);
}

/* best's winner and time at a size are the fastest contention row of
 * allreduce at that size (the same evaluator, two commands). */
Test(cli, best_agrees_with_allreduce)
{
	struct run a = run_perfmodel("allreduce --topo torus:4x4 --size 1M --model contention --format csv");
	struct run b = run_perfmodel("best --topo torus:4x4 --size 1M --format csv");
	cr_assert_eq(a.status, 0, "%s", a.err);
	cr_assert_eq(b.status, 0, "%s", b.err);
	double fastest = 1e300;
	char algo[64] = "";
	for (char *line = strtok(a.out, "\n"); line; line = strtok(NULL, "\n")) {
		char name[64];
		double t;
		if (sscanf(line, "1048576,%63[^,],contention,%lf,", name, &t) == 2 && t < fastest) {
			fastest = t;
			snprintf(algo, sizeof algo, "%s", name);
		}
	}
	char want[128];
	snprintf(want, sizeof want, "size,1048576,%s,%.6g,", algo, fastest);
	cr_assert(strstr(b.out, want), "'%s' not in %s", want, b.out);
	run_free(&a);
	run_free(&b);
}

/* The endpoint in training (Rashidi et al. 2021 Table VI), columns of
 * train's CSV row: t_iter, t_comp, t_c_no, t_comm (ms), calls.
 * - --endpoint ideal is the same iteration as no endpoint at all;
 * - BaselineCommOpt holds 450 of 900 GB/s: with compute bound by memory
 *   (--mem-bound 1) it takes 900/450 = 2x the ideal compute;
 * - BaselineNoOverlap computes at full speed, then runs one all-reduce:
 *   t_iter = t_comp + t_comm exactly, one call. */
static void train_row(const char *args, double v[5])
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "train --profile resnet50 --topo ace:4x2x2 --algo multiphase --bytes-per-param 2 --format csv %s", args);
	struct run r = run_perfmodel(cmd);
	cr_assert_eq(r.status, 0, "%s: %s", cmd, r.err);
	const char *row = strstr(r.out, "\n16,");
	cr_assert_not_null(row, "%s", r.out);
	row = strchr(row + 4, ',');
	cr_assert_eq(sscanf(row, ",%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4]), 5, "%s", row);
	run_free(&r);
}

Test(cli, train_endpoint_table6)
{
	double none[5], ideal[5], comm[5], noov[5];

	train_row("--policy wfbp", none);
	train_row("--policy wfbp --endpoint ideal", ideal);
	for (int i = 0; i < 5; i++)
		cr_assert_float_eq(ideal[i], none[i], 0, "column %d", i);
	train_row("--policy wfbp --endpoint baseline-commopt --mem-bound 1", comm);
	cr_assert_float_eq(comm[1], 2 * ideal[1], 1e-5 * ideal[1]);
	train_row("--endpoint baseline-nooverlap", noov);
	cr_assert_float_eq(noov[1], ideal[1], 1e-5 * ideal[1]);
	cr_assert_float_eq(noov[0], noov[1] + noov[3], 1e-5 * noov[0]);
	cr_assert_float_eq(noov[4], 1, 0);
}

/* Reduction at the endpoint in the simulator (--reduce-at).  MULTITREE on
 * torus:3x3, 9 MiB (1 MiB a tree), gamma 1 ns/B, links fast enough
 * (10^6 GB/s, no latency, no headers) that only reductions take time:
 * - parallel: each of the 3 reduce-scatter steps (barriers) lasts one
 *   message's reduction, 1,048,576 B x 1 ns: 3 x 1048.576 = 3145.73 us;
 * - serial (default): a rank reduces its arrivals one after another, so a
 *   step lasts r_t reductions, r_t the most children one rank gains in
 *   construction step t: the closed form's reduction term (n/P) gamma
 *   sum_t r_t, 8388.61 us here, the same number from the other evaluator. */
Test(cli, sim_reduce_at)
{
	const char *base = "allreduce --topo torus:3x3 --algo multitree --size 9M --gamma 1ns --link-bw 1000000GB/s --link-lat 0 --flow none --sim-net links --model closed,sim --format csv";
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s --reduce-at parallel", base);
	struct run r = run_perfmodel(cmd);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "multitree,sim,3145.73,"), "%s", r.out);
	run_free(&r);
	r = run_perfmodel(base);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "multitree,closed,8388.61,") && strstr(r.out, "multitree,sim,8388.61,"), "%s", r.out);
	run_free(&r);
}

/* One description, two spellings: the shipped JSON form of dgx-h100
 * (data/machines/json/dgx-h100.json) prices exactly as the CSV preset, in
 * hier and as a network. */
static char *data_rows(const char *cmd)
{
	struct run r = run_perfmodel(cmd);
	cr_assert_eq(r.status, 0, "%s: %s", cmd, r.err);
	char *out = malloc(strlen(r.out) + 1), *o = out;
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n"))
		if (line[0] != '#')
			o += sprintf(o, "%s\n", line);
	run_free(&r);
	return out;
}

Test(cli, machine_json_equals_csv)
{
	const char *pairs[][2] = {
		{"hier --machine dgx-h100 --procs 1024 --size 1G --format csv",
		 "hier --machine data/machines/json/dgx-h100.json --procs 1024 --size 1G --format csv"},
		{"allreduce --topo machine:dgx-h100:4 --size 64M --algo ring,hring:8x4 --format csv",
		 "allreduce --topo machine:data/machines/json/dgx-h100.json:4 --size 64M --algo ring,hring:8x4 --format csv"},
	};
	for (size_t i = 0; i < 2; i++) {
		char *a = data_rows(pairs[i][0]), *b = data_rows(pairs[i][1]);
		cr_assert(strlen(a) > 100, "%s", a);
		cr_assert_str_eq(a, b);
		free(a);
		free(b);
	}
}

/* Rashidi et al. 2021 Fig. 5's sweep, test-sized (ace:4x2x2, 1 MiB,
 * multiphase:16): the simulator against the contention evaluator with
 * the endpoint in the loop.  Both charge a node's memory reads within the
 * step (docs/model.md, The endpoint); they differ in two ways, each
 * bounded per step:
 * - a step bound by memory ends, in the contention evaluator, after the
 *   reads plus its slowest link's latency (Y, 401.61 ns); in the
 *   simulator after the reads plus the latency of the link its last-read
 *   packet crosses, at least X's 72.29 ns: the simulator is shorter by
 *   at most steps x 329.32 ns;
 * - the simulator reads a packet before it leaves and the next one while
 *   it is on the wire, so per step only the first packet of each of the 2
 *   ports is read unoverlapped: longer by at most steps x 2 x 256 B x 2
 *   (a reduction reads twice) / memory bandwidth.
 * Measured: within both at every share, for the baseline and ACE. */
Test(cli, endpoint_sim_agrees_with_contention_on_fig5_sweep)
{
	static const char *const ends[] = {"baseline", "ace"};
	static const double mem[] = {25e9, 133e9, 300e9, 900e9};
	for (int e = 0; e < 2; e++)
		for (int i = 0; i < 4; i++) {
			char cmd[256];
			snprintf(cmd, sizeof cmd, "allreduce --topo ace:4x2x2 --size 1M --algo multiphase:16 --model contention,sim --endpoint %s --mem-bw %.0fB/s --format csv", ends[e], mem[i]);
			struct run r = run_perfmodel(cmd);
			cr_assert_eq(r.status, 0, "%s", r.err);
			double tc = 0, ts = 0;
			int steps = 0, s2 = 0;
			const char *c = strstr(r.out, "multiphase:16,contention,");
			const char *s = strstr(r.out, "multiphase:16,sim,");
			cr_assert(c && s, "%s", r.out);
			cr_assert_eq(sscanf(c, "multiphase:16,contention,%lf,%*[^,],%*[^,],%d", &tc, &steps), 2, "%s", c);
			cr_assert_eq(sscanf(s, "multiphase:16,sim,%lf,%*[^,],%*[^,],%d", &ts, &s2), 2, "%s", s);
			cr_assert_eq(steps, s2);
			double shorter = steps * (401.61 - 72.29) * 1e-3;	/* us */
			double longer = steps * 2 * 256 * 2 / mem[i] * 1e6;	/* us */
			cr_assert(tc - ts <= shorter && ts - tc <= longer,
				  "%s at %.0f GB/s: contention %.3f us, sim %.3f us (sim may be %.3f us shorter, %.3f us longer)",
				  ends[e], mem[i] / 1e9, tc, ts, shorter, longer);
			run_free(&r);
		}
}

/* One rule for allreduce and best: a named algorithm that cannot run on
 * the network is left out with the reason and the others are ranked (on
 * a fat tree multiphase, which needs a torus, is left out and ring wins
 * alone); a name that is not an algorithm stays an input error. */
Test(cli, best_leaves_out_what_cannot_run)
{
	struct run r = run_perfmodel("best --topo fattree:4,2 --algo ring,multiphase --size 1M");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "# left out: multiphase: not applicable: needs a torus"), "%s", r.out);
	cr_assert(strstr(r.out, "size  1M    ring"), "%s", r.out);
	run_free(&r);
	r = run_perfmodel("best --topo fattree:4,2 --algo ring,rings --size 1M");
	cr_assert_eq(r.status, 2, "%s", r.out);
	cr_assert(strstr(r.err, "unknown algorithm 'rings'"), "%s", r.err);
	run_free(&r);
}

/* best on a GPU cluster prices NCCL's own choice beside perfmodel's
 * schedules, which run at the preset's assumed alpha a step: the header
 * says which is which, so a schedule's lead at 1 KiB (nvlstree at 5 us a
 * step against NCCL's launch and latency) is not read as a faster
 * algorithm NCCL could run. */
Test(cli, best_on_a_cluster_says_how_nccl_is_priced)
{
	struct run r = run_perfmodel("best --topo machine:dgx-h100:2 --size 1K --algo nccl,nvlstree");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "# nccl rows: NCCL's model"), "%s", r.out);
	cr_assert(strstr(r.out, "# the other rows are schedules priced at the alpha above a step"), "%s", r.out);
	run_free(&r);
}

/* Hostile input, round three (the findings that became tests). */

/* best with multiphase's SRAM limit at the sizes it cannot run: a size
 * no algorithm runs is a row that says why, not a read before the array
 * (the heap-buffer-overflow of pm_algo_at_size from crossing()). */
Test(cli, best_when_no_algorithm_runs_a_size)
{
	struct run r = run_perfmodel("best --topo torus:4x4x4 --algo multiphase:chunk=64K,fsm=4,sram=4M --size 512M:1G:x2 --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "size,536870912,\"multiphase:chunk=64K,fsm=4,sram=4M\","), "%s", r.out);
	cr_assert(strstr(r.out, "size,1073741824,\"none (multiphase"), "%s", r.out);
	run_free(&r);
}

/* --trace naming the topology file is refused and the file left as it
 * was; a trace that cannot be written leaves no file and fails. */
Test(cli, trace_never_overwrites_its_input)
{
	char dir[] = "/tmp/pm_trace_XXXXXX", cmd[512], *before, *after;
	cr_assert(mkdtemp(dir));
	snprintf(cmd, sizeof cmd, "%s/ring4.csv", dir);
	FILE *f = fopen(cmd, "w");
	fputs("src,dst,bandwidth,latency\n0,1,16GB/s,150ns\n1,2,16GB/s,150ns\n2,3,16GB/s,150ns\n3,0,16GB/s,150ns\n", f);
	fclose(f);
	before = slurp(cmd);
	snprintf(cmd, sizeof cmd, "allreduce --topo file:%s/ring4.csv --size 1M --algo ring --model sim --trace %s/ring4.csv", dir, dir);
	struct run r = run_perfmodel(cmd);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "is the topology file"), "%s", r.err);
	run_free(&r);
	snprintf(cmd, sizeof cmd, "%s/ring4.csv", dir);
	after = slurp(cmd);
	cr_assert_str_eq(before, after);
	free(before);
	free(after);
	snprintf(cmd, sizeof cmd, "allreduce --topo file:%s/ring4.csv --size 1M --algo ring --model sim --trace %s/no/such/dir/t.json", dir, dir);
	r = run_perfmodel(cmd);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "cannot write trace file"), "%s", r.err);
	run_free(&r);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* A pipe that never ends is not waited on forever: 1 s of silence (the
 * default is 20 s) ends the read with an error; 1P is a size. */
Test(cli, a_silent_pipe_is_not_waited_on)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cd '%s' && sleep 4 | PM_INPUT_WAIT_S=1 '%s' fit /dev/stdin 2>/dev/null", getenv("PM_SRCDIR"), getenv("PERFMODEL"));
	int st = system(cmd);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
	snprintf(cmd, sizeof cmd, "cd '%s' && cat tests/data/nccl_allreduce_tagged.log | '%s' fit /dev/stdin >/dev/null 2>&1", getenv("PM_SRCDIR"), getenv("PERFMODEL"));
	st = system(cmd);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a pipe that ends: status %d", st);
	struct run r = run_perfmodel("allreduce --topo ring:4 --size 1P --algo ring --model closed --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "1125899906842624,ring,closed,"), "%s", r.out);
	run_free(&r);
}

/* Adding an algorithm is one file and one table row: `perfmodel list`
 * names every algorithm the table registers, and `validate --list`'s full
 * matrix runs every one that list says implements the all-reduce but
 * NCCL's model (which prices a machine's NCCL, not a schedule on these
 * networks): two commands' outputs against the registry and each other. */
Test(cli, list_and_validate_name_every_algorithm)
{
	struct run l = run_perfmodel("list"), v = run_perfmodel("validate --list");
	char listed[64][32], coll[64][256];
	int nl = 0, na;
	const struct pm_algo *const *all = pm_algos(&na);

	cr_assert_eq(l.status, 0);
	cr_assert_eq(v.status, 0);
	for (char *line = strtok(l.out, "\n"); line && nl < 64; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "Topology kinds", 14))
			break;
		if (line[0] == ' ' && line[1] == ' ' && line[2] != ' ') {
			sscanf(line + 2, "%31[^[ ]", listed[nl]);
			coll[nl++][0] = '\0';
		} else if (nl > 0 && strstr(line, "collectives:")) {
			snprintf(coll[nl - 1], sizeof coll[0], "%s", strstr(line, "collectives:"));
		}
	}
	for (int i = 0; i < na; i++) {
		int found = 0;
		for (int k = 0; k < nl; k++)
			found |= strcmp(listed[k], all[i]->name) == 0;
		cr_assert(found, "perfmodel list does not name %s", all[i]->name);
	}
	char *algos = strstr(v.out, "algorithms:"), matrix[64][32];
	int nm = 0;
	cr_assert(algos, "%s", v.out);
	*strchr(algos, '\n') = '\0';
	for (char *w = strtok(algos + strlen("algorithms:"), ", "); w && nm < 64; w = strtok(NULL, ", "))
		snprintf(matrix[nm++], sizeof matrix[0], "%s", w);
	for (int k = 0; k < nl; k++) {
		int in_matrix = 0;
		for (int j = 0; j < nm; j++)
			in_matrix |= strcmp(matrix[j], listed[k]) == 0;
		int allreduce = strstr(coll[k], "all-reduce") != NULL && strcmp(listed[k], "nccl") != 0;
		cr_assert_eq(in_matrix, allreduce, "%s: in validate's matrix %d, an all-reduce algorithm %d",
			     listed[k], in_matrix, allreduce);
	}
	cr_assert_gt(nm, 10, "%d algorithms in the matrix", nm);
	run_free(&l);
	run_free(&v);
}

/* One spelling per idea: fit takes train's --fit-range as its --range,
 * the same fit to the byte. */
Test(cli, fit_range_is_range)
{
	struct run a = run_perfmodel("fit data/measurements/osu_allreduce_8nodes.log --procs 8 --range 256K:1M");
	struct run b = run_perfmodel("fit data/measurements/osu_allreduce_8nodes.log --procs 8 --fit-range 256K:1M");

	cr_assert_eq(a.status, 0, "%s", a.err);
	cr_assert_eq(b.status, 0, "%s", b.err);
	cr_assert_str_eq(a.out, b.out);
	run_free(&a);
	run_free(&b);
}

/* Pricing the algorithms on threads changes nothing but the time: every
 * algorithm (multitree handing its schedule to multitree-msg included) at
 * a size range, best's schedules built side by side and validate's
 * matrix priced pair by pair, one thread
 * against three and sixteen, the same bytes on stdout and stderr; --jobs 0
 * is refused. */
Test(cli, jobs_give_the_same_output)
{
	static const char *const cmds[] = {
		"allreduce --topo torus:8x8 --size 32K:16M:x8 --format csv",
		"allreduce --topo fattree:4,2 --size 1M --model contention --explain",
		"reducescatter --topo bigraph:4x8 --size 64K:4M:x4 --model contention --format json",
		"allreduce --topo machine:dgx-h100:4 --size 8:1G:x32 --format csv",
		"best --topo torus:8x8 --size 1K:64M:x4 --format csv",
		"best --topo fattree:4,2 --op reducescatter --size 32K:16M:x8",
		"validate --quick --format csv",
	};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		char a[512], b[512], c[512];
		snprintf(a, sizeof a, "%s --jobs 1", cmds[i]);
		snprintf(b, sizeof b, "%s --jobs 3", cmds[i]);
		snprintf(c, sizeof c, "%s --jobs 16", cmds[i]);
		struct run x = run_perfmodel(a), y = run_perfmodel(b), z = run_perfmodel(c);
		cr_assert_eq(x.status, 0, "%s: %s", a, x.err);
		cr_assert(strlen(x.out) > 500, "%s", a);
		cr_assert_str_eq(x.out, y.out, "%s", b);
		cr_assert_str_eq(x.out, z.out, "%s", c);
		cr_assert_str_eq(x.err, y.err, "%s", b);
		cr_assert_str_eq(x.err, z.err, "%s", c);
		run_free(&x);
		run_free(&y);
		run_free(&z);
	}
	struct run r = run_perfmodel("allreduce --topo ring:8 --size 1M --jobs 0");
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "--jobs"), "%s", r.err);
	run_free(&r);
}

/* Every command with its output on a full disk fails with a message. */
Test(cli, output_to_a_full_disk_fails)
{
	static const char *const cmds[] = {
		"list", "help", "models", "topo --topo torus:4x4", "list --help",
		"allreduce --topo torus:4x4 --size 1M", "allreduce --topo torus:4x4 --size 1M --format csv",
		"allreduce --topo torus:4x4 --size 1M --format json", "reducescatter --topo ring:8 --size 1M",
		"alltoall --topo full:8 --size 1M", "best --topo ring:8 --size 1M", "hier --machine abci --procs 32 --size 1M",
		"fit tests/data/nccl_allreduce.json", "schedule --topo torus:3x3 --algo ring",
		"schedule --topo torus:3x3 --algo multitree --format dot", "schedule --topo torus:3x3 --algo ring --format msccl",
		"train --profile resnet50 --workers 8", "validate --list",
	};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		char cmd[1024];
		snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >/dev/full 2>/dev/null", getenv("PM_SRCDIR"), getenv("PERFMODEL"), cmds[i]);
		int st = system(cmd);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "perfmodel %s > /dev/full exits 0", cmds[i]);
	}
}

/* Plots in each format; png and pdf go through PLplot's cairo drivers,
 * whose libraries keep process-lifetime allocations that tests/lsan.supp
 * names (the sanitizer build runs this too).  Without the cairo package
 * the refusal names it. */
Test(cli, plots_in_every_format)
{
	static const char *const ext[] = {"svg", "png", "pdf"};
	for (int i = 0; i < 3; i++) {
		char cmd[256], path[64];
		snprintf(path, sizeof path, "/tmp/pm_plot_%d.%s", (int)getpid(), ext[i]);
		snprintf(cmd, sizeof cmd, "allreduce --topo torus:4x4 --size 32K:1M:x2 --algo ring,multitree --plot %s", path);
		struct run r = run_perfmodel(cmd);
		if (r.status == 2 && strstr(r.err, "plplot-driver-cairo")) {
			run_free(&r);
			continue;
		}
		cr_assert_eq(r.status, 0, "%s: %s", ext[i], r.err);
		char *img = slurp(path);
		cr_assert(img && strlen(img) > 0, "%s: no plot written", ext[i]);
		free(img);
		remove(path);
		run_free(&r);
	}
}

/* A plot read back: every series has its own marker glyph, drawn at each
 * of its points and once in the legend (the same glyph), its own line
 * colour (the first is black, the others distinct), its name in the
 * legend, and the network's bound is named in it.  PLplot's SVG writes
 * text as character references, markers as Unicode glyphs (and dashes as
 * short strokes, so the dash itself is not checked here). */
Test(cli, a_plot_has_distinct_series_styles)
{
	char path[64], cmd[256];
	snprintf(path, sizeof path, "/tmp/pm_styles_%d.svg", (int)getpid());
	snprintf(cmd, sizeof cmd, "allreduce --topo torus:4x4 --size 1K:1G:x4 --algo ring,bidir-ring,rabenseifner,multitree --plot %s", path);
	struct run r = run_perfmodel(cmd);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *text = svg_text(path);
	static const char *const glyph[] = {"&#x25cb;", "&#x25a0;", "&#x25b3;", "&#x25bc;"};	/* o, filled square, triangle, filled down */
	for (int s = 0; s < 4; s++) {
		int n = 0;
		for (const char *p = text; (p = strstr(p, glyph[s])); p++)
			n++;
		cr_assert_eq(n, 11 + 1, "series %d: marker %s drawn %d times (11 sizes + the legend)", s, glyph[s], n);
	}
	static const char *const names[] = {"ring", "bidir-ring", "rabenseifner", "multitree", "bound: the network's links"};
	for (int s = 0; s < 5; s++)
		cr_assert(strstr(text, names[s]), "legend lacks '%s'", names[s]);
	static const char *const colour[] = {"#E69F00", "#56B4E9", "#009E73"};
	for (int s = 0; s < 3; s++)
		cr_assert(strstr(text, colour[s]), "no line in %s", colour[s]);
	free(text);
	remove(path);
}

/* The text of docs/cli.md a command's options may be documented in: the
 * preamble, the shared sections (network and cost options, formats) and
 * every section whose heading names the command (the five collectives
 * beside all-reduce also read all-reduce's). */
static char *cli_doc_for(const char *doc, const char *cmd)
{
	char *out = calloc(1, strlen(doc) + 1), key[64];
	const char *p = doc;
	int keep = 1, coll = strstr("reducescatter allgather reduce broadcast alltoall", cmd) != NULL;

	snprintf(key, sizeof key, "perfmodel %s", cmd);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
		if (!strncmp(p, "## ", 3)) {
			char head[256];
			snprintf(head, sizeof head, "%.*s", (int)(len < 255 ? len : 255), p);
			keep = strstr(head, key) || strstr(head, "Network and cost options") ||
			       strstr(head, "Formats in and out") || (coll && strstr(head, "perfmodel allreduce"));
		}
		if (keep)
			strncat(out, p, len);
		p += len;
	}
	return out;
}

/* docs/cli.md documents every option each command's --help prints, where
 * a reader of that command looks (cli_doc_for): `--name` followed by a
 * character that cannot continue an option name. */
Test(cli, docs_document_every_option)
{
	static const char *const cmds[] = {"allreduce", "reducescatter", "allgather", "reduce", "broadcast", "alltoall",
					   "best", "schedule", "hier", "fit", "train", "sweep", "plan", "models", "topo",
					   "list", "validate"};
	char path[512], args[64];
	snprintf(path, sizeof path, "%s/docs/cli.md", getenv("PM_SRCDIR"));
	char *doc = slurp(path);
	int checked = 0;
	cr_assert(doc);
	for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
		snprintf(args, sizeof args, "%s --help", cmds[c]);
		struct run r = run_perfmodel(args);
		char *text = cli_doc_for(doc, cmds[c]);
		cr_assert_eq(r.status, 0, "%s", args);
		for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
			char name[48], *at;
			if (sscanf(line, " --%46[a-z0-9-]", name) != 1 || strncmp(line, "  --", 4))
				continue;
			char want[52];
			snprintf(want, sizeof want, "--%s", name);
			int found = 0;
			for (at = strstr(text, want); at && !found; at = strstr(at + 1, want)) {
				char next = at[strlen(want)];
				found = !(isalnum((unsigned char)next) || next == '-');
			}
			cr_assert(found, "docs/cli.md does not document %s %s", cmds[c], want);
			checked++;
		}
		free(text);
		run_free(&r);
	}
	cr_log_info("%d command options documented", checked);
	cr_assert(checked > 200, "only %d options seen", checked);
	free(doc);
}

/* The docs list every command and the help lists every preset: the
 * command table of docs/cli.md names each command perfmodel --help
 * lists, and hier --help names each machine preset of data/machines. */
Test(cli, docs_list_every_command_and_preset)
{
	char path[512];
	snprintf(path, sizeof path, "%s/docs/cli.md", getenv("PM_SRCDIR"));
	char *doc = slurp(path);
	struct run r = run_perfmodel("--help");
	cr_assert(doc && r.status == 0);
	char *p = strstr(r.out, "Commands:\n");
	cr_assert(p);
	int n = 0;
	for (char *line = strtok(p + 10, "\n"); line && !strncmp(line, "  ", 2); line = strtok(NULL, "\n")) {
		char name[32], want[48];
		if (sscanf(line, " %31s", name) != 1)
			continue;
		snprintf(want, sizeof want, "| `%s` |", name);
		cr_assert(strstr(doc, want), "docs/cli.md's command table lacks %s", name);
		n++;
	}
	cr_assert(n >= 15, "%d commands listed", n);
	run_free(&r);
	free(doc);
	r = run_perfmodel("hier --help");
	static const char *const presets[] = {"abci", "dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200", "gb200-nvl72", "mi300x",
					      "aws-p4d", "aws-p5", "aws-p6-b200", "gcp-a3-mega", "azure-nd-h100-v5", "tpu-v4-like"};
	for (size_t i = 0; i < sizeof presets / sizeof *presets; i++)
		cr_assert(strstr(r.out, presets[i]), "hier --help lacks %s", presets[i]);
	run_free(&r);
}

/* One spelling per idea: hier takes the machine as --topo machine:M:NODES
 * (procs = NODES x 8 on dgx-h100) and train takes --procs as hier and fit
 * do; each gives what the older spelling gives. */
Test(cli, one_spelling_per_idea)
{
	struct run a = run_perfmodel("hier --topo machine:dgx-h100:16 --size 1G --top 1 --format csv");
	struct run b = run_perfmodel("hier --machine dgx-h100 --procs 128 --size 1G --top 1 --format csv");
	cr_assert_eq(a.status, 0, "%s", a.err);
	cr_assert_str_eq(a.out, b.out);
	run_free(&a);
	run_free(&b);
	a = run_perfmodel("train --profile resnet50 --procs 8 --a 1us --b 1ns --format csv");
	b = run_perfmodel("train --profile resnet50 --workers 8 --a 1us --b 1ns --format csv");
	cr_assert_eq(a.status, 0, "%s", a.err);
	cr_assert_str_eq(a.out, b.out);
	run_free(&a);
	run_free(&b);
}

/* Every example of the README runs (exit 0), from a scratch directory as
 * a user of the installed command would run it: data/... names the
 * shipped data, and the files the examples write land there. */
Test(cli, readme_examples_run)
{
	char path[512], dir[] = "/tmp/pm_readme_XXXXXX";
	snprintf(path, sizeof path, "%s/README.md", getenv("PM_SRCDIR"));
	char *text = slurp(path);
	int n = 0, code = 0;
	cr_assert(text && mkdtemp(dir));
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char args[1024], cmd[2048], *cut;
		if (!strncmp(line, "```", 3))
			code = !code;	/* only the code blocks' lines */
		if (!code || strncmp(line, "perfmodel ", 10))
			continue;
		snprintf(args, sizeof args, "%s", line + 10);
		if ((cut = strstr(args, " #")))
			*cut = '\0';
		if ((cut = strchr(args, '>')))
			*cut = '\0';
		snprintf(cmd, sizeof cmd, "cd %s && '%s' %s >/dev/null 2>/tmp/pm_readme_err", dir, getenv("PERFMODEL"), args);
		int st = system(cmd);
		char *e = slurp("/tmp/pm_readme_err");
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "README example 'perfmodel %s' exits %d: %s", args,
			  WIFEXITED(st) ? WEXITSTATUS(st) : -1, e ? e : "");
		free(e);
		n++;
	}
	cr_assert(n >= 25, "%d README examples", n);
	snprintf(path, sizeof path, "rm -rf %s /tmp/pm_readme_err", dir);
	cr_assert_eq(system(path), 0);
	free(text);
}

/* The DOT a schedule writes is drawn by Graphviz as the README does it
 * (`schedule ... --format dot | dot -Tsvg`): dot accepts it and each of
 * MULTITREE's P = 9 trees is drawn as its own cluster.  Skipped where Graphviz is not
 * installed (scripts/bootstrap installs it where apt can). */
Test(cli, dot_output_draws_with_graphviz)
{
	if (system("command -v dot >/dev/null 2>&1") != 0) {
		cr_skip_test("Graphviz (dot) is not installed");
		return;
	}
	struct run r = run_perfmodel("schedule --topo torus:3x3 --algo multitree --format dot | dot -Tsvg");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "<svg"), "not SVG: %.200s", r.out);
	for (int k = 0; k < 9; k++) {
		char title[32];
		snprintf(title, sizeof title, "<title>cluster_%d</title>", k);
		cr_assert(strstr(r.out, title), "tree %d is not drawn", k);
	}
	run_free(&r);
}

/* NCCL's latency counts every hop, so neither the simulators' links nor
 * the contention routes add theirs to NCCL's schedules: at 8 bytes, where
 * the wire time is nanoseconds, every evaluator's row of nccl:tree on two
 * DGX H100 nodes is the closed form's launch + latency, to 1% (identity;
 * the links' latency counted once per step added about 5 us). */
Test(cli, nccl_rows_count_no_link_latency)
{
	struct run r = run_perfmodel("allreduce --topo machine:dgx-h100:2 --algo nccl:tree --size 8 "
				     "--model closed,contention,sim,dataflow --format csv");
	double t[4] = {0};
	int n = 0;

	cr_assert_eq(r.status, 0, "%s", r.err);
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		double v;
		if (line[0] == '#' || strncmp(line, "8,", 2) != 0)
			continue;
		cr_assert_eq(sscanf(line, "8,%*[^,],%*[^,],%lf", &v), 1, "%s", line);
		cr_assert_lt(n, 4);
		t[n++] = v;
	}
	cr_assert_eq(n, 4, "%s", r.out);
	for (int i = 1; i < 4; i++)
		cr_assert(fabs(t[i] / t[0] - 1) < 0.01, "row %d: %g us against closed %g us", i, t[i], t[0]);
	run_free(&r);
}

/* Where the evaluators part they say why: on two AWS p4d nodes an 8 MiB
 * all-reduce runs Tree/Simple with about one 512 KiB chunk a channel, so
 * NCCL's model charges a fill of the whole chain (706 us, docs/model.md,
 * NCCL, fill) that the schedule, pipelining its own chunks, does not; the
 * closed row is more than twice the contention row, and the header names
 * the terms only the closed row has. */
Test(cli, nccl_evaluators_say_why_they_part)
{
	struct run r = run_perfmodel("allreduce --topo machine:aws-p4d:2 --algo nccl --size 8M");
	double closed = 0, cont = 0;

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "the closed row) charges NCCL's chunks their pipeline fill"), "%s", r.out);
	run_free(&r);
	r = run_perfmodel("allreduce --topo machine:aws-p4d:2 --algo nccl --size 8M --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "8388608,nccl:tree/simple(12ch),closed,", 38) == 0)
			closed = atof(line + 38);
		if (strncmp(line, "8388608,nccl:tree/simple(12ch),contention,", 42) == 0)
			cont = atof(line + 42);
	}
	cr_assert(cont > 0 && closed > 2 * cont, "closed %g us, contention %g us", closed, cont);
	run_free(&r);
}

/* nvls's transfers end and start in the switch: the router network
 * (which injects and ejects at endpoints' routers) refuses it with the
 * reason, and the links network, which only follows a transfer's links,
 * simulates it, to the closed form within 1% (an identity: the 3 steps of
 * nvls:2 are each one busiest-link load, which a barrier simulation
 * plays in turn). */
Test(cli, nvls_rows)
{
	struct run r = run_perfmodel("allreduce --topo machine:dgx-h100:1 --algo nvls:2 --size 16M --model closed,sim --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "no sim row: not applicable: the router network runs every transfer from its sender's router to its receiver's"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "--sim-net links simulates it"), "%s", r.out);
	run_free(&r);
	r = run_perfmodel("allreduce --topo machine:dgx-h100:1 --algo nvls:2 --size 16M --model closed,sim --sim-net links --format csv");
	cr_assert_eq(r.status, 0, "%s", r.err);
	double closed = 0, sim = 0;
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "16777216,nvls:2,closed,", 23) == 0)
			closed = atof(line + 23);
		if (strncmp(line, "16777216,nvls:2,sim,", 20) == 0)
			sim = atof(line + 20);
	}
	cr_assert(closed > 0 && fabs(sim / closed - 1) < 0.01, "sim %g us against closed %g us", sim, closed);
	run_free(&r);
}

/* MSCCL's programs send from GPU to GPU: exporting a schedule whose
 * switch reduces and multicasts (nvls:1 on one DGX H100 node: 7 x 8
 * contributions and 7 x 8 multicast copies, 112 transfers) says that
 * those run as copies over the links; a ring's export says nothing. */
Test(cli, msccl_export_says_the_switch_is_lost)
{
	struct run r = run_perfmodel("schedule --topo machine:dgx-h100:1 --algo nvls:1 --format msccl");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "its 112 transfers that a switch reduces or multicasts are written as GPU-to-GPU sends"),
		  "%s", r.err);
	cr_assert(strstr(r.out, "<algo name=\"nvls:1\""), "%s", r.out);
	run_free(&r);
	r = run_perfmodel("schedule --topo machine:dgx-h100:1 --algo ring --format msccl");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(r.err[0], '\0', "%s", r.err);
	run_free(&r);
}
