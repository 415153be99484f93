#!/usr/bin/env bats
# lp-top: exact shares on synthetic streams, the sliding window, half-life
# weights, plain periodic output that a silent producer cannot hold back, and
# the live view on a real terminal (tmux).
load helpers/common

teardown() {
	if [ -n "${TMUX_SOCK:-}" ]; then
		tmux -L "$TMUX_SOCK" kill-server 2>/dev/null || true
	fi
}

@test "lp-top: --help lists every option the man page documents, --version, bad usage" {
	run -0 lp-top --help
	assert_output --partial "usage: lp-top"
	for opt in $(printf '%s\n' "$output" | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		grep -qF -- "${opt//-/\\-}" "$LP_TOP/man/lp-top.1" || fail "$opt not in man/lp-top.1"
	done
	run -0 lp-top --version
	assert_output --partial "0."
	run -2 --separate-stderr lp-top --window 0s
	[ "${lines[0]:-}" = "" ]
	[ "$stderr" = "lp-top: --window '0s': must be positive" ]
	run -2 --separate-stderr lp-top --window 5s --half-life 5s
	[[ $stderr == *"exclude each other"* ]]
	run -2 lp-top --sort bogus
}

@test "lp-top --once: exact self, total and stack shares on known folded input" {
	printf 'main;a;hot 50\nmain;b 30\nmain;c;hot 20\n' > "$T/in.folded"
	run -0 lp-top --once "$T/in.folded"
	assert_line --index 0 --partial "samples 3  stacks 3  weight 100"
	assert_line --index 1 "  SELF%  TOTAL%  FUNCTION"
	assert_line --index 2 "  70.00   70.00  hot"
	assert_line --index 3 "  30.00   30.00  b"
	assert_line --index 4 "   0.00  100.00  main"
	assert_line --index 5 "   0.00   50.00  a"
	assert_line --index 6 "   0.00   20.00  c"
	assert_line --index 8 "  50.00  main;a;hot"
	assert_line --index 9 "  30.00  main;b"
	assert_line --index 10 "  20.00  main;c;hot"
	[ "${#lines[@]}" -eq 11 ]
	# The same from stdin, sorted by total, rows limited.
	run -0 lp-top --once --sort total --functions 2 --stacks 1 < "$T/in.folded"
	assert_line --index 2 "   0.00  100.00  main"
	assert_line --index 3 "  70.00   70.00  hot"
	assert_line --index 5 "  50.00  main;a;hot"
	[ "${#lines[@]}" -eq 6 ]
}

@test "lp-top: a recursive function counts once per sample in total" {
	printf 'main;f;f;f 3\nmain;g 1\n' > "$T/rec.folded"
	run -0 lp-top --once "$T/rec.folded"
	assert_line --index 2 "  75.00   75.00  f"
}

@test "lp-top --window: only the last window's samples, by their own timestamps" {
	# 200 samples 100 ms apart: a for 10 s, then b for 10 s.
	ab_stream 200 100000000 > "$T/ab.lp"
	run -0 lp-top --once --window 5s "$T/ab.lp"
	assert_line --index 0 --partial "samples 50  stacks 1  weight 50"
	assert_line --index 2 " 100.00  100.00  b"
	refute_line --regexp " a$"
	# A window longer than the stream holds both halves exactly.
	run -0 lp-top --once --window 30s "$T/ab.lp"
	assert_line --index 0 --partial "samples 200"
	assert_line --index 2 "  50.00   50.00  a"
	assert_line --index 3 "  50.00   50.00  b"
	run -0 lp-top --once --all "$T/ab.lp"
	assert_line --index 2 "  50.00   50.00  a"
	# Sub-second windows too (50 ms buckets): 50 samples 50 ms apart, the
	# last 500 ms are 10 samples of b.
	ab_stream 50 50000000 > "$T/short.lp"
	run -0 lp-top --once --window 500ms "$T/short.lp"
	assert_line --index 0 --partial "samples 10  stacks 1"
	assert_line --index 2 " 100.00  100.00  b"
}

@test "lp-top --once: the whole input by default (a window is for live input)" {
	# 200 samples 100 ms apart: 20 s, longer than the live default of 10 s
	ab_stream 200 100000000 > "$T/ab.lp"
	run -0 lp-top --once "$T/ab.lp"
	assert_line --index 0 "lp-top  all samples  at +19.9s  (end of input)  samples 200  stacks 2  weight 200"
	assert_line --index 2 "  50.00   50.00  a"
	assert_line --index 3 "  50.00   50.00  b"
	run -0 bash -c "lp-top --once < '$T/ab.lp'"
	assert_line --index 0 --partial "samples 200  stacks 2"
	# a window asked for still applies
	run -0 lp-top --once --window 10s "$T/ab.lp"
	assert_line --index 0 --partial "samples 100  stacks 1"
	# live (not --once), the default is still the last 10 s
	run -0 lp-top --interval 1h "$T/ab.lp"
	assert_line --index 0 "lp-top  window 10s  at +19.9s  (end of input)  samples 100  stacks 1  weight 100"
}

@test "lp-top --window: a sample older than the window when it comes is dropped and counted" {
	{
		ab_stream 0 1
		printf 'sample\t30000000000\t7\t7\t0\tx\tcpu-clock\t1\t000000000000000b\n'
		printf 'sample\t1000000000\t7\t7\t0\tx\tcpu-clock\t1\t000000000000000a\n'
	} > "$T/late.lp"
	run -0 lp-top --once --window 10s "$T/late.lp"
	assert_line --index 0 --partial "samples 1  stacks 1  weight 1  late 1"
	refute_output --partial "lost"
	# The input's lost records are summed in the title.
	printf 'lost\t2000000000\tring\t5\nlost\t3000000000\tunwind\t2\n' >> "$T/late.lp"
	run -0 lp-top --once --window 10s "$T/late.lp"
	assert_line --index 0 --partial "  lost 7  (end of input)"
	assert_line --index 2 " 100.00  100.00  b"
}

# Peak RSS (kB) of lp-top MODE reading FILE, read once the whole file is in
# (the writer then holds the pipe open a little longer).  Called in $(...),
# where errexit is off: each step returns on failure, lp-top's status too.
peak_rss() {
	local pid w hwm
	rm -f "$T/fifo" "$T/catdone"
	mkfifo "$T/fifo" || return 1
	lp-top --once $1 < "$T/fifo" > /dev/null &
	pid=$!
	{ cat "$2"; touch "$T/catdone"; sleep 2; } > "$T/fifo" &
	w=$!
	for _ in $(seq 600); do
		if [ -e "$T/catdone" ]; then break; fi
		sleep 0.1
	done
	sleep 0.3
	hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status") || return 1
	wait "$w" || return 1
	wait "$pid" || { echo "lp-top --once $1 exited $?" >&2; return 1; }
	echo "$hwm"
}

@test "lp-top: memory is bounded by the stacks, not the samples (1 M samples)" {
	ab_stream 1000000 1000000000 x quarters > "$T/big.lp"
	ab_stream 10000 1000000000 x quarters > "$T/small.lp"
	# The window at the end: exactly its last 10 one-second buckets.
	run -0 lp-top --once --window 10s "$T/big.lp"
	assert_line --index 0 --partial "samples 10  stacks 2  weight 10"
	run -0 lp-top --once --half-life 10s "$T/big.lp"
	assert_line --index 0 --partial "samples 1000000  stacks 2"
	if under_sanitizer; then skip "peak RSS under a sanitizer is its allocator's (make sanitize)"; fi
	for mode in "--window 10s" "--half-life 10s" "--all"; do
		small=$(peak_rss "$mode" "$T/small.lp")
		big=$(peak_rss "$mode" "$T/big.lp")
		echo "$mode: peak RSS $small kB (10 k samples), $big kB (1 M samples)"
		[ "$big" -lt $((small + 2048)) ] || fail "$mode grew from $small kB to $big kB"
	done
}

@test "lp-top --half-life: weights halve with each half-life of age" {
	# a at 1 s (weight 1), b at 6 s (weight 1), half-life 5 s: a counts
	# 1/2 at the end, so a = 1/3, b = 2/3.
	{
		ab_stream 0 1
		printf 'sample\t1000000000\t7\t7\t0\tx\tcpu-clock\t1\t000000000000000a\n'
		printf 'sample\t6000000000\t7\t7\t0\tx\tcpu-clock\t1\t000000000000000b\n'
	} > "$T/hl.lp"
	run -0 lp-top --once --half-life 5s "$T/hl.lp"
	assert_line --index 0 --partial "weight 1.5"
	assert_line --index 2 "  66.67   66.67  b"
	assert_line --index 3 "  33.33   33.33  a"
	# Ten half-lives: a weighs 2^-10 against b's 1.
	{
		ab_stream 0 1
		printf 'sample\t1000000000\t7\t7\t0\tx\tcpu-clock\t1\t000000000000000a\n'
		printf 'sample\t11000000000\t7\t7\t0\tx\tcpu-clock\t1\t000000000000000b\n'
	} > "$T/hl10.lp"
	run -0 lp-top --once --half-life 1s "$T/hl10.lp"
	assert_line --index 2 "  99.90   99.90  b"
	assert_line --index 3 "   0.10    0.10  a"
	# Decay over a long stream stays exact (renormalised internally):
	# 200 s of samples with a 100 ms half-life.
	ab_stream 2000 100000000 > "$T/long.lp"
	run -0 lp-top --once --half-life 100ms "$T/long.lp"
	assert_line --index 2 " 100.00  100.00  b"
}

@test "lp-top: perf script input, shares as lp-collapse counts them" {
	f=$CORPUS/flamegraph/test/perf-vertx-stacks-01.txt
	[ -f "$f" ] || fail "corpus file $f missing"
	total=$(set -o pipefail; lp-collapse "$f" | awk '{ s += $NF } END { print s }')
	top=$(set -o pipefail; lp-collapse "$f" | awk '{ print $NF }' | sort -n | tail -1)
	want=$(awk -v a="$top" -v b="$total" 'BEGIN { printf "%7.2f", 100 * a / b }')
	run -0 lp-top --once --all --stacks 1 "$f"
	assert_line --index 0 --partial "samples $total "
	[[ ${lines[-1]} == "$want  "* ]] || fail "top stack '${lines[-1]:0:40}' is not $want%"
}

@test "lp-top: plain text blocks every interval while the producer is silent" {
	# One sample, then 1.5 s of silence: the blocks keep coming, then a
	# final one at the end of the input.
	{ printf 'main;hot 1\n'; sleep 1.5; printf 'main;cold 1\n'; } |
		lp-top --interval 200ms > "$T/out"
	n=$(grep -c '^lp-top  window 10s' "$T/out")
	[ "$n" -ge 4 ] || fail "only $n reports in 1.5 s at 200 ms"
	grep -q 'hot' "$T/out"
	tail -n 20 "$T/out" > "$T/last"
	grep -q '(end of input)' "$T/last"
	grep -q '^  50.00   50.00  cold' "$T/last"
	# The reports during the silence show hot alone.
	grep -q '^ 100.00  100.00  hot' "$T/out"
}

@test "lp-top: bad input is reported with its line, no report, exit 1" {
	printf 'lp-stream\t1\n' > "$T/bad.lp"
	printf 'sample\t1\t1\t1\t0\tx\tcpu\t1\t00000000000000ff\n' >> "$T/bad.lp"
	run -1 --separate-stderr lp-top --once "$T/bad.lp"
	[ -z "$output" ]
	[[ $stderr == *"bad.lp:2:"* ]] || fail "stderr: $stderr"
	run -1 --separate-stderr lp-top --once "$T/missing.lp"
	[[ $stderr == "lp-top: "*missing.lp* ]]
}

@test "lp-top: man page example on a recording" {
	ab_stream 200 100000000 > "$T/recording.lp"
	cd "$T"
	run -0 lp-top --once --window 30s recording.lp
	assert_line --index 2 "  50.00   50.00  a"
}

@test "lp-top: live on a terminal (tmux): hot function on top, redrawn in place, q quits" {
	require_cmd tmux
	TMUX_SOCK=lp-top-$$-$BATS_TEST_NUMBER
	# A slow generator: 9 parts hot to 1 part cold, 20 lines a second.
	cat > "$T/gen" <<-'EOF'
	#!/bin/bash
	while :; do printf 'main;work;hot 9\nmain;idle;cold 1\n'; sleep 0.1; done
	EOF
	chmod +x "$T/gen"
	tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -x 120 -y 40 \
		"PATH='$PATH'; '$T/gen' | lp-top --interval 200ms --window 60s"
	# Wait for a view with samples (the machine may be loaded).
	for _ in $(seq 100); do
		tmux -L "$TMUX_SOCK" capture-pane -p > "$T/pane1"
		if grep -q '^  90.00   90.00  hot' "$T/pane1"; then break; fi
		sleep 0.1
	done
	cat "$T/pane1"
	assert_equal "$(sed -n 1p "$T/pane1" | cut -c1-20)" "lp-top  window 60s  "
	assert_equal "$(sed -n 3p "$T/pane1" | sed 's/ *$//')" "  SELF%  TOTAL%  FUNCTION"
	assert_equal "$(sed -n 4p "$T/pane1" | sed 's/ *$//')" "  90.00   90.00  hot"
	assert_equal "$(sed -n 5p "$T/pane1" | sed 's/ *$//')" "  10.00   10.00  cold"
	# Redrawn in place: the title stays on line 1, its sample count grows.
	n1=$(sed -n 1p "$T/pane1" | grep -oE 'samples [0-9]+' | cut -d' ' -f2)
	sleep 1
	tmux -L "$TMUX_SOCK" capture-pane -p > "$T/pane2"
	n2=$(sed -n 1p "$T/pane2" | grep -oE 'samples [0-9]+' | cut -d' ' -f2)
	[ "$n2" -gt "$n1" ] || fail "not redrawn: samples $n1 then $n2"
	[ "$(grep -c '^lp-top' "$T/pane2")" -eq 1 ]
	# q leaves: the pane's command ends and so does the session.
	tmux -L "$TMUX_SOCK" send-keys q
	for _ in $(seq 50); do
		tmux -L "$TMUX_SOCK" has-session 2>/dev/null || break
		sleep 0.1
	done
	run -1 tmux -L "$TMUX_SOCK" has-session
}

# tty_exit ACTION WANT_STATUS: lp-top live on a tmux pane's terminal, fed by
# a generator that writes hot samples until $T/next exists, then (by
# $T/tail) ends or writes a bad line; ACTION ends lp-top; the terminal's
# modes afterwards (stty -g on the pane's tty) must be those from before, and
# lp-top's exit status WANT_STATUS.
tty_exit() {
	local action=$1 want=$2 tty before after pid
	# a server of its own each time: a new one on a name just killed can
	# find the old one still going away
	TMUX_SOCK=lp-top-$$-$BATS_TEST_NUMBER-$((++tty_runs))
	rm -f "$T/ready" "$T/go" "$T/next" "$T/status"
	cat >"$T/gen" <<-EOF
	#!/bin/bash
	printf 'lp-stream\t1\nframe\t0000000000000001\tu\t-\t-\thot\t-\nstack\t000000000000000a\t0000000000000001\n'
	i=1
	while [ ! -e '$T/next' ]; do
		printf 'sample\t%d\t7\t7\t0\tx\tcpu-clock\t1\t000000000000000a\n' \$((i++ * 1000000))
		sleep 0.05
	done
	cat '$T/tail'
	EOF
	chmod +x "$T/gen"
	# sh, not an interactive bash: that would put the modes back itself.
	# The trap (a handler, not SIG_IGN, so not inherited) keeps sh alive
	# through a ^C to write the status.
	tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -x 100 -y 30 \
		"sh -c 'trap : INT TERM; touch $T/ready; while [ ! -e $T/go ]; do sleep 0.05; done;
		PATH=$PATH; $T/gen | lp-top --input-format lp --interval 100ms; echo \$? >$T/status; sleep 600'"
	tty=$(tmux -L "$TMUX_SOCK" display-message -p '#{pane_tty}')
	# the modes the pane's shell runs with, once it runs
	for _ in $(seq 100); do
		if [ -e "$T/ready" ]; then break; fi
		sleep 0.05
	done
	before=$(stty -g -F "$tty")
	touch "$T/go"
	# lp-top has the terminal (no echo, no line editing) and has drawn.
	for _ in $(seq 100); do
		tmux -L "$TMUX_SOCK" capture-pane -p >"$T/pane"
		if [ "$(stty -g -F "$tty")" != "$before" ] && grep -q 'hot$' "$T/pane"; then break; fi
		sleep 0.1
	done
	[ "$(stty -g -F "$tty")" != "$before" ] || fail "lp-top never set the terminal up"
	run stty -F "$tty"
	[[ $output == *-echo* ]] || fail "echo still on: $output"
	pid=$(pgrep -t "${tty#/dev/}" -x lp-top)
	[ -n "$pid" ]
	eval "$action"
	for _ in $(seq 100); do
		if [ -s "$T/status" ]; then break; fi
		sleep 0.1
	done
	[ -s "$T/status" ] || fail "$action: lp-top did not exit"
	after=$(stty -g -F "$tty")
	[ "$after" = "$before" ] || fail "$action: terminal left as $(stty -F "$tty")"
	[[ " $want " == *" $(cat "$T/status") "* ]] || fail "$action: exit status $(cat "$T/status"), want $want"
	tmux -L "$TMUX_SOCK" kill-server
}

keys() { tmux -L "$TMUX_SOCK" send-keys "$@"; }

@test "lp-top restores the terminal on every exit path (tmux)" {
	require_cmd tmux
	: >"$T/tail"
	tty_exit 'keys q' 0
	tty_exit 'keys C-c' 0
	tty_exit 'kill -TERM $pid' 0
	# the end of the input, then q (the last view stays until then)
	tty_exit 'touch $T/next
		for _ in $(seq 50); do tmux -L $TMUX_SOCK capture-pane -p | grep -q "(end of input)" && break; sleep 0.1; done
		keys q' 0
	# a second signal before the first one was acted on: dies of it (the
	# two may reach different threads, in either order: SIGINT's 130 or
	# SIGTERM's 143, never 0)
	tty_exit 'kill -STOP $pid; kill -INT $pid; kill -TERM $pid; kill -CONT $pid' '130 143'
	# killed by signals lp-top does not otherwise handle
	tty_exit 'kill -PIPE $pid' 141
	tty_exit 'kill -HUP $pid' 129
	tty_exit 'kill -QUIT $pid' 131
	# an error in the input: its message, exit 1
	printf 'sample\t1\t1\t1\t0\tx\tcpu\t1\t00000000000000ff\n' >"$T/tail"
	tty_exit 'touch $T/next' 1
}
