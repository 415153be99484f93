#!/usr/bin/env bats
# lp-record as an ordinary user: no BPF, so perf events alone (--backend
# perf, lib/capture/record/perfrec.c), chosen by itself with one line saying so.
# Ground truth by construction (cpusplit: a() 25%, b() 75% of its CPU; the
# same with no frame pointers for DWARF unwinding), children followed, and
# each refusal saying why.  The user is LP_TEST_UID, a uid with no account;
# root only switches to it.

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/cpusplit

NOTE="lp-record: BPF needs root, or CAP_BPF and CAP_PERFMON (missing: CAP_BPF CAP_PERFMON): sampling with perf events instead (--backend perf)"

setup() {
	load_bats_libs
	# Not bats' own folder: the test user works in $U, inside this one,
	# and cannot enter bats' temporary folders.
	T=$(mktemp -d)
	U=$T/u
}

teardown() {
	if [ -n "${PARANOID:-}" ]; then echo "$PARANOID" > /proc/sys/kernel/perf_event_paranoid; fi
	if [ -n "${BG:-}" ]; then kill -KILL "$BG" 2>/dev/null || true; wait "$BG" 2>/dev/null || true; fi
	# What ran as the test user (BG is the shell that started it): the
	# user runs nothing else.
	for p in $(pgrep -u "$LP_TEST_UID"); do kill -KILL "$p" 2>/dev/null || true; done
	rm -rf "$T"
}

# The user's copies of lp-record and of the workloads named.
user_setup() {
	require_user
	local w files=("$LP_BUILD/bin/lp-record")
	for w in "$@"; do files+=("$WORKLOADS/$w"); done
	user_copy "$U" "${files[@]}"
}

# CLOCK_MONOTONIC in ns, the stream's clock.
monotonic_ns() {
	python3 -c 'import time; print(time.monotonic_ns())'
}

@test "an ordinary user: perf events, said in one line; a() 25% / b() 75% within 3 points, nothing lost" {
	user_setup cpusplit
	# 2 s of CPU: the same samples on a loaded machine.
	run -0 --separate-stderr as_user "$U/lp-record" -F 999 -o "$U/fp.lp" -- "$U/cpusplit" 30 2
	[ "${stderr_lines[0]}" = "$NOTE" ]
	[[ ${stderr_lines[1]} == "lp-record: "*" samples (cpu-clock at 999 Hz, auto), 0 lost (ring full), "* ]] ||
		fail "summary: ${stderr_lines[1]}"
	run -0 lp-cat --check "$U/fp.lp"
	head -1 "$U/fp.lp" > "$T/header"
	for key in backend=perf user_only=1 mode=cpu event=cpu-clock period_ns=1001001 unwind=auto; do
		grep -qE $'\t'"$key"$'(\t|$)' "$T/header" || fail "header lacks $key"
	done
	# The cost of a sample, measured on perf events too.
	grep -qE $'^cost\t[0-9]+\tsample\t[0-9]+\t' "$U/fp.lp" || fail "no cost record"
	n=$(nsamples "$U/fp.lp")
	[ "$n" -ge 1600 ] || fail "only $n samples of ~2000"
	lp-collapse "$U/fp.lp" > "$T/fp.folded"
	s=$(share_a "$T/fp.folded")
	echo "share of a: $s% of $n samples"
	near_25 "$s" || fail "a() is $s%, not 25% +- 3"
	grep -q '^cpusplit;.*main;a;spin' "$T/fp.folded" || fail "no whole stack through main"
	# No kernel frame: the kernel takes no sample in it for this user.
	run -1 grep -qE $'^frame\t[0-9a-f]+\tk\t' "$U/fp.lp"
}

@test "an ordinary user: DWARF unwinding of a build without frame pointers, 25/75 within 3 points, >= 99% reach main" {
	user_setup cpusplit-nofp
	run -0 as_user "$U/lp-record" -F 999 -o "$U/dw.lp" -- "$U/cpusplit-nofp" 30 2
	n=$(nsamples "$U/dw.lp")
	[ "$n" -ge 1600 ] || fail "only $n samples of ~2000"
	lp-collapse "$U/dw.lp" > "$T/dw.folded"
	s=$(share_a "$T/dw.folded")
	main=$(awk '{ t += $NF; if ($0 ~ /;main;/) m += $NF } END { printf "%.2f\n", 100 * m / t }' "$T/dw.folded")
	echo "share of a: $s%; reaching main: $main% of $n samples"
	near_25 "$s" || fail "a() is $s%, not 25% +- 3"
	awk -v m="$main" 'BEGIN { exit !(m >= 99) }' || fail "$main% reach main"
	# The frame-pointer chain alone on the same build loses its callers:
	# the copy is what unwinds it.
	run -0 as_user "$U/lp-record" -F 999 --call-graph fp -o "$U/nofp.lp" -- "$U/cpusplit-nofp" 30 0.5
	lp-collapse "$U/nofp.lp" > "$T/nofp.folded"
	bad=$(awk '{ t += $NF; if ($0 ~ /;main;(a|b);/) m += $NF } END { printf "%.0f\n", 100 * m / t }' "$T/nofp.folded")
	echo "frame pointers alone: $bad% with main;a or main;b"
	[ "$bad" -lt 50 ] || fail "$bad% through main with the chain alone"
}

@test "an ordinary user: children followed (two at once; 30 short-lived ones symbolized), not with --no-follow" {
	user_setup cpusplit
	run -0 as_user "$U/lp-record" -F 499 -o "$U/kids.lp" -- sh -c "'$U/cpusplit' 30 0.3 & '$U/cpusplit' 30 0.3; wait"
	pids=$(awk -F'\t' '$1 == "sample" && $6 == "cpusplit" { print $3 }' "$U/kids.lp" | sort -u | wc -l)
	[ "$pids" -eq 2 ] || fail "$pids cpusplit processes sampled, not 2"
	run -0 as_user "$U/lp-record" -F 999 -o "$U/short.lp" -- sh -c \
		"for i in \$(seq 30); do '$U/cpusplit' 30 0.03; done"
	lp-collapse "$U/short.lp" > "$T/short.folded"
	pct=$(awk '/^cpusplit;/ { w = $NF; t += w; if ($0 ~ /;main;(a|b);spin/) m += w }
		END { printf "%.0f\n", t ? 100 * m / t : 0 }' "$T/short.folded")
	echo "cpusplit samples with main;a or main;b named: $pct%"
	[ "$pct" -ge 85 ] || fail "$pct% named"
	# Not followed: the shell's child is not sampled.
	run -0 as_user "$U/lp-record" -F 499 --no-follow -o "$U/nokids.lp" -- sh -c "'$U/cpusplit' 30 0.3; true"
	run -0 awk -F'\t' '$1 == "sample" && $6 == "cpusplit" { n++ } END { print n + 0 }' "$U/nokids.lp"
	[ "$output" -eq 0 ] || fail "$output samples of a child not followed"
}

@test "an ordinary user: -p of their own running process samples every thread it has" {
	user_setup threads
	as_user "$U/threads" 30 4 &
	BG=$!
	sleep 0.5
	pid=$(pgrep -u "$LP_TEST_UID" -x threads | head -1)
	[ -n "$pid" ] || fail "threads not running"
	run -0 --separate-stderr as_user "$U/lp-record" -F 199 -d 1.5 -o "$U/p.lp" -p "$pid"
	[ "${stderr_lines[0]}" = "$NOTE" ]
	tids=$(awk -F'\t' '$1 == "sample" { print $4 }' "$U/p.lp" | sort -u | wc -l)
	echo "threads sampled: $tids"
	[ "$tids" -ge 4 ] || fail "$tids threads sampled of 4 spinning"
	lp-collapse "$U/p.lp" > "$T/p.folded"
	grep -q 'worker_loop' "$T/p.folded" || fail "no worker_loop"
}

@test "an ordinary user: what perf events cannot do is refused, saying what it needs, exit 1" {
	user_setup cpusplit
	run -1 --separate-stderr as_user "$U/lp-record" --mode off -d 1 -- "$U/cpusplit" 1
	[ "$stderr" = "lp-record: --mode off needs root, or CAP_BPF and CAP_PERFMON (missing: CAP_BPF CAP_PERFMON); without, lp-record samples on the CPU through perf events (--mode cpu, no --inside)" ]
	run -1 --separate-stderr as_user "$U/lp-record" --backend bpf -d 1 -- "$U/cpusplit" 1
	[ "$stderr" = "lp-record: --backend bpf needs root, or CAP_BPF and CAP_PERFMON (missing: CAP_BPF CAP_PERFMON) (--backend perf samples one's own processes without)" ]
	# Another user's process: the kernel says no (ptrace's rule).
	sleep 30 &
	BG=$!
	run -1 --separate-stderr as_user "$U/lp-record" -d 1 -p "$BG"
	[ "${stderr_lines[1]}" = "lp-record: the kernel refused perf events on the targets (Permission denied; kernel.perf_event_paranoid = $(cat /proc/sys/kernel/perf_event_paranoid)): an ordinary user may sample only processes they could ptrace (their own, not setuid)" ]
	[ -z "$output" ]
	# As root, --backend perf is refused for what it cannot do, exit 2.
	run -2 --separate-stderr lp-record --backend perf --mode wall -d 1 -- "$U/cpusplit" 1
	[ "$stderr" = "lp-record: --backend perf samples on the CPU only (not --mode wall)" ]
}

@test "kernel.perf_event_paranoid 3 (Debian's kernels: no perf events for ordinary users): the message says so, exit 1" {
	user_setup cpusplit noperf
	# This kernel treats 3 as 2, as upstream does; Debian's patch makes
	# perf_event_open fail EACCES for ordinary users at 3, which noperf
	# reproduces with a seccomp filter.
	PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid)
	echo 3 > /proc/sys/kernel/perf_event_paranoid
	run -1 --separate-stderr as_user "$U/noperf" "$U/lp-record" -d 1 -- "$U/cpusplit" 1
	[ "${stderr_lines[0]}" = "$NOTE" ]
	[ "${stderr_lines[1]}" = "lp-record: the kernel forbids perf events to ordinary users (kernel.perf_event_paranoid = 3): as root, sysctl kernel.perf_event_paranoid=2, or run lp-record as root" ]
	[ -z "$output" ]
}

@test "lp-trace as an ordinary user: what tracing needs and what works without, exit 1; --list works" {
	user_setup cpusplit
	cp "$LP_BUILD/bin/lp-trace" "$U/"
	run -1 --separate-stderr as_user "$U/lp-trace" -d 1 a -- "$U/cpusplit" 1
	[ "${stderr_lines[0]}" = "lp-trace: tracing needs root, or CAP_BPF and CAP_PERFMON (missing: CAP_BPF CAP_PERFMON): the kernel lets no ordinary user place uprobes or attach BPF programs to them" ]
	[ "${stderr_lines[1]}" = "lp-trace: without them: lp-record -- CMD (or -p PID) samples your own processes through perf events; lp-trace --list, --lines and --vars need no privileges" ]
	[ -z "$output" ]
	run -0 as_user "$U/lp-trace" --list 'a' "$U/cpusplit"
	[[ ${lines[0]} == $'func\ta\t'"$U/cpusplit"$'\t'* ]] || fail "--list: ${lines[0]}"
}

@test "--backend perf as root: kernel frames too, and the same 25/75 within 3 points" {
	require_root
	run -0 --separate-stderr lp-record --backend perf -F 999 -o "$T/root.lp" -- "$WORKLOADS/cpusplit" 30 2
	head -1 "$T/root.lp" | grep -q $'\tbackend=perf' || fail "no backend=perf"
	run -1 grep -q $'\tuser_only=1' "$T/root.lp"
	lp-collapse "$T/root.lp" > "$T/root.folded"
	s=$(share_a "$T/root.folded")
	near_25 "$s" || fail "a() is $s%"
	# The clock reads cpusplit makes enter the kernel: named from kallsyms.
	grep -qE $'^frame\t[0-9a-f]{16}\tk\t-\t\\[kernel.kallsyms\\]\t[a-z_]' "$T/root.lp" ||
		fail "no kernel frame"
}

@test "an ordinary user: SIGINT drains and ends the command; pause and resume on --control stop the sampling between" {
	user_setup cpusplit
	as_user "$U/lp-record" -F 999 --control "$U/ctl" -o "$U/c.lp" -- "$U/cpusplit" 30 2> "$T/err" &
	BG=$!
	for _ in $(seq 100); do
		if [ -p "$U/ctl" ] && grep -q '^cost' "$U/c.lp" 2>/dev/null; then break; fi
		sleep 0.05
	done
	sleep 0.5
	echo pause > "$U/ctl"
	sleep 0.3
	paused=$(monotonic_ns)
	sleep 1
	resumed=$(monotonic_ns)
	echo resume > "$U/ctl"
	sleep 0.8
	# BG is the shell that runs setpriv: the signal goes to lp-record.
	pkill -INT -u "$LP_TEST_UID" -x lp-record
	reap "$BG" 0 5 || fail "lp-record did not drain within 5 s of SIGINT: $(cat "$T/err")"
	BG=
	grep -q '(Interrupt)$' "$T/err" || fail "$(cat "$T/err")"
	run -1 pgrep -u "$LP_TEST_UID" -x cpusplit
	run -0 lp-cat --check "$U/c.lp"
	run -0 awk -F'\t' -v a="$paused" -v b="$resumed" '$1 == "sample" && $2 > a && $2 < b { n++ } END { print n + 0 }' "$U/c.lp"
	[ "$output" -eq 0 ] || fail "$output samples while paused"
	run -0 awk -F'\t' -v a="$paused" '$1 == "sample" && $2 < a { n++ } END { print n + 0 }' "$U/c.lp"
	[ "$output" -ge 100 ] || fail "$output samples before the pause"
	run -0 awk -F'\t' -v b="$resumed" '$1 == "sample" && $2 > b { n++ } END { print n + 0 }' "$U/c.lp"
	[ "$output" -ge 100 ] || fail "$output samples after the resume"
}

# cpu_ticks PID: the process's user and system CPU time so far, in clock
# ticks (/proc/PID/stat's utime and stime; the name in parentheses may
# hold spaces, the fields after it do not).
cpu_ticks() {
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

@test "Debian's redis-server run by an ordinary user, under load: the user's profile is root's, user space alike within 12 points" {
	user_setup
	require_cmd redis-server
	require_cmd redis-benchmark
	port=$(free_port)
	as_user redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$U" --daemonize no >"$T/redis.log" 2>&1 3>&- &
	BG=$!
	for _ in $(seq 100); do
		if redis-cli -p "$port" ping >/dev/null 2>&1; then break; fi
		sleep 0.1
	done
	pid=$(pgrep -u "$LP_TEST_UID" -x redis-server)
	[ -n "$pid" ] || fail "redis-server did not start: $(cat "$T/redis.log")"
	redis-benchmark -p "$port" -q -c 8 -P 8 -n 1000000000 -t set,get >/dev/null 2>&1 3>&- &
	load=$!
	sleep 0.5
	# The user's recording (perf events), then root's (BPF, every sample,
	# in the kernel too), of the same steady load: one at a time, since
	# side by side each sampler's cost (20-60 us a sample) lands in the
	# other's samples and their clocks drift apart under a busy machine.
	# Each recording's share of redis' CPU time (user and system, in
	# clock ticks): the machine may give redis less in one than in the
	# other.
	local c0 c1 c2
	c0=$(cpu_ticks "$pid")
	as_user "$U/lp-record" -F 999 -d 5 -p "$pid" -o "$U/user.lp" 2>"$T/user.err" 3>&- ||
		fail "$(cat "$T/user.err")"
	c1=$(cpu_ticks "$pid")
	lp-record -F 999 -d 5 -p "$pid" -o "$T/root.lp" 2>"$T/root.err" || fail "$(cat "$T/root.err")"
	c2=$(cpu_ticks "$pid")
	kill "$load"
	run -0 redis-cli -p "$port" shutdown nosave
	reap "$BG" 0 10 || fail "redis-server did not end"
	BG=
	grep -q $'\tuser_only=1' "$U/user.lp" || fail "no user_only=1"
	# Known truth: the event loop runs every command.
	read -r main_u n_u _ < <(awk -v FUNC=aeMain -f "$LP_TOP/tests/helpers/user-share.awk" "$U/user.lp")
	echo "user: aeMain in $main_u% of $n_u samples"
	awk -v s="$main_u" 'BEGIN { exit !(s >= 90) }' || fail "aeMain in $main_u%"
	# The two backends' clocks differ (lp-record(1), --backend): per CPU
	# and per thread.  Quiet, with ~1,300 user-space samples each, they
	# agree within 3 points (each share's standard error, measured by
	# batches, 1-2 points).  Beside a CPU-bound job, where redis is
	# preempted often, recorded one at a time they were 1.6-6.6 points
	# apart (side by side: 5.4-14.4, root's the higher share): the clocks'
	# doing, about half of it in the samples the kernel held back to a
	# system call's return.
	# A backend that lost a frame would miss by 30 points or more (each
	# function here holds 15-70% of the samples).  So: within 12 points,
	# or 3 standard errors of the difference where the spread is wider.
	local f su eu sr n_r er
	for f in processCommand readQueryFromClient _writeToClient; do
		read -r su n_u eu < <(awk -v FUNC="$f" -f "$LP_TOP/tests/helpers/user-share.awk" "$U/user.lp")
		read -r sr n_r er < <(awk -v FUNC="$f" -f "$LP_TOP/tests/helpers/user-share.awk" "$T/root.lp")
		echo "$f: the user's $su% (+-$eu) of $n_u, root's $sr% (+-$er) of $n_r user-space samples"
		[ "$n_u" -ge 200 ] || fail "$n_u user-space samples of the user's: too few to compare"
		awk -v a="$su" -v b="$sr" -v ea="$eu" -v eb="$er" 'BEGIN {
			d = a - b; bar = 3 * sqrt(ea * ea + eb * eb); if (bar < 12) bar = 12
			exit !(d <= bar && d >= -bar) }' || fail "$f: $su% (+-$eu) against root's $sr% (+-$er)"
	done
	# As many samples in user space for each second of redis' CPU time,
	# none lost but the kernel's, as far as the clocks agree: the user's
	# were 0.9-1.2 of root's quiet, 0.71-0.77 beside a CPU-bound job.
	echo "redis' CPU time: $((c1 - c0)) ticks under the user's recording, $((c2 - c1)) under root's"
	awk -v a="$n_u" -v b="$n_r" -v ta="$((c1 - c0))" -v tb="$((c2 - c1))" \
		'BEGIN { exit !(ta > 0 && tb > 0 && a / ta >= 0.6 * b / tb) }' ||
		fail "$n_u user-space samples in $((c1 - c0)) ticks against root's $n_r in $((c2 - c1))"
	run -1 grep -c '^lost' "$U/user.lp"
}
