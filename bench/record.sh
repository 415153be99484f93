#!/usr/bin/env bash
# lp-record beside perf record, in one run on the same machine:
#  1. the slowdown of a fixed-work program (tests/workloads/fixedwork) at 99,
#     999 and 4999 Hz: lp-record with frame pointers (and its default,
#     auto) vs `perf record -g`, and lp-record --call-graph dwarf vs `perf
#     record --call-graph dwarf`, each lp-record with its BPF backend and
#     with --backend perf (what an ordinary user gets); REPS rounds of all
#     in turn, by the program's own CPU time;
#  2. the recorder's own CPU time per sample (user + system, /usr/bin/time),
#     both backends;
#  3. symbolization: cold and cached addresses per second (bench/symbench.c);
#  4. the recorder's memory over a long whole-system run (RSS every 5 s);
#  5. the same while processes come and go (some 200 a second, each one
#     symbolized), and 10 s after they stopped: anonymous and file RSS,
#     and the samples lost to a full ring.
# Needs root, perf and a build (O=build-NAME).  ROUNDS, REPS and LONG_S
# scale it.
set -eu
. "$(dirname "$0")/common.bash"
ROUNDS=${ROUNDS:-150}
REPS=${REPS:-7}
LONG_S=${LONG_S:-30}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(id -u)" -ne 0 ]; then echo "bench/record.sh: needs root" >&2; exit 1; fi
for c in perf /usr/bin/time; do
	command -v "$c" >/dev/null || { echo "bench/record.sh: $c is missing" >&2; exit 1; }
done
[ -x "$W/fixedwork" ] || { echo "bench/record.sh: build first (make test-build O=...)" >&2; exit 1; }

# Runs "$@" (a recorder around fixedwork, or nothing) once; prints the CPU
# seconds fixedwork reports for itself (the sampling interrupts are
# charged to it; the recorder's own work is not).
cpu_of() {
	"$@" "$W/fixedwork" "$ROUNDS" 2>&1 >/dev/null | sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p'
}

none() { "$@"; }
lp_auto() { lp-record -F "$F" -o "$tmp/lp.lp" -- "$@"; }	# the default
lp_fp() { lp-record -F "$F" --call-graph fp -o "$tmp/lp.lp" -- "$@"; }
lp_dwarf() { lp-record -F "$F" --call-graph dwarf -o "$tmp/lp.lp" -- "$@"; }
lp_perf_fp() { lp-record --backend perf -F "$F" --call-graph fp -o "$tmp/lp.lp" -- "$@"; }
lp_perf_dwarf() { lp-record --backend perf -F "$F" --call-graph dwarf -o "$tmp/lp.lp" -- "$@"; }
perf_fp() { perf record -q -F "$F" -g -o "$tmp/perf.data" -- "$@"; }
perf_dwarf() { perf record -q -F "$F" --call-graph dwarf -o "$tmp/perf.data" -- "$@"; }
RECORDERS="lp_auto lp_fp lp_perf_fp perf_fp lp_dwarf lp_perf_dwarf perf_dwarf"

# Each round runs fixedwork untraced and under every recorder, in an order
# turned by one each round, so drift in the machine's speed (this 2-CPU
# guest's per-sample cost moves by up to 2x from second to second) falls
# on all alike; a recorder's slowdown in a round is against that round's
# untraced run, and lp's cost against its peer's is their ratio in the
# same round: medians over REPS rounds, with the range.
echo "# 1. target slowdown: fixedwork $ROUNDS rounds, the CPU time it reports, $REPS rounds of every"
echo "#    recorder in turn: median slowdown [min, max] against the same round's untraced run, and"
echo "#    lp's CPU time over its peer's in the same round (perf record -g for fp and auto, perf"
echo "#    record --call-graph dwarf for dwarf)"
for F in ${FREQS:-99 999 4999}; do
	set -- none $RECORDERS
	for i in $(seq "$REPS"); do
		for r in "$@"; do echo "$i $r $(cpu_of "$r")"; done
		set -- "${@:2}" "$1"		# the next round starts one further
	done >"$tmp/cpu.$F"
	awk -v F="$F" '
		function med(a, n,   t, i, j, x) { for (i = 1; i <= n; i++) t[i] = a[i]
			for (i = 2; i <= n; i++) { x = t[i]; for (j = i - 1; j > 0 && t[j] > x; j--) t[j + 1] = t[j]; t[j + 1] = x }
			lo = t[1]; hi = t[n]; return n % 2 ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2 }
		{ cpu[$1, $2] = $3; rounds[$1] = 1; names[$2] = 1 }
		END {
			split("lp_auto lp_fp lp_perf_fp perf_fp lp_dwarf lp_perf_dwarf perf_dwarf", order, " ")
			for (k = 1; k <= 7; k++) {
				r = order[k]; n = 0; m = 0
				peer = r ~ /dwarf/ ? "perf_dwarf" : "perf_fp"
				for (i in rounds) {
					s[++n] = 100 * (cpu[i, r] - cpu[i, "none"]) / cpu[i, "none"]
					if (r !~ /^perf/) q[++m] = cpu[i, r] / cpu[i, peer]
				}
				sd = med(s, n); slo = lo; shi = hi
				line = sprintf("%-6s %-15s %+6.1f%% [%+.1f, %+.1f]", F, r, sd, slo, shi)
				if (m) { qd = med(q, m); line = line sprintf("   vs %s %.3f [%.3f, %.3f]", peer, qd, lo, hi) }
				print line
			}
		}' "$tmp/cpu.$F"
done

echo "# 1b. the BPF program's own time per sample (kernel.bpf_stats_enabled)"
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
for mode in fp dwarf; do
	"$W/cpusplit" 10 & pid=$!
	sleep 0.2
	lp-record -F 999 --call-graph "$mode" -o /dev/null -p $pid 2>/dev/null & rec=$!
	sleep 2
	# This recorder's program: the newest lp_rec_sample (others may run
	# lp-record too).  Per run: a sample of the target, or a tick of another
	# process filtered out.
	bpftool prog show name lp_rec_sample | awk -v mode="$mode" '
		/^[0-9]+:/ { id = $1 + 0; for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t[id] = $(i + 1); if ($i == "run_cnt") c[id] = $(i + 1) } if (id > max) max = id }
		END { if (max && c[max]) printf "%-6s %d runs, %.2f us per run\n", mode, c[max], t[max] / c[max] / 1000 }'
	kill $pid; wait $rec || true
done
sysctl -qw kernel.bpf_stats_enabled="$old_stats"

# Long enough, and fast enough, that the start-up's own variation (about
# 50 ms of CPU) is a few tenths of a microsecond a sample.
F2=${F2:-4999}
echo "# 2. recorder CPU per sample: lp-record -p on fixedwork ($((ROUNDS * 6)) rounds) at $F2 Hz, and its start-up alone"
# -p, not "--": /usr/bin/time would count the reaped target's CPU too.
cpu_of() { /usr/bin/time -f '%U %S %M' -o "$tmp/time" "$@" 2>"$tmp/err" >/dev/null; awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$tmp/time"; }
sleep 30 & idle=$!
read -r start_cpu start_rss < <(cpu_of lp-record -F 999 -d 1 -o "$tmp/lp.lp" -p $idle)
echo "start-up (load, attach, 1 s idle, detach): ${start_cpu} s cpu, max rss ${start_rss} KiB"
read -r pstart_cpu pstart_rss < <(cpu_of lp-record --backend perf -F 999 -d 1 -o "$tmp/lp.lp" -p $idle)
echo "start-up, --backend perf: ${pstart_cpu} s cpu, max rss ${pstart_rss} KiB"
kill $idle
for backend in bpf perf; do
	s=$start_cpu; [ $backend = perf ] && s=$pstart_cpu
	for mode in fp dwarf; do
		"$W/fixedwork" $((ROUNDS * 6)) 2>/dev/null & pid=$!
		read -r cpu rss < <(cpu_of lp-record --backend $backend -F "$F2" --call-graph "$mode" -o "$tmp/lp.lp" -p $pid)
		n=$(grep -c '^sample' "$tmp/lp.lp" || true)
		awk -v c="$cpu" -v s="$s" -v n="$n" -v m="$rss" -v mode="lp-$backend-$mode" 'BEGIN {
			printf "%-15s %d samples, %.3f s cpu: %.1f us per sample after start-up, max rss %d KiB\n",
				mode, n, c, n ? 1e6 * (c - s) / n : 0, m }'
	done
done
for mode in fp dwarf; do
	opt=-g; [ $mode = dwarf ] && opt="--call-graph dwarf"
	# perf's cost to the same point: record, then the script that symbolizes.
	"$W/fixedwork" $((ROUNDS * 6)) 2>/dev/null & pid=$!
	read -r c1 m1 < <(cpu_of perf record -q -F "$F2" $opt -o "$tmp/perf.data" -p $pid)
	read -r c2 m2 < <(cpu_of perf script -i "$tmp/perf.data")
	perf script -i "$tmp/perf.data" -F tid 2>/dev/null | wc -l > "$tmp/n"
	awk -v c1="$c1" -v c2="$c2" -v n="$(cat "$tmp/n")" -v mode="perf-$mode" 'BEGIN {
		printf "%-10s %d samples, record %.3f s + script %.3f s cpu: %.1f us per sample\n",
			mode, n, c1, c2, n ? 1e6 * (c1 + c2) / n : 0 }'
done

echo "# 3. symbolization (lib/debuginfo/symbolize.c, addresses in libc and the program)"
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$top/lib" -I"$top" "$here/symbench.c" "$O/liblp.a" \
	$(pkg-config --libs libdw libelf libbpf libtraceevent) -liberty -lz -lm -lpthread -o "$tmp/symbench"
"$tmp/symbench" 1000

echo "# 4. recorder memory, lp-record -a -F 999 for $LONG_S s (RSS KiB every 5 s)"
lp-record -a -F 999 -o /dev/null 2>"$tmp/err" &
rec=$!
rss=""
for i in $(seq $((LONG_S / 5))); do
	sleep 5
	rss="$rss $(awk '/^VmRSS/ { print $2 }' /proc/$rec/status)"
done
kill -INT $rec
wait $rec || true
echo "rss_kib:$rss"
cat "$tmp/err"

echo "# 5. recorder memory, lp-record -a -F 999 while processes come and go for $LONG_S s, then 10 s after"
lp-record -a -F 999 -o "$tmp/churn.lp" 2>"$tmp/err" &
rec=$!
sleep 2
(end=$((SECONDS + LONG_S)); while ((SECONDS < end)); do python3 -c pass; perl -e 1; ls /usr >/dev/null; done) &
churn=$!
rss=""
for i in $(seq $(((LONG_S + 10) / 5))); do
	sleep 5
	rss="$rss $(awk '$1 == "RssAnon:" { a = $2 } $1 == "RssFile:" { f = $2 } END { print a "/" f }' /proc/$rec/status)"
done
wait $churn
kill -INT $rec
wait $rec || true
echo "rss_anon/file_kib:$rss"
echo "lost_ring: $(awk -F'\t' '$1 == "lost" && $3 == "ring" { s += $4 } END { print s + 0 }' "$tmp/churn.lp")"
grep ' samples (' "$tmp/err"
