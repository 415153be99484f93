#!/usr/bin/env bats
# Empty inputs through every filter and every output format: an empty file,
# and a stream that is only its header.  Each must succeed quietly with the
# output of "no samples"; make sanitize runs this file under ASan and UBSan,
# where an empty profile's NULL array given to qsort or memcpy aborts.

load helpers/common

setup() {
	T=$BATS_TEST_TMPDIR
	: > "$T/empty"
	printf 'lp-stream\t1\n' > "$T/header"
}

# quiet CMD...: exit 0, nothing on stderr; $T/out holds stdout.
quiet() {
	run --separate-stderr -0 "$@"
	[ -z "$stderr" ] || { echo "stderr: $stderr" >&2; return 1; }
	printf '%s' "$output" > "$T/out"
}

@test "lp-collapse: every format of an empty input" {
	for in in "$T/empty" "$T/header"; do
		quiet lp-collapse "$in"
		[ ! -s "$T/out" ]
		quiet lp-collapse --format latency "$in"
		[ "$output" = $'probe\tcount\tmin_ns\tp50_ns\tp90_ns\tp99_ns\tmax_ns' ]
		quiet lp-collapse --format heatmap-tsv "$in"
		[ "$output" = $'second\toffset_ms\tsamples\ttime' ]
		quiet lp-collapse --format speedscope "$in"
		python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert d["shared"]["frames"] == [] and d["profiles"][0]["samples"] == [], d' "$T/out"
		quiet lp-collapse --format trace-event "$in"
		python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert d["traceEvents"] == [], d' "$T/out"
		quiet lp-collapse --format svg "$in"
		[[ $output == *"<svg"*"</svg>" ]] || false
		quiet lp-collapse --format heatmap "$in"
		[[ $output == *"<svg"*"</svg>" ]] || false
		lp-collapse --format pprof --output "$T/p.pb.gz" "$in"
		gunzip -t "$T/p.pb.gz"
		for w in "--last 10s" "--half-life 1s"; do
			quiet lp-collapse $w "$in"
			[ ! -s "$T/out" ]
		done
	done
}

@test "lp-diff: every format of two empty inputs" {
	for in in "$T/empty" "$T/header"; do
		quiet lp-diff "$in" "$in"
		[ ! -s "$T/out" ]
		quiet lp-diff --format report "$in" "$in"
		[ ! -s "$T/out" ]
		quiet lp-diff --format svg "$in" "$in"
		[[ $output == *"<svg"*"</svg>" ]] || false
	done
}

@test "lp-cat, lp-symbolize, lp-join: an empty input gives an empty stream" {
	for p in lp-cat lp-symbolize; do
		quiet "$p" "$T/empty"
		[ ! -s "$T/out" ]
		quiet "$p" "$T/header"
		[ "$output" = $'lp-stream\t1' ]
	done
	quiet lp-join "$T/empty" "$T/empty"
	[ ! -s "$T/out" ]
	quiet lp-join "$T/header" "$T/header"
	[ "$output" = $'lp-stream\t1' ]
}

@test "lp-top --once: the report of no samples" {
	for in in "$T/empty" "$T/header"; do
		for m in "--window 10s" "--half-life 1s" "--all"; do
			quiet lp-top --once $m "$in"
			[[ ${lines[0]} == "lp-top  "*"(end of input)  samples 0  stacks 0  weight 0" ]] || false
			[ "${lines[1]}" = "  SELF%  TOTAL%  FUNCTION" ]
			[ "${lines[2]}" = " SHARE%  STACK (root;...;leaf)" ]
			[ "${#lines[@]}" -eq 3 ]
		done
	done
}

@test "lp-split: the report of no spans says '-' for every cut, exact or live" {
	for in in "$T/empty" "$T/header"; do
		for live in "" --live; do
			run --separate-stderr -0 lp-split $live --percentile 50 --label --output "$T/l" "$in"
			[[ ${stderr_lines[0]} == "# probe (any): 0 spans, p50 = - ("* ]] || false
			[ "${stderr_lines[2]}" = $'below\t0\t0\t-\t-\t-\t-\t0\t0\t-' ]
			[ "${stderr_lines[3]}" = $'above\t0\t0\t-\t-\t-\t-\t0\t0\t-' ]
			[ "${#stderr_lines[@]}" -eq 4 ]
		done
		run --separate-stderr -0 lp-split --threshold 1ms --above "$T/a" --below "$T/b" "$in"
		[ "${stderr_lines[0]}" = "# probe (any): 0 spans, threshold 1000000 ns" ]
		[ "$(cat "$T/a")" = "$(cat "$T/b")" ]
	done
}
