#!/usr/bin/env bash
# lp-serve under a live stream: how old its views are when they arrive and
# what it costs, at rising sample rates (tests/helpers/serve-load writes
# the stream in real time, joined requests on 8 threads, and reads
# /events).  The goal: every view current within 1 s at 10,000 samples/s.
# Nothing else serves a live split page, so the figures stand alone; the
# CPU share is of one core.
set -eu
. "$(dirname "$0")/common.bash"
SECONDS_EACH=${SECONDS_EACH:-8}
printf '%-8s %10s %10s %10s %10s %8s %8s\n' rate/s snapshots lag_p50 lag_max gap_max cpu read
for rate in 1000 10000 30000; do
	out=$("$top/tests/helpers/serve-load" "$rate" "$SECONDS_EACH")
	eval "$(tr ' ' '\n' <<<"$out" | sed -n 's/^\([a-z_0-9]*\)=\([0-9.]*\)$/\1=\2/p')"
	printf '%-8s %10s %8s ms %7s ms %7s ms %7.1f%% %8s\n' "$rate" "$snapshots" "$lag_p50_ms" \
		"$lag_max_ms" "$gap_max_ms" "$(awk -v s="$cpu_share" 'BEGIN { print 100 * s }')" \
		"$([ "$read" = "$written" ] && echo all || echo "$read/$written")"
done
