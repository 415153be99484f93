#!/usr/bin/env bats
# What folded counts mean.  A cpu-mode recording's samples weigh alike (one
# period each): folded output counts them, integers, as flamegraph.pl's
# "samples" says.  Off and wall samples weigh what they waited: folded output
# sums nanoseconds and says so (a '#' line first, as austin's folded files
# do; the SVG's count name and speedscope's unit).

load helpers/common

setup() {
	load_bats_libs
	D=$FIXTURES/diff
	T=$BATS_TEST_TMPDIR
}

@test "folded counts: a cpu-mode stream counts samples in lp-collapse and lp-diff, whatever the period" {
	run -0 lp-collapse "$D/cpu-10ms.lp"
	[ "$output" = "$(printf '%s\n' 'demo;main;do_syscall_64 2' 'demo;main;work 3' 'demo;main;work;hot 5')" ] || fail "$output"
	# 1 ms samples: the same counts, not a tenth of the weight.
	run -0 lp-collapse "$D/cpu-1ms.lp"
	[ "$(awk '{ n += $NF } END { print n }' <<<"$output")" -eq "$(grep -c '^sample' "$D/cpu-1ms.lp")" ] || fail "$output"
	run -0 lp-diff "$D/cpu-10ms.lp" "$D/cpu-10ms-b.lp"
	[ "$output" = "$(printf '%s\n' 'demo;main;do_syscall_64 2 6' 'demo;main;work 3 3' 'demo;main;work;hot 5 1')" ] || fail "$output"
	run -0 lp-collapse --format svg "$D/cpu-10ms.lp"
	grep -A1 -xF '<g><title>hot' <<<"$output" | grep -qF '(5 samples, 50.00%)</title>' || fail "$output"
	run -0 lp-collapse --format speedscope "$D/cpu-10ms.lp"
	grep -qF '"unit":"none"' <<<"$output"
	grep -qF '"weights":[2,3,5]' <<<"$output" || fail "$output"
}

@test "folded counts: an off-mode stream sums nanoseconds and says so" {
	run -0 lp-collapse "$D/off-10ms.lp"
	[ "${lines[0]}" = "# lp-collapse: counts are nanoseconds (mode=off): flamegraph.pl --countname=ns" ] || fail "$output"
	[ "$(sed 1d <<<"$output")" = "$(printf '%s\n' 'demo;main;do_syscall_64 2800000' 'demo;main;work 7500000')" ] || fail "$output"
	# The comment is read back as one (lp-diff, lp-collapse take folded).
	printf '%s\n' "$output" >"$T/off.folded"
	run -0 lp-collapse "$T/off.folded"
	[ "$output" = "$(printf '%s\n' 'demo;main;do_syscall_64 2800000' 'demo;main;work 7500000')" ] || fail "$output"
	run -0 lp-collapse --format svg "$D/off-10ms.lp"
	grep -A1 -xF '<g><title>work' <<<"$output" | grep -qF '(7,500,000 ns, 72.82%)</title>' || fail "$output"
	run -0 lp-collapse --format speedscope "$D/off-10ms.lp"
	grep -qF '"unit":"nanoseconds"' <<<"$output" || fail "$output"
	run -0 lp-diff "$D/off-10ms.lp" "$D/off-10ms.lp"
	[ "${lines[0]}" = "# lp-diff: counts are nanoseconds (mode=off): flamegraph.pl --countname=ns" ] || fail "$output"
	[ "${lines[2]}" = "demo;main;work 7500000 7500000" ] || fail "$output"
}

@test "folded counts: a recorded cpu stream's folded counts are its samples, and it has no frame that says nothing" {
	require_root
	run -0 --separate-stderr lp-record --freq 997 --output "$T/cpu.lp" -- "$WORKLOADS/cpusplit" 30 1
	n=$(grep -c '^sample' "$T/cpu.lp")
	[ "$n" -ge 400 ] || fail "$n samples"
	run -0 lp-collapse "$T/cpu.lp"
	[ "$(awk '$NF !~ /^[0-9]+$/' <<<"$output" | wc -l)" -eq 0 ] || fail "not integers: $output"
	[ "$(awk '{ n += $NF } END { print n }' <<<"$output")" -eq "$n" ]
	[ "$(grep -cE $'^frame\t[^\t]*\t[ukji]\t-\t-\t-\t' "$T/cpu.lp")" -eq 0 ] || fail "a frame of '-' only"
	run -0 lp-collapse "$T/cpu.lp"
	refute_output --regexp '(^|;);|;( |$)'
}
