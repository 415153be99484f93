#!/usr/bin/env bats
# lp-trace --control and lp-record --control: probes added and removed
# while tracing, on tests/workloads/ticks.c, whose every call's index and
# times are logged, so the spans are checked against the calls made while
# the probe was there.

load helpers/common
load helpers/producers
load helpers/bpf

# ticks COUNT LOG [US]: tests/workloads/ticks in the background, $WL.
ticks() {
	"$WORKLOADS/ticks" "$@" &
	WL=$!
	KILL_AFTER=$WL
}

# control_trace OUTPUT [OPTION...]: lp-trace --control $T/ctl on $WL with
# syscall:getppid (never called: a probe that is no function's) to
# OUTPUT, its stderr to $T/err, in the background: $TR.
control_trace() {
	local out=$1
	shift
	lp-trace --control "$T/ctl" -p "$WL" -o "$out" "$@" 'syscall:getppid' 2>"$T/err" &
	TR=$!
	KILL_AFTER="$WL $TR"
}

@test "lp-trace --control: add, status, a bad command, remove; spans only while attached, as many as the calls" {
	require_root
	ticks 6000 "$T/calls"
	wait_file "$T/calls"
	control_trace "$T/s.lp"
	wait_line '^probe	[0-9]*	attach	syscall:getppid' "$T/s.lp"
	[ -p "$T/ctl" ] || fail "no FIFO made"
	echo 'add tick(i)' >"$T/ctl"
	wait_line "control: added 'tick(i)'" "$T/err"
	sleep 1.5
	echo 'status' >"$T/ctl"
	echo 'frobnicate now' >"$T/ctl"
	echo 'add no_such_function' >"$T/ctl"
	echo 'remove no_such_probe' >"$T/ctl"
	wait_line "remove 'no_such_probe'" "$T/err"
	echo 'remove tick(i)' >"$T/ctl"
	wait_line "control: removed 'tick(i)'" "$T/err"
	sleep 1
	kill -INT "$TR"
	wait "$TR" || fail "lp-trace exited $?"
	kill "$WL"

	# Replies and complaints on stderr; lp-trace went on after them.
	grep -q "status: probe 'tick' (tick(i)): [1-9][0-9]* records, attached" "$T/err" || fail "no status of tick: $(cat "$T/err")"
	grep -q "status: probe 'syscall:getppid' (syscall:getppid): 0 records" "$T/err" || fail "no status of getppid"
	grep -qF "lp-trace: control: unknown command 'frobnicate now' (add PROBE, remove PROBE, status)" "$T/err" || fail "no message for the bad command"
	grep -qF "lp-trace: control: add 'no_such_function': nothing added" "$T/err" || fail "no message for the bad probe"
	grep -qF "lp-trace: control: remove 'no_such_probe': no such probe attached" "$T/err" || fail "no message for the bad remove"
	[ ! -e "$T/ctl" ] || fail "the FIFO lp-trace made is still there"

	local a d
	a=$(awk -F'\t' '$1 == "probe" && $3 == "attach" && $4 == "tick" { print $2 }' "$T/s.lp")
	d=$(awk -F'\t' '$1 == "probe" && $3 == "detach" && $4 == "tick" { print $2 }' "$T/s.lp")
	[ -n "$a" ] || fail "no attach record"
	[ -n "$d" ] || fail "no detach record"
	[ "$(grep -c '^probe' "$T/s.lp")" -eq 3 ] || fail "not 3 probe records: $(grep '^probe' "$T/s.lp")"
	# tick's instruction class was not calibrated at the start (a system
	# call probe alone): it was when added, its cost records written, its
	# spans given lp_ns=.
	grep -q "^cost	[0-9]*	entry	[0-9.]*	probe=tick	" "$T/s.lp" || fail "no entry cost of tick"
	grep -q "^cost	[0-9]*	return	[0-9.]*	probe=tick	" "$T/s.lp" || fail "no return cost of tick"
	run -0 awk -F'\t' '$1 == "span" && $6 == "tick" { n++; if ($0 !~ /\tlp_ns=[0-9]+/) bad++ } END { print (n > 0), bad + 0 }' "$T/s.lp"
	assert_output "1 0"
	# Every span of tick is a call the workload made, inside [attach, detach].
	awk -F'\t' -v a="$a" -v d="$d" '
		FNR == NR { s[$1] = $2; e[$1] = $3; next }
		$1 == "span" && $6 == "tick" {
			n++; i = ""
			for (k = 8; k <= NF; k++) if ($k ~ /^i=/) i = substr($k, 3)
			if (!(i in s)) { print "span of no call: " $0; bad = 1 }
			if ($2 < a || $3 > d) { print "span outside [" a ", " d "]: " $0; bad = 1 }
			# Its probes fire inside the call as the workload timed it.
			if ($2 < s[i] || $3 > e[i]) { print "span not within call " i ": " $0; bad = 1 }
			seen[i] = 1
		}
		END {
			# The calls made wholly between attach and detach, less
			# those in the first 30 ms (from the time on the record,
			# taken just before the entry link is made, to the
			# link in place): each one a span.
			for (i in s) if (s[i] > a + 30000000 && e[i] < d) { want++; if (!(i in seen)) { miss++; print "missed " i " at " (s[i] - a) / 1e6 " ms after attach, " (d - e[i]) / 1e6 " ms before detach" } }
			printf "spans %d, calls inside %d, missed %d\n", n, want, miss
			if (n < 300 || miss > 0) bad = 1
			exit bad
		}' FS=' ' "$T/calls" FS='\t' "$T/s.lp" || fail "spans do not match the calls"
}

@test "lp-trace --control: a removed probe in libc leaves uprobe_events; SIGINT after adds leaves nothing attached" {
	require_root
	local tfs=/sys/kernel/tracing
	ticks 6000 /dev/null
	sleep 0.2
	control_trace "$T/s.lp"
	wait_line '^probe	' "$T/s.lp"
	# libc's probes are tracefs events (other processes map libc).
	echo 'add libc:getpid' >"$T/ctl"
	wait_line "control: added 'libc:getpid'" "$T/err"
	grep -q "^[pr]:lp_$TR/" "$tfs/uprobe_events" || fail "no tracefs event for libc:getpid"
	echo 'remove libc:getpid' >"$T/ctl"
	wait_line "control: removed 'libc:getpid'" "$T/err"
	run -1 grep "^[pr]:lp_$TR/" "$tfs/uprobe_events"
	echo 'add tick(i)' >"$T/ctl"
	echo 'add libc:getpid' >"$T/ctl"
	wait_line "control: added 'libc:getpid'" "$T/err"
	wait_line "^span	.*	tick	" "$T/s.lp"
	local progs links
	progs=$(held_ids "$TR" prog_id)
	links=$(held_ids "$TR" link_id)
	[ -n "$links" ] || fail "no links held"
	kill -INT "$TR"
	wait "$TR" || fail "lp-trace exited $?"
	kill "$WL"
	all_gone "$progs" "$links"
	# The tracefs events go in a process of their own, after lp-trace.
	for _ in $(seq 100); do
		if ! grep -q "^[pr]:lp_$TR/" "$tfs/uprobe_events"; then break; fi
		sleep 0.1
	done
	run -1 grep "^[pr]:lp_$TR/" "$tfs/uprobe_events"
	# Two attach records of libc:getpid, one detach; tick's attach.
	run -0 awk -F'\t' '$1 == "probe" { print $3, $4 }' "$T/s.lp"
	assert_output "attach syscall:getppid
attach libc:getpid
detach libc:getpid
attach tick
attach libc:getpid"
}

# Calls of 20 ms, one after the other: a removal almost always finds one
# in progress.  Such a call ends after the detach record: its span is not
# written (its end would be the return of a probe no longer there), and
# open= counts it, as the workload's log says.
@test "lp-trace --control: remove during a call: its span dropped and counted in open=, none after the detach" {
	require_root
	local round a d
	for round in 1 2 3; do
		ticks 400 "$T/calls" 20000
		wait_file "$T/calls"
		control_trace "$T/s.lp" --calibrate 0
		wait_line '^probe	' "$T/s.lp"
		echo 'add tick' >"$T/ctl"
		wait_line "control: added 'tick'" "$T/err"
		sleep 0.5
		echo 'remove tick' >"$T/ctl"
		wait_line "control: removed 'tick'" "$T/err"
		sleep 0.2
		kill -INT "$TR"
		wait "$TR" || fail "lp-trace exited $?"
		kill "$WL"
		a=$(awk -F'\t' '$1 == "probe" && $3 == "attach" && $4 == "tick" { print $2 }' "$T/s.lp")
		d=$(awk -F'\t' '$1 == "probe" && $3 == "detach" && $4 == "tick" { print $2 }' "$T/s.lp")
		run -0 awk -F'\t' -v d="$d" '$1 == "span" && $6 == "tick" && $3 > d' "$T/s.lp"
		assert_output ""
		# open= is the number of calls in progress at the detach (the
		# log's), entered after the attach.
		run -0 awk -v a="$a" -v d="$d" '$2 >= a && $2 < d && $3 > d { n++ } END { print "open=" n + 0 }' "$T/calls"
		echo "round $round: $output"
		grep -q "	detach	tick	spec=tick	$output\$" "$T/s.lp" || fail "detach record: $(grep detach "$T/s.lp"), the calls: $output"
		# The next round waits for its own probe record and FIFO: an
		# echo before lp-trace made the FIFO would make a plain file.
		rm -f "$T/calls" "$T/s.lp"
	done
}

# A closed output ends it as a signal does: the probes added live go too.
@test "lp-trace --control: a closed output after an add leaves nothing attached" {
	require_root
	ticks 6000 /dev/null
	mkfifo "$T/pipe"
	control_trace "$T/pipe"
	exec 8<"$T/pipe"
	wait_file "$T/ctl"
	echo 'add tick(i)' >"$T/ctl"
	echo 'add libc:getpid' >"$T/ctl"
	wait_line "control: added 'libc:getpid'" "$T/err"
	local progs links
	progs=$(held_ids "$TR" prog_id)
	links=$(held_ids "$TR" link_id)
	[ -n "$links" ] || fail "no links held"
	exec 8<&-
	wait "$TR" || fail "lp-trace exited $?"
	kill "$WL"
	all_gone "$progs" "$links"
	for _ in $(seq 100); do
		if ! grep -q "^[pr]:lp_$TR/" /sys/kernel/tracing/uprobe_events; then break; fi
		sleep 0.1
	done
	run -1 grep "^[pr]:lp_$TR/" /sys/kernel/tracing/uprobe_events
}

@test "lp-trace --control: a path that is not a FIFO is refused" {
	require_root
	: >"$T/plain"
	run -1 lp-trace --control "$T/plain" -d 1 tick -- "$WORKLOADS/ticks" 10
	assert_output --partial "lp-trace: --control: $T/plain is not a FIFO"
}

# Samples counted as the stream grows (lp-record flushes every 25 ms).
nsamples() { awk '/^sample/ { n++ } END { print n + 0 }' "$1"; }

@test "lp-record --control: status, pause (no sample while paused), resume; a bad command changes nothing" {
	require_root
	"$WORKLOADS/cpusplit" 30 &
	local wl=$!
	KILL_AFTER=$wl
	lp-record -F 499 --calibrate 0 --control "$T/ctl" -p "$wl" -o "$T/r.lp" 2>"$T/err" &
	local rec=$!
	KILL_AFTER="$wl $rec"
	wait_line '^sample' "$T/r.lp"
	echo status >"$T/ctl"
	wait_line "lp-record: status: [0-9]* samples" "$T/err"
	echo 'frobnicate now' >"$T/ctl"
	wait_line "lp-record: control: unknown command 'frobnicate now' (status, pause, resume, inside FUNC, inside off)" "$T/err"
	echo pause >"$T/ctl"
	wait_line "lp-record: control: paused" "$T/err"
	sleep 0.3
	local n1 n2 n3
	n1=$(nsamples "$T/r.lp")
	sleep 1
	n2=$(nsamples "$T/r.lp")
	echo resume >"$T/ctl"
	wait_line "lp-record: control: resumed" "$T/err"
	sleep 1
	n3=$(nsamples "$T/r.lp")
	kill -INT "$rec"
	wait "$rec" || fail "lp-record exited $?"
	kill "$wl"
	echo "samples: $n1 at the pause, $n2 a second later, $n3 a second after the resume"
	# A spinning thread at 499 Hz: up to 500 samples a second (186 with
	# the machine shared), none while paused.
	[ "$n2" -eq "$n1" ] || fail "samples taken while paused: $n1 -> $n2"
	[ "$n3" -ge $((n2 + 50)) ] || fail "too few samples after the resume: $n2 -> $n3"
	[ ! -e "$T/ctl" ] || fail "the FIFO is still there"
}
