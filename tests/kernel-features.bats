#!/usr/bin/env bats
# What lp uses of the running kernel (lib/capture/kfeatures.c): the
# --features table against the kernel's own version, and each fallback and
# refusal forced with LP_HIDE_FEATURES on whatever kernel this is
# (tests/kernels.bats runs tests/kernel-core.bats on Debian 12's 6.1 and
# 6.12, where the features are really missing).

load helpers/common
load helpers/producers

setup() {
	load_bats_libs
	require_root
	require_cmd strace
	W=$WORKLOADS
	T=$BATS_TEST_TMPDIR
}

# The kernel's version as a number, 6.1 -> 601.
version_num() {
	awk -F. '{ printf "%d\n", $1 * 100 + $2 }' <<<"$1"
}

@test "kernel-features: --features says yes exactly for the features this kernel's version has" {
	run -0 --separate-stderr lp-trace --features
	assert_line --index 0 --regexp "^kernel $(uname -r | sed 's/[.+]/\\&/g') "
	local have
	have=$(version_num "$(uname -r)")
	[ "${#lines[@]}" -eq 15 ]	# kernel, heading, 13 features
	local line name since here
	for line in "${lines[@]:2}"; do
		read -r name since here _ <<<"$line"
		if [ "$(version_num "$since")" -le "$have" ]; then
			[ "$here" = yes ] || { echo "$name: since $since, kernel $(uname -r): $here"; return 1; }
		else
			[ "$here" = no ] || { echo "$name: since $since, kernel $(uname -r): $here"; return 1; }
		fi
	done
	# The same table from lp-record; a hidden one says so.
	run -0 lp-record --features
	[ "${#lines[@]}" -eq 15 ]
	LP_HIDE_FEATURES=uprobe_multi,ri_pool run -0 lp-record --features
	assert_line --regexp '^uprobe_multi +6\.6 +(hidden|no) '
	assert_line --regexp '^ri_pool +6\.14 +(hidden|no) '
	assert_line --regexp '^btf +5\.4 +yes '
}

@test "kernel-features: an unknown name in LP_HIDE_FEATURES is an error that names it" {
	LP_HIDE_FEATURES=uprobe_multi,warp_drive run -1 --separate-stderr lp-trace fib -- "$W/fib" 5
	assert_equal "$stderr" "lp-trace: LP_HIDE_FEATURES: no kernel feature 'warp_drive' (lp-trace --features lists them)"
	assert_equal "$output" ""
	LP_HIDE_FEATURES=warp_drive run -1 --separate-stderr lp-record -d 1 -- "$W/fib" 5
	[[ $stderr == *"no kernel feature 'warp_drive'"* ]]
}

@test "kernel-features: without a feature it cannot do without, lp refuses at once and names it" {
	LP_HIDE_FEATURES=cookie run -1 --separate-stderr lp-trace fib -- "$W/fib" 5
	assert_equal "$stderr" "lp-trace: cannot trace on this kernel: lp-trace needs the kernel's cookie (Linux 5.15), hidden by LP_HIDE_FEATURES (lp-trace --features)"
	assert_equal "$output" ""
	LP_HIDE_FEATURES=ringbuf run -1 --separate-stderr lp-record -d 1 -- "$W/fib" 5
	assert_equal "$stderr" "lp-record: cannot sample on this kernel: lp-record needs the kernel's ringbuf (Linux 5.8), hidden by LP_HIDE_FEATURES (lp-record --features)"
	LP_HIDE_FEATURES=task_iter run -1 --separate-stderr lp-record --mode off -d 1 -- "$W/fib" 5
	[[ $stderr == *"off and wall need the kernel's task_iter (Linux 5.8)"* ]]
	# On-CPU sampling does not need task iterators.
	LP_HIDE_FEATURES=task_iter run -0 --separate-stderr lp-record -d 5 -- "$W/fib" 27
	assert_line --partial "lp-stream"
}

@test "kernel-features: without bpf_loop, python: probes are refused by name and the rest is traced" {
	LP_HIDE_FEATURES=bpf_loop run -1 --separate-stderr lp-trace python:fact -- python3 -c pass
	assert_equal "$stderr" "lp-trace: cannot trace 'python:fact' on this kernel: python: probes need the kernel's bpf_loop (Linux 5.17), hidden by LP_HIDE_FEATURES"
	# fib(12): 2 * fib(13) - 1 = 465 calls.
	LP_HIDE_FEATURES=bpf_loop run -0 --separate-stderr lp-trace fib -- "$W/fib" 12
	[ "$(grep -c '^span' <<<"$output")" -eq 465 ]
}

@test "kernel-features: without uprobe-multi links, perf-event uprobes trace every call and detach" {
	# fib(15): 1973 calls, each with its return; mtcalls' threads too.
	LP_HIDE_FEATURES=uprobe_multi run -0 --separate-stderr lp-trace -v fib -- "$W/fib" 15
	assert_equal "$(grep -c '^span' <<<"$output")" 1973
	assert_equal "$(grep -c 'uprobe-multi' <<<"$stderr")" 1
	[[ $stderr == *"note: no uprobe-multi links on this kernel (perf-event uprobes instead)"* ]]
	LP_HIDE_FEATURES=uprobe_multi run -0 --separate-stderr lp-trace --returns insn fib -- "$W/fib" 15
	assert_equal "$(grep -c '^span' <<<"$output")" 1973
	# And the links lp holds then are perf-event ones, where on a kernel
	# with uprobe-multi links they are those (bpftool's link types).
	link_types uprobe_multi
	assert_equal "$TYPES" "perf raw_tracepoint"
	if lp-trace --features | grep -q '^uprobe_multi .* yes '; then
		link_types ""
		assert_equal "$TYPES" "raw_tracepoint uprobe_multi uretprobe_multi"
	fi
}

# The kinds of BPF link lp-trace holds while it traces fib in a running
# process with LP_HIDE_FEATURES=$1 (two for the probe, two for lp's own
# tracepoints), once its probe's are attached, into TYPES.
link_types() {
	"$W/fib" 32 1000 >/dev/null &
	local pid=$! types="" lp
	wait_exec "$pid" "$(readlink -f "$W/fib")" || { TYPES="fib did not start"; return; }
	# No calibration: its own probes (perf links) would be among them.
	LP_HIDE_FEATURES=$1 lp-trace --calibrate 0 -d 10 -o "$T/spans.lp" fib -p "$pid" 2>"$T/err" &
	lp=$!
	# Its links once the entry's and the return's are both there.
	for _ in $(seq 90); do
		sleep 0.1
		types=$(cat /proc/$lp/fdinfo/* 2>/dev/null | awk '$1 == "link_type:" { print $2 }' | sort)
		if [ "$(grep -cv raw_tracepoint <<<"$types")" -ge 2 ]; then break; fi
	done
	wait "$lp" || { cat "$T/err" >&2; types="lp-trace failed"; }
	# Gone before the next: a file another process maps is probed
	# another way (tracefs events, perf links too).
	kill "$pid"
	wait "$pid" 2>/dev/null || [ $? -eq 143 ]	# by SIGTERM
	[ "$(grep -c "^span" "$T/spans.lp")" -gt 1000 ] || types="no spans"
	TYPES=$(uniq <<<"$types" | tr '\n' ' ')
	TYPES=${TYPES% }
}

@test "kernel-features: a command lp starts lets go of lp's BPF links before it runs" {
	# tp: probes attach lp's exit program again behind them; a command
	# still holding the old link (until its exec) kept it in the kernel,
	# and kernels before 6.10 refused the new one.  strace -y names what
	# each descriptor the command closes is.
	run -0 strace -f -y -e trace=close,execve -o "$T/strace" \
		lp-trace -o "$T/events.lp" tp:sched:sched_process_exit -- "$W/fib" 5
	assert_equal "$(grep -c '^event' "$T/events.lp")" 1
	local child
	child=$(awk '/execve\("[^"]*\/fib"/ { print $1; exit }' "$T/strace")
	[ -n "$child" ]
	# Its closes before its exec: every kind of lp's descriptors, links
	# among them.
	awk -v c="$child" '$1 == c && /execve\(/ { exit } $1 == c' "$T/strace" >"$T/before"
	grep -q 'close([0-9]*<anon_inode:bpf[-_]link>' "$T/before"
	grep -q 'close([0-9]*<anon_inode:bpf[-_]map>' "$T/before"
}
