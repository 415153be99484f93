#!/usr/bin/env bats
# lp-join: samples gain the spans that enclose them (same host, pid, tid;
# start <= t < end).  Fixtures in tests/fixtures/join (see its README).

load helpers/common

setup() {
	load_bats_libs
	J=$FIXTURES/join
	T=$BATS_TEST_TMPDIR
}

# The producers a failed test left running.
teardown() {
	for p in ${sp:-} ${pp:-}; do kill "$p" 2>/dev/null || true; done
}

# "TIME PID TID ATTRS..." of every sample, sorted.
samples_of() {
	awk -F'\t' '$1 == "sample" { o = $2 " " $3 " " $4; for (i = 10; i <= NF; i++) o = o " " $i; print o }' "$@" | sort
}

@test "lp-join: exact innermost joins on the fixture (boundaries, nesting, threads, pids, equal times, unfinished, out of order)" {
	run -0 lp-join "$J/samples.lp" "$J/spans.lp"
	printf '%s\n' "$output" > "$T/out.lp"
	samples_of "$T/out.lp" > "$T/got"
	run -0 diff -u "$J/expected-innermost.txt" "$T/got"
}

@test "lp-join: --all-spans gives every enclosing span, innermost first" {
	run -0 lp-join --all-spans "$J/samples.lp" "$J/spans.lp"
	printf '%s\n' "$output" > "$T/out.lp"
	samples_of "$T/out.lp" > "$T/got"
	grep '^3500 ' "$T/got" > "$T/l"
	[ "$(cat "$T/l")" = "3500 100 100 span=C span_start=3500 span_end=4000 span_depth=1 span1=B span1_start=3000 span1_end=5000 span1_depth=0 span1.arg0=a b span1.calls.C=1 span1.calls_ns.C=500" ]
	[ "$(grep -c span1= "$T/got")" -eq 2 ]
	# Apart from the second span, the same joins as without it.
	sed 's/ span1=.*//' "$T/got" > "$T/inner"
	run -0 diff -u "$J/expected-innermost.txt" "$T/inner"
}

@test "lp-join: every other record passes through unchanged" {
	run -0 lp-join "$J/samples.lp" "$J/spans.lp"
	printf '%s\n' "$output" > "$T/out.lp"
	[ "$(grep -c '^span' "$T/out.lp")" -eq 12 ]
	[ "$(grep -c '^sample' "$T/out.lp")" -eq 20 ]
	grep -qx "frob	unknown	record" "$T/out.lp"
	grep -qx "event	6100	100	101	svc.c:12	i=3" "$T/out.lp"
	grep -qx "lost	12500	ring	3" "$T/out.lp"
	grep -qx "span	14000	-	100	100	H	0" "$T/out.lp"
	grep -q "^lp-stream	1	.*producer=lp-record" "$T/out.lp"
	grep -q "^lp-stream	1	.*producer=lp-trace" "$T/out.lp"
	# The output is a valid stream: lp-collapse reads it.
	run -0 lp-collapse "$T/out.lp"
	[ "$output" = "$(printf '%s\n' "a;main;work 2000" "b;main;work 2000" "svc;main;work 16000")" ]
}

@test "lp-join: --probe joins only the named probes" {
	run -0 lp-join --probe B,P4 "$J/samples.lp" "$J/spans.lp"
	printf '%s\n' "$output" > "$T/out.lp"
	samples_of "$T/out.lp" | grep span= | cut -d' ' -f1-4 > "$T/got"
	printf '%s\n' "10600 400 400 span=P4" "11200 400 400 span=P4" \
		"3200 100 100 span=B" "3500 100 100 span=B" "3999 100 100 mark=x" "4000 100 100 span=B" > "$T/want"
	run -0 diff -u "$T/want" "$T/got"
}

@test "lp-join: --max-held forcing records out unjoined writes the loss into the stream" {
	# Without a bound every join is made and nothing is lost.
	run --separate-stderr -0 lp-join "$J/samples.lp" "$J/spans.lp"
	[ "$(grep -c 'span=' <<<"$output")" -eq 14 ]
	[ "$(awk -F'\t' '$1 == "lost" && $3 ~ /^join-/' <<<"$output" | wc -l)" -eq 0 ]
	# Eight held records cannot wait for every match on these inputs: some
	# samples go out before their spans were read, some spans are dropped
	# before their samples; each such release is a lost record, counted.
	run --separate-stderr -0 lp-join --max-held 8 --verbose "$J/samples.lp" "$J/spans.lp"
	printf '%s\n' "$output" >"$T/out.lp"
	[ "$(grep -c '^sample' "$T/out.lp")" -eq 20 ]
	joined=$(grep -c 'span=' "$T/out.lp")
	[ "$joined" -lt 14 ] || fail "expected --max-held 8 to lose joins, got $joined"
	samples=$(awk -F'\t' '$1 == "lost" && $3 == "join-samples" { n += $4 } END { print n + 0 }' "$T/out.lp")
	spans=$(awk -F'\t' '$1 == "lost" && $3 == "join-spans" { n += $4 } END { print n + 0 }' "$T/out.lp")
	# Every join that was not made is accounted for by a sample let go.
	[ "$samples" -ge $((14 - joined)) ] || fail "join-samples $samples < $((14 - joined)) joins lost"
	[ "$samples" -le 20 ] || fail "join-samples $samples > 20 samples"
	[ "$spans" -le 11 ] || fail "join-spans $spans > 11 finished spans"
	# Nothing else is a lost record but the fixture's own, and every one is
	# a well-formed record that lp-cat reads back.
	[ "$(grep -c '^lost' "$T/out.lp")" -eq "$(grep -c -e '^lost	[0-9-]*	join-samples	[1-9]' -e '^lost	[0-9-]*	join-spans	[1-9]' -e '^lost	12500	ring	3$' "$T/out.lp")" ]
	run -0 lp-cat --check "$T/out.lp"
	# The summary on stderr says the same total.
	[[ "$stderr" == *"lp-join: $((samples + spans)) samples or spans let go before their match could arrive"* ]] ||
		fail "stderr: $stderr"
}

@test "lp-join: spans from another host join nothing" {
	sed 's/host=h1/host=h2/' "$J/spans.lp" > "$T/spans.lp"
	run -0 lp-join "$J/samples.lp" "$T/spans.lp"
	[ "$(grep -c '^sample' <<<"$output")" -eq 20 ]
	[[ $output != *span=* ]]
}

@test "lp-join: either input from stdin, the same result" {
	run -0 bash -c "lp-join - '$J/spans.lp' < '$J/samples.lp'"
	printf '%s\n' "$output" > "$T/a.lp"
	run -0 bash -c "lp-join '$J/samples.lp' - < '$J/spans.lp'"
	printf '%s\n' "$output" > "$T/b.lp"
	samples_of "$T/a.lp" > "$T/a"
	samples_of "$T/b.lp" > "$T/b"
	run -0 diff -u "$J/expected-innermost.txt" "$T/a"
	run -0 diff -u "$J/expected-innermost.txt" "$T/b"
}

@test "lp-join: perf script output as SAMPLES (times in ns)" {
	run -0 lp-join "$J/perf-script.txt" "$J/spans.lp"
	printf '%s\n' "$output" > "$T/out.lp"
	samples_of "$T/out.lp" > "$T/got"
	printf '%s\n' "1500 100 100 span=A span_start=1000 span_end=2000 span_depth=0 span.arg0=7 span.ret=0" \
		"2000 100 100" "6500 100 101 span=D span_start=6000 span_end=7000 span_depth=0" > "$T/want"
	run -0 diff -u "$T/want" "$T/got"
}

@test "lp-join: live pipes: a sample is written as soon as its span is known, before the inputs end" {
	mkfifo "$T/s" "$T/p"
	(
		printf 'lp-stream\t1\tclock=monotonic\n'
		printf 'frame\tf1\tu\t-\t/bin/x\tmain\t-\nstack\ts1\tf1\n'
		printf 'sample\t5000\t1\t1\t0\tx\tcpu-clock\t1\ts1\n'
		sleep 4
		printf 'sample\t9000000000\t1\t1\t0\tx\tcpu-clock\t1\ts1\n'
	) > "$T/s" &
	(
		sleep 0.5
		printf 'lp-stream\t1\tclock=monotonic\n'
		printf 'span\t4000\t6000\t1\t1\tf\t0\n'
		# A later span moves the watermark past 5000 + --max-delay.
		printf 'span\t3000000000\t3000000001\t2\t2\tg\t0\n'
		sleep 4
	) > "$T/p" &
	timeout 30 lp-join "$T/s" "$T/p" > "$T/out.lp" &
	pid=$!
	sleep 2.5
	# Both producers are still running; the joined sample is out already.
	grep -q "^sample	5000	1	1	.*span=f	span_start=4000	span_end=6000" "$T/out.lp"
	wait $pid
	[ "$(grep -c '^sample' "$T/out.lp")" -eq 2 ]
}

# The stream of one sample a line: header, frame, stack, then sample lines
# "TIME TID" from stdin, pid 1.
samples_stream() {
	printf 'lp-stream\t1\tclock=monotonic\n'
	printf 'frame\tf1\tu\t-\t/bin/x\tmain\t-\nstack\ts1\tf1\n'
	while read -r t tid; do printf 'sample\t%s\t1\t%s\t0\tx\tcpu-clock\t1\ts1\n' "$t" "$tid"; done
}

@test "lp-join: the first SIGINT does not end it: both inputs are read to their end (the producers drain)" {
	mkfifo "$T/s" "$T/p"
	# Each producer writes again only after lp-join got its SIGINT (at 1 s).
	(
		echo 5000 1 | samples_stream
		sleep 2
		printf 'sample\t9000000000\t1\t2\t0\tx\tcpu-clock\t1\ts1\n'
	) > "$T/s" 3>&- &
	(
		printf 'lp-stream\t1\tclock=monotonic\n'
		printf 'span\t4000\t6000\t1\t1\tf\t0\n'
		sleep 2
		printf 'span\t8000000000\t10000000000\t1\t2\tg\t0\n'
	) > "$T/p" 3>&- &
	# A background job of a non-interactive shell starts with SIGINT
	# ignored; in a terminal's pipeline it is not: give it back.
	env --default-signal=INT lp-join "$T/s" "$T/p" > "$T/out.lp" 2> "$T/err" 3>&- &
	pid=$!
	sleep 1
	kill -INT "$pid"
	sleep 0.3
	kill -0 "$pid" || { echo "lp-join ended at the first SIGINT"; false; }
	reap "$pid" 0 20
	[ ! -s "$T/err" ]
	# the sample and the span written after the SIGINT are there, joined
	samples_of "$T/out.lp" > "$T/got"
	printf '%s\n' "5000 1 1 span=f span_start=4000 span_end=6000 span_depth=0" \
		"9000000000 1 2 span=g span_start=8000000000 span_end=10000000000 span_depth=0" > "$T/want"
	run -0 diff -u "$T/want" "$T/got"
}

@test "lp-join: a second SIGINT ends it at once, producers or not" {
	mkfifo "$T/s" "$T/p"
	( echo 5000 1 | samples_stream; exec sleep 30 ) > "$T/s" 3>&- &
	sp=$!
	( printf 'lp-stream\t1\tclock=monotonic\n'; exec sleep 30 ) > "$T/p" 3>&- &
	pp=$!
	env --default-signal=INT lp-join "$T/s" "$T/p" > "$T/out.lp" 3>&- &
	pid=$!
	sleep 0.5
	kill -INT "$pid"
	sleep 0.3
	kill -0 "$pid" || { echo "lp-join ended at the first SIGINT"; false; }
	kill -INT "$pid"
	# 130: killed by SIGINT, within 2 s
	reap "$pid" 130 2
	kill "$sp" "$pp"
	reap "$sp" 143
	reap "$pp" 143
}

@test "lp-join: a span input that stalls while --max-held samples wait: after --max-delay they go out unjoined, counted; the rest join" {
	mkfifo "$T/p"
	# 36 samples 1 ms apart on one thread; one span encloses them all, but
	# the tracer writes it only after 4 s of silence.
	seq 0 35 | awk '{ print 1000000000000 + $1 * 1000000, 1 }' | samples_stream > "$T/s.lp"
	(
		printf 'lp-stream\t1\tclock=monotonic\n'
		sleep 4
		printf 'span\t999000000000\t1001000000000\t1\t1\tslow\t0\n'
	) > "$T/p" 3>&- &
	lp-join --max-held 8 --max-delay 200ms "$T/s.lp" "$T/p" > "$T/out.lp" 2> "$T/err" 3>&- &
	pid=$!
	# Each time 8 samples are held, lp-join waits 200 ms for the spans and
	# then lets the 8 go: 4 rounds, about 1 s.  The span input is still
	# silent at 3 s; 32 samples are out, unjoined, and the last 4 (fewer
	# than --max-held) wait.
	sleep 3
	kill -0 "$pid" || { echo "lp-join ended before its span input"; false; }
	[ "$(grep -c '^sample' "$T/out.lp")" -eq 32 ]
	[ "$(grep -c 'span=' "$T/out.lp")" -eq 0 ]
	reap "$pid" 0 20
	[ "$(grep -c '^sample' "$T/out.lp")" -eq 36 ]
	# the 4 that waited join the span; which 4: the last
	[ "$(grep -c 'span=slow' "$T/out.lp")" -eq 4 ]
	run -0 awk -F'\t' '/span=slow/ { print $2 }' "$T/out.lp"
	[ "$output" = "$(seq 32 35 | awk '{ print 1000000000000 + $1 * 1000000 }')" ]
	run -0 cat "$T/err"
	[ "$output" = "lp-join: 32 samples or spans let go before their match could arrive (an input lagged by more than --max-delay; raise --max-held)" ]
}

@test "lp-join: a sample input that stalls while --max-held spans are kept: after --max-delay they go, counted; a late sample joins only a span still kept" {
	mkfifo "$T/s"
	# 36 spans of 1 ms back to back on one thread; the recorder writes its
	# two samples (in the first span and in the last) after 4 s of silence.
	{
		printf 'lp-stream\t1\tclock=monotonic\n'
		seq 0 35 | awk '{ t = 1000000000000 + $1 * 1000000; printf "span\t%d\t%d\t1\t1\ts%d\t0\n", t, t + 1000000, $1 }'
	} > "$T/p.lp"
	(
		printf 'lp-stream\t1\tclock=monotonic\n'
		printf 'frame\tf1\tu\t-\t/bin/x\tmain\t-\nstack\ts1\tf1\n'
		sleep 4
		printf 'sample\t1000000000500\t1\t1\t0\tx\tcpu-clock\t1\ts1\n'
		printf 'sample\t1000035000500\t1\t1\t0\tx\tcpu-clock\t1\ts1\n'
	) > "$T/s" 3>&- &
	lp-join --max-held 8 --max-delay 200ms "$T/s" "$T/p.lp" > "$T/out.lp" 2> "$T/err" 3>&- &
	pid=$!
	reap "$pid" 0 20
	# 4 rounds of 8 spans let go; the last 4 (fewer than --max-held) kept
	samples_of "$T/out.lp" > "$T/got"
	printf '%s\n' "1000000000500 1 1" \
		"1000035000500 1 1 span=s35 span_start=1000035000000 span_end=1000036000000 span_depth=0" > "$T/want"
	run -0 diff -u "$T/want" "$T/got"
	run -0 cat "$T/err"
	[ "$output" = "lp-join: 32 samples or spans let go before their match could arrive (an input lagged by more than --max-delay; raise --max-held)" ]
}

@test "lp-join: memory does not grow with the input's length" {
	gen() {
		awk -v n="$1" 'BEGIN { OFS = "\t"
			print "lp-stream", "1", "clock=monotonic" > "'"$T"'/s.lp"
			print "lp-stream", "1", "clock=monotonic" > "'"$T"'/p.lp"
			print "frame", "f1", "u", "-", "/bin/x", "main", "-" > "'"$T"'/s.lp"
			print "stack", "s1", "f1" > "'"$T"'/s.lp"
			for (i = 0; i < n; i++) {
				t = 1000000 + i * 50000; tid = 10 + i % 4
				print "sample", sprintf("%.0f", t), 1, tid, 0, "x", "cpu-clock", 1, "s1" > "'"$T"'/s.lp"
				if (i % 10 == 9)
					print "span", sprintf("%.0f", t - 1000), sprintf("%.0f", t + 1000), 1, tid, "f", 0 > "'"$T"'/p.lp"
			}
		}'
	}
	gen 20000
	/usr/bin/time -f %M -o "$T/small" lp-join "$T/s.lp" "$T/p.lp" > /dev/null
	gen 400000
	/usr/bin/time -f %M -o "$T/large" lp-join "$T/s.lp" "$T/p.lp" > "$T/out.lp"
	[ "$(grep -c 'span=f' "$T/out.lp")" -eq 40000 ]
	small=$(tail -n 1 "$T/small") large=$(tail -n 1 "$T/large")
	echo "peak RSS: 20k samples ${small} KB, 400k samples ${large} KB" >&3
	if under_sanitizer; then skip "peak RSS under a sanitizer is its allocator's (make sanitize)"; fi
	# 20 times the input, at most 8 MB more memory.
	[ "$large" -lt $((small + 8192)) ]
}

@test "lp-join: usage errors exit 2, input errors exit 1 with FILE:LINE" {
	run --separate-stderr -2 lp-join "$J/samples.lp"
	[[ "$stderr" == *"lp-join: expected two inputs, SAMPLES and SPANS"* ]]
	run --separate-stderr -2 lp-join - -
	[ "${stderr}" = "lp-join: only one of SAMPLES and SPANS can be stdin" ]
	run --separate-stderr -2 lp-join --max-delay 3parsecs "$J/samples.lp" "$J/spans.lp"
	[[ "$stderr" == "lp-join: --max-delay '3parsecs': "* ]]
	run --separate-stderr -1 lp-join "$T/nonexistent" "$J/spans.lp"
	[[ "$stderr" == *"$T/nonexistent"*"No such file or directory"* ]]
	[ -z "$output" ]
	printf 'lp-stream\t1\nspan\t10\tx\t1\t1\tf\t0\n' > "$T/bad.lp"
	run --separate-stderr -1 lp-join "$J/samples.lp" "$T/bad.lp"
	[[ "$stderr" == "lp-join: $T/bad.lp:2: "* ]]
}

@test "lp-join: --help lists every option, all in the man page; --version" {
	run -0 lp-join --help
	[[ "$output" == usage:* ]]
	for opt in $(grep -o -- '--[a-z][a-z-]*' <<<"$output" | sort -u); do
		grep -q -- "${opt//-/\\\\-}" "$LP_TOP/man/lp-join.1" || { echo "$opt not in man page"; false; }
	done
	run -0 lp-join --version
	[[ "$output" == "lp-join (lp) "* ]]
}

@test "lp-join: the man page's examples run" {
	cd "$T"
	cp "$J/samples.lp" samples.lp
	cp "$J/spans.lp" spans.lp
	cp "$J/perf-script.txt" perf.txt
	sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$LP_TOP/man/lp-join.1" | sed -n 's/^\\fB\$ \(.*\)\\fR$/\1/p' |
		sed 's/\\-/-/g' | grep -v 'lp-record\|lp-trace\|perf record' > examples
	[ "$(wc -l < examples)" -ge 3 ]
	while read -r cmd; do
		echo "running: $cmd"
		bash -c "set -o pipefail; $cmd" > /dev/null
	done < examples
}

@test "lp-join: a live perf recording (perf record -k CLOCK_MONOTONIC) joins lp-trace's spans" {
	require_root
	require_cmd perf
	cd "$T"
	# Runs well past both recorders (killed below): on a loaded machine
	# lp-trace's start and perf's end take seconds.
	"$LP_BUILD/examples/demo" 60 > /dev/null &
	demo=$!
	wait_exec "$demo" "$LP_BUILD/examples/demo" || fail "demo did not start"
	# perf samples until lp-trace is done: lp-trace's -d counts from when
	# its probes are in, a window of perf's own could be over by then
	# (88 samples after the first span, beside a CI run and a busy loop)
	perf record -q -k CLOCK_MONOTONIC -F 499 -g -p $demo -o perf.data 2> perf.err &
	rec=$!
	KILL_AFTER="$demo $rec"
	lp-trace -d 4 -p $demo handle_request > spans.lp 2> trace.err
	kill -INT $rec
	reap $rec 130 30	# perf record's status when SIGINT ends it
	kill $demo
	reap $demo 143
	perf script -i perf.data --ns > perf.txt 2> /dev/null
	run --separate-stderr -0 lp-join -v perf.txt spans.lp
	printf '%s\n' "$output" > joined.lp
	echo "$stderr" >&3
	# Samples from when lp-trace's probes were in (after its calibration,
	# which takes seconds on a loaded machine) until they went (perf
	# records on until it is told to stop): the demo is in
	# handle_request most of its CPU time then.
	read -r first last < <(awk -F'\t' '$1 == "span" { if (!f || $2 < f) f = $2; if ($3 > l) l = $3 }
		END { print f + 0, l + 0 }' spans.lp)
	joined=$(awk -F'\t' -v f="$first" -v l="$last" '$1 == "sample" && $2 >= f && $2 <= l && /\tspan=handle_request/' joined.lp | wc -l)
	total=$(awk -F'\t' -v f="$first" -v l="$last" '$1 == "sample" && $2 >= f && $2 <= l' joined.lp | wc -l)
	echo "$joined of $total samples while spans were traced joined"
	[ "$total" -ge 200 ]
	[ $((joined * 100 / total)) -ge 70 ]
	lp-split -P 90 --probe handle_request --above slow.lp --below fast.lp -q joined.lp
	share() { local -; set -o pipefail; lp-collapse "$1" | awk '{ n = $NF; t += n; if ($0 ~ /rebuild_index/) h += n } END { print int(100 * h / t) }'; }
	[ "$(share slow.lp)" -ge 70 ]
	[ "$(share fast.lp)" -le 2 ]
}

@test "lp-join: says why nothing joined: no timestamps, or clocks that do not meet" {
	grep -v '^sample' "$J/samples.lp" > "$T/s.lp"
	awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "sample" { $2 = "-" } { print }' "$J/samples.lp" >> "$T/s.lp"
	run --separate-stderr -0 lp-join "$T/s.lp" "$J/spans.lp"
	[ "$stderr" = "lp-join: the samples have no timestamps, so none can be joined (perf script: keep the time field)" ]
	[ "$(grep -c '^sample' <<<"$output")" -eq 20 ]
	awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "span" { $2 += 1000000; if ($3 != "-") $3 += 1000000 } { print }' "$J/spans.lp" > "$T/p.lp"
	run --separate-stderr -0 lp-join "$J/samples.lp" "$T/p.lp"
	[[ "$stderr" == "lp-join: no sample time falls within the spans' times: "*"(perf record -k CLOCK_MONOTONIC)?" ]]
	run --separate-stderr -0 lp-join "$J/samples.lp" "$J/spans.lp"
	[ -z "$stderr" ]
}
