#!/usr/bin/env bash
# bench/pipeline.sh - lp-join | lp-split | lp-collapse on a synthetic
# recording: samples per second end to end, and each program's CPU time and
# peak RSS, at 1M and 10M samples (RSS must not grow with the length).
#
#   bench/pipeline.sh [SAMPLES...]     (default: 1000000 10000000)
#   REPS=N: runs of each program alone, the best kept (default 3)
#   OLD=DIR: another build (e.g. of an earlier commit, `make O=DIR`): each
#            program alone is also run from DIR/bin, interleaved with the
#            new one's runs, and the CPU ratio new/old printed
#
# Spans: one per 10 samples.  The streams are written by bench/gen-stream.c
# (built here against $O/liblp.a) into $TMPDIR and removed afterwards.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
O=${O:-build}
case $O in /*) ;; *) O=$top/$O ;; esac
bin=$O/bin
[ -x "$bin/lp-join" ] && [ -e "$O/liblp.a" ] || { echo "pipeline: build first (make O=$O)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$O/bench"
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$top/lib" -I"$top" "$here/gen-stream.c" "$O/liblp.a" \
	$(pkg-config --libs libdw libelf libbpf libtraceevent 2>/dev/null) -liberty -lz -lm -lpthread \
	-o "$O/bench/gen-stream"

[ $# -gt 0 ] || set -- 1000000 10000000
reps=${REPS:-3}
pin=
command -v taskset > /dev/null && pin="taskset -c 0"
printf '%-10s %-10s %9s %12s  %-30s %-30s %-30s\n' samples spans wall_s samples/s \
	"lp-join cpu_s/RSS_MB" "lp-split cpu_s/RSS_MB" "lp-collapse cpu_s/RSS_MB"
for n in "$@"; do
	spans=$((n / 10))
	"$O/bench/gen-stream" "$n" "$spans" 8 "$tmp/s.lp" "$tmp/p.lp" 2> /dev/null
	t=/usr/bin/time
	start=$(date +%s.%N)
	$t -f '%U %S %M' -o "$tmp/t1" "$bin/lp-join" "$tmp/s.lp" "$tmp/p.lp" |
		$t -f '%U %S %M' -o "$tmp/t2" "$bin/lp-split" --live -P 90 --probe req --label -q |
		$t -f '%U %S %M' -o "$tmp/t3" "$bin/lp-collapse" --group above > "$tmp/above.folded"
	end=$(date +%s.%N)
	# The slow requests run slow_path: it must be in the result.
	grep -q slow_path "$tmp/above.folded" || { echo "pipeline: wrong result" >&2; exit 1; }
	# CPU seconds / peak RSS MB (samples per CPU second)
	cell() { awk -v n="$n" '{ c = $1 + $2; printf "%.2f / %.1f (%.2fM/s)", c, $3 / 1024, (c > 0 ? n / c / 1e6 : 0) }' "$1"; }
	awk -v n="$n" -v s="$spans" -v a="$start" -v b="$end" -v j="$(cell "$tmp/t1")" \
		-v p="$(cell "$tmp/t2")" -v c="$(cell "$tmp/t3")" 'BEGIN {
		printf "%-10d %-10d %9.2f %12.0f  %-30s %-30s %-30s\n", n, s, b - a, n / (b - a), j, p, c }'
	# Each program alone on one core, reading a file, writing to /dev/null:
	# the figure the goal is stated in, less disturbed by the other two
	# and by the machine's load (best of $reps runs).
	"$bin/lp-join" "$tmp/s.lp" "$tmp/p.lp" > "$tmp/j.lp"
	"$bin/lp-split" --live -P 90 --probe req --label -q < "$tmp/j.lp" > "$tmp/l.lp"
	# best DIR PROG ARGS...: best of $reps runs of DIR/PROG (with OLD, each
	# run of the new build is followed by one of the old, written to
	# $tmp/old.PROG, so that both see the same load).
	best() {
		local dir=$1 prog=$2
		shift 2
		for _ in $(seq "$reps"); do
			$pin /usr/bin/time -f '%U %S %M' -o "$tmp/tb" "$dir/$prog" "$@" > /dev/null
			cat "$tmp/tb"
			if [ -n "${OLD:-}" ]; then
				$pin /usr/bin/time -f '%U %S %M' -o "$tmp/tb" "$OLD/bin/$prog" "$@" > /dev/null
				cat "$tmp/tb" >&3
			fi
		done 3> "$tmp/old.$prog" | awk -v n="$n" '{ c = $1 + $2; if (!b || c < b) { b = c; m = $3 } }
			END { printf "%.2f / %.1f (%.2fM/s)", b, m / 1024, (b > 0 ? n / b / 1e6 : 0) }'
	}
	old_best() {
		awk -v n="$n" '{ c = $1 + $2; if (!b || c < b) { b = c; m = $3 } }
			END { printf "%.2f / %.1f (%.2fM/s)", b, m / 1024, (b > 0 ? n / b / 1e6 : 0) }' "$tmp/old.$1"
	}
	ratio() { awk -v a="${1%% *}" -v b="${2%% *}" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'; }
	j=$(best "$bin" lp-join "$tmp/s.lp" "$tmp/p.lp")
	p=$(best "$bin" lp-split --live -P 90 --probe req --label -q "$tmp/j.lp")
	c=$(best "$bin" lp-collapse --group above "$tmp/l.lp")
	printf '%-10s %-10s %9s %12s  %-30s %-30s %-30s\n' "$n" "$spans" alone "-" "$j" "$p" "$c"
	if [ -n "${OLD:-}" ]; then
		jo=$(old_best lp-join) po=$(old_best lp-split) co=$(old_best lp-collapse)
		printf '%-10s %-10s %9s %12s  %-30s %-30s %-30s\n' "$n" "$spans" "old" "-" "$jo" "$po" "$co"
		printf '%-10s %-10s %9s %12s  %-30s %-30s %-30s\n' "$n" "$spans" "new/old" "-" \
			"$(ratio "$j" "$jo")" "$(ratio "$p" "$po")" "$(ratio "$c" "$co")"
	fi
	rm -f "$tmp/s.lp" "$tmp/p.lp" "$tmp/j.lp" "$tmp/l.lp"
done
echo "(samples/s = samples / wall time of the whole pipeline; per program: user+system CPU s / peak RSS MB (samples per CPU second))"
echo "(alone: each program by itself on a file${pin:+, pinned to one CPU}, best of $reps runs)"
[ -z "${OLD:-}" ] || echo "(old: the same from $OLD/bin, runs interleaved; new/old: ratio of CPU seconds, below 1 is faster)"
echo "(load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs)"
