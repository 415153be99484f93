#!/usr/bin/env bats
# lp-collapse --format otlp and lp-push, judged by what a receiver on
# 127.0.0.1 (helpers/profile-receiver) saves, decoded by protoc with the
# published .proto files (fixtures/otlp/: opentelemetry-proto v1.11.0's
# profiles, pprof's profile.proto), never by lp's own reader: the totals
# of inputs whose counts are known, Pyroscope's ingest query, retries and
# their bound, failures named by URL and status, batches of a live
# stream, and what is held.

load helpers/common

setup() {
	load_bats_libs
	require_cmd protoc
	T=$BATS_TEST_TMPDIR
	P=$FIXTURES/otlp
}

# otlp FILE: the request, decoded by protoc as protoc's text.
otlp() {
	protoc -I"$P" --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		"$P/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto" <"$1"
}

# pprof FILE: a gzipped pprof profile, decoded by protoc.
pprof() {
	gzip -dc <"$1" | protoc -I"$P" --decode=perftools.profiles.Profile "$P/pprof/profile.proto"
}

# otlp_totals FILE: "TIMESTAMPS WEIGHT": the samples' timestamps, and their
# weight: the sum of the values, or with none (the shape of timestamps
# alone) a period each.
otlp_totals() {
	otlp "$1" | awk '/^ *values: / { v += $2; nv++ } /^ *timestamps_unix_nano: / { n++ }
		/^ *period: / { p = $2 }
		END { printf "%d %d\n", n, nv ? v : n * p }'
}

# pprof_totals FILE: "SAMPLES WEIGHT" summed over a pprof profile's samples
# (each sample's two values: the count, then the weight).
pprof_totals() {
	pprof "$1" | awk '/^sample \{/ { i = 0 } /^  value: / { if (i++ == 0) n += $2; else w += $2 }
		END { printf "%d %d\n", n, w }'
}

# start_receiver [REPLY,...]: the receiver in the background, saving
# requests under $R; URL its base (http://127.0.0.1:PORT).
start_receiver() {
	R=$T/received
	mkdir -p "$R"
	# not a job of this shell: its kill at the end goes unannounced
	("$LP_TOP/tests/helpers/profile-receiver" "$R" "$@" &)
	local i
	for i in $(seq 100); do
		if [ -s "$R/port" ]; then break; fi
		sleep 0.05
	done
	[ -s "$R/port" ] || fail "the receiver did not start"
	KILL_AFTER="${KILL_AFTER:-} $(cat "$R/pid")"
	URL=http://127.0.0.1:$(cat "$R/port")
}

# requests: how many requests the receiver saved.
requests() {
	find "$R" -name '*.body' | wc -l
}

# A stream of N samples (from 1 s, one every 10 ms), its header with a
# period of 10 ms and a realtime offset: Unix time 1700000000 s at stream
# time 0.  Weights the period, or with WEIGHTS "vary" 1, 2, 3... ms.
timed_stream() {
	awk -v N="$1" -v W="${2:-period}" 'BEGIN { OFS = "\t"
		print "lp-stream", 1, "clock=monotonic", "host=web1", "period_ns=10000000",
			"realtime_offset_ns=1700000000000000000", "event=cpu-clock"
		print "frame", "0000000000000001", "u", "-", "/bin/app", "main", "app.c:3"
		print "frame", "0000000000000002", "u", "-", "/bin/app", "a", "app.c:10"
		print "frame", "0000000000000003", "u", "-", "/bin/app", "b", "app.c:20"
		print "stack", "000000000000000a", "0000000000000001,0000000000000002"
		print "stack", "000000000000000b", "0000000000000001,0000000000000003"
		for (i = 0; i < N; i++)
			printf "sample\t%.0f\t7\t7\t0\tapp\tcpu-clock\t%d\t%s\n", 1000000000 + i * 10000000,
				W == "vary" ? (i + 1) * 1000000 : 10000000, i % 4 ? "000000000000000a" : "000000000000000b"
	}'
}

# Folded stacks of known counts: 5 + 7 + 11 + 13 = 36.
known_folded() {
	printf 'app;main;a 5\napp;main;b 7\napp;main;a;c 11\nother;x 13\n'
}

@test "otlp: lp-collapse --format otlp is a request protoc decodes: dictionary, zero entries, stacks, inlining, attributes" {
	run -0 lp-collapse --format otlp -o "$T/o.pb" "$FIXTURES/pprof/inline.lp"
	run -0 otlp "$T/o.pb"
	local text=$output
	# every table's entry 0 is the zero value; the link table's is 16 + 8 zero bytes
	for t in mapping_table location_table function_table attribute_table stack_table; do
		[[ $text == *$'\n  '"$t"$' {\n  }\n'* ]] || fail "no zero $t first"
	done
	assert_output --partial $'link_table {\n    trace_id: "'"$(printf '\\000%.0s' {1..16})"'"'
	assert_line '  string_table: ""'
	# two stacks (leaf first), two samples of them: 2 and 1 ms of cpu-clock, no times
	[ "$(grep -c '^  stack_table {' <<<"$text")" -eq 3 ]
	assert_output --regexp $'samples \\{\n +stack_index: 1\n +attribute_indices: 1\n +attribute_indices: 2\n +values: 2000000\n'
	assert_output --regexp $'samples \\{\n +stack_index: 2\n +attribute_indices: 1\n +attribute_indices: 2\n +values: 1000000\n'
	refute_output --partial timestamps_unix_nano
	assert_line '      period: 1000000'
	# parse() inlined into handle(): one location, two lines, inner first
	assert_output --regexp $'lines \\{\n +function_index: 3\n +line: 5\n +\\}\n +lines \\{\n +function_index: 2\n +line: 20\n'
	# semantic conventions' attributes, and the scope
	assert_output --regexp $'key_strindex: [0-9]+\n +value \\{\n +int_value: 7\n'
	assert_output --regexp $'value \\{\n +string_value: "app"\n'
	assert_line '  string_table: "process.pid"'
	assert_line '  string_table: "thread.name"'
	assert_line '  string_table: "process.executable.build_id.gnu"'
	assert_line '  string_table: "abcdef01"'
	assert_output --partial $'scope {\n      name: "lp"\n'
	# the sample type's strings: the event and its unit
	local st
	st=$(awk '/sample_type \{/ { getline; print $2; exit }' <<<"$text")
	[ "$(grep '^  string_table: ' <<<"$text" | sed -n "$((st + 1))p")" = '  string_table: "cpu-clock"' ]
}

@test "otlp: timed samples keep their Unix times; weights of the period are timestamps alone, others a value each" {
	timed_stream 100 >"$T/t.lp"
	run -0 lp-collapse --format otlp -o "$T/t.pb" "$T/t.lp"
	# 100 samples of 10 ms: timestamps alone, samples/count, the period 10 ms
	[ "$(otlp_totals "$T/t.pb")" = "100 1000000000" ]
	run -0 otlp "$T/t.pb"
	refute_output --partial '  values:'
	assert_line '        timestamps_unix_nano: 1700000001000000000'
	assert_line '        timestamps_unix_nano: 1700000001990000000'
	assert_line '      time_unix_nano: 1700000001000000000'
	assert_line '      duration_nano: 990000001'
	assert_line '  string_table: "samples"'
	assert_output --regexp $'key: "host.name"\n +value \\{\n +string_value: "web1"'
	# weights that vary: a value for each timestamp, summing to the stream's
	timed_stream 100 vary >"$T/v.lp"
	run -0 lp-collapse --format otlp -o "$T/v.pb" "$T/v.lp"
	[ "$(otlp_totals "$T/v.pb")" = "100 5050000000" ]
	[ "$(otlp "$T/v.pb" | grep -c '^ *values: ')" -eq 100 ]
	# no realtime offset: no times, one summed value a sample
	sed '1s/\trealtime_offset_ns=[0-9]*//' "$T/v.lp" >"$T/n.lp"
	run -0 lp-collapse --format otlp -o "$T/n.pb" "$T/n.lp"
	[ "$(otlp_totals "$T/n.pb")" = "0 5050000000" ]
	[ "$(otlp "$T/n.pb" | grep -c '^ *values: ')" -eq 2 ]
}

@test "otlp: the corpus's perf script inputs keep every weight of the folded output" {
	require_corpus
	local f n=0 folded
	for f in "$CORPUS"/flamegraph/test/perf-*.txt; do
		lp-collapse --format otlp -o "$T/c.pb" "$f"
		folded=$(set -o pipefail; lp-collapse "$f" | awk '{ w += $NF } END { printf "%d\n", w }')
		[ "$(otlp_totals "$T/c.pb")" = "0 $folded" ] || fail "$f: $(otlp_totals "$T/c.pb"), folded $folded"
		n=$((n + 1))
	done
	[ "$n" -ge 9 ]
	# and empty input is an empty request protoc reads
	run -0 lp-collapse --format otlp -o "$T/e.pb" /dev/null
	[ "$(otlp_totals "$T/e.pb")" = "0 0" ]
}

@test "push OTLP: the receiver gets one request at /v1development/profiles whose totals are the input's" {
	start_receiver
	known_folded >"$T/k.folded"
	run -0 --separate-stderr lp-push --name shop "$URL/v1development/profiles" "$T/k.folded"
	[ -z "$stderr" ] || fail "$stderr"
	[ "$(requests)" -eq 1 ]
	run -0 head -1 "$R/1.head"
	assert_output 'POST /v1development/profiles HTTP/1.1'
	run -0 grep -i '^content-type:' "$R/1.head"
	assert_output 'Content-Type: application/x-protobuf'
	[ "$(otlp_totals "$R/1.body")" = "0 36" ]
	run -0 otlp "$R/1.body"
	assert_output --regexp $'key: "service.name"\n +value \\{\n +string_value: "shop"'
	# a URL with no path, told the kind, gets the kind's path
	timed_stream 40 >"$T/t.lp"
	run -0 lp-push --to otlp "$URL" "$T/t.lp"
	run -0 head -1 "$R/2.head"
	assert_output 'POST /v1development/profiles HTTP/1.1'
	[ "$(otlp_totals "$R/2.body")" = "40 400000000" ]
	# Sent gzipped (the receiver inflates what it saves as N.body);
	# --compression none sends the same request as it is.
	for n in 1 2; do
		run -0 grep -i '^content-encoding:' "$R/$n.head"
		assert_output 'Content-Encoding: gzip'
		run -0 gzip -t <"$R/$n.sent"
	done
	run -0 lp-push --compression none --to otlp "$URL" "$T/t.lp"
	run -1 grep -i '^content-encoding:' "$R/3.head"
	run -0 cmp "$R/2.body" "$R/3.sent"
	run -2 --separate-stderr lp-push --compression zstd "$URL/v1development/profiles" "$T/t.lp"
	assert_equal "$stderr" "lp-push: --compression 'zstd': expected gzip or none"
	[ "$(requests)" -eq 3 ]
}

@test "push OTLP: a real profile (FlameGraph's perf stacks) goes at under half its size, inflating to the request" {
	require_corpus
	start_receiver
	zcat "$CORPUS/flamegraph/example-perf-stacks.txt.gz" | lp-collapse --format otlp -o "$T/ex.pb"
	run -0 lp-push --as-is "$URL/v1development/profiles" "$T/ex.pb"
	run -0 lp-push --as-is --compression none "$URL/v1development/profiles" "$T/ex.pb"
	run -0 cmp "$T/ex.pb" "$R/1.body"
	run -0 cmp "$T/ex.pb" "$R/2.sent"
	local plain sent
	plain=$(stat -c %s "$T/ex.pb")
	sent=$(stat -c %s "$R/1.sent")
	echo "# $plain bytes, $sent gzipped" >&3
	((2 * sent < plain)) || fail "gzipped $sent bytes of $plain"
}

@test "push to Pyroscope: POST /ingest with name, from, until, format=pprof; the pprof's totals are the input's" {
	start_receiver
	timed_stream 100 >"$T/t.lp"
	run -0 --separate-stderr lp-push --name 'shop.cpu{env=test}' "$URL/ingest" "$T/t.lp"
	[ "$(requests)" -eq 1 ]
	# the samples' own times: 1700000001.00 to 1700000001.99 s
	run -0 head -1 "$R/1.head"
	assert_output 'POST /ingest?name=shop.cpu%7benv%3dtest%7d&from=1700000001&until=1700000002&format=pprof&spyName=lp HTTP/1.1'
	run -0 gzip -t "$R/1.body"
	[ "$(pprof_totals "$R/1.body")" = "100 1000000000" ]
	# the body is lp-collapse's pprof, byte for byte
	lp-collapse --format pprof -o "$T/t.pb.gz" "$T/t.lp"
	run -0 cmp "$T/t.pb.gz" "$R/1.body"
	# untimed input: the push's own time
	known_folded >"$T/k.folded"
	run -0 lp-push --to pyroscope "$URL" "$T/k.folded"
	run -0 head -1 "$R/2.head"
	assert_output --regexp '^POST /ingest\?name=lp&from=[0-9]{10}&until=[0-9]{10}&format=pprof&spyName=lp HTTP/1.1$'
	[ "$(pprof_totals "$R/2.body")" = "4 36" ]
}

@test "retries: 503 twice, then 200: success after 3 requests, the same body each time" {
	start_receiver 503,503,200
	known_folded >"$T/k.folded"
	run -0 --separate-stderr lp-push -v "$URL/v1development/profiles" "$T/k.folded"
	[ "$(requests)" -eq 3 ]
	assert_equal "${#stderr_lines[@]}" 3
	assert_equal "${stderr_lines[0]}" "lp-push: POST $URL/v1development/profiles: HTTP 503, retrying"
	[[ ${stderr_lines[2]} == "lp-push: POST $URL/v1development/profiles: HTTP 200, "*" bytes (try 3)" ]] ||
		fail "${stderr_lines[2]}"
	run -0 cmp "$R/1.body" "$R/3.body"
	[ "$(otlp_totals "$R/3.body")" = "0 36" ]
	# Retry-After is honoured: 1 s before the second try
	start_receiver_again 429+1,200
	local t0 t1
	t0=$(date +%s%N)
	run -0 lp-push "$URL/v1development/profiles" "$T/k.folded"
	t1=$(date +%s%N)
	[ "$(requests)" -eq 2 ]
	(((t1 - t0) >= 1000000000)) || fail "retried after $(((t1 - t0) / 1000000)) ms"
}

# start_receiver_again [REPLY,...]: a second receiver, the first one's
# requests left behind.
start_receiver_again() {
	mv "$R" "$T/received.$$.$RANDOM"
	start_receiver "$@"
}

@test "a receiver that always fails: exit 1 after the bounded retries, promptly, naming the URL and the status" {
	start_receiver 503
	known_folded >"$T/k.folded"
	local t0 t1
	t0=$(date +%s%N)
	run -1 --separate-stderr lp-push --retries 2 "$URL/ingest" "$T/k.folded"
	t1=$(date +%s%N)
	[ "$(requests)" -eq 3 ]
	assert_equal "$stderr" "lp-push: POST $URL/ingest: HTTP 503 Service Unavailable: busy (after 3 tries)"
	[ -z "$output" ]
	# backoff 0.5 s then 1 s, a quarter either way
	(((t1 - t0) < 4000000000)) || fail "took $(((t1 - t0) / 1000000)) ms"
	# an OTLP receiver's google.rpc.Status is read for its message
	start_receiver_again 503
	run -1 --separate-stderr lp-push --retries 1 "$URL/v1development/profiles" "$T/k.folded"
	assert_equal "$stderr" "lp-push: POST $URL/v1development/profiles: HTTP 503 Service Unavailable: busy (after 2 tries)"
	# 400 is not retried: the same body would fail the same way
	start_receiver_again 400
	run -1 --separate-stderr lp-push "$URL/v1development/profiles" "$T/k.folded"
	[ "$(requests)" -eq 1 ]
	assert_equal "$stderr" "lp-push: POST $URL/v1development/profiles: HTTP 400 Bad Request: busy"
	# a partial success is a failure, not retried
	start_receiver_again partial
	run -1 --separate-stderr lp-push "$URL/v1development/profiles" "$T/k.folded"
	[ "$(requests)" -eq 1 ]
	assert_equal "$stderr" "lp-push: POST $URL/v1development/profiles: the receiver rejected 1 profiles: too old"
}

@test "no receiver, a bad URL, a receiver that does not answer: clear errors, promptly" {
	known_folded >"$T/k.folded"
	local port t0 t1
	port=$(free_port)
	t0=$(date +%s%N)
	run -1 --separate-stderr lp-push --retries 1 "http://127.0.0.1:$port/ingest" "$T/k.folded"
	t1=$(date +%s%N)
	[[ $stderr == "lp-push: POST http://127.0.0.1:$port/ingest: Failed to connect to 127.0.0.1 port $port"*" (after 2 tries)" ]] ||
		fail "$stderr"
	(((t1 - t0) < 3000000000)) || fail "took $(((t1 - t0) / 1000000)) ms"
	run -2 --separate-stderr lp-push "not a url" "$T/k.folded"
	[[ $stderr == "lp-push: URL 'not a url': not an http or https URL ("*")" ]] || fail "$stderr"
	run -2 --separate-stderr lp-push "ftp://127.0.0.1/ingest" "$T/k.folded"
	assert_equal "$stderr" "lp-push: URL 'ftp://127.0.0.1/ingest': not an http or https URL"
	run -2 --separate-stderr lp-push "http://127.0.0.1:$port/" "$T/k.folded"
	assert_equal "$stderr" "lp-push: URL 'http://127.0.0.1:$port/': give --to pyroscope or --to otlp (its path is neither /ingest nor /v1development/profiles)"
	run -2 --separate-stderr lp-push --header 'no colon' "http://127.0.0.1:$port/ingest"
	assert_equal "$stderr" "lp-push: --header 'no colon': expected NAME: VALUE"
	run -2 --separate-stderr lp-push --to zipkin "http://127.0.0.1:$port/ingest"
	assert_equal "$stderr" "lp-push: --to 'zipkin': expected pyroscope or otlp"
	run -2 --separate-stderr lp-push
	assert_equal "${stderr_lines[0]}" "lp-push: expected a URL"
	# a missing input: nothing is sent
	run -1 --separate-stderr lp-push "http://127.0.0.1:$port/ingest" "$T/no-such"
	[[ $stderr == "lp-push: "*"$T/no-such"* ]] || fail "$stderr"
	# --timeout: a receiver that sleeps 30 s fails the request in 1
	start_receiver sleep30
	t0=$(date +%s%N)
	run -1 --separate-stderr lp-push --retries 0 --timeout 1 "$URL/ingest" "$T/k.folded"
	t1=$(date +%s%N)
	[[ $stderr == "lp-push: POST $URL/ingest: Operation timed out after "* ]] || fail "$stderr"
	(((t1 - t0) < 5000000000)) || fail "took $(((t1 - t0) / 1000000)) ms"
}

@test "--header goes with every request (a bearer token); --as-is sends a ready file unchanged" {
	start_receiver
	known_folded >"$T/k.folded"
	run -0 lp-push --header 'Authorization: Bearer s3cret' --header 'X-Scope-OrgID: team1' \
		"$URL/ingest" "$T/k.folded"
	run -0 grep -i -e '^authorization:' -e '^x-scope-orgid:' "$R/1.head"
	assert_output $'Authorization: Bearer s3cret\nX-Scope-OrgID: team1'
	# a URL's user and password go as basic authentication, never into a message
	run -0 --separate-stderr lp-push -v "http://u:pw@${URL#http://}/ingest" "$T/k.folded"
	run -0 grep -i '^authorization:' "$R/2.head"
	assert_output "Authorization: Basic $(printf u:pw | base64)"
	[[ $stderr == "lp-push: POST $URL/ingest: HTTP 200, "* ]] || fail "$stderr"
	lp-collapse --format otlp -o "$T/k.pb" "$T/k.folded"
	lp-collapse --format pprof -o "$T/k.pb.gz" "$T/k.folded"
	run -0 lp-push --as-is "$URL/v1development/profiles" "$T/k.pb"
	run -0 cmp "$T/k.pb" "$R/3.body"
	run -0 lp-push --as-is "$URL/ingest" "$T/k.pb.gz"
	run -0 cmp "$T/k.pb.gz" "$R/4.body"
	# what the receiver would not take is refused before sending
	run -1 --separate-stderr lp-push --as-is "$URL/v1development/profiles" "$T/k.folded"
	assert_equal "$stderr" "lp-push: $T/k.folded: not an OTLP ExportProfilesServiceRequest (lp-collapse --format otlp)"
	run -1 --separate-stderr lp-push --as-is "$URL/v1development/profiles" "$T/k.pb.gz"
	[ "$(requests)" -eq 4 ]
}

@test "a live stream is pushed in batches every --interval; together they hold every sample" {
	start_receiver
	timed_stream 300 >"$T/t.lp"
	mkfifo "$T/fifo"
	lp-push --interval 300ms "$URL/v1development/profiles" <"$T/fifo" 2>"$T/err" &
	local pid=$! i
	KILL_AFTER="$KILL_AFTER $pid"
	{
		head -106 "$T/t.lp"	# the header, the definitions, 100 samples
		for i in $(seq 40); do
			if [ "$(requests)" -ge 1 ]; then break; fi
			sleep 0.1
		done
		sed -n '107,$p' "$T/t.lp"
	} >"$T/fifo"
	reap "$pid" 0 10
	[ ! -s "$T/err" ] || fail "$(cat "$T/err")"
	# the first batch went while the stream was open: its 100 samples
	[ "$(otlp_totals "$R/1.body")" = "100 1000000000" ]
	local n=0 w=0 t
	for i in $(seq "$(requests)"); do
		read -r t x <<<"$(otlp_totals "$R/$i.body")"
		n=$((n + t))
		w=$((w + x))
	done
	[ "$(requests)" -ge 2 ]
	[ "$n $w" = "300 3000000000" ]
}

@test "--max-size bounds what is held: a batch goes when it is reached, and a larger ready file is refused" {
	start_receiver
	# 2000 distinct stacks: over 4096 bytes of tables many times
	awk 'BEGIN { for (i = 0; i < 2000; i++) printf "main;f%d 1\n", i }' >"$T/many.folded"
	run -0 --separate-stderr lp-push --max-size 65536 "$URL/v1development/profiles" "$T/many.folded"
	[ -z "$stderr" ] || fail "$stderr"
	[ "$(requests)" -ge 3 ]
	local i w=0 x
	for i in $(seq "$(requests)"); do
		x=$(otlp_totals "$R/$i.body")
		w=$((w + ${x#* }))
		[ "$(stat -c %s "$R/$i.body")" -le 65536 ]
	done
	[ "$w" -eq 2000 ]
	lp-collapse --format otlp -o "$T/many.pb" "$T/many.folded"
	run -1 --separate-stderr lp-push --as-is --max-size 4096 "$URL/v1development/profiles" "$T/many.pb"
	assert_equal "$stderr" "lp-push: $T/many.pb: over --max-size 4096 bytes: not sent"
	run -2 --separate-stderr lp-push --max-size 100 "$URL/ingest"
	assert_equal "$stderr" "lp-push: --max-size '100': must be at least 4096"
}

@test "a recording of a live process, pushed as OTLP: every sample, its time, and its weight arrive" {
	# privileged: BPF sampling
	require_root
	start_receiver
	run -0 --separate-stderr lp-record -F 499 -o "$T/r.lp" -- "$WORKLOADS/cpusplit" 30 1
	local n w got_n got_w
	n=$(grep -c '^sample' "$T/r.lp")
	w=$(awk -F'\t' '/^sample/ { w += $8 } END { printf "%d\n", w }' "$T/r.lp")
	[ "$n" -ge 100 ] || fail "only $n samples"
	run -0 --separate-stderr lp-push "$URL/v1development/profiles" "$T/r.lp"
	[ "$(requests)" -eq 1 ]
	# weights are whole nanoseconds there (the period's fraction, under
	# half a nanosecond a sample, rounded off)
	read -r got_n got_w <<<"$(otlp_totals "$R/1.body")"
	[ "$got_n" -eq "$n" ] || fail "$got_n timestamps, $n samples"
	within "$got_w" $((w - n)) $((w + n)) "OTLP's weight, of $w"
	# its times are this run's: Unix seconds of today
	run -0 otlp "$R/1.body"
	local first now
	first=$(awk '/time_unix_nano:/ { print int($2 / 1000000000); exit }' <<<"$output")
	now=$(date +%s)
	(((now - first) >= 0 && (now - first) < 600)) || fail "time_unix_nano $first, now $now"
	# the same recording to Pyroscope: the pprof's totals
	run -0 lp-push "$URL/ingest" "$T/r.lp"
	read -r got_n got_w <<<"$(pprof_totals "$R/2.body")"
	[ "$got_n" -eq "$n" ] || fail "pprof: $got_n samples, $n"
	within "$got_w" $((w - n)) $((w + n)) "pprof's weight, of $w"
}
