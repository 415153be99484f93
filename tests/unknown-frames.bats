#!/usr/bin/env bats
# A frame with no address, module or symbol (or perf's "[unknown]" module)
# reads "[unknown]" in every program; a folded line's empty frame ("a;;e")
# is a name, the empty one, and stays as written.

load helpers/common

setup() {
	load_bats_libs
	T=$BATS_TEST_TMPDIR
	# main, then a frame that says nothing, one whose module is perf's
	# "[unknown]", and a kernel frame that says nothing.
	printf 'lp-stream\t1\nframe\tf1\tu\t-\t/bin/a\tmain\t-\nframe\tf2\tu\t-\t-\t-\t-\nframe\tf3\tu\t-\t[unknown]\t-\t-\nframe\tf4\tk\t-\t-\t-\t-\nstack\ts1\tf1,f2,f3\nstack\ts2\tf1,f4\nsample\t1\t1\t1\t0\ta\tcpu-clock\t1\ts1\nsample\t2\t1\t1\t0\ta\tcpu-clock\t3\ts2\n' >"$T/unk.lp"
}

@test "unknown frames: lp-collapse and lp-diff print [unknown], never an empty frame" {
	run -0 lp-collapse "$T/unk.lp"
	[ "$output" = "$(printf '%s\n' 'a;main;[unknown] 3' 'a;main;[unknown];[unknown] 1')" ] || fail "$output"
	run -0 lp-collapse --kernel "$T/unk.lp"
	[ "$output" = "$(printf '%s\n' 'a;main;[unknown];[unknown] 1' 'a;main;[unknown]_[k] 3')" ] || fail "$output"
	run -0 lp-diff "$T/unk.lp" "$T/unk.lp"
	[ "$output" = "$(printf '%s\n' 'a;main;[unknown] 3 3' 'a;main;[unknown];[unknown] 1 1')" ] || fail "$output"
	run -0 lp-collapse --format speedscope "$T/unk.lp"
	grep -qxF '{"name":"[unknown]"}]},' <<<"$output" || fail "$output"
	[ "$(grep -c '^{"name":' <<<"$output")" -eq 3 ] || fail "$output"
}

@test "unknown frames: lp-top, lp-split's blockers, pprof and trace-event name them [unknown] too" {
	run -0 lp-top --once --all "$T/unk.lp"
	grep -qxF '  SELF%  TOTAL%  FUNCTION' <<<"$output"
	grep -qxF ' 100.00  100.00  [unknown]' <<<"$output" || fail "$output"
	grep -qxF '  75.00  main;[unknown]' <<<"$output" || fail "$output"
	grep -qxF '  25.00  main;[unknown];[unknown]' <<<"$output" || fail "$output"
	run -0 lp-collapse --format trace-event "$T/unk.lp"
	[ "$(grep -o '"name":"[^"]*","category"' <<<"$output" | sort -u | tr '\n' ' ')" = '"name":"[unknown]","category" "name":"main","category" ' ] ||
		fail "$output"
	run -0 lp-collapse --format pprof --output "$T/p.pb.gz" "$T/unk.lp"
	zcat "$T/p.pb.gz" | tr -c '[:print:]' '\n' | grep -qF '[unknown]' || fail "no [unknown] string in the profile"
	# lp-split names where a blocked thread waited: an unknown frame too.
	printf 'lp-stream\t1\tmode=wall\nframe\tf2\tu\t-\t-\t-\t-\nstack\ts1\tf2\nspan\t0\t10\t1\t1\tf\t0\nsample\t5\t1\t1\t0\ta\twall\t5\ts1\tspan=f\tspan_start=0\tspan_end=10\tspan_depth=0\tstate=blocked\n' >"$T/w.lp"
	run --separate-stderr -0 lp-split --threshold 1ms "$T/w.lp"
	[[ "$stderr" == *"[unknown]"* ]] || fail "$stderr"
}

@test "unknown frames: an empty name (folded 'a;;e', perf 'a->->b') stays empty, through a stream too" {
	printf 'a;;e 2\na;b 1\n' >"$T/in.folded"
	run -0 lp-collapse "$T/in.folded"
	[ "$output" = "$(printf '%s\n' 'a;;e 2' 'a;b 1')" ]
	run -0 lp-diff "$T/in.folded" "$T/in.folded"
	[ "$output" = "$(printf '%s\n' 'a;;e 2 2' 'a;b 1 1')" ]
	# In a stream: SYMBOL "-" with named=1, and read back as the empty name.
	run -0 lp-cat "$T/in.folded"
	[ "$(grep -c $'^frame\t[0-9a-f]*\tu\t-\t-\t-\t-\tnamed=1$' <<<"$output")" -eq 1 ] || fail "$output"
	printf '%s\n' "$output" >"$T/in.lp"
	run -0 lp-collapse "$T/in.lp"
	[ "$output" = "$(printf '%s\n' 'a;;e 2' 'a;b 1')" ]
	run -0 lp-top --once --all "$T/in.lp"
	grep -qxF '  66.67  a;;e' <<<"$output" || fail "$output"
	grep -qxF '   0.00   66.67  ' <<<"$output" || fail "$output"
	printf 'node 42/42 [000] 5.000001: 250 cpu-clock: \n\t    7f0000000009 a->->b (/bin/x)\n\n' >"$T/perf.txt"
	run -0 lp-collapse "$T/perf.txt"
	[ "$output" = "node;a;_[i];b_[i] 250" ]
	lp-cat "$T/perf.txt" >"$T/perf.lp"
	run -0 lp-collapse "$T/perf.lp"
	[ "$output" = "node;a;_[i];b_[i] 250" ]
}
