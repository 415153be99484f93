#!/usr/bin/env bats
# lp-collapse against stackcollapse-perf.pl: every `collapse` case of the
# shared corpus (shared/corpus/cases.tsv), byte for byte, and the cases of
# tests/fixtures/collapse/cases.tsv written for lp.  One test per input file
# runs all of that input's option sets and names every failing case.

load helpers/common

# run_cases DIR INPUT: the cases of DIR/cases.tsv whose input is INPUT.
run_cases() {
	local dir=$1 input=$2 n=0 bad=0 rc case kind inp opts expected prov in
	while IFS=$'\t' read -r case kind inp opts expected prov; do
		[ "$kind" = collapse ] && [ "$inp" = "$input" ] || continue
		n=$((n + 1))
		in=$dir/$inp
		case $in in
		*.gz) gunzip -c "$in" >"$BATS_TEST_TMPDIR/input.txt"; in=$BATS_TEST_TMPDIR/input.txt ;;
		esac
		if [ "$opts" = "(none)" ]; then opts=; fi
		# shellcheck disable=SC2086 # options are words
		rc=0
		lp-collapse $opts "$in" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" || rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "FAIL $case: lp-collapse $opts exited $rc: $(head -3 "$BATS_TEST_TMPDIR/err")"
			bad=$((bad + 1))
			continue
		fi
		if ! cmp -s "$BATS_TEST_TMPDIR/out" "$dir/$expected"; then
			echo "FAIL $case: lp-collapse $opts $inp differs from $expected:"
			diff "$dir/$expected" "$BATS_TEST_TMPDIR/out" | head -10
			bad=$((bad + 1))
		fi
	done <"$dir/cases.tsv"
	echo "$input: $n cases, $bad failed"
	[ "$n" -gt 0 ]
	[ "$bad" -eq 0 ]
}

corpus() {
	require_corpus
	run_cases "$CORPUS" "$1"
}
own() { run_cases "$FIXTURES/collapse" "$1"; }

@test "corpus: every collapse case has a test here" {
	require_corpus
	# The inputs named by the tests below, against those in cases.tsv.
	grep -o '^	corpus "[^"]*"' "$BATS_TEST_FILENAME" | sed 's/.*"\(.*\)"/\1/' | sort -u >"$BATS_TEST_TMPDIR/tested"
	awk -F'\t' '$2 == "collapse" { print $3 }' "$CORPUS/cases.tsv" | sort -u >"$BATS_TEST_TMPDIR/listed"
	run diff "$BATS_TEST_TMPDIR/listed" "$BATS_TEST_TMPDIR/tested"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(awk -F'\t' '$2 == "collapse"' "$CORPUS/cases.tsv" | wc -l)" -eq 188 ]
}

@test "corpus flamegraph: perf-cycles-instructions-01 (10 cases)" {
	corpus "flamegraph/test/perf-cycles-instructions-01.txt"
}
@test "corpus flamegraph: perf-funcab-cmd-01 (8 cases)" {
	corpus "flamegraph/test/perf-funcab-cmd-01.txt"
}
@test "corpus flamegraph: perf-funcab-pid-01 (8 cases)" {
	corpus "flamegraph/test/perf-funcab-pid-01.txt"
}
@test "corpus flamegraph: perf-iperf-stacks-pidtid-01 (8 cases)" {
	corpus "flamegraph/test/perf-iperf-stacks-pidtid-01.txt"
}
@test "corpus flamegraph: perf-java-stacks-01 (8 cases)" {
	corpus "flamegraph/test/perf-java-stacks-01.txt"
}
@test "corpus flamegraph: perf-java-stacks-02 (8 cases)" {
	corpus "flamegraph/test/perf-java-stacks-02.txt"
}
@test "corpus flamegraph: perf-mirageos-stacks-01 (8 cases)" {
	corpus "flamegraph/test/perf-mirageos-stacks-01.txt"
}
@test "corpus flamegraph: perf-rust-Yamakaky-dcpu (8 cases)" {
	corpus "flamegraph/test/perf-rust-Yamakaky-dcpu.txt"
}
@test "corpus flamegraph: perf-vertx-stacks-01 (8 cases)" {
	corpus "flamegraph/test/perf-vertx-stacks-01.txt"
}
@test "corpus flamegraph: example-perf-stacks.txt.gz (1 case)" {
	corpus "flamegraph/example-perf-stacks.txt.gz"
}
@test "corpus inferno: invalid-perf-with-empty-line-after-event-line (8 cases)" {
	corpus "inferno/collapse-guess/invalid-perf-with-empty-line-after-event-line.txt"
}
@test "corpus inferno: go-stacks-terminated (8 cases)" {
	corpus "inferno/collapse-perf/derived/go-stacks-terminated.txt"
}
@test "corpus inferno: single-event-terminated (8 cases)" {
	corpus "inferno/collapse-perf/derived/single-event-terminated.txt"
}
@test "corpus inferno: empty-line (8 cases)" {
	corpus "inferno/collapse-perf/empty-line.txt"
}
@test "corpus inferno: go-stacks (8 cases)" {
	corpus "inferno/collapse-perf/go-stacks.txt"
}
@test "corpus inferno: no-events (1 case)" {
	corpus "inferno/collapse-perf/no-events.txt"
}
@test "corpus inferno: single-event (1 case)" {
	corpus "inferno/collapse-perf/single-event.txt"
}
@test "corpus inferno: single-line-stacks (1 case)" {
	corpus "inferno/collapse-perf/single-line-stacks.txt"
}
@test "corpus inferno: sourcepawn-jitdump (8 cases)" {
	corpus "inferno/collapse-perf/sourcepawn-jitdump.txt"
}
@test "corpus inferno: versioned-vmlinux (1 case)" {
	corpus "inferno/collapse-perf/versioned-vmlinux.txt"
}
@test "corpus inferno: weird-stack-line (8 cases)" {
	corpus "inferno/collapse-perf/weird-stack-line.txt"
}
@test "corpus speedscope: forks.linux-perf (8 cases)" {
	corpus "speedscope/sample/profiles/linux-perf/forks.linux-perf.txt"
}
@test "corpus speedscope: one-sample.linux-perf (1 case)" {
	corpus "speedscope/sample/profiles/linux-perf/one-sample.linux-perf.txt"
}
@test "corpus speedscope: rust-mangled.linux-perf (8 cases)" {
	corpus "speedscope/sample/profiles/linux-perf/rust-mangled.linux-perf.txt"
}
@test "corpus speedscope: simple-with-header.linux-perf (8 cases)" {
	corpus "speedscope/sample/profiles/linux-perf/simple-with-header.linux-perf.txt"
}
@test "corpus speedscope: simple-with-pid.linux-perf (8 cases)" {
	corpus "speedscope/sample/profiles/linux-perf/simple-with-pid.linux-perf.txt"
}
@test "corpus speedscope: system-wide.linux-perf (8 cases)" {
	corpus "speedscope/sample/profiles/linux-perf/system-wide.linux-perf.txt"
}
@test "corpus synthetic: synthetic-misc-01 (8 cases)" {
	corpus "synthetic/perf/synthetic-misc-01.txt"
}
@test "corpus synthetic: synthetic-srcline-01 (4 cases)" {
	corpus "synthetic/perf/synthetic-srcline-01.txt"
}

@test "lp fixtures: every case has a test here" {
	grep -o '^	own "[^"]*"' "$BATS_TEST_FILENAME" | sed 's/.*"\(.*\)"/\1/' | sort -u >"$BATS_TEST_TMPDIR/tested"
	awk -F'\t' '$2 == "collapse" { print $3 }' "$FIXTURES/collapse/cases.tsv" | sort -u >"$BATS_TEST_TMPDIR/listed"
	run diff "$BATS_TEST_TMPDIR/listed" "$BATS_TEST_TMPDIR/tested"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}
@test "lp fixtures: a filtered event inside an open sample, event lines back to back" {
	own "event-merge.txt"
}
@test "lp fixtures: command names, PID/TID forms, Java by prefix, comments in a sample" {
	own "comms.txt"
}
@test "lp fixtures: frame names, modules, kernel and JIT annotations, unknown frames" {
	own "frames.txt"
}
@test "lp fixtures: -F+srcline with inline chains, unknown and dropped frames" {
	own "srcline.txt"
}

# The same samples through an lp stream (lp-cat writes one from perf script
# text) give the same folded stacks, for every option set but --srcline
# (lp-cat reads perf script without it).
stream_cases() {
	local dir=$1 input=$2 n=0 bad=0 rc case kind inp opts expected prov in
	in=$dir/$input
	case $in in
	*.gz) gunzip -c "$in" >"$BATS_TEST_TMPDIR/input.txt"; in=$BATS_TEST_TMPDIR/input.txt ;;
	esac
	lp-cat --input-format perf "$in" >"$BATS_TEST_TMPDIR/s.lp" 2>/dev/null
	head -1 "$BATS_TEST_TMPDIR/s.lp" | grep -q '^lp-stream'
	while IFS=$'\t' read -r case kind inp opts expected prov; do
		[ "$kind" = collapse ] && [ "$inp" = "$input" ] || continue
		case $opts in *srcline*) continue ;; esac
		if [ "$opts" = "(none)" ]; then opts=; fi
		n=$((n + 1))
		# shellcheck disable=SC2086
		rc=0
		lp-collapse $opts "$BATS_TEST_TMPDIR/s.lp" >"$BATS_TEST_TMPDIR/out" 2>&1 || rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "FAIL $case via lp stream: lp-collapse $opts exited $rc: $(head -3 "$BATS_TEST_TMPDIR/out")"
			bad=$((bad + 1))
			continue
		fi
		if ! cmp -s "$BATS_TEST_TMPDIR/out" "$dir/$expected"; then
			echo "FAIL $case via lp stream: lp-collapse $opts differs from $expected:"
			diff "$dir/$expected" "$BATS_TEST_TMPDIR/out" | head -10
			bad=$((bad + 1))
		fi
	done <"$dir/cases.tsv"
	echo "$input: $n cases through a stream, $bad failed"
	[ "$n" -gt 0 ]
	[ "$bad" -eq 0 ]
}

@test "lp stream input: same folded output as perf script (synthetic-misc-01, 8 cases)" {
	require_corpus
	stream_cases "$CORPUS" "synthetic/perf/synthetic-misc-01.txt"
}
@test "lp stream input: same folded output as perf script (perf-java-stacks-01, 8 cases)" {
	require_corpus
	stream_cases "$CORPUS" "flamegraph/test/perf-java-stacks-01.txt"
}
@test "lp stream input: same folded output as perf script (perf-cycles-instructions-01, 10 cases)" {
	require_corpus
	stream_cases "$CORPUS" "flamegraph/test/perf-cycles-instructions-01.txt"
}
@test "lp stream input: same folded output as perf script (perf-iperf-stacks-pidtid-01, 8 cases)" {
	require_corpus
	stream_cases "$CORPUS" "flamegraph/test/perf-iperf-stacks-pidtid-01.txt"
}
@test "lp stream input: same folded output as perf script (frames fixture, 6 cases)" {
	stream_cases "$FIXTURES/collapse" "frames.txt"
}
@test "lp stream input: same folded output as perf script (comms fixture, 4 cases)" {
	stream_cases "$FIXTURES/collapse" "comms.txt"
}

# A stream much larger than the reader's buffer: records' comm and event
# fields point into that buffer, and must not be kept past their record.
@test "lp stream input: a 2 MB stream gives the same folded output as its perf script text" {
	awk 'BEGIN {
		split("app worker-1 io_thread java gc", comm, " ")
		split("main run loop handle parse write", fn, " ")
		for (i = 0; i < 30000; i++) {
			c = comm[i % 5 + 1]
			printf "%s %d/%d [%03d] %d.%06d: %d cpu-clock: \n", c, 100 + i % 5, 1000 + i % 7, i % 4, 10 + int(i / 1000), i % 1000000, 1000 + i % 3
			printf "\t    %x %s+0x%x (/opt/app/bin)\n", 4096 + i % 6, fn[i % 6 + 1], i % 6
			printf "\t    %x %s+0x1 (/opt/app/bin)\n\n", 8192 + i % 2, fn[i % 2 + 1]
		}
	}' >"$BATS_TEST_TMPDIR/big.txt"
	lp-cat --input-format perf "$BATS_TEST_TMPDIR/big.txt" >"$BATS_TEST_TMPDIR/big.lp"
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/big.lp")" -gt 2000000 ]
	for opts in "" "--pid" "--tid"; do
		lp-collapse $opts "$BATS_TEST_TMPDIR/big.txt" >"$BATS_TEST_TMPDIR/a"
		lp-collapse $opts "$BATS_TEST_TMPDIR/big.lp" >"$BATS_TEST_TMPDIR/b"
		cmp "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" || { echo "differs with '$opts'"; false; }
	done
	# 5 comms x 6 leaves x 2 roots with --tid's 35 pid/tid pairs: all there
	[ "$(wc -l <"$BATS_TEST_TMPDIR/a")" -eq 210 ]
	[ "$(awk '{ s += $NF } END { print s }' "$BATS_TEST_TMPDIR/a")" -eq 30030000 ]
}
