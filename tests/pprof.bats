#!/usr/bin/env bats
# lp-collapse --format pprof, read by the real consumer: go tool pprof
# (Debian's golang-go).  Truth: a stream of known frames (an inlined one, a
# kernel one, an unresolved one, file:line), the corpus's perf script
# inputs (the same totals as the folded output), and, as root, a recording
# of cpusplit (b() 75% of its CPU by construction).

load helpers/common
load helpers/bpf
load_bats_libs

setup() {
	require_cmd go
	T=$BATS_TEST_TMPDIR
}

# raw FILE: go tool pprof's -raw dump of a profile.
raw() {
	go tool pprof -raw "$1" 2>/dev/null
}

# totals FILE: "SAMPLES WEIGHT" summed over a profile's samples.
totals() {
	raw "$1" | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && $2 ~ /:$/ { n += $1; w += $2 } END { printf "%d %d\n", n, w }'
}

@test "pprof: known frames, inlining, labels and units, as go tool pprof reads them" {
	run -0 lp-collapse --format pprof -o "$T/p.pb.gz" "$FIXTURES/pprof/inline.lp"
	# gzip, as pprof files are
	run -0 gzip -t "$T/p.pb.gz"
	run -0 raw "$T/p.pb.gz"
	assert_line 'PeriodType: cpu-clock nanoseconds'
	assert_line 'Period: 1000000'
	assert_line 'samples/count cpu-clock/nanoseconds'
	# the two stacks: 2 samples (tids 7 and 8 of pid 7), and 1
	assert_output --regexp $'\n +2 +2000000: [0-9]+ [0-9]+ [0-9]+ \n +comm:\\[app\\]\n +pid:\\[7\\]\n'
	assert_output --regexp $'\n +1 +1000000: [0-9]+ [0-9]+ [0-9]+ \n'
	# parse() inlined into handle(): one location, two lines, inner first
	assert_output --regexp $': 0x0 M=[0-9]+ parse parse.h:5 s=0\n +handle app.c:20 s=0\n'
	assert_line --regexp ': 0x0 M=[0-9]+ memcpy :0 s=0$'
	assert_line --regexp ': 0x0 M=[0-9]+ do_syscall_64 :0 s=0$'
	assert_line --regexp ': 0x1234 M=[0-9]+ \[app\] :0 s=0$'
	assert_line --regexp '^[0-9]+: 0x0/0x0/0x0 /lib/libc.so.6 +\[FN\]$'
	# a raw frame's build-id names its module's build
	assert_line --regexp '^[0-9]+: 0x0/0x0/0x0 /bin/app abcdef01 +\[FN\]$'
	assert_line --regexp '^[0-9]+: 0x0/0x0/0x0 \[kernel.kallsyms\] +\[FN\]$'
	run -0 go tool pprof -traces "$T/p.pb.gz"
	assert_output --regexp $'2ms +memcpy\n +parse \\(inline\\)\n +handle\n +main\n'
}

@test "pprof: the corpus's perf script inputs keep every sample and weight of the folded output" {
	local f n=0
	for f in "$CORPUS"/flamegraph/test/perf-*.txt; do
		lp-collapse --format pprof -o "$T/c.pb.gz" "$f"
		folded=$(set -o pipefail; lp-collapse "$f" | awk '{ w += $NF } END { printf "%d\n", w }')
		read -r samples weight <<<"$(totals "$T/c.pb.gz")"
		[ "$weight" = "$folded" ] || { echo "$f: pprof $weight, folded $folded"; false; }
		[ "$samples" -gt 0 ]
		n=$((n + 1))
	done
	[ "$n" -ge 9 ]
}

@test "pprof: empty input is an empty profile go tool pprof reads" {
	run -0 lp-collapse --format pprof -o "$T/e.pb.gz" /dev/null
	[ "$(totals "$T/e.pb.gz")" = "0 0" ]
}

@test "pprof: a recording of cpusplit: b() holds 75% of the samples (within 3 points)" {
	require_root
	run -0 --separate-stderr lp-record -F 999 -o "$T/r.lp" -- "$WORKLOADS/cpusplit" 30 2
	run -0 lp-collapse --format pprof -o "$T/r.pb.gz" "$T/r.lp"
	# samples whose trace holds a location of function b, over all samples
	run -0 bash -c "go tool pprof -raw '$T/r.pb.gz' 2>/dev/null | awk '
		/^Samples:/ { s = 1; next } /^Locations/ { s = 0; l = 1; next } /^Mappings/ { l = 0 }
		s && \$2 ~ /:\$/ { n++; c[n] = \$1; tr[n] = \$0; all += \$1 }
		l && \$1 ~ /^[0-9]+:\$/ { id = \$1 + 0; if (\$4 == \"b\") isb[id] = 1 }
		l && \$1 !~ /:\$/ && \$1 == \"b\" { isb[id] = 1 }
		END { for (i = 1; i <= n; i++) { k = split(tr[i], f, \" \")
			for (j = 3; j <= k; j++) if (isb[f[j] + 0]) { inb += c[i]; break } }
			printf \"%d %d\\n\", inb, all }'"
	read -r inb all <<<"$output"
	[ "$all" -ge 1000 ]
	awk -v b="$inb" -v a="$all" 'BEGIN { p = 100 * b / a; print p; exit !(p >= 72 && p <= 78) }'
}
