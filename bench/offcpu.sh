#!/usr/bin/env bash
# Off-CPU recording overhead, side by side in one run: a context-switch-heavy
# program (tests/workloads/pingpong: two threads pass a byte over pipes, each
# round trip two blocks and two wakeups) alone, under lp-record --mode off
# and --mode wall, under `perf record --off-cpu` when Debian's perf has it
# (built with BUILD_BPF_SKEL), under a bpftrace off-CPU script, and under
# bcc's offcputime (bpfcc-tools) when it can build its program.
# Both of its threads run on one CPU.  Every tracer attaches by pid while the program sleeps DELAY_MS before its
# rounds; reported: the program's ns per round trip (best of REPS: other
# load only adds), the slowdown, and the tracer's own CPU seconds.
# Needs root and a build (O=build-NAME).  ROUNDS, REPS, DELAY_MS scale it.
set -eu
. "$(dirname "$0")/common.bash"
ROUNDS=${ROUNDS:-200000}
REPS=${REPS:-3}
DELAY_MS=${DELAY_MS:-3000}
# Both threads on one CPU (the last), the tracer on the others: each round
# trip is then two real context switches on that CPU, and the times are not
# those of waking an idle virtual CPU (10x slower, and erratic).
pin=
[ "$(nproc)" -ge 2 ] && pin="taskset -c $(($(nproc) - 1))"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(id -u)" -ne 0 ]; then echo "bench/offcpu.sh: needs root" >&2; exit 1; fi
[ -x "$W/pingpong" ] || { echo "bench/offcpu.sh: build first (make test-build O=...)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "bench/offcpu.sh: /usr/bin/time is missing" >&2; exit 1; }

# run TRACER...: one run of pingpong with TRACER attached by pid (the word
# PID in its arguments); prints "ns_per_round tracer_cpu_s".  The tracer is
# stopped with SIGINT once the rounds are done (lp-record ends by itself).
run() {
	local pid tr args=() a
	$pin "$W/pingpong" "$ROUNDS" "$DELAY_MS" 2>"$tmp/pp" & pid=$!
	for a in "$@"; do args+=("${a//PID/$pid}"); done
	if [ $# -gt 0 ]; then
		/usr/bin/time -f '%U %S' -o "$tmp/time" "${args[@]}" >"$tmp/out" 2>"$tmp/err" & tr=$!
	fi
	wait "$pid"
	if [ $# -gt 0 ]; then
		sleep 0.2
		# To the tracer itself: /usr/bin/time ignores SIGINT.
		pkill -INT -P "$tr" 2>/dev/null || true
		wait "$tr" || true
	fi
	local ns cpu=0
	ns=$(grep -o 'ns_per_round=[0-9]*' "$tmp/pp" | cut -d= -f2)
	[ $# -gt 0 ] && cpu=$(awk 'NF == 2 { printf "%.2f", $1 + $2 }' "$tmp/time")
	echo "$ns $cpu"
}

# best NAME TRACER...: REPS runs, the fastest; one table row.
best() {
	local name=$1 i
	shift
	for i in $(seq "$REPS"); do run "$@"; done | sort -n | head -1 > "$tmp/best"
	read -r ns cpu < "$tmp/best"
	printf '%-26s %8s %+8.1f%% %8s\n' "$name" "$ns" \
		"$(awk -v n="$ns" -v b="$base" 'BEGIN { print 100 * (n - b) / b }')" "$cpu"
}

echo "# off-CPU recording: pingpong $ROUNDS round trips, best of $REPS"
printf '%-26s %8s %9s %8s\n' tracer ns/round slowdown cpu_s
base=$(for i in $(seq "$REPS"); do run; done | sort -n | head -1 | cut -d' ' -f1)
printf '%-26s %8s %9s %8s\n' none "$base" - -
best "lp-record --mode off" lp-record --mode off -p PID -o "$tmp/off.lp"
grep -o '[0-9]* off-CPU intervals.*lost (map full)' "$tmp/err" | sed 's/^/    last run: /'
best "lp-record --mode wall" lp-record --mode wall -p PID -o "$tmp/wall.lp"
grep -o '[0-9]* off-CPU intervals.*lost (map full)' "$tmp/err" | sed 's/^/    last run: /'
best "lp-record --mode off --min-block 1ms" lp-record --mode off --min-block 1ms -p PID -o "$tmp/off.lp"
if perf record --off-cpu -o "$tmp/probe.data" -- true 2>&1 | grep -q 'is being ignored'; then
	echo "perf record --off-cpu      (not built into this perf: no BUILD_BPF_SKEL)"
else
	best "perf record --off-cpu" perf record -q --off-cpu -p PID -o "$tmp/perf.data"
fi
# bpftrace, the usual way to do this by hand: the same tracepoint, stacks
# kept by tid at the block, summed by stack in the kernel at the switch-in
# (no event per interval reaches user space: cheaper by construction).
if command -v bpftrace >/dev/null; then
	cat > "$tmp/offcpu.bt" <<'BT'
tracepoint:sched:sched_switch
{
	if (pid == $1 && args->prev_state != 0) {
		@start[tid] = nsecs;
		@ks[tid] = kstack;
		@us[tid] = ustack;
	}
	$n = args->next_pid;
	$s = @start[$n];
	if ($s) {
		@off[args->next_comm, @ks[$n], @us[$n]] = sum(nsecs - $s);
		delete(@start[$n]);
		delete(@ks[$n]);
		delete(@us[$n]);
	}
}
BT
	best "bpftrace (sched_switch)" bpftrace "$tmp/offcpu.bt" PID
fi
# bcc's offcputime compiles its program against the kernel headers at start.
if command -v offcputime-bpfcc >/dev/null && timeout 60 offcputime-bpfcc 1 >/dev/null 2>&1; then
	DELAY_MS=$((DELAY_MS + 6000))
	best "offcputime-bpfcc -f" offcputime-bpfcc -f -p PID
else
	echo "offcputime-bpfcc           (not installed, or cannot build its program here: no kernel headers)"
fi
