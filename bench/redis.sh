#!/usr/bin/env bash
# bench/redis.sh - what tracing Redis' call() costs Redis: redis-benchmark's
# GET and SET throughput untraced, under `lp-trace -p PID call` (the
# default returns, --returns insn, --returns uretprobe) and under
# bpftrace's uprobe + uretprobe doing the same (a call's duration), in one
# run: ROUNDS rounds, the configurations in turn within each, the median
# of each and its ratio to untraced and to bpftrace.  Needs root,
# redis-server and redis-benchmark (make bench-deps), bpftrace for its row.
#
#   ROUNDS=5 REQUESTS=100000 CLIENTS=8 PIPELINE=1 bench/redis.sh
#
# redis-server runs on CPU 1 and redis-benchmark on CPU 0 (taskset), so
# that the server's cost shows; PIPELINE > 1 makes it the bottleneck.
set -u
O=${O:-build}
ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-200000}
CLIENTS=${CLIENTS:-8}
PORT=${PORT:-6391}
PIPELINE=${PIPELINE:-1}
if [ "$(id -u)" -ne 0 ]; then
	echo "bench/redis.sh: needs root (uprobes)" >&2
	exit 1
fi
for c in redis-server redis-benchmark redis-cli; do
	command -v $c >/dev/null || { echo "bench/redis.sh: no $c: make bench-deps" >&2; exit 1; }
done
[ -x "$O/bin/lp-trace" ] || { echo "bench/redis.sh: $O/bin/lp-trace missing: make O=$O" >&2; exit 1; }
have_bpftrace=0
command -v bpftrace >/dev/null && have_bpftrace=1
tmp=$(mktemp -d)
redis=
tracer=
cleanup() {
	[ -n "$tracer" ] && kill -INT "$tracer" 2>/dev/null && wait "$tracer" 2>/dev/null
	[ -n "$redis" ] && kill "$redis" 2>/dev/null && wait "$redis" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
exe=$(command -v redis-server)
exe=$(readlink -f "$exe")

taskset -c 1 redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
	--logfile "$tmp/redis.log" & redis=$!
for _ in $(seq 100); do
	redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
	sleep 0.1
done
redis-cli -p "$PORT" ping >/dev/null 2>&1 || { echo "bench/redis.sh: redis-server did not start" >&2; exit 1; }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# One redis-benchmark run: "GET_RPS SET_RPS".
load() {
	taskset -c 0 redis-benchmark -p "$PORT" -c "$CLIENTS" -P "$PIPELINE" -n "$REQUESTS" -t get,set -q --csv 2>/dev/null |
		awk -F'"' '$2 == "GET" { g = $4 } $2 == "SET" { s = $4 } END { print g + 0, s + 0 }'
}

# until FILE PATTERN: waits (at most 30 s) for PATTERN in FILE.
until_seen() {
	for _ in $(seq 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "bench/redis.sh: no '$2' in $1 after 30 s" >&2
	return 1
}

# One configuration: its tracer started and attached, the load, the tracer
# stopped.  Appends "GET SET" to $tmp/NAME.
run() {
	local name=$1
	: >"$tmp/t.out" >"$tmp/t.err"
	case $name in
	none) ;;
	lp*)
		local opt=()
		case $name in lp-insn) opt=(--returns insn) ;; lp-uret) opt=(--returns uretprobe) ;; esac
		"$O/bin/lp-trace" -p "$redis" "${opt[@]}" -o "$tmp/t.out" call 2>"$tmp/t.err" & tracer=$!
		until_seen "$tmp/t.out" '^cost' || return 1
		;;
	bpftrace)
		bpftrace -p "$redis" -e "uprobe:$exe:call { @s[tid] = nsecs; }
			uretprobe:$exe:call /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }" \
			>"$tmp/t.out" 2>"$tmp/t.err" & tracer=$!
		until_seen "$tmp/t.out" 'Attaching' || return 1
		;;
	esac
	sleep 0.5
	load >>"$tmp/$name"
	if [ -n "$tracer" ]; then
		kill -INT "$tracer"
		wait "$tracer"
		tracer=
	fi
	case $name in lp*) grep '^lost' "$tmp/t.out" | sed "s/^/# $name: /" ;; esac
	# How the default took call's returns (its cost record).
	[ "$name" = lp ] && awk -F'\t' '$1 == "cost" && $3 == "return" {
		for (i = 5; i <= NF; i++) if ($i ~ /^(returns|insn)=/) printf " %s", $i; print "" }' \
		"$tmp/t.out" | sort -u >"$tmp/lp.how"
	return 0
}

configs="none lp lp-insn lp-uret"
[ $have_bpftrace = 1 ] && configs="$configs bpftrace"
for _ in $(seq "$ROUNDS"); do
	for c in $configs; do
		run "$c" || exit 1
	done
done

echo "# redis-server $(redis-server --version | grep -o 'v=[0-9.]*') ($exe), redis-benchmark -c $CLIENTS -P $PIPELINE -n $REQUESTS -t get,set, server and client on CPUs of their own: medians of $ROUNDS rounds, ratios of GET+SET round by round"
printf '%-52s %10s %10s %9s %11s\n' "tracing call()" "GET/s" "SET/s" "ratio" "vs bpftrace"
# Ratios round by round (the same minute's untraced and bpftrace runs),
# then their median: the machine's speed drifts between rounds.
ratio() { paste -d' ' "$tmp/$1" "$tmp/$2" | awk '{ print ($1 + $2) / ($3 + $4) }' | median; }
for c in $configs; do
	g=$(awk '{ print $1 }' "$tmp/$c" | median)
	s=$(awk '{ print $2 }' "$tmp/$c" | median)
	case $c in
	none) label="untraced" ;;
	lp) label="lp-trace call (default:$(tr '\n' ' ' <"$tmp/lp.how" | sed 's/ *$//'))" ;;
	lp-insn) label="lp-trace --returns insn call" ;;
	lp-uret) label="lp-trace --returns uretprobe call" ;;
	bpftrace) label="bpftrace uprobe + uretprobe" ;;
	esac
	vs=-
	[ $have_bpftrace = 1 ] && vs=$(printf '%.2f' "$(ratio "$c" bpftrace)")
	printf '%-52s %10.0f %10.0f %9.2f %11s\n' "$label" "$g" "$s" "$(ratio "$c" none)" "$vs"
done
