#!/usr/bin/env bash
# examples/dig.sh - digging into the demo service live, the way lp was
# meant to be used: one lp-record and one lp-trace run throughout, steered
# through their --control FIFOs, and neither they nor the demo are ever
# restarted.  `make dig` builds first, then runs this.
#
#   examples/dig.sh [OUTDIR]          (default ./dig-out)
#
#   0 s  lp-record samples everything; lp-trace starts with no probe.
#        Their streams are joined live, split live at the p95 of
#        handle_request, and lp-top shows the slow group (OUTDIR/top.txt).
#   1 s  (once 100 samples are in) find the probe points: lp-trace --lines
#        handle_request (lines.txt);
#        add handle_request: a span per request from now on.
#   3 s  add demo.c:LINE, the line that calls the slow path (the branch).
#   5 s  lp-record: inside rebuild_index: samples only inside the slow path.
#   6 s  add demo.c:LINE2(id), a line with its local: its value per hit.
#  10 s  the end (the phases after the first are timed from its end).
#        Then, from the joined stream: which slow requests took the branch
#        (lp-split's report, report.txt), the split by the branch (took.txt,
#        took-took.lp, took-not-took.lp).
# Environment: O (build dir, default build), LP_DIG_FREQ (default 499 Hz).
NAME=dig
. "$(dirname "$0")/common.sh"
out=${1:-./dig-out}
freq=${LP_DIG_FREQ:-499}
seconds=10
need lp-record lp-trace lp-join lp-split lp-top
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
rm -f "$out"/{samples,spans,joined}.lp "$out"/took-*.lp "$out"/{top,lines,report,took}.txt \
	"$out"/{record,trace,join,control}.log "$out"/{rec,trace}.ctl
src=$top/examples/demo.c
branch=$(grep -n 'rebuild_index(id);' "$src" | cut -d: -f1)
local_line=$(grep -n 'sink += id;' "$src" | tail -1 | cut -d: -f1)
[ -n "$branch" ] && [ -n "$local_line" ] || die "cannot find the lines to probe in $src"

"$O/examples/demo" $((seconds + 3)) > "$out/demo.log" 2>&1 &
demo=$!
pids=()
cleanup() {
	for p in "${pids[@]}" $demo; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}
trap cleanup EXIT
sleep 0.3
kill -0 $demo 2>/dev/null || die "the demo service did not start (see $out/demo.log)"
say "demo pid $demo: sampling everything at $freq Hz, tracing nothing yet"

# The FIFOs exist before anyone writes to them.
mkfifo -m 0600 "$out/rec.ctl" "$out/trace.ctl" || die "cannot make the control FIFOs"
"$bin/lp-join" \
	<("$bin/lp-record" -F "$freq" -d "$seconds" -p $demo --control "$out/rec.ctl" \
		2> "$out/record.log" | tee "$out/samples.lp") \
	<("$bin/lp-trace" -d "$seconds" -p $demo --control "$out/trace.ctl" \
		2> "$out/trace.log" | tee "$out/spans.lp") 2> "$out/join.log" |
	tee "$out/joined.lp" |
	"$bin/lp-split" --live -P 95 --probe handle_request -q \
		--above >("$bin/lp-top" -i 500ms -W 2s --functions 5 --stacks 0 -o "$out/top.txt") &
pids+=($!)

# ctl FIFO COMMAND: one command, said.
ctl() {
	say "$(basename "$1" .ctl): $2"
	echo "$2" > "$1"
}

# Everything sampled first: 100 samples (a second, on a quiet machine;
# lp-record's start takes longer on a busy one), at most 10 s.
for ((i = 0; i < 100; i++)); do
	[ "$(grep -c '^sample' "$out/samples.lp" 2>/dev/null)" -lt 100 ] || break
	sleep 0.1
done
"$bin/lp-trace" --lines handle_request "$O/examples/demo" > "$out/lines.txt" ||
	die "lp-trace --lines failed"
ctl "$out/trace.ctl" "add handle_request"
sleep 2
ctl "$out/trace.ctl" "add demo.c:$branch"
sleep 2
ctl "$out/rec.ctl" "inside rebuild_index"
sleep 1
ctl "$out/trace.ctl" "add demo.c:$local_line(id)"
wait "${pids[0]}" || die "the live pipeline failed (see $out/*.log)"
pids=()
sleep 0.6	# lp-top's last report

"$bin/lp-split" -P 95 --probe handle_request -r "$out/report.txt" "$out/joined.lp" ||
	die "lp-split failed"
"$bin/lp-split" --took "demo.c:$branch" --probe handle_request -r "$out/took.txt" \
	-O "$out/took-%s.lp" "$out/joined.lp" || die "lp-split --took failed"
say "what separates the slow requests (report.txt):"
grep -m1 'are the ones' "$out/report.txt" >&2
say "the slow group's functions, live (the last of top.txt):"
awk '/^lp-top/ { n = 0; delete l } { l[++n] = $0 } END { for (i = 1; i <= n; i++) print l[i] }' \
	"$out/top.txt" >&2
say "outputs in $out"
