#!/usr/bin/env bash
# All-thread stack snapshots, side by side in one run on the same process:
# lp-record --mode snapshot against `gdb -batch -ex 'thread apply all bt'`
# (the classic poor man's profiler) and eu-stack (elfutils).
#
# The target is tests/workloads/sleepers: 16 SCHED_FIFO threads waking every
# 5 ms on an absolute deadline and measuring how late each wake-up was.  A
# thread an observer holds stopped wakes late by up to the time it was held,
# so the target's worst lateness during each tool's snapshots is the stall it
# suffered; lp-record also reports each thread's held time from ptrace's own
# timing (held_ns=).  REPS snapshots per tool, GAP seconds apart.
# Needs root, gdb, eu-stack and a build (O=build-NAME).
set -eu
. "$(dirname "$0")/common.bash"
REPS=${REPS:-10}
GAP=${GAP:-0.2}
THREADS=${THREADS:-16}
tmp=$(mktemp -d)
spid=
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"' EXIT

if [ "$(id -u)" -ne 0 ]; then echo "bench/snapshot.sh: needs root" >&2; exit 1; fi
for c in gdb eu-stack; do
	command -v "$c" >/dev/null || { echo "bench/snapshot.sh: $c is missing (make bench-deps)" >&2; exit 1; }
done
[ -x "$W/sleepers" ] || { echo "bench/snapshot.sh: build first (make test-build O=...)" >&2; exit 1; }

"$W/sleepers" -t "$THREADS" -p 5000 -r > "$tmp/lat" &
spid=$!
for _ in $(seq 100); do grep -q '^ready' "$tmp/lat" && break; sleep 0.05; done

# The target's lateness since the last call: "max_us p99_us mean_us".
lateness() {
	local n
	n=$(wc -l < "$tmp/lat")
	kill -USR1 "$spid"
	for _ in $(seq 300); do [ "$(wc -l < "$tmp/lat")" -gt "$n" ] && break; sleep 0.01; done
	tail -n 1 "$tmp/lat" | awk '{ for (i = 1; i < NF; i++) v[$i] = $(i + 1)
		print v["max_us"], v["p99_us"], v["mean_us"] }'
}

now_ns() { date +%s%N; }

# Runs "$@" REPS times, GAP apart; prints "median_wall_ms max_us p99_us".
phase() {
	local i t0 t1
	lateness > /dev/null
	: > "$tmp/walls"
	for i in $(seq "$REPS"); do
		sleep "$GAP"
		t0=$(now_ns)
		"$@" > /dev/null 2>&1 || true
		t1=$(now_ns)
		echo $(((t1 - t0) / 1000)) >> "$tmp/walls"
	done
	sleep "$GAP"
	read -r max p99 _ < <(lateness)
	med=$(sort -n "$tmp/walls" | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 1000 }')
	echo "$med $max $p99"
}

idle() { :; }
lp_one() { lp-record --mode snapshot --count 1 -p "$spid"; }
gdb_bt() { gdb -q -nx -batch -p "$spid" -ex 'thread apply all bt'; }
eu_stack() { eu-stack -p "$spid"; }

echo "# all-thread snapshots of a $THREADS-thread process (sleepers, SCHED_FIFO, 5 ms wake-ups), $REPS each"
printf '%-28s %14s %16s %16s %s\n' tool "wall ms (med)" "target max late" "target p99 late" "per-thread held"
read -r w m p < <(phase idle)
base=$m
printf '%-28s %14s %13s us %13s us %s\n' "none (baseline)" - "$m" "$p" -

# lp-record: one process taking REPS snapshots (as it is used), for the held
# times; then one process per snapshot, for a wall time comparable to gdb's.
lateness > /dev/null
lp-record --mode snapshot --count "$REPS" -i "${GAP}s" -p "$spid" -o "$tmp/s.lp" 2> "$tmp/s.err"
sleep "$GAP"
read -r m p _ < <(lateness)
grep '^sample' "$tmp/s.lp" | grep -o 'held_ns=[0-9]*' | cut -d= -f2 | sort -n > "$tmp/held"
# Once stopped: held less the wait for the thread to reach its stop.
grep '^sample' "$tmp/s.lp" | sed -n 's/.*held_ns=\([0-9]*\).*stop_wait_ns=\([0-9]*\).*/\1 \2/p' |
	awk '{ print $1 - $2 }' | sort -n > "$tmp/stopped"
stats() {
	awk 'function at(q,  i) { i = int(NR * q); return a[i > 0 ? i : 1] / 1000 }
	{ a[NR] = $1; s += $1 }
	END { printf "mean %.0f us, p50 %.0f us, p99 %.0f us, max %.0f us", s / NR / 1000, at(0.5),
		at(0.99), a[NR] / 1000 }' "$1"
}
held="held $(stats "$tmp/held") ($(wc -l < "$tmp/held") stops); once stopped: $(stats "$tmp/stopped")"
# A snapshot's span: first interrupt to last release, from the samples.
span=$(grep '^sample' "$tmp/s.lp" | awk -F'\t' '{ for (i = 10; i <= NF; i++)
		if ($i ~ /^held_ns=/) { split($i, kv, "="); print $2, $2 + kv[2] } }' | sort -n |
	awk 'NR == 1 || $1 - last > 20000000 { if (NR > 1) print end - start; start = $1; end = 0 }
		{ if ($2 > end) end = $2; last = $1 }
		END { print end - start }' | sort -n |
	awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] / 1e6 }')
printf '%-28s %14s %13s us %13s us %s\n' "lp-record --mode snapshot" "$span (span)" "$m" "$p" "$held"
read -r w m p < <(phase lp_one)
printf '%-28s %14s %13s us %13s us %s\n' "  one lp-record per snapshot" "$w" "$m" "$p" "(same held times; wall includes start-up and symbolization)"
read -r w m p < <(phase eu_stack)
printf '%-28s %14s %13s us %13s us %s\n' "eu-stack -p" "$w" "$m" "$p" "~ max late - baseline: $((m - base)) us"
read -r w m p < <(phase gdb_bt)
printf '%-28s %14s %13s us %13s us %s\n' "gdb thread apply all bt" "$w" "$m" "$p" "~ max late - baseline: $((m - base)) us (all threads at once)"
echo "# lp-record's own summary: $(cat "$tmp/s.err")"
