#!/usr/bin/env bats
# Filters on live pipes: a second SIGINT writes what was read, complete
# records only, then the filter dies of SIGINT (a third kills it at once);
# an input gone quiet never leaves records waiting in an output buffer.
#
# The producer here writes a whole stream (and maybe the start of one more
# line) into a FIFO and keeps it open, as a producer upstream does while it
# drains.  drained waits until the filter has read every byte of it.
#
# The producers (lp-record, lp-trace) share one shell (lib/capture/
# producer.h): the same ends, statuses and messages, checked here for both
# at once.

load helpers/common
load helpers/producers

setup() {
	T=$BATS_TEST_TMPDIR
	# A joined stream of known content: 300 spans of probe "req", one
	# sample in each (tests/fixtures/join/gen-split.awk).
	awk -v n=300 -v dist=perm -v S="$T/s.lp" -v P="$T/p.lp" -f "$FIXTURES/join/gen-split.awk"
	lp-join "$T/s.lp" "$T/p.lp" > "$T/j.lp"
	FEEDER=
}

teardown() {
	if [ -n "$FEEDER" ]; then kill "$FEEDER" 2>/dev/null || :; fi
}

# feed FIFO FILE [TAIL]: FILE, then TAIL (no newline), into a new FIFO that
# stays open for a minute.
feed() {
	mkfifo "$1"
	{ cat "$2"; printf '%s' "${3:-}"; touch "$1.sent"; exec sleep 60; } > "$1" &
	FEEDER=$!
}

# drained FIFO: waits until everything fed into FIFO is written and the
# FIFO holds no unread byte (the filter has read it all).
drained() {
	local i n
	for i in $(seq 200); do
		if [ -e "$1.sent" ]; then
			n=$(python3 -c 'import fcntl, os, struct, sys, termios
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
print(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0])' "$1")
			if [ "$n" = 0 ]; then return 0; fi
		fi
		sleep 0.05
	done
	echo "$1 was not read within 10 s" >&2
	return 1
}

# ended PID STATUS: PID exits within 10 s, with STATUS.
ended() {
	local i rc=0
	for i in $(seq 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -KILL "$1"
		echo "pid $1 still running after 10 s" >&2
		return 1
	fi
	wait "$1" || rc=$?
	[ "$rc" -eq "$2" ] || { echo "pid $1 exited with $rc, not $2" >&2; return 1; }
}

# stop_twice PID: the first SIGINT, which a filter reads on through, then a
# second; PID must end with 130 (killed by SIGINT, after its output).
stop_twice() {
	kill -INT "$1"
	sleep 0.3
	kill -0 "$1"	# still reading after the first
	kill -INT "$1"
	ended "$1" 130
}

# lines_within N FILE PATTERN: FILE has N lines matching PATTERN within 10 s.
lines_within() {
	local i
	for i in $(seq 100); do
		if [ "$(grep -c "$3" "$2" 2>/dev/null)" = "$1" ]; then return 0; fi
		sleep 0.1
	done
	echo "$2: $(grep -c "$3" "$2") lines like '$3', not $1, after 10 s" >&2
	return 1
}

# --- the second SIGINT ---------------------------------------------------

@test "lp-cat: a second SIGINT writes every complete record read, no partial last line" {
	lp-cat "$T/j.lp" > "$T/want"
	feed "$T/in" "$T/j.lp" $'sample\t99'
	lp-cat --output "$T/out" "$T/in" 2> "$T/err" &
	pid=$!
	drained "$T/in"
	stop_twice "$pid"
	cmp "$T/want" "$T/out"
	[ "$(grep -c '^sample' "$T/out")" -eq 301 ]
	# said once, and no complaint about the cut-off line
	run -0 cat "$T/err"
	[ "$output" = "lp-cat: stopped by a second SIGINT: the output holds the complete records read before it" ]
}

@test "lp-symbolize: a second SIGINT writes every record read" {
	lp-symbolize "$T/j.lp" > "$T/want"
	feed "$T/in" "$T/j.lp"
	lp-symbolize "$T/in" > "$T/out" 2>/dev/null &
	pid=$!
	drained "$T/in"
	stop_twice "$pid"
	cmp "$T/want" "$T/out"
}

@test "lp-collapse: a second SIGINT writes the aggregate of what was read, complete lines only" {
	# folded input: a cut-off last line would read as a whole sample
	printf 'main;work 5\nmain;idle 3\nmain;work 2\n' > "$T/f.folded"
	feed "$T/in" "$T/f.folded" 'main;work 1'
	lp-collapse "$T/in" > "$T/out" 2>/dev/null &
	pid=$!
	drained "$T/in"
	stop_twice "$pid"
	[ "$(cat "$T/out")" = $'main;idle 3\nmain;work 7' ]

	lp-collapse "$T/j.lp" > "$T/want"
	rm -f "$T/in" "$T/in.sent"
	kill "$FEEDER"
	feed "$T/in" "$T/j.lp"
	lp-collapse --output "$T/out2" "$T/in" 2>/dev/null &
	pid=$!
	drained "$T/in"
	stop_twice "$pid"
	cmp "$T/want" "$T/out2"
	[ "$(awk '{ s += $NF } END { print s }' "$T/out2")" -eq 30100 ]
}

@test "lp-diff: a second SIGINT writes the difference of what was read" {
	lp-diff "$T/s.lp" "$T/j.lp" > "$T/want"
	feed "$T/in" "$T/j.lp"
	lp-diff "$T/s.lp" "$T/in" > "$T/out" 2>/dev/null &
	pid=$!
	drained "$T/in"
	stop_twice "$pid"
	cmp "$T/want" "$T/out"
}

@test "lp-diff: after the second SIGINT no pipe is waited on, even one opened later" {
	: > "$T/empty"
	lp-diff "$T/s.lp" "$T/empty" > "$T/want"
	feed "$T/after" "$T/j.lp"
	after=$FEEDER
	feed "$T/before" "$T/s.lp"
	lp-diff "$T/before" "$T/after" > "$T/out" 2>/dev/null &
	pid=$!
	drained "$T/before"
	# AFTER is opened once BEFORE ends: at the stop, and it is not read
	stop_twice "$pid"
	kill "$after" 2>/dev/null || :	# gone if AFTER was closed unread (SIGPIPE)
	cmp "$T/want" "$T/out"
}

@test "lp-join: a second SIGINT joins and writes every sample read" {
	lp-join --output "$T/joined" "$T/s.lp" "$T/p.lp"
	sort "$T/joined" > "$T/want"
	feed "$T/in" "$T/p.lp"
	lp-join --output "$T/out" "$T/s.lp" "$T/in" 2>/dev/null &
	pid=$!
	drained "$T/in"
	stop_twice "$pid"
	sort "$T/out" | cmp "$T/want" -
	[ "$(grep -c $'^sample.*\tspan=req' "$T/out")" -eq 300 ]
}

@test "lp-split: a second SIGINT writes the groups and the report of what was read" {
	for mode in --live ""; do
		# above p90: 30 of the 300 samples; --live's estimate, 29
		rm -f "$T"/in* "$T"/[ab]* "$T"/r*
		lp-split $mode --percentile 90 --probe req --above "$T/a.want" --below "$T/b.want" \
			--report "$T/r.want" "$T/j.lp"
		feed "$T/in" "$T/j.lp" $'span\t1'
		lp-split $mode --percentile 90 --probe req --above "$T/a" --below "$T/b" \
			--report "$T/r" "$T/in" 2>/dev/null &
		pid=$!
		drained "$T/in"
		stop_twice "$pid"
		cmp "$T/a.want" "$T/a"
		cmp "$T/b.want" "$T/b"
		cmp "$T/r.want" "$T/r"
		[ "$(grep -c '^sample' "$T/a")" -eq "$([ "$mode" ] && echo 29 || echo 30)" ]
		kill "$FEEDER"
	done
}

@test "lp-top --once: a second SIGINT writes the report of what was read" {
	lp-top --once --all "$T/j.lp" > "$T/want"
	feed "$T/in" "$T/j.lp"
	lp-top --once --all "$T/in" > "$T/out" 2>/dev/null &
	pid=$!
	drained "$T/in"
	stop_twice "$pid"
	cmp "$T/want" "$T/out"
	grep -q 'slow' "$T/out"
}

@test "a third SIGINT ends a filter at once, even one blocked on its output" {
	[ "${LP_SANITIZER:-}" != tsan ] ||
		skip "ThreadSanitizer holds signals back while a thread is blocked in write(2)"
	for i in $(seq 40); do cat "$T/j.lp"; done > "$T/big.lp"
	# nobody reads lp-cat's output: it blocks in write
	lp-cat "$T/big.lp" > >(exec sleep 60) 2>/dev/null &
	pid=$!
	for i in $(seq 100); do
		if [[ $(cat "/proc/$pid/wchan") == *pipe_write ]]; then break; fi
		sleep 0.1
	done
	[[ $(cat "/proc/$pid/wchan") == *pipe_write ]] || false
	kill -INT "$pid"; sleep 0.2; kill -INT "$pid"; sleep 0.2
	kill -0 "$pid"	# still trying to write what it read
	kill -INT "$pid"
	ended "$pid" 130
}

# --- an input gone quiet -------------------------------------------------

@test "lp-cat and lp-symbolize: what was read is written while the input is open" {
	feed "$T/in" "$T/j.lp"
	lp-cat "$T/in" > "$T/cat" &
	pid=$!
	lines_within 301 "$T/cat" '^sample'
	kill "$FEEDER"
	ended "$pid" 0
	cmp "$T/j.lp" "$T/cat"

	rm -f "$T/in" "$T/in.sent"
	feed "$T/in" "$T/j.lp"
	lp-symbolize "$T/in" > "$T/sym" &
	pid=$!
	lines_within 301 "$T/sym" '^sample'
	kill "$FEEDER"
	ended "$pid" 0
}

@test "lp-split --live and --label: what was read is in the groups while the input is open" {
	feed "$T/in" "$T/j.lp"
	lp-split --live --percentile 90 --probe req --above "$T/a" --below "$T/b" --quiet "$T/in" &
	pid=$!
	lines_within 271 "$T/b" '^sample'
	lines_within 279 "$T/b" '^span'
	kill "$FEEDER"
	ended "$pid" 0
	[ "$(grep -c '^sample' "$T/a")" -eq 29 ]

	rm -f "$T/in" "$T/in.sent"
	feed "$T/in" "$T/j.lp"
	lp-split --threshold 150us --probe req --label --output "$T/l" --quiet "$T/in" &
	pid=$!
	lines_within 301 "$T/l" '^sample'
	kill "$FEEDER"
	ended "$pid" 0
	[ "$(grep -c $'^sample.*\tgroup=above' "$T/l")" -eq 150 ]
}

# --- the producers: one shell ---------------------------------------------

@test "producers: a started command's end is theirs: N, or 128+N and 'CMD killed by signal N (NAME)'; asked to stop, 0" {
	require_root
	load_bats_libs
	local p
	for p in $PRODUCERS; do
		run -3 --separate-stderr $(producer_args "$p") -o "$T/$p.lp" -- sh -c 'exit 3'
		run -0 lp-cat --check "$T/$p.lp"
		run -134 --separate-stderr $(producer_args "$p") -o "$T/$p.lp" -- sh -c 'kill -ABRT $$'
		[ "${stderr_lines[-1]}" = "$p: sh killed by signal 6 (Aborted)" ] || fail "$p: $stderr"
		run -0 lp-cat --check "$T/$p.lp"
		run -139 --separate-stderr $(producer_args "$p") -o "$T/$p.lp" -- sh -c 'kill -SEGV $$'
		[ "${stderr_lines[-1]}" = "$p: sh killed by signal 11 (Segmentation fault)" ] || fail "$p: $stderr"
		# SIGTERM from someone else asks it to stop: said, no failure
		run -0 --separate-stderr $(producer_args "$p") -o "$T/$p.lp" -- sh -c 'kill -TERM $$'
		[ "${stderr_lines[-1]}" = "$p: sh killed by signal 15 (Terminated)" ] || fail "$p: $stderr"
		# their own SIGTERM at the end of -d is no failure, and not said
		run -0 --separate-stderr $(producer_args "$p") -d 300ms -o "$T/$p.lp" -- sleep 10
		[[ $stderr != *"killed by"* ]] || fail "$p: $stderr"
	done
}

@test "producers: a closed output that only hangs up (a socket's peer gone, POLLHUP) ends both at once: exit 0, the command ended, the summary says why" {
	require_root
	require_cmd python3
	load_bats_libs
	local p
	for p in $PRODUCERS; do
		# an idle command: nothing to write, so no EPIPE tells them;
		# -v: lp-trace says its summary only then, or with losses
		run -0 closed_socket_end $(producer_args "$p") -v -- sleep "30.$$"
		[[ ${lines[0]} =~ ^"exit 0 "([0-9.]+)$ ]] || fail "$p: $output"
		awk -v s="${BASH_REMATCH[1]}" 'BEGIN { exit !(s < 2) }' || fail "$p ended ${BASH_REMATCH[1]} s after the close"
		# the summary, and nothing but the summary (lp-record's says
		# more when a sample of sleep had a truncated stack)
		[ "$(printf '%s\n' "${lines[@]:1}" | grep -vc "^$p: ")" -eq 0 ] || fail "$p: $output"
		[[ $output != *"cannot"* ]] || fail "$p: $output"
		[[ ${lines[1]} =~ ^"$p: "[0-9]+" "(samples|records).*" (output closed)"$ ]] || fail "$p: $output"
		run -1 pgrep -f "sleep 30.$$"
	done
}

# (A second SIGINT: lp-record.bats and lp-trace.bats, second_sigint_kills.)
@test "producers: a first SIGINT stops both alike: exit 0, a whole stream, the summary says why" {
	require_root
	local p pid
	for p in $PRODUCERS; do
		# -v: lp-trace says its summary only then, or with losses
		$(producer_args "$p") -v -o "$T/$p.lp" -- sleep "30.$$" 2>"$T/$p.err" &
		pid=$!
		wait_file "$T/$p.lp"
		sleep 0.5
		kill -INT "$pid"
		reap "$pid" 0 10
		lp-cat --check "$T/$p.lp"
		grep -qE "^$p: [0-9]+ (samples|records).* \\(Interrupt\\)\$" "$T/$p.err" ||
			{ cat "$T/$p.err"; echo "$p: no summary ending '(Interrupt)'"; false; }
		# the command, still running, was asked to stop: not said
		if grep -q "killed by" "$T/$p.err"; then cat "$T/$p.err"; false; fi
		if pgrep -f "sleep 30.$$"; then echo "$p left its command running"; false; fi
	done
}
