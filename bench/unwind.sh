#!/usr/bin/env bash
# bench/unwind.sh - whole stacks on a real server, and what they cost, side
# by side in one run (issue 11's bench goal): Debian's redis-server (no frame
# pointers) under a fixed load, redis-benchmark GETs on loopback, with
#   none            no profiler
#   lp default      lp-record -F FREQ -p PID (its default unwinding)
#   lp dwarf        lp-record -F FREQ --call-graph dwarf -p PID
#   perf dwarf      perf record -F FREQ --call-graph dwarf -p PID, then
#                   perf script (the text lp writes directly)
#   perf -g         perf record -F FREQ -g -p PID, then perf script
# For each: the target's throughput (requests/s, the median of REPS runs,
# the modes interleaved so drifting load hits them alike; other jobs on the
# machine move single runs by tens of percent) and its slowdown against
# none; the recorder's CPU per sample (user + system of lp-record, or of perf
# record plus perf script, over the samples written, from the load's start:
# its start-up and calibration, 1 s before, are shown apart); and
# the fraction of samples whose user stack reaches main or a thread's start
# (tests/helpers/stack-metrics, the definition tests/real-binaries.bats uses).
# Needs root, redis-server and redis-benchmark (make bench-deps), perf, a
# build (O=...).  REQUESTS, REPS and FREQ scale it.
set -eu
. "$(dirname "$0")/common.bash"
REQUESTS=${REQUESTS:-1500000}
REPS=${REPS:-3}
FREQ=${FREQ:-999}
METRICS=$top/tests/helpers/stack-metrics

if [ "$(id -u)" -ne 0 ]; then echo "bench/unwind.sh: needs root" >&2; exit 1; fi
for c in perf redis-server redis-benchmark redis-cli /usr/bin/time lp-record; do
	command -v "$c" >/dev/null || { echo "bench/unwind.sh: $c is missing (make bench-deps, make O=...)" >&2; exit 1; }
done

tmp=$(mktemp -d)
server=
cleanup() {
	if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
	--daemonize no >"$tmp/redis.log" 2>&1 &
server=$!
for _ in $(seq 100); do
	redis-cli -p "$port" ping >/dev/null 2>&1 && break
	sleep 0.1
done
redis-cli -p "$port" set key:__rand_int__ x >/dev/null

# The load: REQUESTS pipelined GETs; prints requests per second.
load() {
	redis-benchmark -h 127.0.0.1 -p "$port" -q -c 8 -P 4 -n "$REQUESTS" -t get 2>/dev/null |
		tr '\r' '\n' | awk '/^GET: [0-9.]+ requests per second/ { v = $2 } END { print v ? v : 0 }'
}

# Starts recorder $1 on the server under /usr/bin/time; its pid in rec.
start_recorder() {
	rm -f "$tmp/out" "$tmp/perf.data" "$tmp/time" "$tmp/time2"
	case $1 in
	lp-default) /usr/bin/time -f '%U %S' -o "$tmp/time" lp-record -F "$FREQ" -o "$tmp/out" -p "$server" 2>"$tmp/err" & ;;
	lp-dwarf) /usr/bin/time -f '%U %S' -o "$tmp/time" lp-record -F "$FREQ" --call-graph dwarf -o "$tmp/out" -p "$server" 2>"$tmp/err" & ;;
	perf-dwarf) /usr/bin/time -f '%U %S' -o "$tmp/time" perf record -q -F "$FREQ" --call-graph dwarf -o "$tmp/perf.data" -p "$server" 2>"$tmp/err" & ;;
	perf-fp) /usr/bin/time -f '%U %S' -o "$tmp/time" perf record -q -F "$FREQ" -g -o "$tmp/perf.data" -p "$server" 2>"$tmp/err" & ;;
	esac
	rec=$!
}

# Stops recorder $1 (pid rec) and sets rec_cpu to its CPU seconds: the recorder's
# own, and for perf, perf script's that makes the text.  /usr/bin/time
# passes no signal on: the recorder itself is told to stop, drains and
# writes what it has (lp-record exits 0, perf record re-raises SIGINT: 130).
stop_recorder() {
	local st=0
	kill -INT "$(pgrep -P "$rec")"
	wait "$rec" || st=$?
	case $1:$st in lp-*:0 | perf-*:0 | perf-*:130) ;;
	*) echo "bench/unwind.sh: $1 failed ($st): $(cat "$tmp/err")" >&2; exit 1 ;;
	esac
	rec_cpu=$(tail -n 1 "$tmp/time" | awk '{ print $1 + $2 }')
	case $1 in
	perf-*)
		/usr/bin/time -f '%U %S' -o "$tmp/time2" perf script -i "$tmp/perf.data" --no-inline \
			-F comm,pid,tid,time,event,ip,sym,dso >"$tmp/out" 2>/dev/null
		rec_cpu=$(tail -n 1 "$tmp/time2" | awk -v c="$rec_cpu" '{ print c + $1 + $2 }')
		;;
	esac
}

# CPU seconds (user + system) process $1 has used so far.
cpu_of() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' /proc/"$1"/stat
}

# One run of mode $1 under the load (run in $(...): the recorder is this
# subshell's child): prints "rps cpu_s cpu_before_load_s samples reach_root".
run() {
	local mode=$1 rps out base
	if [ "$mode" = none ]; then echo "$(load) 0 0 0 -"; return; fi
	start_recorder "$mode"
	sleep 1		# attached (lp-record calibrates for 300 ms first)
	base=$(cpu_of "$(pgrep -P "$rec")")
	rps=$(load)
	stop_recorder "$mode"
	out=$("$METRICS" --pid "$server" "$tmp/out")
	echo "$rps $rec_cpu $base $(awk '$1 == "samples" { n = $2 } $1 == "reach_root" { r = $2 } END { print n, r }' <<<"$out")"
}

modes="none lp-default lp-dwarf perf-dwarf perf-fp"
# Each round starts one mode later, so no mode always follows perf script's
# burst of CPU and writeback; each run starts after a sync and a pause.
# shellcheck disable=SC2086 # the modes: one word each
set -- $modes
for _ in $(seq "$REPS"); do
	for m in "$@"; do
		sync
		sleep 1
		line=$(run "$m") || exit 1
		echo "$m $line" >>"$tmp/results"
	done
	set -- "${@:2}" "$1"
done

echo "# redis-server $(redis-server --version | grep -o 'v=[0-9.]*'), $REQUESTS GETs (-c 8 -P 4) per run, $FREQ Hz, $REPS runs each"
echo "# the median run of each: throughput; recorder CPU per sample (from the load's start to the recorder's"
echo "# end, perf script's included), its CPU before (startup_s); reaching the root"
awk -v modes="$modes" '
	{ k = $1 SUBSEP (++n[$1]); r[k] = $2; cpu[k] = $3 - $4; st[k] = $4; smp[k] = $5; reach[k] = $6 }
	function median(m,    i, j, t, v, c) {
		c = n[m]
		for (i = 1; i <= c; i++) v[i] = (smp[m, i] ? cpu[m, i] / smp[m, i] : 0)
		for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return v[int((c + 1) / 2)]
	}
	function median_of(a, m,    i, j, t, v, c) {
		c = n[m]
		for (i = 1; i <= c; i++) v[i] = a[m, i]
		for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return v[int((c + 1) / 2)]
	}
	END {
		split(modes, ms, " ")
		for (i = 1; i in ms; i++) rps[ms[i]] = median_of(r, ms[i])
		base = rps["none"]
		printf "%-12s %12s %9s %9s %14s %12s %11s %10s\n", "recorder", "requests/s", "slowdown", "samples", "cpu/sample_us", "vs_perf_dw", "reach_root", "startup_s"
		pd = median("perf-dwarf")
		for (i = 1; i in ms; i++) {
			m = ms[i]
			if (m == "none") { printf "%-12s %12.0f %9s %9s %14s %12s %11s\n", m, rps[m], "-", "-", "-", "-", "-"; continue }
			c = median(m)
			printf "%-12s %12.0f %+8.1f%% %9d %14.1f %11.2fx %11s %10.2f\n", m, rps[m], 100 * (base - rps[m]) / base,
				median_of(smp, m), 1e6 * c, pd ? c / pd : 0, median_of(reach, m), median_of(st, m)
		}
	}' "$tmp/results"
