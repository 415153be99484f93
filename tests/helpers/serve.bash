# What lp-serve's test files share (tests/lp-serve.bats,
# tests/lp-serve-hostile.bats): starting it, its requests, its snapshots,
# and a stream whose truth is known.  Needs helpers/common and
# helpers/producers (wait_line) loaded first.

# start_serve ARGS...: lp-serve in the background; BASE (http://HOST:PORT),
# TOKEN, SERVE (its pid), its stderr in $T/serve.err.
start_serve() {
	lp-serve "$@" 2>"$T/serve.err" &
	SERVE=$!
	KILL_AFTER="${KILL_AFTER:-} $SERVE"
	wait_line '^http://' "$T/serve.err"
	local url
	url=$(head -1 "$T/serve.err")
	[[ $url =~ ^(http://127\.0\.0\.1:[0-9]+)/\?token=([0-9a-f]{32})$ ]] || fail "first line: $url"
	BASE=${BASH_REMATCH[1]}
	TOKEN=${BASH_REMATCH[2]}
}

# get PATH: the body, and the status in $T/status.
get() {
	if ! curl -s -o "$T/body" -w '%{http_code}' "$BASE$1" >"$T/status"; then
		echo "curl failed (no server?)" >"$T/body"
	fi
	cat "$T/body"
}

# post PATH BODY [CURL-ARGS...]: the body; the status in $T/status.
post() {
	local path=$1 body=$2
	shift 2
	if ! curl -s -o "$T/body" -w '%{http_code}' -X POST --data-binary "$body" "$@" "$BASE$path" >"$T/status"; then
		echo "curl failed (no server?)" >"$T/body"
	fi
	cat "$T/body"
}

snapshot() {
	get "/snapshot?token=$TOKEN"
}

# Waits (10 s at most) for a snapshot of every input read to its end.
wait_read() {
	for _ in $(seq 200); do
		if [ "$(snapshot | jq .stats.inputs_left)" = 0 ]; then return 0; fi
		sleep 0.05
	done
	fail "inputs not read in 10 s: $(snapshot | jq -c .stats)"
}

# The samples of a stream: N in main;a at 0.1 s steps from 1 s, then N in
# main;b (weights 1 and 3), into FILE.
ab_file() {
	awk -v N="$1" 'BEGIN { OFS = "\t"
		print "lp-stream", 1, "clock=monotonic"
		print "frame", 1, "u", "-", "/bin/x", "main", "-"
		print "frame", 2, "u", "-", "/bin/x", "a", "-"
		print "frame", 3, "u", "-", "/bin/x", "b", "-"
		print "stack", 12, "1,2"
		print "stack", 13, "1,3"
		for (i = 0; i < 2 * N; i++)
			print "sample", 1000000000 + i * 100000000, 7, 7, 0, "x", "cpu-clock",
				(i < N ? 1 : 3), (i < N ? 12 : 13)
	}' >"$2"
}
