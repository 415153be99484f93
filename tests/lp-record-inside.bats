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
load helpers/producers

teardown() {
	if [ -n "${REC:-}" ]; then kill -KILL "$REC" 2>/dev/null || true; wait "$REC" 2>/dev/null || true; fi
	if [ -n "${BG:-}" ]; then kill "$BG" 2>/dev/null || true; wait "$BG" 2>/dev/null || true; fi
}

# From lp-record's summary on stderr (file $1): the samples written, and
# those the gate kept out ("N outside FUNC (not written)").
written() {
	sed -nE 's/^lp-record: ([0-9]+) (samples|off-CPU intervals).*/\1/p' "$1"
}
outside() {
	sed -nE 's/.*, ([0-9]+) outside .* \(not written\).*/\1/p' "$1"
}

# Waits up to 10 s for lp-record $1's tracefs group (its uprobes in a
# library others map) to go.
group_gone() {
	for _ in $(seq 100); do
		if [ ! -d "/sys/kernel/tracing/events/lp_$1" ]; then return 0; fi
		sleep 0.1
	done
	fail "tracefs group lp_$1 left behind"
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
	run -0 --separate-stderr lp-record -F 999 --inside a -o "$T/a.lp" -- "$WORKLOADS/cpusplit" 30 2
	echo "$stderr" > "$T/err"
	cat "$T/err"
	run -0 lp-cat --check "$T/a.lp"
	grep -qE $'^lp-stream\t1\t.*\tinside=a(\t|$)' "$T/a.lp" || fail "no inside=a in the header"
	# What the gate's probes cost is said, as lp-trace says it.
	grep -qE $'^cost\t[0-9]+\tentry\t[0-9]+\t.*probe=a' "$T/a.lp" || fail "no entry cost record of a"
	grep -qE $'^cost\t[0-9]+\treturn\t[0-9]+\t.*probe=a' "$T/a.lp" || fail "no return cost record of a"
	n=$(written "$T/err")
	out=$(outside "$T/err")
	[ "$(grep -c '^sample' "$T/a.lp")" -eq "$n" ]
	lp-collapse "$T/a.lp" > "$T/a.folded"
	in_a=$(share_of "$T/a.folded" a)
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
	run -0 --separate-stderr lp-record -F 999 --inside b -o "$T/b.lp" -- "$WORKLOADS/cpusplit" 30 2
	echo "$stderr" > "$T/err"
	n=$(written "$T/err")
	out=$(outside "$T/err")
	lp-collapse "$T/b.lp" > "$T/b.folded"
	within "$(share_of "$T/b.folded" b)" 97 100 "share of written samples with b() on the stack"
	[ "$(share_of "$T/b.folded" a)" = "0.0" ] || fail "a sample in a() passed a gate on b()"
	within "$(awk -v n="$n" -v o="$out" 'BEGIN { printf "%.1f\n", 100 * n / (n + o) }')" 72 78 "b()'s share of all samples"
	within "$n" 1275 1725 "samples inside b() (0.75 x 2 s x 999 Hz = 1500)"
}

@test "--inside rec: recursion counted, a thread stays inside until its outermost call returns" {
	require_root
	run -0 --separate-stderr lp-record -F 999 --inside rec -o "$T/r.lp" -- "$WORKLOADS/gatecalls" 2 rec
	echo "$stderr" > "$T/err"
	cat "$T/err"
	n=$(written "$T/err")
	out=$(outside "$T/err")
	lp-collapse "$T/r.lp" > "$T/r.folded"
	within "$(share_of "$T/r.folded" "rec(int)")" 97 100 "share of written samples with rec on the stack"
	# 50%; a gate that closed at the first nested return would give 30%.
	share=$(awk -v n="$n" -v o="$out" 'BEGIN { printf "%.1f\n", 100 * n / (n + o) }')
	echo "inside rec: $share% of $((n + out)) samples"
	within "$share" 46 54 "rec's share of all samples"
	within "$n" 850 1150 "samples inside rec (0.5 x 2 s x 999 Hz = 1000)"
	# Each depth is the innermost a fifth of the time: the samples with
	# rec once on the stack (its spins around the nested calls), and five
	# times.
	for d in 1 5; do
		within "$(share_deep "$T/r.folded" "rec(int)" "$d")" 15 25 "share of samples $d calls of rec deep"
	done
}

# gatecalls in mode $1 (throw, jump): every round left leave() without
# returning, the program ran to its end (no return probe broke C++'s
# unwinding), and the gate closed each time: leave's 50%, never after().
left_calls_close_the_gate() {
	run -0 --separate-stderr lp-record -F 999 --inside leave -o "$T/$1.lp" -- "$WORKLOADS/gatecalls" 2 "$1"
	echo "$stderr" > "$T/err"
	cat "$T/err"
	[[ $output =~ ^ok\ ([0-9]+)\ left\ ([0-9]+)$ ]] || fail "workload said: $output"
	[ "${BASH_REMATCH[1]}" -eq "${BASH_REMATCH[2]}" ]
	[ "${BASH_REMATCH[1]}" -ge 400 ]
	n=$(written "$T/err")
	out=$(outside "$T/err")
	lp-collapse "$T/$1.lp" > "$T/$1.folded"
	within "$(share_of "$T/$1.folded" "leave(long)")" 97 100 "share of written samples with leave on the stack"
	[ "$(share_of "$T/$1.folded" "after()")" = "0.0" ] || fail "after() sampled: the gate stayed open ($1)"
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
	run -0 --separate-stderr lp-record -F 499 --inside inner -o "$T/th.lp" -- "$WORKLOADS/gatethreads" 2 4
	echo "$stderr" > "$T/err"
	cat "$T/err"
	echo "$output" > "$T/tids"
	[ "$(grep -c ' inner$' "$T/tids")" -eq 2 ]
	[ "$(grep -c ' outer$' "$T/tids")" -eq 2 ]
	awk -F'\t' '$1 == "sample" { print $4 }' "$T/th.lp" | sort | uniq -c > "$T/per-tid"
	cat "$T/per-tid"
	# Each inner thread: ~2 s x 499 Hz of CPU when it has a CPU of its
	# own; 4 threads on 2 CPUs halve that, a loaded machine more.
	for tid in $(awk '$2 == "inner" { print $1 }' "$T/tids"); do
		c=$(awk -v t="$tid" '$2 == t { print $1 }' "$T/per-tid")
		within "${c:-0}" 100 1100 "samples of inner thread $tid"
	done
	for tid in $(awk '$2 == "outer" { print $1 }' "$T/tids"); do
		if grep -qE " $tid\$" "$T/per-tid"; then fail "outer thread $tid was sampled"; fi
	done
	[ "$(wc -l < "$T/per-tid")" -eq 2 ]
	[ "$(outside "$T/err")" -ge 100 ]
}

@test "--inside child_spin: 100 children forked without exec, each gated from its first instruction" {
	require_root
	run -0 --separate-stderr lp-record -F 999 --inside child_spin -o "$T/fs.lp" -- "$WORKLOADS/forkspin" 100 5
	echo "$stderr" > "$T/err"
	cat "$T/err"
	echo "$output" > "$T/pids"
	parent=$(head -1 "$T/pids")
	awk -F'\t' '$1 == "sample" { print $3 }' "$T/fs.lp" | sort | uniq -c > "$T/per-pid"
	if grep -qE " $parent\$" "$T/per-pid"; then fail "the parent, never inside child_spin, was sampled"; fi
	# Each child spins 5 ms of its CPU: some 5 ticks at 999 Hz.
	within "$(wc -l < "$T/per-pid")" 95 100 "children sampled"
	lp-collapse "$T/fs.lp" > "$T/fs.folded"
	within "$(share_of "$T/fs.folded" child_spin)" 97 100 "share of samples with child_spin on the stack"
	within "$(written "$T/err")" 425 575 "samples inside child_spin (100 x 5 ms x 999 Hz = 500)"
}

@test "--mode off --inside long_nap: only the blocked intervals inside it, weighing its 40 x 5 ms" {
	require_root
	run -0 --separate-stderr lp-record --mode off --inside long_nap -o "$T/off.lp" -- "$WORKLOADS/offsleep" 40 40
	echo "$stderr" > "$T/err"
	cat "$T/err"
	lp-collapse "$T/off.lp" > "$T/off.folded"
	within "$(share_of "$T/off.folded" long_nap)" 100 100 "share of blocked ns inside long_nap"
	ns=$(awk '!/^#/ { t += $NF } END { printf "%d\n", t }' "$T/off.folded")
	within "$ns" 195000000 240000000 "blocked ns inside long_nap (40 x 5 ms)"
	# The 40 short naps were kept out.
	within "$(outside "$T/err")" 40 45 "intervals outside long_nap"
}

@test "SIGINT of lp-record -p PID --inside libc:__clock_gettime: exit 0, a valid gated stream, nothing left attached" {
	require_root
	"$WORKLOADS/cpusplit" 30 &
	BG=$!
	# A function of libc, which other processes map: its probes are
	# tracefs events of lp-record's own group, on the target alone.
	lp-record -F 999 -p "$BG" --inside libc:__clock_gettime -o "$T/int.lp" 2>"$T/err" &
	rec=$!
	# Sampling begins once the cost records are written (both
	# calibrations done, the probes attached).
	for _ in $(seq 200); do
		if grep -q '^cost' "$T/int.lp" 2>/dev/null; then break; fi
		sleep 0.05
	done
	grep -q '^cost' "$T/int.lp" || fail "lp-record did not start: $(cat "$T/err")"
	sleep 1
	progs=$(held_ids "$rec" prog_id)
	links=$(held_ids "$rec" link_id)
	[ -n "$progs" ]
	[ -d "/sys/kernel/tracing/events/lp_$rec" ] || fail "no tracefs group lp_$rec while recording"
	kill -INT "$rec"
	st=0
	wait "$rec" || st=$?
	cat "$T/err"
	[ "$st" -eq 0 ]
	run -0 lp-cat --check "$T/int.lp"
	[ "$(tail -c 1 "$T/int.lp" | od -An -c | tr -d ' ')" = '\n' ]
	n=$(written "$T/err")
	[ "$n" -ge 1 ]
	lp-collapse "$T/int.lp" > "$T/int.folded"
	within "$(share_of "$T/int.folded" __clock_gettime)" 97 100 "share of samples inside clock_gettime"
	# The samples outside were counted, not written: cpusplit's own
	# work (how much of the second depends on what the gate's traps on
	# every clock read cost: 539 outside and 623 inside on a slow
	# host's day).
	[ "$(outside "$T/err")" -ge 100 ]
	all_gone "$progs" "$links"
	group_gone "$rec"
	# The target runs on, unharmed.
	kill -0 "$BG"
}

# --- the gate changed while sampling (--control's inside FUNC, inside off) ---

# The time of the probe record of action $2 for PROBE $3 in stream $1 (one).
mark() {
	awk -F'\t' -v a="$2" -v p="$3" '$1 == "probe" && $3 == a && $4 == p { print $2 }' "$1"
}

# The samples of stream $1 taken after $2 and up to $3 (ns): "N A B", N of
# them, A and B the percent (one decimal) with a() and with b() on the stack.
window() {
	awk -F'\t' -v from="$2" -v to="$3" '
		$1 == "frame" { name[$2] = $6 }
		$1 == "stack" { st[$2] = $3 }
		$1 == "sample" && $2 + 0 > from + 0 && $2 + 0 <= to + 0 {
			n++; k = split(st[$9], f, ","); ia = ib = 0
			for (i = 1; i <= k; i++) { if (name[f[i]] == "a") ia = 1; if (name[f[i]] == "b") ib = 1 }
			na += ia; nb += ib }
		END { if (!n) { print "0 none none"; exit } printf "%d %.1f %.1f\n", n, 100 * na / n, 100 * nb / n }' "$1"
}

# lp-record -F 999 --control $T/ctl -p on cpusplit ($BG, 60 s), with
# options $@, to $T/l.lp, stderr to $T/err, in the background ($REC);
# returns once samples are written.
control_record() {
	"$WORKLOADS/cpusplit" 60 &
	BG=$!
	lp-record -F 999 --control "$T/ctl" -p "$BG" -o "$T/l.lp" "$@" 2>"$T/err" &
	REC=$!
	wait_line '^sample' "$T/l.lp"
}

# SIGINT to $REC: it exits 0, its stream valid.
stop_record() {
	kill -INT "$REC"
	local st=0
	wait "$REC" || st=$?
	REC=
	cat "$T/err"
	[ "$st" -eq 0 ] || fail "lp-record exited $st"
	run -0 lp-cat --check "$T/l.lp"
}

# Sends command $1 to $REC, waits for its reply $2.
send() {
	echo "$1" >"$T/ctl"
	wait_line "lp-record: control: $2" "$T/err"
}

@test "--control inside a, inside off on cpusplit: a() alone between the attach and detach records, at its 25% share; both before and after" {
	require_root
	control_record
	sleep 1.5
	progs=$(held_ids "$REC" prog_id)
	links=$(held_ids "$REC" link_id)
	send 'inside no_such_function' "inside 'no_such_function': not gated"
	send 'inside a(x)' "inside 'a(x)': not gated"
	send 'inside a' "inside 'a': sampling only there"
	gate_progs=$(comm -13 <(echo "$progs") <(held_ids "$REC" prog_id))
	gate_links=$(comm -13 <(echo "$links") <(held_ids "$REC" link_id))
	[ -n "$gate_progs" ] || fail "no program attached for the gate"
	[ -n "$gate_links" ] || fail "no link attached for the gate"
	sleep 2
	send 'inside b' "inside 'b': gated already (inside off first)"
	send 'inside off' "inside off: sampling everywhere"
	# The gate's programs went; the sampler's stay.
	all_gone "$gate_progs" "$gate_links"
	[ "$(held_ids "$REC" prog_id)" = "$progs" ] || fail "lp-record's programs after inside off: $(held_ids "$REC" prog_id), not $progs"
	send 'inside off' "inside off: not gated"
	sleep 1.5
	stop_record
	grep -qF "lp-record: probe 'no_such_function': no function 'no_such_function'" "$T/err" || fail "the bad function not named"
	grep -qF "lp-record: --inside 'a(x)': a function, FUNC or LIB:FUNC, without values to capture" "$T/err" || fail "the bad spec not said"
	[ "$(grep -c $'^probe\t' "$T/l.lp")" -eq 2 ] || fail "not one attach and one detach: $(grep $'^probe\t' "$T/l.lp")"
	grep -qE $'^probe\t[0-9]+\tattach\tinside:a\tspec=a$' "$T/l.lp" || fail "no attach record of inside:a"
	grep -qE $'^probe\t[0-9]+\tdetach\tinside:a\tspec=a$' "$T/l.lp" || fail "no detach record of inside:a"
	at=$(mark "$T/l.lp" attach inside:a)
	dt=$(mark "$T/l.lp" detach inside:a)
	[ "$dt" -gt "$at" ]
	read -r n0 a0 b0 <<<"$(window "$T/l.lp" 0 "$at")"
	read -r n1 a1 b1 <<<"$(window "$T/l.lp" "$at" "$dt")"
	read -r n2 a2 b2 <<<"$(window "$T/l.lp" "$dt" 9e18)"
	echo "before: $n0 samples, a $a0%, b $b0%; gated: $n1, a $a1%, b $b1%; after: $n2, a $a2%, b $b2%"
	# Ungated, cpusplit's 25/75 (a sample in neither: its main loop).
	within "$n0" 200 100000 "samples before the attach"
	within "$a0" 18 32 "share of a() before the attach"
	within "$b0" 68 82 "share of b() before the attach"
	within "$a1" 97 100 "share of a() between the attach and the detach"
	within "$n2" 200 100000 "samples after the detach"
	within "$a2" 18 32 "share of a() after the detach"
	within "$b2" 68 82 "share of b() after the detach"
	# What the gate kept out is b's share of the ticks while it was there.
	out=$(outside "$T/err")
	share=$(awk -v n="$n1" -v o="$out" 'BEGIN { printf "%.1f\n", 100 * n / (n + o) }')
	echo "gated: $n1 written, $out kept out: $share%"
	within "$((n1 + out))" 400 100000 "ticks while gated"
	within "$share" 22 28 "a()'s share of the ticks while gated"
	[ ! -e "$T/ctl" ] || fail "the FIFO is still there"
}

@test "--inside a --control: attach said at the start; inside off, inside libc:__clock_gettime; SIGINT then leaves nothing attached" {
	require_root
	control_record --inside a
	grep -qE $'^probe\t[0-9]+\tattach\tinside:a\tspec=a$' "$T/l.lp" || fail "no attach record of --inside a"
	sleep 1
	send 'inside off' "inside off: sampling everywhere"
	sleep 1
	# A function of libc, which other processes map: its probes are
	# tracefs events of lp-record's own group, on the target alone.
	send 'inside libc:__clock_gettime' "inside 'libc:__clock_gettime': sampling only there"
	[ -d "/sys/kernel/tracing/events/lp_$REC" ] || fail "no tracefs group lp_$REC while gated"
	sleep 1
	progs=$(held_ids "$REC" prog_id)
	links=$(held_ids "$REC" link_id)
	[ -n "$progs" ]
	rec=$REC
	stop_record
	all_gone "$progs" "$links"
	group_gone "$rec"
	grep -qE $'^lp-stream\t1\t.*\tinside=a(\t|$)' "$T/l.lp" || fail "no inside=a in the header"
	grep -qE "[0-9]+ outside a,libc:__clock_gettime \(not written\)" "$T/err" || fail "the summary does not name both gates"
	at=$(mark "$T/l.lp" attach inside:a)
	dt=$(mark "$T/l.lp" detach inside:a)
	ct=$(mark "$T/l.lp" attach inside:libc:__clock_gettime)
	[ "$at" -lt "$dt" ]
	[ "$dt" -lt "$ct" ]
	read -r n0 a0 b0 <<<"$(window "$T/l.lp" 0 "$dt")"
	read -r n1 a1 b1 <<<"$(window "$T/l.lp" "$dt" "$ct")"
	echo "inside a: $n0 samples, a $a0%; ungated: $n1, a $a1%, b $b1%"
	within "$n0" 50 100000 "samples inside a"
	within "$a0" 97 100 "share of a() while gated on a"
	within "$n1" 100 100000 "samples ungated"
	within "$a1" 15 35 "share of a() ungated"
	within "$b1" 65 85 "share of b() ungated"
	awk -F'\t' -v t="$ct" '$1 != "sample" || $2 + 0 > t + 0' "$T/l.lp" | lp-collapse > "$T/c.folded"
	n2=$(awk '!/^#/ { t += $NF } END { print t + 0 }' "$T/c.folded")
	echo "inside __clock_gettime: $n2 samples"
	within "$n2" 10 100000 "samples inside __clock_gettime"
	within "$(share_of "$T/c.folded" __clock_gettime)" 97 100 "share of samples inside __clock_gettime"
	kill -0 "$BG"
}

@test "--control inside with -a: refused with a message, lp-record goes on to its end" {
	require_root
	lp-record -a -d 2 -F 49 --calibrate 0 --control "$T/ctl" -o "$T/all.lp" 2>"$T/err" &
	REC=$!
	wait_line '^sample' "$T/all.lp"
	send 'inside main' "inside 'main': needs -p PID or -- CMD (not -a)"
	send 'inside off' "inside off: not gated"
	st=0
	wait "$REC" || st=$?
	REC=
	cat "$T/err"
	[ "$st" -eq 0 ] || fail "lp-record -a exited $st"
	grep -q 'lp-record: [0-9]* samples .*(duration reached)' "$T/err" || fail "no summary at the end"
}
