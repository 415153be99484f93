#!/usr/bin/env bash
# examples/demo.sh - lp's main job on the bundled demo service: what makes
# the slow requests slow?  `make demo` builds first, then runs this.
#
#   examples/demo.sh [OUTDIR]          (default ./demo-out)
#
# Starts $O/examples/demo (a request handler whose rare slow path is known),
# samples it with lp-record and traces handle_request with lp-trace at the
# same time, joins the two live streams with lp-join, splits the samples at
# the p90 latency of handle_request with lp-split, and writes slow.svg,
# fast.svg, diff.svg (lp-collapse, lp-diff), report.txt (lp-diff --report)
# and report.html, all of it in one page (lp-split --label | lp-report).
# Environment: O (build dir, default build), LP_DEMO_SECONDS (default 5),
# LP_DEMO_FREQ (sampling rate, default 499 Hz).
NAME=demo
. "$(dirname "$0")/common.sh"
out=${1:-./demo-out}
seconds=${LP_DEMO_SECONDS:-5}
freq=${LP_DEMO_FREQ:-499}
need lp-record lp-trace lp-join lp-split lp-collapse lp-diff lp-report
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
rm -f "$out"/{samples,spans,joined,slow,fast,idle,labelled}.lp "$out"/{slow,fast,diff}.svg \
	"$out"/{report,split}.txt "$out"/report.html

# The service runs a little longer than the recording, so it is there
# throughout; it is stopped at the end whatever happens.
"$O/examples/demo" $((seconds + 3)) > "$out/demo.log" 2>&1 &
demo=$!
trap 'kill $demo 2>/dev/null; wait $demo 2>/dev/null' EXIT
sleep 0.3
kill -0 $demo 2>/dev/null || die "the demo service did not start (see $out/demo.log)"
say "recording the demo service (pid $demo) for ${seconds}s: samples at ${freq} Hz and spans of handle_request"

# Both producers run at once and lp-join reads them live; tee keeps the
# raw streams for later runs of any step.
"$bin/lp-join" \
	<("$bin/lp-record" -F "$freq" -d "$seconds" -p $demo 2> "$out/record.log" |
		tee "$out/samples.lp") \
	<("$bin/lp-trace" -d "$seconds" -p $demo handle_request 2> "$out/trace.log" |
		tee "$out/spans.lp") \
	> "$out/joined.lp" || die "lp-join failed"
wait
nsamples=$(grep -c '^sample' "$out/samples.lp")
nspans=$(grep -c '^span' "$out/spans.lp")
[ "$nsamples" -gt 0 ] || die "lp-record wrote no samples: $(tail -n 3 "$out/record.log")"
[ "$nspans" -gt 0 ] || die "lp-trace wrote no spans: $(tail -n 3 "$out/trace.log")"
say "$nsamples samples, $nspans spans of handle_request"

"$bin/lp-split" --percentile 90 --probe handle_request \
	--above "$out/slow.lp" --below "$out/fast.lp" --outside "$out/idle.lp" \
	--report "$out/split.txt" "$out/joined.lp" || die "lp-split failed"
"$bin/lp-collapse" --format svg --title "Slow requests: above p90 of handle_request" \
	-o "$out/slow.svg" "$out/slow.lp" || die "lp-collapse failed"
"$bin/lp-collapse" --format svg --title "Fast requests: p90 of handle_request and below" \
	-o "$out/fast.svg" "$out/fast.lp" || die "lp-collapse failed"
"$bin/lp-diff" --format svg -n --title "Slow vs fast requests (red: more in slow ones)" \
	-o "$out/diff.svg" "$out/fast.lp" "$out/slow.lp" || die "lp-diff failed"
"$bin/lp-diff" --report "$out/fast.lp" "$out/slow.lp" > "$out/report.txt" ||
	die "lp-diff --report failed"
# The same split as one labelled stream, and all of it in one page.
"$bin/lp-split" --percentile 90 --probe handle_request --label --quiet \
	-o "$out/labelled.lp" "$out/joined.lp" 2> "$out/label.log" ||
	die "lp-split --label failed: $(tail -n 3 "$out/label.log")"
"$bin/lp-report" -o "$out/report.html" "$out/labelled.lp" || die "lp-report failed"

cut=$(sed -n 's/.*p90 = \([0-9]*\) ns.*/\1/p' "$out/split.txt" | head -n 1)
cat "$out/split.txt" >&2
say "wrote $out/report.html (open it in a browser), $out/{slow,fast,diff}.svg, $out/report.txt and the streams (*.lp)"
# The report's first row is the function whose share changed most; name it
# with its share of the samples in slow and in fast requests.
awk -v cut="${cut:-0}" '
	/^#/ { next }
	!hdr { for (i = 1; i <= NF; i++) col[$i] = i; hdr = 1; next }
	{
		f = $NF; a = $col["total_A"]; b = $col["total_B"]
		printf "slow requests (handle_request above p90, %.2f ms) spend %s of their samples in %s (fast requests: %s)\n", cut / 1e6, b, f, a
		exit
	}' "$out/report.txt"
# The same digging live, in a browser, never restarting the service.
say "live: $bin/lp-serve -- $O/examples/demo 600   (open the URL it prints; find handle_request, trace it, cut at its slow mode)"
