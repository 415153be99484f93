#!/usr/bin/env bash
# lp-record beside perf record, in one run on the same machine:
#  1. the slowdown of a fixed-work program (tests/workloads/fixedwork) at 99,
#     999 and 4999 Hz: lp-record with frame pointers vs `perf record -g`, and
#     lp-record --call-graph dwarf vs `perf record --call-graph dwarf`
#     (median of REPS runs; the program's own wall and CPU time);
#  2. the recorder's own CPU time per sample (user + system, /usr/bin/time);
#  3. symbolization: cold and cached addresses per second (bench/symbench.c);
#  4. the recorder's memory over a long whole-system run (RSS every 5 s).
# Needs root, perf and a build (O=build-NAME).  ROUNDS, REPS and LONG_S
# scale it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
O=${O:-build}
case $O in /*) ;; *) O=$top/$O ;; esac
export PATH=$O/bin:$PATH DEBUGINFOD_URLS= LC_ALL=C
W=$O/tests/workloads
ROUNDS=${ROUNDS:-150}
REPS=${REPS:-3}
LONG_S=${LONG_S:-30}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(id -u)" -ne 0 ]; then echo "bench/record.sh: needs root" >&2; exit 1; fi
for c in perf /usr/bin/time; do
	command -v "$c" >/dev/null || { echo "bench/record.sh: $c is missing" >&2; exit 1; }
done
[ -x "$W/fixedwork" ] || { echo "bench/record.sh: build first (make O=...)" >&2; exit 1; }

# Runs "$@" (a recorder around fixedwork, or nothing) REPS times; prints the
# median wall and CPU seconds fixedwork reports.
measure() {
	local i
	for i in $(seq "$REPS"); do
		"$@" "$W/fixedwork" "$ROUNDS" 2>&1 >/dev/null | grep -o 'wall_s=[0-9.]* cpu_s=[0-9.]*'
	done | sed 's/wall_s=//; s/cpu_s=//' | sort -n | awk '{ w[NR] = $1; c[NR] = $2 }
		END { m = int((NR + 1) / 2); print w[m], c[m] }'
}

none() { "$@"; }
lp_fp() { lp-record -F "$F" -o "$tmp/lp.lp" -- "$@"; }
lp_dwarf() { lp-record -F "$F" -g dwarf -o "$tmp/lp.lp" -- "$@"; }
perf_fp() { perf record -q -F "$F" -g -o "$tmp/perf.data" -- "$@"; }
perf_dwarf() { perf record -q -F "$F" --call-graph dwarf -o "$tmp/perf.data" -- "$@"; }

echo "# 1. target slowdown: fixedwork $ROUNDS rounds, median of $REPS (wall s / cpu s, % over baseline wall)"
read -r bw bc < <(measure none)
printf '%-8s %-22s %s\n' Hz recorder "wall_s cpu_s slowdown"
printf '%-8s %-22s %s %s\n' - none "$bw" "$bc"
for F in 99 999 4999; do
	for r in lp_fp perf_fp lp_dwarf perf_dwarf; do
		read -r w c < <(measure "$r")
		printf '%-8s %-22s %s %s %+.1f%%\n' "$F" "$r" "$w" "$c" \
			"$(awk -v w="$w" -v b="$bw" 'BEGIN { print 100 * (w - b) / b }')"
	done
done

echo "# 2. recorder CPU per sample (fixedwork under lp-record at 999 Hz)"
for mode in fp dwarf; do
	/usr/bin/time -f '%U %S %M' -o "$tmp/time" lp-record -F 999 -g "$mode" -o "$tmp/lp.lp" -- \
		"$W/fixedwork" "$ROUNDS" 2>"$tmp/err" >/dev/null
	n=$(grep -c '^sample' "$tmp/lp.lp" || true)
	read -r u s m < "$tmp/time"
	awk -v u="$u" -v s="$s" -v n="$n" -v m="$m" -v mode="$mode" 'BEGIN {
		printf "%-6s %d samples, recorder cpu %.3f s = %.1f us per sample, max rss %d KiB\n",
			mode, n, u + s, n ? 1e6 * (u + s) / n : 0, m }'
done
for mode in fp dwarf; do
	opt=-g; [ $mode = dwarf ] && opt="--call-graph dwarf"
	# perf's own cost: record plus the script a user needs to read the stacks.
	/usr/bin/time -f '%U %S %M' -o "$tmp/time" perf record -q -F 999 $opt -o "$tmp/perf.data" -- \
		"$W/fixedwork" "$ROUNDS" 2>/dev/null >/dev/null
	read -r u1 s1 m1 < "$tmp/time"
	/usr/bin/time -f '%U %S %M' -o "$tmp/time" perf script -i "$tmp/perf.data" > "$tmp/script" 2>/dev/null
	read -r u2 s2 m2 < "$tmp/time"
	n=$(grep -cE '^\S.* [0-9]+\.[0-9]+: ' "$tmp/script" || true)
	awk -v u="$u1" -v s="$s1" -v u2="$u2" -v s2="$s2" -v n="$n" -v mode="perf-$mode" 'BEGIN {
		printf "%-10s %d samples, record %.3f s + script %.3f s = %.1f us per sample\n",
			mode, n, u + s, u2 + s2, n ? 1e6 * (u + s + u2 + s2) / n : 0 }'
done

echo "# 3. symbolization (lib/symbolize.c, addresses in libc and the program)"
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$top/lib" "$here/symbench.c" "$O/liblp.a" \
	$(pkg-config --libs libdw libelf libbpf libtraceevent) -lz -lm -lpthread -o "$tmp/symbench"
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
