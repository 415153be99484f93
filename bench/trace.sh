#!/usr/bin/env bash
# bench/trace.sh - lp-trace's cost per traced call (entry + return, duration
# computed), side by side with bpftrace's uprobe + uretprobe doing the same,
# in one run; then the event rate lp-trace sustains without loss and what
# happens past it.  Needs root.  Figures vary with the machine's load: the
# runs alternate, and the median of ROUNDS is printed.
#
#   CALLS=200000 ROUNDS=3 bench/trace.sh
set -u
O=${O:-build}
W=$O/tests/workloads
CALLS=${CALLS:-200000}
ROUNDS=${ROUNDS:-3}
if [ "$(id -u)" -ne 0 ]; then
	echo "bench/trace.sh: needs root (uprobes)" >&2
	exit 1
fi
for f in "$O/bin/lp-trace" "$W/cetloop" "$W/plainloop" "$W/fib"; do
	[ -x "$f" ] || { echo "bench/trace.sh: $f missing: make test-build O=$O" >&2; exit 1; }
done
have_bpftrace=0
command -v bpftrace >/dev/null && have_bpftrace=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ns per call as cetloop reports it on stderr.
nspc() { sed -n 's/.* calls, \([0-9.]*\) ns per call/\1/p' "$1" | tail -1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

run_plain() { "$W/$1" "$CALLS" >/dev/null 2>"$tmp/e"; nspc "$tmp/e"; }
run_lp() {
	local bin=$1; shift
	"$O/bin/lp-trace" -o "$tmp/lp.out" "$@" tick -- "$W/$bin" "$CALLS" >/dev/null 2>"$tmp/e"
	nspc "$tmp/e"
}
run_bt() {
	bpftrace -e "uprobe:$W/$1:tick { @s[tid] = nsecs; }
		uretprobe:$W/$1:tick /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }" \
		-c "$W/$1 $CALLS" >/dev/null 2>"$tmp/e"
	nspc "$tmp/e"
}

# bin: cetloop (tick opens with endbr64; push %rbp) or plainloop (push %rbp).
table() {
	local bin=$1
	: >"$tmp/plain"; : >"$tmp/lp"; : >"$tmp/lpmin"; : >"$tmp/bt"
	for _ in $(seq "$ROUNDS"); do
		run_plain "$bin" >>"$tmp/plain"
		run_lp "$bin" >>"$tmp/lp"
		run_lp "$bin" --min-duration 1s >>"$tmp/lpmin"
		[ $have_bpftrace = 1 ] && run_bt "$bin" >>"$tmp/bt"
	done
	plain=$(median <"$tmp/plain")
	lp=$(median <"$tmp/lp")
	lpmin=$(median <"$tmp/lpmin")
	printf '%-58s %10s %10s\n' "tool" "ns/call" "added"
	printf '%-58s %10.1f %10s\n' "no tracing" "$plain" "-"
	printf '%-58s %10.1f %10.1f\n' "lp-trace tick (spans written)" "$lp" "$(echo "$lp - $plain" | bc)"
	printf '%-58s %10.1f %10.1f\n' "lp-trace --min-duration 1s tick (kernel-filtered)" "$lpmin" "$(echo "$lpmin - $plain" | bc)"
	if [ $have_bpftrace = 1 ]; then
		bt=$(median <"$tmp/bt")
		printf '%-58s %10.1f %10.1f\n' "bpftrace uprobe+uretprobe hist(nsecs - @s[tid])" "$bt" "$(echo "$bt - $plain" | bc)"
		printf 'lp-trace / bpftrace added cost: %.2f\n' "$(echo "($lp - $plain) / ($bt - $plain)" | bc -l)"
	else
		echo "bpftrace not installed: no comparison"
	fi
}

echo "# cost per traced call, tick() opening with endbr64; push %rbp (-fcf-protection, as Ubuntu/Fedora build)"
echo "# ($CALLS calls, median of $ROUNDS; lp-trace probes the push, bpftrace the endbr64)"
table cetloop
echo
echo "# the same, tick() opening with push %rbp (no -fcf-protection): both probe the push"
table plainloop

# The event rate: fib(22) makes 57313 calls as fast as uprobes let it.
# Every call becomes a span or is counted lost; nothing is dropped silently.
echo
echo "# sustained rate: fib(22) x 4 rounds = 229252 calls, by ring size"
printf '%-12s %10s %10s %10s %12s %8s\n' "ring" "spans" "lost" "total" "calls/s" "lost%"
for ring in 4096 262144 8388608 67108864; do
	t0=$(date +%s.%N)
	"$O/bin/lp-trace" --ring-size "$ring" -o "$tmp/f.lp" fib -- "$W/fib" 22 4 >/dev/null 2>/dev/null
	t1=$(date +%s.%N)
	awk -F'\t' -v ring="$ring" -v secs="$(echo "$t1 - $t0" | bc)" '
		$1 == "span" { s++ } $1 == "lost" && $3 == "ring" { l += $4 }
		END { printf "%-12s %10d %10d %10d %12.0f %7.1f%%\n", ring, s, l, s + l, (s + l) / secs, 100 * l / (s + l) }' "$tmp/f.lp"
done
