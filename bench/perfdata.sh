#!/usr/bin/env bash
# bench/perfdata.sh - reading perf record's perf.data: lp-cat on the file
# itself against `perf script | lp-cat`, and to folded stacks
# (`lp-cat | lp-symbolize | lp-collapse` against `perf script | lp-cat |
# lp-collapse`), the median wall time of LP_BENCH_RUNS runs each, in turn,
# and the ratio.  The recording: perf record -F 4999 -g of cpusplit for
# LP_BENCH_SECONDS (default 20: ~100,000 samples), kept under $O/bench.
# Then the same of a --call-graph dwarf recording (cpusplit-nofp, 999 Hz,
# 8 KiB stack copies: the unwinding lp-symbolize does, against perf
# script's own), to folded stacks.
set -u
. "$(dirname "$0")/common.bash"
runs=${LP_BENCH_RUNS:-5}
secs=${LP_BENCH_SECONDS:-20}
dir=$O/bench
mkdir -p "$dir"
data=$dir/perfdata-$secs.data
command -v perf >/dev/null || { echo "perfdata.sh: perf is not installed" >&2; exit 1; }
dwarf=$dir/perfdata-dwarf-$secs.data
if [ ! -s "$dwarf" ]; then
	perf record -q -F 999 --call-graph dwarf -o "$dwarf" -- "$W/cpusplit-nofp" "$secs" "$secs" /dev/null 2>/dev/null ||
		{ echo "perfdata.sh: perf record --call-graph dwarf failed (root?)" >&2; exit 1; }
fi
if [ ! -s "$data" ]; then
	perf record -q -F 4999 -g -o "$data" -- "$W/cpusplit" "$secs" "$secs" /dev/null 2>/dev/null ||
		{ echo "perfdata.sh: perf record failed (root?)" >&2; exit 1; }
fi

# median WALL of runs of a shell command, in seconds
median() {
	local i t
	for ((i = 0; i < runs; i++)); do
		t=$( { /usr/bin/env time -f %e bash -c "$1" >/dev/null; } 2>&1 | tail -1)
		echo "$t"
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

n=$(perf script -i "$data" -F time 2>/dev/null | grep -c .)
a=$(median "lp-cat '$data'")
b=$(median "perf script -i '$data' 2>/dev/null | lp-cat")
c=$(median "lp-cat '$data' | lp-symbolize | lp-collapse")
d=$(median "perf script -i '$data' 2>/dev/null | lp-cat | lp-collapse")
echo "perf.data: $n samples, $(du -m "$data" | cut -f1) MB, median of $runs runs"
printf '%-44s %6s s\n' "lp-cat perf.data" "$a" "perf script | lp-cat" "$b" \
	"lp-cat | lp-symbolize | lp-collapse" "$c" "perf script | lp-cat | lp-collapse" "$d"
awk -v a="$a" -v b="$b" -v c="$c" -v d="$d" 'BEGIN {
	printf "reading: %.1fx faster than perf script | lp-cat; to folded: %.1fx\n", b / a, d / c }'

n=$(perf script -i "$dwarf" -F time 2>/dev/null | grep -c .)
e=$(median "lp-cat '$dwarf' | lp-symbolize | lp-collapse")
f=$(median "perf script -i '$dwarf' 2>/dev/null | lp-cat | lp-collapse")
echo "perf.data --call-graph dwarf: $n samples, $(du -m "$dwarf" | cut -f1) MB, median of $runs runs"
printf '%-44s %6s s\n' "lp-cat | lp-symbolize | lp-collapse" "$e" "perf script | lp-cat | lp-collapse" "$f"
awk -v e="$e" -v f="$f" 'BEGIN { printf "dwarf, to folded: %.1fx faster than perf script\n", f / e }'
