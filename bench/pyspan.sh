#!/usr/bin/env bash
# What lp-trace's python:NAME probes cost the program: a loop of ROUNDS
# calls of a small Python function (Debian's /usr/bin/python3.11), plain,
# with python:handle (every call a span) and with python:no_such (every
# call still takes both breakpoints, none matches), the runs in turn
# within each round, best of REPS; and the per-call difference.  Every
# Python call pays, whatever the name: the probes are in the eval loop.
# Needs root and a build (O=build-NAME).
set -eu
. "$(dirname "$0")/common.bash"
ROUNDS=${ROUNDS:-300000}
REPS=${REPS:-5}
PY=${PY:-/usr/bin/python3.11}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(id -u)" -ne 0 ]; then echo "bench/pyspan.sh: needs root" >&2; exit 1; fi
command -v lp-trace >/dev/null || { echo "bench/pyspan.sh: build first (make O=...)" >&2; exit 1; }

# ROUNDS calls of handle; prints the loop's own wall seconds.
cat >"$tmp/calls.py" <<'PYEOF'
import sys, time

def handle(i):
    return i * 2

def main(n):
    t = time.perf_counter()
    for i in range(n):
        handle(i)
    print("wall_s=%.4f" % (time.perf_counter() - t))

main(int(sys.argv[1]))
PYEOF

plain() { "$PY" "$tmp/calls.py" "$ROUNDS"; }
spans() { lp-trace -o "$tmp/s.lp" python:handle -- "$PY" "$tmp/calls.py" "$ROUNDS" 2>/dev/null; }
none() { lp-trace -o "$tmp/n.lp" python:no_such -- "$PY" "$tmp/calls.py" "$ROUNDS" 2>/dev/null; }

echo "# $PY, a loop of $ROUNDS calls, best of $REPS rounds (the loop's wall seconds)"
best_plain= best_spans= best_none=
for r in $(seq "$REPS"); do
	p=$(plain | sed -n 's/wall_s=//p')
	s=$(spans | sed -n 's/wall_s=//p')
	n=$(none | sed -n 's/wall_s=//p')
	echo "round $r: plain $p s, python:handle $s s, python:no_such $n s"
	best_plain=$(awk -v a="$best_plain" -v b="$p" 'BEGIN { print (a == "" || b < a) ? b : a }')
	best_spans=$(awk -v a="$best_spans" -v b="$s" 'BEGIN { print (a == "" || b < a) ? b : a }')
	best_none=$(awk -v a="$best_none" -v b="$n" 'BEGIN { print (a == "" || b < a) ? b : a }')
done
spans_n=$(grep -c $'^span\t' "$tmp/s.lp" || true)
awk -v p="$best_plain" -v s="$best_spans" -v n="$best_none" -v r="$ROUNDS" -v k="$spans_n" 'BEGIN {
	printf "| run | loop | slowdown | per call |\n| --- | --- | --- | --- |\n"
	printf "| plain | %.3f s | - | %.2f us |\n", p, 1e6 * p / r
	printf "| python:handle (%d spans) | %.3f s | %.1fx | +%.2f us |\n", k, s, s / p, 1e6 * (s - p) / r
	printf "| python:no_such | %.3f s | %.1fx | +%.2f us |\n", n, n / p, 1e6 * (n - p) / r }'
