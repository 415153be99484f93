#!/usr/bin/env bash
# bench/collapse.sh - lp-collapse on a >= 100 MB `perf script` text with deep
# stacks (folded output, and its other formats): MB/s (wall and CPU) and
# peak RSS, side by side with `wc -l` on the
# same file (the I/O floor) and, when FLAMEGRAPH_DIR points to a FlameGraph
# checkout, stackcollapse-perf.pl (whose output must be identical).
#
# The input is recorded once and cached (under $O/bench, or $LP_BENCH_DIR):
# perf record -F 999 -g --call-graph dwarf of a Python recursion workload,
# perf script, the text repeated up to the size.  Without perf (or root) the
# corpus's example-perf-stacks.txt.gz is repeated instead.
#   LP_BENCH_MB=100   size of the input in MB
#   LP_BENCH_RUNS=3   runs of each tool; the best one is reported
#   OLD=DIR           another build (`make O=DIR` of an earlier commit): each
#                     lp-collapse row is followed by DIR's, runs interleaved,
#                     and the CPU ratio new/old
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
O=${O:-$top/build}
LP=${LP_COLLAPSE:-$O/bin/lp-collapse}
dir=${LP_BENCH_DIR:-$O/bench}
mb=${LP_BENCH_MB:-100}
runs=${LP_BENCH_RUNS:-3}
corpus=${CORPUS:-$top/../shared/corpus}
mkdir -p "$dir"
[ -x "$LP" ] || { echo "collapse.sh: $LP not built (make O=$O)" >&2; exit 1; }

base=$dir/collapse-base.txt
input=$dir/collapse-${mb}mb.txt

record_base() {
	local py=$dir/recurse.py data=$dir/collapse.perf.data
	cat >"$py" <<'EOF'
import sys, time
sys.setrecursionlimit(10000)
def f(n):
    if n == 0:
        s = 0
        for i in range(2000):
            s += i * i
        return s
    return f(n - 1) + 1
def g(n):
    return sorted(str(i) for i in range(n))
t = time.time()
while time.time() - t < float(sys.argv[1]):
    for d in (10, 50, 120):
        f(d)
    g(3000)
EOF
	command -v perf >/dev/null && command -v python3 >/dev/null || return 1
	perf record -q -F 999 -g --call-graph dwarf -o "$data" python3 "$py" 4 >/dev/null 2>&1 ||
		return 1
	perf script -i "$data" >"$base.tmp" 2>/dev/null && [ -s "$base.tmp" ] || return 1
	rm -f "$data"
	mv "$base.tmp" "$base"
	echo "input: perf record -F 999 -g --call-graph dwarf of python3 recursion (depth up to 120)"
}

if [ ! -s "$input" ]; then
	if [ ! -s "$base" ] && ! record_base; then
		echo "input: perf not usable here; repeating the corpus's example-perf-stacks.txt.gz"
		gunzip -c "$corpus/flamegraph/example-perf-stacks.txt.gz" >"$base" || exit 1
	fi
	: >"$input.tmp"
	while [ "$(stat -c %s "$input.tmp")" -lt $((mb * 1000 * 1000)) ]; do
		cat "$base" >>"$input.tmp"
	done
	mv "$input.tmp" "$input"
fi
# A quarter of it, to show that memory does not grow with input size.
quarter=$dir/collapse-${mb}mb-quarter.txt
if [ ! -s "$quarter" ]; then
	head -c $(($(stat -c %s "$input") / 4)) "$input" >"$quarter"
fi

size=$(stat -c %s "$input")
lines=$(wc -l <"$input")
samples=$(grep -c '^$' "$input")
depth=$(awk '/^$/ { if (n > m) m = n; n = 0; next } /^[ \t]/ { n++ } END { print m }' "$input")
echo "input: $input: $((size / 1000000)) MB, $lines lines, $samples samples, deepest stack $depth frames"

# measure NAME FILE CMD...: best of $runs; prints "elapsed cpu rss_kb".
measure() {
	local file=$1 best="" line e u s m
	shift
	for _ in $(seq "$runs"); do
		if [ -x /usr/bin/time ]; then
			line=$(/usr/bin/time -f '%e %U %S %M' "$@" <"$file" 2>&1 >/dev/null | tail -1)
		else
			# no GNU time: bash's clock, and VmHWM read while it runs
			local t0 t1 pid hwm=0 v
			t0=$(date +%s.%N)
			"$@" <"$file" >/dev/null 2>&1 &
			pid=$!
			while kill -0 "$pid" 2>/dev/null; do
				v=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
				[ -n "$v" ] && hwm=$v
				sleep 0.005
			done
			wait "$pid"
			t1=$(date +%s.%N)
			line="$(echo "$t1 - $t0" | bc) 0 0 $hwm"
		fi
		read -r e u s m <<<"$line"
		if [ -z "$best" ] || awk -v a="$e" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
			best="$e $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') $m"
		fi
	done
	echo "$best"
}

row() {	# row NAME "elapsed cpu rss"
	local name=$1 e c m
	read -r e c m <<<"$2"
	awk -v n="$name" -v e="$e" -v c="$c" -v m="$m" -v sz="$size" 'BEGIN {
		printf "%-30s %8.3f s %9.0f MB/s %9s MB/s %8.1f MB\n", n, e,
			(e > 0 ? sz / 1e6 / e : 0),
			(c > 0 ? sprintf("%.0f", sz / 1e6 / c) : "-"), m / 1024 }'
}

# lp_row NAME FILE ARGS...: lp-collapse ARGS on FILE, and with OLD the old
# build's beside it (each run of one followed by one of the other).
lp_row() {
	local name=$1 file=$2 new old r
	shift 2
	if [ -z "${OLD:-}" ]; then
		row "$name" "$(measure "$file" "$LP" "$@")"
		return
	fi
	new="" old=""
	for _ in $(seq "$runs"); do
		r=$(runs=1 measure "$file" "$LP" "$@")
		[ -z "$new" ] || awk -v a="${r#* }" -v b="${new#* }" 'BEGIN { exit !(a + 0 < b + 0) }' && new=$r
		r=$(runs=1 measure "$file" "$OLD/bin/lp-collapse" "$@")
		[ -z "$old" ] || awk -v a="${r#* }" -v b="${old#* }" 'BEGIN { exit !(a + 0 < b + 0) }' && old=$r
	done
	row "$name" "$new"
	row "  old build" "$old"
	awk -v a="$new" -v b="$old" 'BEGIN { split(a, x, " "); split(b, y, " ");
		printf "  new/old CPU %s, wall %s\n", (y[2] > 0 ? sprintf("%.2fx", x[2] / y[2]) : "-"),
			(y[1] > 0 ? sprintf("%.2fx", x[1] / y[1]) : "-") }'
}

printf '%-30s %10s %14s %14s %11s\n' tool wall "MB/s (wall)" "MB/s (cpu)" "peak RSS"
row "wc -l" "$(measure "$input" wc -l)"
lp_row "lp-collapse" "$input"
lp_row "lp-collapse --tid --all" "$input" --tid --all
# The same samples as an lp stream (lp-cat; streams concatenate) and as
# folded lines, each repeated to the same size: MB/s of each input's size.
repeat_to() {	# repeat_to SRC DST
	: >"$2.tmp"
	while [ "$(stat -c %s "$2.tmp")" -lt $((mb * 1000 * 1000)) ]; do
		cat "$1" >>"$2.tmp"
	done
	mv "$2.tmp" "$2"
	rm -f "$1"
}
stream=$dir/collapse-${mb}mb.lp
if [ ! -s "$stream" ]; then
	"$O/bin/lp-cat" --input-format perf <"$base" >"$stream.one" && repeat_to "$stream.one" "$stream"
fi
folded=$dir/collapse-${mb}mb.folded
if [ ! -s "$folded" ]; then
	"$LP" --tid <"$base" >"$folded.one" && repeat_to "$folded.one" "$folded"
fi
# The other outputs of the same aggregation, from the same perf script.
for fmt in speedscope svg pprof heatmap; do
	lp_row "lp-collapse --format $fmt" "$input" --format "$fmt"
done
size_all=$size
size=$(stat -c %s "$stream")
lp_row "lp-collapse, lp stream input" "$stream"
lp_row "lp-collapse --format pprof, lp stream" "$stream" --format pprof
size=$(stat -c %s "$folded")
lp_row "lp-collapse, folded input" "$folded"
size=$size_all
r=$(measure "$quarter" "$LP")
echo "lp-collapse on a quarter of the input: peak RSS $(awk -v m="${r##* }" 'BEGIN { printf "%.1f MB", m / 1024 }') (memory follows distinct stacks, not input size)"
"$LP" <"$input" >"$dir/lp.folded"
echo "distinct stacks: $(wc -l <"$dir/lp.folded")"
if [ -n "${FLAMEGRAPH_DIR:-}" ] && [ -f "$FLAMEGRAPH_DIR/stackcollapse-perf.pl" ]; then
	runs=1 row "stackcollapse-perf.pl" "$(runs=1 measure "$input" perl "$FLAMEGRAPH_DIR/stackcollapse-perf.pl")"
	perl "$FLAMEGRAPH_DIR/stackcollapse-perf.pl" <"$input" 2>/dev/null >"$dir/pl.folded"
	if cmp -s "$dir/lp.folded" "$dir/pl.folded"; then
		echo "output: identical to stackcollapse-perf.pl"
	else
		echo "output: DIFFERS from stackcollapse-perf.pl" >&2
		exit 1
	fi
else
	echo "(set FLAMEGRAPH_DIR to a FlameGraph checkout to compare with stackcollapse-perf.pl)"
fi
