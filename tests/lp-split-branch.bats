#!/usr/bin/env bats
# What happened inside a span (lp-join's at.PROBE=, calls.PROBE=,
# calls_ns.PROBE=, first.PROBE.KEY=) and lp-split's grouping by it (--took,
# --child) and its ranking of what separates the slow spans from the fast.
# The live test's workload, tests/workloads/branchreq.c, makes the slow
# requests exactly those that take a branch, and says so in each request's
# ret=; the hand-written streams' truth is in the records themselves.

load helpers/common

teardown() {
	# The live test's server and recorder, if a check failed before they
	# were stopped.
	if [ -n "${W:-}" ]; then kill -KILL "$W" 2>/dev/null || true; fi
	if [ -n "${R:-}" ]; then kill -KILL "$R" 2>/dev/null || true; fi
}

# A tracer's stream on one thread: handle_request spans 90-300 (an event
# at 100 and 150 of demo.c:57, a nested lookup 120-200 with lp_ns 10, an
# event at 210 of demo.c:60, an event at its very end, 300, which is
# after its return), a recursive fib (outer 400-500, inner 420-450), a
# probe named with '=' in a span 600-700 inside main 550-800, and on
# another thread an event inside no span.
inside_stream() {
	printf 'lp-stream\t1\tclock=monotonic\n' >"$T/none.lp"
	printf '%s\n' \
		$'lp-stream\t1\tclock=monotonic\tproducer=lp-trace' \
		$'event\t100\t1\t1\tdemo.c:57\ti=3' \
		$'event\t150\t1\t1\tdemo.c:57\ti=4' \
		$'span\t120\t200\t1\t1\tlookup\t1\targ0=5\tlp_ns=10\tret=1' \
		$'event\t210\t1\t1\tdemo.c:60' \
		$'event\t300\t1\t1\tdemo.c:57\ti=9' \
		$'span\t90\t300\t1\t1\thandle_request\t0\targ0=7\tlp_ns=40' \
		$'span\t420\t450\t1\t1\tfib\t1\tn=1' \
		$'span\t400\t500\t1\t1\tfib\t0\tn=2' \
		$'event\t650\t1\t1\tx.c:1' \
		$'span\t600\t700\t1\t1\top=eq\t1' \
		$'span\t550\t800\t1\t1\tmain\t0' \
		$'event\t650\t1\t2\tx.c:1' \
		>"$T/t.lp"
}

@test "lp-join: each span gains the events and nested calls inside it on its thread, counted, with the first one's values" {
	inside_stream
	lp-join "$T/none.lp" "$T/t.lp" >"$T/j.lp"
	# span START: the span's line as lp-join wrote it
	span() { grep -P "^span\t$1\t" "$T/j.lp"; }
	# the event at 300 is the span's end: after its return, not in it
	run -0 span 90
	assert_output $'span\t90\t300\t1\t1\thandle_request\t0\targ0=7\tlp_ns=40\tat.demo.c:57=2\tfirst.demo.c:57.i=3\tcalls.lookup=1\tcalls_ns.lookup=70\tfirst.lookup.arg0=5\tfirst.lookup.ret=1\tat.demo.c:60=1'
	run -0 span 120
	assert_output $'span\t120\t200\t1\t1\tlookup\t1\targ0=5\tlp_ns=10\tret=1\tat.demo.c:57=1\tfirst.demo.c:57.i=4'
	# recursion: the outer call's time is its own, not its own plus the inner's
	run -0 span 400
	assert_output $'span\t400\t500\t1\t1\tfib\t0\tn=2\tcalls.fib=1\tcalls_ns.fib=30\tfirst.fib.n=1'
	# the other thread's event is in no span; '=' in a probe's name is escaped in the key
	run -0 span 600
	assert_output $'span\t600\t700\t1\t1\top=eq\t1\tat.x.c:1=1'
	run -0 span 550
	assert_output $'span\t550\t800\t1\t1\tmain\t0\tat.x.c:1=1\tcalls.op\\x3deq=1\tcalls_ns.op\\x3deq=100'
	run -0 grep -c -P '^event\t' "$T/j.lp"
	assert_output 6
}

@test "lp-join --no-contents: spans as they were" {
	inside_stream
	run -0 lp-join --no-contents "$T/none.lp" "$T/t.lp"
	run -0 diff <(grep -P '^span\t' <<<"$output") <(grep -P '^span\t' "$T/t.lp")
}

@test "lp-join: a stream joined again gains the same attributes, not twice" {
	inside_stream
	lp-join "$T/none.lp" "$T/t.lp" >"$T/j1.lp"
	lp-join "$T/none.lp" "$T/j1.lp" >"$T/j2.lp"
	run -0 diff "$T/j1.lp" "$T/j2.lp"
}

@test "lp-join: samples carry their span's inside attributes as span.KEY" {
	inside_stream
	printf '%s\n' $'lp-stream\t1\tclock=monotonic' $'frame\tf1\tu\t-\t-\tmain\t-' $'stack\ts1\tf1' \
		$'sample\t250\t1\t1\t0\tx\tcpu-clock\t1\ts1' >"$T/s.lp"
	run -0 lp-join "$T/s.lp" "$T/t.lp"
	run -0 grep -P '^sample\t' <<<"$output"
	assert_output --regexp $'\tspan=handle_request\t.*\tspan\\.at\\.demo\\.c:57=2\t.*\tspan\\.calls_ns\\.lookup=70\t'
}

@test "lp-join: what waits for a span is forgotten once no span can hold it: memory stays flat on a long stream" {
	# events on a thread with no span, and 1 us spans on another: nothing
	# holds the events, and a span is never longer than 1 us
	gen() {
		awk -v n="$1" 'BEGIN { OFS = "\t"; print "lp-stream", 1, "clock=monotonic"
			for (i = 0; i < n; i++) { t = 1000000 + i * 10000
				print "event", t, 1, 1, "x.c:1", "i=" i
				print "span", t, t + 1000, 1, 2, "f", 0 } }'
	}
	gen 100000 >"$T/small.lp"
	gen 1000000 >"$T/big.lp"
	printf 'lp-stream\t1\tclock=monotonic\n' >"$T/none.lp"
	/usr/bin/time -f %M -o "$T/small.rss" lp-join --max-delay 1ms "$T/none.lp" "$T/small.lp" >/dev/null
	/usr/bin/time -f %M -o "$T/big.rss" lp-join --max-delay 1ms "$T/none.lp" "$T/big.lp" >/dev/null
	small=$(cat "$T/small.rss") big=$(cat "$T/big.rss")
	if under_sanitizer; then skip "peak RSS under a sanitizer is its allocator's (make sanitize)"; fi
	# ten times the records: kept all, they would take 10x the memory
	((big < small + 4096)) || fail "max RSS ${big} KiB for 1M events and spans, ${small} KiB for 100k"
}

@test "lp-split: the report ranks what separates the slow spans, with Fisher's exact p" {
	# 100 requests; 10 reach demo.c:57 and take 5 ms, the others 1 ms
	awk 'BEGIN { OFS = "\t"; print "lp-stream", 1, "clock=monotonic"; t = 1000000
		for (i = 0; i < 100; i++) { slow = i % 10 == 3
			if (slow) print "event", t + 100, 1, 1, "demo.c:57", "i=" i
			print "span", t + 50, t + 250, 1, 1, "lookup", 1, "ret=" (int(i / 10) % 2)
			d = slow ? 5000000 : 1000000
			print "span", t, t + d, 1, 1, "handle_request", 0, "id=" i; t += d + 1000 } }' >"$T/t.lp"
	printf 'lp-stream\t1\tclock=monotonic\n' >"$T/none.lp"
	lp-join "$T/none.lp" "$T/t.lp" >"$T/j.lp"
	run -0 lp-split --threshold 2ms --probe handle_request --label -o /dev/null -r "$T/r.txt" "$T/j.lp"
	run -0 sed -n '/^# what separates/,/^# the /p' "$T/r.txt"
	# p of 10/0 against 0/90: one table in C(100, 10) = 17310309456440
	# is as extreme, 5.8e-14; lookup's ret= is 5 of 10 and 45 of 90: p 1;
	# id= and the first event's i= have 100 and 10 values: no feature
	assert_line --index 0 "# what separates the above spans (10) from the below (90): spans with each, Fisher's exact test (two-sided)"
	assert_line --index 1 $'feature\tabove\tbelow\tabove_rate\tbelow_rate\tp'
	assert_line --index 2 $'reached demo.c:57\t10\t0\t100.0%\t0.0%\t5.8e-14'
	assert_line --regexp $'^first.lookup.ret=0\t5\t45\t50.0%\t50.0%\t1$'
	assert_line --regexp $'^called lookup\t10\t90\t100.0%\t100.0%\t1$'
	refute_line --partial 'id='
	refute_line --partial 'first.demo.c:57.i='
	assert_line "# the above spans are the ones that reached demo.c:57 (100.0% of above, 0.0% of below, p = 5.8e-14)"
}

@test "lp-split: a branch probe added while tracing (lp-trace --control) rates only the spans it watched; --took puts the others in unprobed" {
	# 40 spans of f, attached throughout; the branch probe demo.c:57
	# attached at 200: of the 20 spans before, 10 slow ones that could
	# not be seen to reach it; after it, the 4 slow spans reach it, the
	# 16 fast ones do not.
	{
		printf 'lp-stream\t1\tclock=monotonic\n'
		printf 'probe\t1\tattach\tf\tspec=f\n'
		for i in $(seq 0 19); do
			d=$((i % 2 ? 90 : 2))
			printf 'span\t%d\t%d\t1\t1\tf\t0\n' $((i * 10 + 1)) $((i * 10 + 1 + d / 10))
		done
		printf 'probe\t200\tattach\tdemo.c:57\tspec=demo.c:57\n'
		for i in $(seq 20 39); do
			if [ $((i % 5)) -eq 0 ]; then
				printf 'span\t%d\t%d\t1\t1\tf\t0\tat.demo.c:57=1\n' $((i * 10 + 1)) $((i * 10 + 10))
			else
				printf 'span\t%d\t%d\t1\t1\tf\t0\n' $((i * 10 + 1)) $((i * 10 + 2))
			fi
		done
	} >"$T/win.lp"
	lp-split --threshold 5ns --probe f --label -o /dev/null -r "$T/rep.txt" "$T/win.lp"
	run -0 cat "$T/rep.txt"
	# above: 10 before (unwatched) + 4 after (all reached); below: 10
	# before + 16 after (none reached): 4 of 4 against 0 of 16.
	assert_line --regexp $'^reached demo.c:57\t4\t0\t100.0%\t0.0%\t'
	lp-split --took demo.c:57 --probe f --label -o /dev/null -r "$T/took.txt" "$T/win.lp"
	cat "$T/took.txt"
	run -0 awk -F'\t' '$1 == "not-took" || $1 == "took" { print $1, $2 }' "$T/took.txt"
	assert_output $'not-took 16\ntook 4'
}

@test "lp-join: a malformed event in SPANS is an error naming the line, not a span that missed it" {
	printf 'lp-stream\t1\tclock=monotonic\n' >"$T/none.lp"
	printf '%s\n' $'lp-stream\t1\tclock=monotonic' $'event\tx\t1\t1\tdemo.c:57' \
		$'span\t1\t5\t1\t1\tf\t0' >"$T/bad.lp"
	run -1 --separate-stderr lp-join "$T/none.lp" "$T/bad.lp"
	assert_equal "$stderr" "lp-join: $T/bad.lp:2: event: bad time 'x'"
}

@test "lp-split --took and --child: usage errors exit 2, a bad calls_ns is an error naming the line" {
	run -2 --separate-stderr lp-split --took demo.c:57 --percentile 90 -q /dev/null
	assert_equal "$stderr" "lp-split: --took decides the groups: it cannot be combined with --percentile"
	run -2 --separate-stderr lp-split --took demo.c:57 --child lookup -q /dev/null
	assert_equal "$stderr" "lp-split: --took decides the groups: it cannot be combined with --child"
	run -2 --separate-stderr lp-split --child lookup -q /dev/null
	assert_equal "$stderr" "lp-split: --child says what is cut: give the cut with --percentile, --threshold or --auto"
	run -2 --separate-stderr lp-split --took '' -q /dev/null
	assert_equal "$stderr" "lp-split: --took '': expected a probe's name"
	printf '%s\n' $'lp-stream\t1\tclock=monotonic' $'span\t1\t5\t1\t1\tf\t0\tcalls_ns.g=12' \
		$'span\t10\t20\t1\t1\tf\t0\tcalls_ns.g=x' >"$T/bad.lp"
	run -1 --separate-stderr lp-split --child g --percentile 50 --label -o /dev/null -q "$T/bad.lp"
	assert_equal "$stderr" "lp-split: $T/bad.lp:3: span: bad calls_ns.g"
	run -1 --separate-stderr lp-split --child g --threshold 5ns --label -o /dev/null -q - <"$T/bad.lp"
	assert_equal "$stderr" "lp-split: <stdin>:3: span: bad calls_ns.g"
}

# The live pipeline: branchreq traced (handle_request with its id and
# ret=, lookup, the BRANCH line) for 4 s while sampled, joined with every
# enclosing span (a sample in lookup has lookup innermost, and its
# request's handle_request outside it: lp-split --probe finds that).
live_pipeline() {
	L=$(grep -n 'BRANCH \*/' "$LP_TOP/tests/workloads/branchreq.c" | cut -d: -f1)
	# branchreq serves until it is stopped, after both recordings: on a
	# busy machine their start (BPF, calibration) takes seconds.
	"$WORKLOADS/branchreq" 600 2>"$T/w.err" &
	W=$!
	sleep 0.2
	# The recording holds the tracing: lp-record sampling before lp-trace
	# starts, stopped after it ends (both started at once for 4 s, under
	# ASan beside a CPU-bound job lp-record's samples all came before
	# lp-trace's first span).
	lp-record --pid "$W" --freq 499 --output "$T/s.lp" 2>"$T/rec.err" &
	R=$!
	for _ in $(seq 1200); do
		if grep -q '^sample' "$T/s.lp" 2>/dev/null; then break; fi
		sleep 0.05
	done
	grep -q '^sample' "$T/s.lp" || fail "lp-record wrote no sample in 60 s: $(cat "$T/rec.err")"
	lp-trace --pid "$W" --duration 4 --output "$T/t.lp" 'handle_request(id)' lookup \
		"branchreq.c:$L" 2>"$T/tr.err" || fail "lp-trace: $(cat "$T/tr.err")"
	kill -INT "$R"
	reap "$R" 0 60 || fail "lp-record: $(cat "$T/rec.err")"
	R=
	kill -TERM "$W"
	reap "$W" 143 10
	W=
	lp-join --all-spans "$T/s.lp" "$T/t.lp" >"$T/j.lp"
	# lp-trace attaches and detaches its probes one after another: a
	# request before the line's probe or lookup's was there reached them
	# unseen.  [FROM, TO): from the later of the first line event and the
	# first lookup start to the earlier of the last line event and the
	# last lookup end.  A request overlapping it (as lp-split --time
	# counts spans) saw both: one whose line or lookup ran unseen ended
	# before the first seen (one thread, one of each a request) or began
	# after the last.
	read -r FROM TO < <(awk -F'\t' -v p="branchreq.c:$L" '
		$1 == "event" && $5 == p { if (e0 == "" || $2 < e0) e0 = $2; if ($2 > e1) e1 = $2 }
		$1 == "span" && $6 == "lookup" && $3 != "-" { if (l0 == "" || $2 < l0) l0 = $2; if ($3 > l1) l1 = $3 }
		END { print (e0 > l0 ? e0 : l0), (e1 < l1 ? e1 : l1) }' "$T/t.lp")
	WINDOW="@$FROM-@$TO"
}

@test "lp-trace, lp-join, lp-split live: the slow requests are the ones that took the branch, ranked first with the true rates; --took's sample shares; --child lookup" {
	require_root
	live_pipeline
	# Each request reached the line exactly when it says it took the branch
	run -0 awk -F'\t' -v at="at.branchreq.c:$L=1" -v F="$FROM" -v T="$TO" '$1 == "span" && $6 == "handle_request" && $3 != "-" && $3 > F && $2 < T {
		n++; took = 0; reached = 0
		for (i = 8; i <= NF; i++) { if ($i == "ret=1") took = 1; if ($i == at) reached = 1 }
		t += took; bad += took != reached } END { print n, t, bad + 0 }' "$T/j.lp"
	read -r n ntook bad <<<"$output"
	((n > 1000 && ntook > 100)) || fail "$n requests, $ntook took the branch"
	assert_equal "$bad" 0

	run -0 lp-split --probe handle_request --threshold 750us --time "$WINDOW" --above "$T/a.lp" \
		--below "$T/b.lp" --report "$T/r.txt" "$T/j.lp"
	# the truth of each group: its spans that returned 1 (a span still open
	# when tracing stopped, END "-", goes to every output)
	truth() { awk -F'\t' '$1 == "span" && $6 == "handle_request" && $3 != "-" { n++; for (i = 8; i <= NF; i++) t += $i == "ret=1" }
		END { printf "%d\t%d\t%.1f%%\n", n, t, 100 * (t / n) }' "$1"; }
	IFS=$'\t' read -r na ta ra < <(truth "$T/a.lp")
	IFS=$'\t' read -r nb tb rb < <(truth "$T/b.lp")
	run -0 sed -n '/^# what separates/{n;n;p;q}' "$T/r.txt"
	assert_output --regexp "^reached branchreq.c:$L"$'\t'"$ta"$'\t'"$tb"$'\t'"$ra"$'\t'"$rb"$'\t[0-9.]+e-[0-9]+$'
	run -0 grep "^# the above spans are the ones that reached branchreq.c:$L ($ra of above, $rb of below, p = [0-9.]*e-[0-9]*)\$" "$T/r.txt"
	# (a branch request's work is 1030 us as calibrated at start: on a
	# machine whose load then falls it may take less than 750)
	((ta * 10 >= ntook * 9)) || fail "$ta of the $ntook branch requests above 750 us"

	# --took: the groups are the requests that took the branch and the
	# others; the took group's share of the samples in either is its
	# requests' share of the work, by construction from their ids
	# (branchreq.c: 1030 units with the branch, 500 when id % 5 == 0, else
	# 230; 28% of it in a run); 300 samples or more: the share's sd is under
	# 3 points.  (Samples in lookup left out, as lp-join without
	# --all-spans leaves them, would give the branch 36%.)
	run -0 lp-split --probe handle_request --took "branchreq.c:$L" --time "$WINDOW" --label \
		-r "$T/took.txt" "$T/j.lp"
	printf '%s\n' "$output" >"$T/took.lp"
	run -0 awk -F'\t' '$1 == "span" && $6 == "handle_request" && $3 != "-" { g = $NF; sub(/^group=/, "", g); n[g]++
			for (i = 8; i <= NF; i++) { if ($i == "ret=1") t[g]++; if ($i ~ /^id=/) id = substr($i, 4) }
			w = id % 10 == 3 ? 1030 : id % 5 == 0 ? 500 : 230; work[g == "took"] += w }
		$1 == "sample" { if ($NF == "group=took") s1++; else if ($NF == "group=not-took") s0++ }
		END { printf "%d %d %d %d %.1f %.1f %d\n", n["took"], t["took"], n["not-took"], t["not-took"],
			100 * work[1] / (work[0] + work[1]), 100 * s1 / (s0 + s1), s0 + s1 }' "$T/took.lp"
	read -r n1 t1 n0 t0 work_share sample_share nsamples <<<"$output"
	echo "# $n requests, $ntook took the branch; above 750 us: $na ($ra took it), below: $nb ($rb);" \
		"--took: $sample_share% of $nsamples samples, $work_share% of the work" >&3
	assert_equal "$n1 $t1 $t0" "$ntook $ntook 0"
	((nsamples >= 300)) || fail "$nsamples samples in requests"
	awk -v a="$work_share" -v b="$sample_share" 'BEGIN { exit !(a - b < 5 && b - a < 5) }' ||
		fail "the took group has $sample_share% of the samples, its requests $work_share% of the work"

	# --child lookup: each request's calls_ns.lookup is its lookup span's
	# duration less lp_ns (the span before it on the thread); the cut at
	# 150 us leaves the slow lookups (id % 5 == 0) above
	run -0 awk -F'\t' '$1 == "span" && $6 == "lookup" { lp = 0; for (i = 8; i <= NF; i++) if ($i ~ /^lp_ns=/) lp = substr($i, 7); last[$5] = $3 - $2 - lp }
		$1 == "span" && $6 == "handle_request" && $3 != "-" && $3 > F && $2 < T { v = ""; for (i = 8; i <= NF; i++) if ($i ~ /^calls_ns\.lookup=/) v = substr($i, 17)
			n++; bad += v != last[$5] } END { print n, bad + 0 }' F="$FROM" T="$TO" "$T/j.lp"
	assert_output "$n 0"
	run -0 lp-split --probe handle_request --child lookup --threshold 150us --time "$WINDOW" --label -q \
		"$T/j.lp"
	printf '%s\n' "$output" >"$T/child.lp"
	run -0 awk -F'\t' '$1 == "span" && $6 == "handle_request" && $3 != "-" && $NF != "group=excluded" { id = -1; v = 0
			for (i = 8; i <= NF; i++) { if ($i ~ /^id=/) id = substr($i, 4); if ($i ~ /^calls_ns\.lookup=/) v = substr($i, 17) }
			above = $NF == "group=above"; wrong += above != (v + 0 > 150000)
			if (id % 5 == 0) { s++; sa += above } else { f++; fa += above } }
		END { printf "%d %.3f %.3f\n", wrong + 0, sa / s, fa / f }' "$T/child.lp"
	read -r wrong slow_above fast_above <<<"$output"
	echo "# --child lookup -t 150us: above: $slow_above of the slow lookups, $fast_above of the fast" >&3
	assert_equal "$wrong" 0
	awk -v s="$slow_above" -v f="$fast_above" 'BEGIN { exit !(s >= 0.9 && f <= 0.1) }' ||
		fail "slow lookups above: $slow_above, fast ones: $fast_above"
}
