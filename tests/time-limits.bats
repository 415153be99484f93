#!/usr/bin/env bats
# Times at the limits of the stream (formats/lp-stream.md: 0 to
# 9223372036854775807 ns): every program reads them, and every duration,
# percentile, window and cell boundary comes out exact, without signed
# overflow; negative or larger times are refused with FILE:LINE.

load helpers/common
load helpers/producers

M=9223372036854775807

setup() {
	load_bats_libs
	T=$BATS_TEST_TMPDIR
	# Spans, in the order they end: [0, 1) nested in [0, M), which
	# encloses everything before M; [M-1, M).
	printf 'lp-stream\t1\tproducer=lp-trace\nspan\t0\t1\t1\t1\tf\t1\nspan\t0\t%s\t1\t1\tf\t0\nspan\t%s\t%s\t1\t1\tf\t0\n' \
		$M $((M - 1)) $M >"$T/spans.lp"
	printf 'lp-stream\t1\tproducer=lp-record\tmode=cpu\nframe\tf1\tu\t-\t/bin/a\tmain\t-\nstack\ts1\tf1\n' >"$T/samples.lp"
	for t in 0 1 4611686018427387904 $((M - 1)) $M; do
		printf 'sample\t%s\t1\t1\t0\ta\tcpu-clock\t1\ts1\n' "$t"
	done >>"$T/samples.lp"
	# Samples in the last two seconds of time.
	printf 'lp-stream\t1\nframe\tf1\tu\t-\t/bin/a\tmain\t-\nstack\ts1\tf1\n' >"$T/late.lp"
	for t in $((M - 2000000000)) $((M - 1)) $M; do
		printf 'sample\t%s\t1\t1\t0\ta\tcpu-clock\t1\ts1\n' "$t"
	done >>"$T/late.lp"
}

@test "time limits: lp-join joins up to INT64_MAX, a span ending there is no end-of-input mark, the sample at INT64_MAX is written" {
	run -0 lp-join "$T/samples.lp" "$T/spans.lp"
	got=$(awk -F'\t' '$1 == "sample" { print $2, $11, $12 }' <<<"$output")
	want=$(printf '%s\n' "0 span_start=0 span_end=1" "1 span_start=0 span_end=$M" \
		"4611686018427387904 span_start=0 span_end=$M" "$((M - 1)) span_start=$((M - 1)) span_end=$M" "$M  ")
	[ "$got" = "$want" ] || fail "got: $got"
}

@test "time limits: lp-split's durations and percentiles up to INT64_MAX are exact" {
	lp-join "$T/samples.lp" "$T/spans.lp" >"$T/joined.lp"
	run --separate-stderr -0 lp-split --threshold 1ms "$T/joined.lp"
	# below: [0, 1) and [M-1, M) with the samples at 0 and M-1; above:
	# [0, M) with those at 1 and 2^62; outside: the one at M.
	grep -qxF "$(printf 'below\t2\t2\t1\t1\t1\t1\t2\t2\t100.0%%')" <<<"$stderr" || fail "$stderr"
	grep -qxF "$(printf 'above\t1\t2\t%s\t%s\t%s\t%s\t9.22337203685478e+18\t2\t0.0%%' $M $M $M $M)" <<<"$stderr" ||
		fail "$stderr"
	grep -qxF "$(printf 'outside\t-\t1\t-\t-\t-\t-\t-\t1\t-')" <<<"$stderr" || fail "$stderr"
	run --separate-stderr -0 lp-split --percentile 50 "$T/joined.lp"
	[[ "$stderr" == *"p50 = 1 ns"* ]] || fail "$stderr"
	grep -qxF "$(printf 'above\t1\t2\t%s\t%s\t%s\t%s\t9.22337203685478e+18\t2\t0.0%%' $M $M $M $M)" <<<"$stderr" ||
		fail "$stderr"
}

@test "time limits: lp-collapse latency, trace-event, heatmap and --every at INT64_MAX" {
	run -0 lp-collapse --format latency "$T/spans.lp"
	[ "$(sed -n 2p <<<"$output")" = "$(printf 'f\t3\t1\t1\t%s\t%s\t%s' $M $M $M)" ] || fail "$output"
	run -0 lp-collapse --format trace-event "$T/spans.lp"
	grep -qF '"ts":0.000,"pid":1,"tid":1,"dur":9223372036854775.807,' <<<"$output" || fail "$output"
	# The cell of the sample at INT64_MAX ends there, not past it (wrapped).
	run -0 lp-collapse --format heatmap "$T/late.lp"
	[ "$(grep -o '@[0-9]*-@[0-9]*' <<<"$output")" = "$(printf '%s\n' \
		"@$((M - 2000000000))-@$((M - 1980000000))" "@$((M - 20000000))-@$M" "@$M-@$M")" ] ||
		fail "$(grep -o '@[0-9]*-@[0-9]*' <<<"$output")"
	run -0 lp-collapse --every 1s --output "$T/every.txt" "$T/samples.lp"
	[ "$(cat "$T/every.txt")" = "a;main 5" ]
}

@test "time limits: lp-top windows end at INT64_MAX" {
	run -0 lp-top --once --window 1s "$T/late.lp"
	[[ "$(head -1 <<<"$output")" == *"samples 2  stacks 1  weight 2" ]] || fail "$output"
	run -0 lp-top --once --all "$T/late.lp"
	[[ "$(head -1 <<<"$output")" == *"samples 3  stacks 1  weight 3" ]] || fail "$output"
}

@test "time limits: a negative or too large time is refused with FILE:LINE by every filter" {
	printf 'lp-stream\t1\nspan\t-9223372036854775807\t%s\t1\t1\tf\t0\n' $M >"$T/neg.lp"
	msg="$T/neg.lp:2: span: bad start '-9223372036854775807': times are 0 to $M ns"
	for p in lp-split lp-collapse lp-top lp-cat; do
		run --separate-stderr -1 $p "$T/neg.lp"
		[ "$stderr" = "$p: $msg" ] || fail "$p: $stderr"
	done
	run --separate-stderr -1 lp-join "$T/samples.lp" "$T/neg.lp"
	[ "$stderr" = "lp-join: $msg" ] || fail "lp-join: $stderr"
}

@test "time limits: -d ends both producers on time, the command they started with it; the summary says why" {
	require_root
	local p start end ms
	for p in $PRODUCERS; do
		rm -f "$T/start" "$T/end"
		# The command notes when it starts and when it is asked to stop.
		run -0 --separate-stderr $(producer_args "$p") -v -d 1 -o "$T/$p.lp" -- sh -c \
			'date +%s%N >"$1/start"; trap "date +%s%N >\"$1/end\"; exit 0" TERM; while :; do sleep 0.05; done' sh "$T"
		grep -qE "^$p: .*[0-9]+ (samples|records).* \\(duration reached\\)\$" <<<"$stderr" ||
			fail "$p: no summary ending '(duration reached)': $stderr"
		[[ $stderr != *"killed by"* ]] || fail "$p: $stderr"
		start=$(cat "$T/start")
		end=$(cat "$T/end")
		ms=$(( (end - start) / 1000000 ))
		echo "$p: the command ran $ms ms"
		[ "$ms" -ge 950 ] || fail "$p: stopped the command after $ms ms, before -d 1"
		[ "$ms" -lt 2000 ] || fail "$p: stopped the command after $ms ms of -d 1"
		run -0 lp-cat --check "$T/$p.lp"
	done
}
