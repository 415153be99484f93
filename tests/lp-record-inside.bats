#!/usr/bin/env bats
# lp-record --inside FUNC: a thread sampled only while it is inside FUNC,
# decided in the kernel.  Ground truth by construction: cpusplit (a() 25%,
# b() 75% of its CPU), gatecalls (recursion: rec 50%, half of it after a
# nested call returned; calls left by a C++ exception or longjmp: leave
# 50%), gatethreads (only some threads inside), offsleep (blocked
# intervals in known functions).  Privileged: they load BPF
# programs and uprobes (root, under CI=true too).

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/bpf

setup() {
	load_bats_libs
	TMP=$(mktemp -d)
}

teardown() {
	if [ -n "${BG:-}" ]; then kill "$BG" 2>/dev/null || true; wait "$BG" 2>/dev/null || true; fi
	rm -rf "$TMP"
}

# From lp-record's summary on stderr (file $1): the samples written, and
# those the gate kept out ("N outside FUNC (not written)").
written() {
	sed -nE 's/^lp-record: ([0-9]+) (samples|off-CPU intervals).*/\1/p' "$1"
}
outside() {
	sed -nE 's/.*, ([0-9]+) outside .* \(not written\).*/\1/p' "$1"
}

# Percent (one decimal) of the weight of folded file $1 whose stack holds
# a frame named $2 (the whole name: "leave(long)").
share_of() {
	awk -v f="$2" '!/^#/ { w = $NF; t += w; s = $0; sub(/ [^ ]*$/, "", s)
			       n = split(s, fr, ";"); for (i = 1; i <= n; i++) if (fr[i] == f) { k += w; break } }
	     END { if (t == 0) { print "none"; exit } printf "%.1f\n", 100 * k / t }' "$1"
}

# Percent (one decimal) of the weight of folded file $1 whose stack holds
# exactly $3 frames named $2.
share_deep() {
	awk -v f="$2" -v d="$3" '!/^#/ { w = $NF; t += w; s = $0; sub(/ [^ ]*$/, "", s)
			       n = split(s, fr, ";"); c = 0; for (i = 1; i <= n; i++) c += fr[i] == f
			       if (c == d) k += w }
	     END { if (t == 0) { print "none"; exit } printf "%.1f\n", 100 * k / t }' "$1"
}

# Fails unless number $1 lies within [$2, $3], saying what it is ($4).
within() {
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v != "none" && v >= lo && v <= hi) }' ||
		fail "$4: $1, not within [$2, $3]"
}

@test "--inside: bad specs and targets are refused with exit 2, an unknown function with exit 1" {
	run -2 --separate-stderr lp-record --inside 'x.c:12' -- true
	[ "$stderr" = "lp-record: --inside 'x.c:12': a function, FUNC or LIB:FUNC, without values to capture" ]
	run -2 --separate-stderr lp-record --inside 'a(x)' -- true
	[ "$stderr" = "lp-record: --inside 'a(x)': a function, FUNC or LIB:FUNC, without values to capture" ]
	run -2 --separate-stderr lp-record --inside a -a
	[ "$stderr" = "lp-record: --inside needs BPF sampling of -p PID or -- CMD (not -a)" ]
	run -2 --separate-stderr lp-record --inside a --mode snapshot -- true
	[ "$stderr" = "lp-record: --inside needs BPF sampling of -p PID or -- CMD (not --mode snapshot)" ]
	require_root
	run -1 --separate-stderr lp-record --inside no_such_function -d 1 -- "$WORKLOADS/cpusplit" 1
	[[ $stderr == *"no_such_function"* ]] || fail "unknown function not named: $stderr"
	[ -z "$output" ]
}

@test "--inside a on cpusplit: only samples with a() on the stack, its 25% share of the CPU samples, at the rate" {
	require_root
	run -0 --separate-stderr lp-record -F 999 --inside a -o "$TMP/a.lp" -- "$WORKLOADS/cpusplit" 30 2
	echo "$stderr" > "$TMP/err"
	cat "$TMP/err"
	run -0 lp-cat --check "$TMP/a.lp"
	grep -qE $'^lp-stream\t1\t.*\tinside=a(\t|$)' "$TMP/a.lp" || fail "no inside=a in the header"
	# What the gate's probes cost is said, as lp-trace says it.
	grep -qE $'^cost\t[0-9]+\tentry\t[0-9]+\t.*probe=a' "$TMP/a.lp" || fail "no entry cost record of a"
	grep -qE $'^cost\t[0-9]+\treturn\t[0-9]+\t.*probe=a' "$TMP/a.lp" || fail "no return cost record of a"
	n=$(written "$TMP/err")
	out=$(outside "$TMP/err")
	[ "$(grep -c '^sample' "$TMP/a.lp")" -eq "$n" ]
	lp-collapse "$TMP/a.lp" > "$TMP/a.folded"
	in_a=$(share_of "$TMP/a.folded" a)
	echo "a() on the stack of $in_a% of $n samples; $out outside"
	within "$in_a" 97 100 "share of written samples with a() on the stack"
	# Of all the samples the timer took (written + kept out), a's share.
	share=$(awk -v n="$n" -v o="$out" 'BEGIN { printf "%.1f\n", 100 * n / (n + o) }')
	within "$share" 22 28 "a()'s share of all samples"
	# 2 s of CPU at 999 Hz, a quarter of it in a(): ~500 samples.
	within "$n" 425 575 "samples inside a() (0.25 x 2 s x 999 Hz = 500)"
}

@test "--inside b: the complement, 75% of the samples, all with b() on the stack" {
	require_root
	run -0 --separate-stderr lp-record -F 999 --inside b -o "$TMP/b.lp" -- "$WORKLOADS/cpusplit" 30 2
	echo "$stderr" > "$TMP/err"
	n=$(written "$TMP/err")
	out=$(outside "$TMP/err")
	lp-collapse "$TMP/b.lp" > "$TMP/b.folded"
	within "$(share_of "$TMP/b.folded" b)" 97 100 "share of written samples with b() on the stack"
	[ "$(share_of "$TMP/b.folded" a)" = "0.0" ] || fail "a sample in a() passed a gate on b()"
	within "$(awk -v n="$n" -v o="$out" 'BEGIN { printf "%.1f\n", 100 * n / (n + o) }')" 72 78 "b()'s share of all samples"
	within "$n" 1275 1725 "samples inside b() (0.75 x 2 s x 999 Hz = 1500)"
}

@test "--inside rec: recursion counted, a thread stays inside until its outermost call returns" {
	require_root
	run -0 --separate-stderr lp-record -F 999 --inside rec -o "$TMP/r.lp" -- "$WORKLOADS/gatecalls" 2 rec
	echo "$stderr" > "$TMP/err"
	cat "$TMP/err"
	n=$(written "$TMP/err")
	out=$(outside "$TMP/err")
	lp-collapse "$TMP/r.lp" > "$TMP/r.folded"
	within "$(share_of "$TMP/r.folded" "rec(int)")" 97 100 "share of written samples with rec on the stack"
	# 50%; a gate that closed at the first nested return would give 30%.
	share=$(awk -v n="$n" -v o="$out" 'BEGIN { printf "%.1f\n", 100 * n / (n + o) }')
	echo "inside rec: $share% of $((n + out)) samples"
	within "$share" 46 54 "rec's share of all samples"
	within "$n" 850 1150 "samples inside rec (0.5 x 2 s x 999 Hz = 1000)"
	# Each depth is the innermost a fifth of the time: the samples with
	# rec once on the stack (its spins around the nested calls), and five
	# times.
	for d in 1 5; do
		within "$(share_deep "$TMP/r.folded" "rec(int)" "$d")" 15 25 "share of samples $d calls of rec deep"
	done
}

# gatecalls in mode $1 (throw, jump): every round left leave() without
# returning, the program ran to its end (no return probe broke C++'s
# unwinding), and the gate closed each time: leave's 50%, never after().
left_calls_close_the_gate() {
	run -0 --separate-stderr lp-record -F 999 --inside leave -o "$TMP/$1.lp" -- "$WORKLOADS/gatecalls" 2 "$1"
	echo "$stderr" > "$TMP/err"
	cat "$TMP/err"
	[[ $output =~ ^ok\ ([0-9]+)\ left\ ([0-9]+)$ ]] || fail "workload said: $output"
	[ "${BASH_REMATCH[1]}" -eq "${BASH_REMATCH[2]}" ]
	[ "${BASH_REMATCH[1]}" -ge 400 ]
	n=$(written "$TMP/err")
	out=$(outside "$TMP/err")
	lp-collapse "$TMP/$1.lp" > "$TMP/$1.folded"
	within "$(share_of "$TMP/$1.folded" "leave(long)")" 97 100 "share of written samples with leave on the stack"
	[ "$(share_of "$TMP/$1.folded" "after()")" = "0.0" ] || fail "after() sampled: the gate stayed open ($1)"
	# 50%; a gate left open would take after() too (~100%).
	within "$(awk -v n="$n" -v o="$out" 'BEGIN { printf "%.1f\n", 100 * n / (n + o) }')" 46 54 "leave's share of all samples"
}

@test "--inside leave: calls left by C++ exceptions end the gate; the program runs to its end" {
	require_root
	left_calls_close_the_gate throw
}

@test "--inside leave: calls left by longjmp end the gate too" {
	require_root
	left_calls_close_the_gate jump
}

@test "--inside inner: of four threads, only the two inside inner() are sampled, each of them" {
	require_root
	run -0 --separate-stderr lp-record -F 499 --inside inner -o "$TMP/th.lp" -- "$WORKLOADS/gatethreads" 2 4
	echo "$stderr" > "$TMP/err"
	cat "$TMP/err"
	echo "$output" > "$TMP/tids"
	[ "$(grep -c ' inner$' "$TMP/tids")" -eq 2 ]
	[ "$(grep -c ' outer$' "$TMP/tids")" -eq 2 ]
	awk -F'\t' '$1 == "sample" { print $4 }' "$TMP/th.lp" | sort | uniq -c > "$TMP/per-tid"
	cat "$TMP/per-tid"
	# Each inner thread: ~2 s x 499 Hz of CPU when it has a CPU of its
	# own; 4 threads on 2 CPUs halve that, a loaded machine more.
	for tid in $(awk '$2 == "inner" { print $1 }' "$TMP/tids"); do
		c=$(awk -v t="$tid" '$2 == t { print $1 }' "$TMP/per-tid")
		within "${c:-0}" 100 1100 "samples of inner thread $tid"
	done
	for tid in $(awk '$2 == "outer" { print $1 }' "$TMP/tids"); do
		if grep -qE " $tid\$" "$TMP/per-tid"; then fail "outer thread $tid was sampled"; fi
	done
	[ "$(wc -l < "$TMP/per-tid")" -eq 2 ]
	[ "$(outside "$TMP/err")" -ge 100 ]
}

@test "--inside child_spin: 100 children forked without exec, each gated from its first instruction" {
	require_root
	run -0 --separate-stderr lp-record -F 999 --inside child_spin -o "$TMP/fs.lp" -- "$WORKLOADS/forkspin" 100 5
	echo "$stderr" > "$TMP/err"
	cat "$TMP/err"
	echo "$output" > "$TMP/pids"
	parent=$(head -1 "$TMP/pids")
	awk -F'\t' '$1 == "sample" { print $3 }' "$TMP/fs.lp" | sort | uniq -c > "$TMP/per-pid"
	if grep -qE " $parent\$" "$TMP/per-pid"; then fail "the parent, never inside child_spin, was sampled"; fi
	# Each child spins 5 ms of its CPU: some 5 ticks at 999 Hz.
	within "$(wc -l < "$TMP/per-pid")" 95 100 "children sampled"
	lp-collapse "$TMP/fs.lp" > "$TMP/fs.folded"
	within "$(share_of "$TMP/fs.folded" child_spin)" 97 100 "share of samples with child_spin on the stack"
	within "$(written "$TMP/err")" 425 575 "samples inside child_spin (100 x 5 ms x 999 Hz = 500)"
}

@test "--mode off --inside long_nap: only the blocked intervals inside it, weighing its 40 x 5 ms" {
	require_root
	run -0 --separate-stderr lp-record --mode off --inside long_nap -o "$TMP/off.lp" -- "$WORKLOADS/offsleep" 40 40
	echo "$stderr" > "$TMP/err"
	cat "$TMP/err"
	lp-collapse "$TMP/off.lp" > "$TMP/off.folded"
	within "$(share_of "$TMP/off.folded" long_nap)" 100 100 "share of blocked ns inside long_nap"
	ns=$(awk '!/^#/ { t += $NF } END { printf "%d\n", t }' "$TMP/off.folded")
	within "$ns" 195000000 240000000 "blocked ns inside long_nap (40 x 5 ms)"
	# The 40 short naps were kept out.
	within "$(outside "$TMP/err")" 40 45 "intervals outside long_nap"
}

@test "SIGINT of lp-record -p PID --inside libc:__clock_gettime: exit 0, a valid gated stream, nothing left attached" {
	require_root
	"$WORKLOADS/cpusplit" 30 &
	BG=$!
	# A function of libc, which other processes map: its probes are
	# tracefs events of lp-record's own group, on the target alone.
	lp-record -F 999 -p "$BG" --inside libc:__clock_gettime -o "$TMP/int.lp" 2>"$TMP/err" &
	rec=$!
	# Sampling begins once the cost records are written (both
	# calibrations done, the probes attached).
	for _ in $(seq 200); do
		if grep -q '^cost' "$TMP/int.lp" 2>/dev/null; then break; fi
		sleep 0.05
	done
	grep -q '^cost' "$TMP/int.lp" || fail "lp-record did not start: $(cat "$TMP/err")"
	sleep 1
	progs=$(held_ids "$rec" prog_id)
	links=$(held_ids "$rec" link_id)
	[ -n "$progs" ]
	[ -d "/sys/kernel/tracing/events/lp_$rec" ] || fail "no tracefs group lp_$rec while recording"
	kill -INT "$rec"
	st=0
	wait "$rec" || st=$?
	cat "$TMP/err"
	[ "$st" -eq 0 ]
	run -0 lp-cat --check "$TMP/int.lp"
	[ "$(tail -c 1 "$TMP/int.lp" | od -An -c | tr -d ' ')" = '\n' ]
	n=$(written "$TMP/err")
	[ "$n" -ge 1 ]
	lp-collapse "$TMP/int.lp" > "$TMP/int.folded"
	within "$(share_of "$TMP/int.folded" __clock_gettime)" 97 100 "share of samples inside clock_gettime"
	[ "$(outside "$TMP/err")" -gt "$n" ]
	all_gone "$progs" "$links"
	for _ in $(seq 100); do
		if [ ! -d "/sys/kernel/tracing/events/lp_$rec" ]; then break; fi
		sleep 0.1
	done
	[ ! -d "/sys/kernel/tracing/events/lp_$rec" ] || fail "tracefs group lp_$rec left behind"
	# The target runs on, unharmed.
	kill -0 "$BG"
}
