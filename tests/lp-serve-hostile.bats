#!/usr/bin/env bats
# lp-serve against hostile clients (a server lp runs trusts nothing a
# request says): sockets that never send a request, or trickle one a byte a
# second, neither keep the page out nor cost a thread each, and are closed
# once they have had 10 s; garbage, oversized and ill-formed requests get a
# 4xx or a closed connection and change nothing; an event stream's slow
# reader gets the newest snapshot, the ones it skipped counted.  Raw
# sockets are helpers/hostile-http's.

load helpers/common
load helpers/producers
load helpers/serve

HOSTILE=$LP_TOP/tests/helpers/hostile-http

# The threads lp-serve runs, and its resident memory in KiB.
threads() { ls "/proc/$SERVE/task" | wc -l; }
rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$SERVE/status"; }

@test "lp-serve: 100 idle and 50 trickling connections: the page and an event within 2 s, no thread each; each closed once it has had 10 s" {
	ab_file 100 "$T/ab.lp"
	start_serve -i 200ms "$T/ab.lp"
	local port=${BASE##*:} holder
	"$HOSTILE" hold "$port" 100 50 15 >"$T/hold" &
	holder=$!
	KILL_AFTER="$KILL_AFTER $holder"
	wait_line '^open ' "$T/hold"
	# (A thread a connection and 64 at most kept the page out for a
	# minute, curl's connection closed at once.)
	run -0 curl -s -m 2 -o "$T/page" -w '%{http_code}' "$BASE/?token=$TOKEN"
	assert_output 200
	run -0 grep -c '<html' "$T/page"
	run -0 head -1 "$T/hold"
	assert_output 'open 150'
	# A stream, whose first event comes at once: curl stops it at 2 s.
	run -28 curl -s -N -m 2 -o "$T/events" "$BASE/events?token=$TOKEN"
	run -0 grep -c '^event: snapshot$' "$T/events"
	# One thread polls them all: main, libmicrohttpd's and the watcher;
	# an input's reader and a sanitizer's own at most.
	within "$(threads)" 3 5 "lp-serve's threads with 150 connections open"
	if ! under_sanitizer; then within "$(rss_kib)" 1 65536 "lp-serve's RSS (KiB)"; fi
	# None refused at accept (the first closed after about 10 s); every
	# one closed by 13 s, the trickling ones too.
	reap "$holder" 0 20
	run -0 cat "$T/hold"
	assert_line --index 1 --regexp '^closed 150 of 150, first after [0-9.]+ s, last after [0-9.]+ s$'
	read -r _ _ _ _ _ _ first _ _ _ last _ <<<"${lines[1]//,/}"
	within "$first" 8 13 "the first connection closed after (s)"
	within "$last" 8 13 "the last connection closed after (s)"
	run -0 curl -s -m 2 -o /dev/null -w '%{http_code}' "$BASE/snapshot?token=$TOKEN"
	assert_output 200
	kill -INT "$SERVE"
	reap "$SERVE" 0 10
}

# A stream of 100 spans of req (every tenth slow), a sample in each: a
# probe whose cut a setting changes.
req_file() {
	awk 'BEGIN { OFS = "\t"
		print "lp-stream", 1, "clock=monotonic"
		print "frame", 1, "u", "-", "/bin/x", "main", "-"
		print "stack", 1, "1"
		for (i = 0; i < 100; i++) {
			s = 1000000000 + i * 20000000; d = i % 10 == 3 ? 10000000 : 1000000
			print "sample", s + 500000, 7, 7, 0, "x", "cpu-clock", 1, 1,
				"span=req", "span_start=" s, "span_end=" s + d
			print "span", s, s + d, 7, 7, "req", 0
		}
	}' >"$1"
}

# send NAME FORMAT ARG...: printf FORMAT ARG... sent on a connection of its
# own; "NAME STATUS" (or closed, or none) appended to $T/got.
send() {
	local name=$1 got
	shift
	# shellcheck disable=SC2059
	printf "$@" >"$T/req"
	got=$("$HOSTILE" send "$PORT" <"$T/req")
	echo "$name $got" >>"$T/got"
}

# A snapshot taken after the last request (lp-serve -i 100ms).
later_snapshot() {
	sleep 0.3
	snapshot
}

# The view's settings and the probe's cut, as it says them.
state() {
	later_snapshot | jq -c '[.mode, .window_ns, .half_life_ns, .host, [.probes[] | .cut]]'
}

@test "lp-serve: garbage, oversized and ill-formed requests get a 4xx or a closed connection, change nothing; the page answers after" {
	req_file "$T/req.lp"
	start_serve -i 100ms -W 1m "$T/req.lp"
	wait_read
	PORT=${BASE##*:}
	local h="Host: 127.0.0.1:$PORT" t=$TOKEN big
	big=$(head -c 100000 /dev/zero | tr '\0' a)
	run -0 post "/settings?token=$t" 'probe=req&took=x.c:9'
	assert_equal "$(cat "$T/status")" 200
	state >"$T/before"
	: >"$T/got"
	send ok 'GET /?token=%s HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	# Not HTTP, or not the HTTP it takes.
	send garbage 'GARBAGE\r\n\r\n'
	send no-uri 'GET\r\n\r\n'
	send tls '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n'
	send version 'GET /?token=%s HTTP/9.9\r\n%s\r\n\r\n' "$t" "$h"
	send method 'FROB /?token=%s HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	send method-ctl 'G\001T /?token=%s HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	send options 'OPTIONS * HTTP/1.1\r\n%s\r\n\r\n' "$h"
	# The token: none, wrong, cut by a NUL, one of two.
	send no-token 'GET / HTTP/1.1\r\n%s\r\n\r\n' "$h"
	send bad-token 'GET /?token=%s0 HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	send token-pct00 'GET /snapshot?token=%s%%00x HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	send token-pct 'GET /snapshot?token=%%%s HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	send token-nul 'GET /snapshot?tok\0en=%s HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	send token-first 'GET /snapshot?token=0&token=%s HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	# The Host (DNS rebinding): none, another, two, another cut by a NUL.
	send no-host-1.1 'GET /?token=%s HTTP/1.1\r\n\r\n' "$t"
	send no-host-1.0 'GET /?token=%s HTTP/1.0\r\n\r\n' "$t"
	send other-host 'GET /?token=%s HTTP/1.1\r\nHost: evil.example:%s\r\n\r\n' "$t" "$PORT"
	send two-hosts 'GET /?token=%s HTTP/1.1\r\n%s\r\nHost: evil.example\r\n\r\n' "$t" "$h"
	send host-nul 'GET /?token=%s HTTP/1.1\r\nHost: evil.example\0%s\r\n\r\n' "$t" "$PORT"
	# Beyond a connection's memory (32 KiB): a header, 3,000, a URL.
	send big-header 'GET /?token=%s HTTP/1.1\r\n%s\r\nX: %s\r\n\r\n' "$t" "$h" "$big"
	send headers "GET /?token=%s HTTP/1.1\r\n%s\r\n$(printf 'X%s: y\\r\\n' $(seq 3000))\r\n" "$t" "$h"
	send big-url 'GET /?token=%s&x=%s HTTP/1.1\r\n%s\r\n\r\n' "$t" "$big" "$h"
	# Bad escapes and NULs in a query.
	send range-pct 'GET /range?token=%s&from=%%zz&to=1 HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	send range-pct00 'GET /range?token=%s&from=1%%00&to=9 HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	send range-huge 'GET /range?token=%s&from=1&to=99999999999999999999 HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	send discover-pct00 'GET /discover?token=%s&what=list&arg=%%00 HTTP/1.1\r\n%s\r\n\r\n' "$t" "$h"
	# Bodies: said too long (refused unread, with or without the token),
	# a length that is not one, chunked past 8 KiB, both lengths.
	send post-100M 'POST /settings?token=%s HTTP/1.1\r\n%s\r\nContent-Length: 100000000\r\n\r\nwindow=1s' "$t" "$h"
	send post-100M-no-token 'POST /settings HTTP/1.1\r\n%s\r\nContent-Length: 100000000\r\n\r\nwindow=1s' "$h"
	send post-length--1 'POST /settings?token=%s HTTP/1.1\r\n%s\r\nContent-Length: -1\r\n\r\nwindow=1s' "$t" "$h"
	send post-length-1x 'POST /settings?token=%s HTTP/1.1\r\n%s\r\nContent-Length: 1x\r\n\r\nwindow=1s' "$t" "$h"
	send post-chunked-20K 'POST /settings?token=%s HTTP/1.1\r\n%s\r\nTransfer-Encoding: chunked\r\n\r\n%s' "$t" "$h" \
		"$(for _ in $(seq 20); do printf '400\r\n%s\r\n' "${big:0:1024}"; done)"
	send post-both-lengths 'POST /settings?token=%s HTTP/1.1\r\n%s\r\nContent-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' "$t" "$h"
	send post-other-origin 'POST /settings?token=%s HTTP/1.1\r\n%s\r\nOrigin: null\r\nContent-Length: 9\r\n\r\nwindow=1s' "$t" "$h"
	# Forms: bad escapes, a NUL, too many fields; settings that are not
	# (each with a good one before it), a cut that is not one.
	local f
	send form-nul 'POST /settings?token=%s HTTP/1.1\r\n%s\r\nContent-Length: 9\r\n\r\nwindow=\0s' "$t" "$h"
	for f in 'window=%G0' 'window=%' 'window=1%00s' "$(printf 'a=1&%.0s' $(seq 17))" \
		'mode=half-life&window=-3s' 'window=1s&bogus=1' 'half_life=2s&mode=sideways' \
		'probe=req&percentile=abc' 'probe=req&threshold=-1ms' 'probe=nosuch&percentile=50'; do
		send "form:${f//[^a-zA-Z_0-9=&%-]/?}" 'POST /settings?token=%s HTTP/1.1\r\n%s\r\nContent-Length: %d\r\n\r\n%s' \
			"$t" "$h" "${#f}" "$f"
	done
	send control-ctl 'POST /control?token=%s HTTP/1.1\r\n%s\r\nContent-Length: 17\r\n\r\ncommand=%%0Aadd%%20x' "$t" "$h"
	# Nothing changed: the view, the probe's cut (split on x.c:9 still).
	run -0 state
	assert_output "$(cat "$T/before")"
	assert_output --partial '"took":"x.c:9"'
	run -0 cat "$T/got"
	# libmicrohttpd closes what it cannot parse; with the token or not,
	# what is too big is refused, or closed before it is read whole.
	assert_output - <<-EOF
	ok 200
	garbage closed
	no-uri closed
	tls closed
	version 505
	method 405
	method-ctl 405
	options 403
	no-token 403
	bad-token 403
	token-pct00 403
	token-pct 403
	token-nul 403
	token-first 403
	no-host-1.1 400
	no-host-1.0 403
	other-host 403
	two-hosts 400
	host-nul 403
	big-header 431
	headers 431
	big-url 414
	range-pct 400
	range-pct00 400
	range-huge 400
	discover-pct00 400
	post-100M 413
	post-100M-no-token 403
	post-length--1 400
	post-length-1x 400
	post-chunked-20K closed
	post-both-lengths 400
	post-other-origin 403
	form-nul 400
	form:window=%G0 400
	form:window=% 400
	form:window=1%00s 400
	form:a=1&a=1&a=1&a=1&a=1&a=1&a=1&a=1&a=1&a=1&a=1&a=1&a=1&a=1&a=1&a=1&a=1& 400
	form:mode=half-life&window=-3s 400
	form:window=1s&bogus=1 400
	form:half_life=2s&mode=sideways 400
	form:probe=req&percentile=abc 400
	form:probe=req&threshold=-1ms 400
	form:probe=nosuch&percentile=50 400
	control-ctl 409
	EOF
	# A host no input has is a setting (the view empty); its name, bytes
	# as they came, is escaped in the JSON.
	run -0 post "/settings?token=$t" 'host=%FF%0A%1B%22'
	assert_equal "$(cat "$T/status") $output" "200 set"
	# (U+FFFD for the byte that is not UTF-8, then LF, ESC and ")
	run -0 jq -c '[(.host | explode), .stats.in_view]' <(later_snapshot)
	assert_output '[[65533,10,27,34],0]'
	run -0 post "/settings?token=$t" 'host='
	# Alive, the page and the same snapshot with the token, its memory
	# bounded, its threads as before.
	kill -0 "$SERVE"
	run -0 curl -s -m 2 -o /dev/null -w '%{http_code}' "$BASE/?token=$t"
	assert_output 200
	run -0 state
	assert_output "$(cat "$T/before")"
	within "$(threads)" 3 5 "lp-serve's threads"
	if ! under_sanitizer; then within "$(rss_kib)" 1 65536 "lp-serve's RSS (KiB)"; fi
	kill -INT "$SERVE"
	reap "$SERVE" 0 10
}

@test "lp-serve: a slow reader of /events gets the newest snapshot, the ones it skipped counted; each event whole" {
	# A snapshot of 30 KiB every 10 to 20 ms (1,000 functions' stacks);
	# the reader reads nothing for 1 s (its 4 KiB buffer and the stream's
	# socket's 128 KiB full), then all it can for 1 s.
	awk 'BEGIN { OFS = "\t"
		print "lp-stream", 1, "clock=monotonic"
		for (f = 1; f <= 1000; f++) print "frame", f, "u", "-", "/bin/x", "function_" f, "-"
		for (k = 2; k <= 1000; k++) print "stack", 10000 + k, "1," k
		for (i = 0; i < 5000; i++)
			print "sample", 1000000000 + i * 1000000, 7, 7, 0, "x", "cpu-clock", 1, 10002 + i % 999
	}' >"$T/wide.lp"
	start_serve -i 10ms "$T/wide.lp"
	wait_read
	run -0 "$HOSTILE" events "${BASE##*:}" "$TOKEN" 1 2
	[[ $output =~ ^events\ ([0-9]+)\ skipped\ ([0-9]+)\ gaps\ ([0-9]+)\ bad\ 0$ ]] || fail "$output"
	local events=${BASH_REMATCH[1]} skipped=${BASH_REMATCH[2]} gaps=${BASH_REMATCH[3]}
	within "$events" 10 400 "events read"
	within "$skipped" 10 400 "snapshots skipped"
	# The count the server sent is the ids the reader saw missing.
	assert_equal "$gaps" "$skipped"
	within "$(threads)" 3 5 "lp-serve's threads"
	if ! under_sanitizer; then within "$(rss_kib)" 1 65536 "lp-serve's RSS (KiB)"; fi
	kill -INT "$SERVE"
	reap "$SERVE" 0 10
}
