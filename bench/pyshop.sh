#!/usr/bin/env bash
# What tracing one Python function costs a Python program: a shop loop of
# many small calls (tests/workloads/pyshop.py: ~1,000 Python calls an
# order, one order in twelve renders an invoice) on Debian's python3.11
# (PY=: another CPython, 3.12 and 3.13 pyenv's), its orders a CPU second
# untraced, under lp-trace python:Shop.checkout (the function's calls
# alone trap: its start at a breakpoint in 3.11, at a hardware watchpoint
# from 3.12 on, its returns at hardware watchpoints), and the same with
# every Python call trapping
# (LP_HIDE_FEATURES=hw_watch: a machine without watchpoints); the runs in
# turn within each round, medians of ROUNDS, and the ratios to untraced.
# Needs root and a build (O=build-NAME).
set -eu
. "$(dirname "$0")/common.bash"
ROUNDS=${ROUNDS:-5}
CPU_S=${CPU_S:-4}
PY=${PY:-/usr/bin/python3.11}
SHOP=$top/tests/workloads/pyshop.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(id -u)" -ne 0 ]; then echo "bench/pyshop.sh: needs root" >&2; exit 1; fi
command -v lp-trace >/dev/null || { echo "bench/pyshop.sh: build first (make O=...)" >&2; exit 1; }

rate() { sed -n 's/.* orders_per_cpu_s=\([0-9]*\)$/\1/p'; }
plain() { "$PY" "$SHOP" "$1" | rate; }
traced() { lp-trace -o "$tmp/t.lp" python:Shop.checkout -- "$PY" "$SHOP" "$1" 2>/dev/null | rate; }
every() { LP_HIDE_FEATURES=hw_watch traced "$1"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "# $PY, pyshop.py for $CPU_S CPU seconds a run (every call: 1 s), median of $ROUNDS rounds"
for r in $(seq "$ROUNDS"); do
	p=$(plain "$CPU_S")
	t=$(traced "$CPU_S")
	e=$(every 1)
	echo "round $r: untraced $p, python:Shop.checkout $t, every call trapping $e orders a CPU second"
	echo "$p" >>"$tmp/p"
	echo "$t" >>"$tmp/t"
	echo "$e" >>"$tmp/e"
done
awk -v p="$(median <"$tmp/p")" -v t="$(median <"$tmp/t")" -v e="$(median <"$tmp/e")" 'BEGIN {
	printf "| run | orders a CPU second | kept |\n| --- | --- | --- |\n"
	printf "| untraced | %d | 1.00 |\n", p
	printf "| lp-trace python:Shop.checkout | %d | %.2f |\n", t, t / p
	printf "| the same, every Python call trapping | %d | %.3f |\n", e, e / p }'
