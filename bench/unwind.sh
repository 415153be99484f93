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
# For each: the target's throughput (requests/s, best of REPS, the modes
# interleaved so drifting load hits them alike) and its slowdown against
# none; the recorder's CPU per sample (user + system of lp-record, or of perf
# record plus perf script, over the samples written; start-up included); and
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

# One run of mode $1: prints "rps cpu_s samples reach_root".
run() {
	local mode=$1 rec rps cpu n reach out
	rm -f "$tmp/out" "$tmp/perf.data" "$tmp/time" "$tmp/time2"
	case $mode in
	none)
		echo "$(load) 0 0 -"
		return ;;
	lp-default) /usr/bin/time -f '%U %S' -o "$tmp/time" lp-record -F "$FREQ" -o "$tmp/out" -p "$server" 2>"$tmp/err" & ;;
	lp-dwarf) /usr/bin/time -f '%U %S' -o "$tmp/time" lp-record -F "$FREQ" --call-graph dwarf -o "$tmp/out" -p "$server" 2>"$tmp/err" & ;;
	perf-dwarf) /usr/bin/time -f '%U %S' -o "$tmp/time" perf record -q -F "$FREQ" --call-graph dwarf -o "$tmp/perf.data" -p "$server" 2>"$tmp/err" & ;;
	perf-fp) /usr/bin/time -f '%U %S' -o "$tmp/time" perf record -q -F "$FREQ" -g -o "$tmp/perf.data" -p "$server" 2>"$tmp/err" & ;;
	esac
	rec=$!
	sleep 1		# attached (lp-record calibrates for 300 ms first)
	rps=$(load)
	# /usr/bin/time passes no signal on: stop the recorder itself, which
	# drains and writes what it has, and let time report.
	kill -INT "$(pgrep -P "$rec")"
	wait "$rec" || { echo "bench/unwind.sh: $mode failed: $(cat "$tmp/err")" >&2; exit 1; }
	cpu=$(awk '{ print $1 + $2 }' "$tmp/time")
	case $mode in
	perf-*)
		/usr/bin/time -f '%U %S' -o "$tmp/time2" perf script -i "$tmp/perf.data" --no-inline \
			-F comm,pid,tid,time,event,ip,sym,dso >"$tmp/out" 2>/dev/null
		cpu=$(awk -v c="$cpu" '{ print c + $1 + $2 }' "$tmp/time2")
		;;
	esac
	out=$("$METRICS" --pid "$server" "$tmp/out")
	n=$(awk '$1 == "samples" { print $2 }' <<<"$out")
	reach=$(awk '$1 == "reach_root" { print $2 }' <<<"$out")
	echo "$rps $cpu $n $reach"
}

modes="none lp-default lp-dwarf perf-dwarf perf-fp"
for rep in $(seq "$REPS"); do
	for m in $modes; do
		echo "$m $(run "$m")" >>"$tmp/results"
	done
done

echo "# redis-server $(redis-server --version | grep -o 'v=[0-9.]*'), $REQUESTS GETs (-c 8 -P 4) per run, $FREQ Hz, best of $REPS"
echo "# throughput: the best run; recorder CPU per sample and reaching the root: the median run"
awk -v modes="$modes" '
	{ rps[$1] = (rps[$1] > $2 ? rps[$1] : $2); k = $1 SUBSEP (++n[$1]); cpu[k] = $3; smp[k] = $4; reach[k] = $5 }
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
		base = rps["none"]
		printf "%-12s %12s %9s %9s %14s %12s %11s\n", "recorder", "requests/s", "slowdown", "samples", "cpu/sample_us", "vs_perf_dw", "reach_root"
		pd = median("perf-dwarf")
		for (i = 1; i in ms; i++) {
			m = ms[i]
			if (m == "none") { printf "%-12s %12.0f %9s %9s %14s %12s %11s\n", m, rps[m], "-", "-", "-", "-", "-"; continue }
			c = median(m)
			printf "%-12s %12.0f %+8.1f%% %9d %14.1f %11.2fx %11s\n", m, rps[m], 100 * (base - rps[m]) / base,
				median_of(smp, m), 1e6 * c, pd ? c / pd : 0, median_of(reach, m)
		}
	}' "$tmp/results"
