#!/usr/bin/env bats
# lp-record and lp-trace on processes the host cannot read as it reads its
# own: forked children gone before their maps are read (symbolized with
# their parent's modules), and processes in their own mount and pid
# namespaces (binaries, libraries and JIT maps read through
# /proc/PID/root).  Privileged: they load BPF programs (root, under CI=true
# too).

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/producers

teardown() {
	# A namespace's pid 1 takes from outside only the signals it handles,
	# and unshare waits for it with SIGTERM blocked: SIGKILL it.
	if [ -n "${NS_PID:-}" ]; then kill -KILL "$NS_PID" 2>/dev/null || true; fi
	if [ -n "${BG:-}" ]; then kill "$BG" 2>/dev/null || true; wait "$BG" 2>/dev/null || true; fi
	kill_after
}

# Of the samples of forkspin's children (every forkspin pid but $2, the
# parent's) in recording $1: "PIDS SAMPLES SPIN UNKNOWN", the number of
# children sampled, their samples, and the percent in child_spin and with
# an [unknown] frame.
children_figures() {
	lp-collapse --pid "$1" > "$T/pid.folded" || return 1
	awk -v parent="forkspin-$2" '{
		w = $NF; split($1, f, ";")
		if (f[1] !~ /^forkspin-/ || f[1] == parent) next
		pids[f[1]] = 1; t += w
		if ($0 ~ /;child_spin(;| [0-9]+$)/) spin += w
		if ($0 ~ /\[unknown\]/) unk += w
	} END {
		for (p in pids) n++
		if (!t) { print n + 0, 0, 0, 100; exit }
		printf "%d %d %.1f %.1f\n", n, t, 100 * spin / t, 100 * unk / t
	}' "$T/pid.folded"
}

# Checks the figures of children_figures ($1) against forkspin's own
# measure of its children ($2, FORKSPIN_TRUTH's file): the 200 children of
# 5 ms mostly sampled, <= 5% [unknown], and child_spin's share of their
# samples no less than 5 points under its share of their CPU time.  What
# is not child_spin is real: fork's return to the child and its
# copy-on-write faults, the first calls' symbol resolving, _exit (about
# 1 ms a child here, 15-20% of their CPU).  Samples can only be more in
# child_spin than its CPU time: the kernel's return to the child runs
# partly with interrupts off, where a timer's tick waits.
check_children() {
	local n t spin unk truth
	read -r n t spin unk <<< "$1"
	truth=$(sed -n 's/.*spin_pct=\([0-9.]*\).*/\1/p' "$2")
	echo "children sampled: $n, samples: $t, in child_spin: $spin%, [unknown]: $unk%"
	echo "forkspin's own measure: $(cat "$2")"
	[ -n "$truth" ]
	[ "$n" -ge 150 ]
	[ "$t" -ge 500 ]
	awk -v s="$spin" -v t="$truth" 'BEGIN { exit !(s >= t - 5 && t >= 50) }'
	awk -v u="$unk" 'BEGIN { exit !(u <= 5) }'
}

@test "200 children forked without exec, gone before their maps are read, are symbolized (frame pointers)" {
	require_root
	FORKSPIN_TRUTH=$T/truth run -0 --separate-stderr lp-record --freq 999 --output "$T/fp.lp" \
		-- "$WORKLOADS/forkspin" 200 5
	echo "$stderr"
	parent=${lines[0]}
	run -0 lp-cat --check "$T/fp.lp"
	check_children "$(children_figures "$T/fp.lp" "$parent")" "$T/truth"
}

@test "200 children forked without exec are symbolized and unwound with DWARF" {
	require_root
	FORKSPIN_TRUTH=$T/truth run -0 --separate-stderr lp-record --freq 999 --call-graph dwarf \
		--output "$T/dw.lp" \
		-- "$WORKLOADS/forkspin" 200 5
	echo "$stderr"
	parent=${lines[0]}
	run -0 lp-cat --check "$T/dw.lp"
	check_children "$(children_figures "$T/dw.lp" "$parent")" "$T/truth"
	# Unwound through child_spin to main (DWARF needs the modules too).
	whole=$(awk -v parent="forkspin-$parent" '$1 !~ "^" parent ";" && /;child_spin/ {
		t += $NF; if ($0 ~ /;main;child_spin/) m += $NF } END { printf "%.0f\n", 100 * m / t }' \
		"$T/pid.folded")
	echo "child_spin samples reaching main: $whole%"
	[ "$whole" -ge 90 ]
}

@test "--all: children forked without exec anywhere on the system are symbolized" {
	require_root
	lp-record --all --freq 999 --output "$T/all.lp" 2>"$T/err" &
	rec=$!
	KILL_AFTER=$rec
	sleep 1
	FORKSPIN_TRUTH=$T/truth "$WORKLOADS/forkspin" 200 5 > "$T/parent"
	kill -INT "$rec"
	reap "$rec" 0 10
	cat "$T/err"
	run -0 lp-cat --check "$T/all.lp"
	check_children "$(children_figures "$T/all.lp" "$(head -1 "$T/parent")")" "$T/truth"
}

@test "a forked child's pid, once another process's child has it, is symbolized with the new parent's modules" {
	require_root
	# The two programs' modules are told apart by their addresses.
	[ "$(cat /proc/sys/kernel/randomize_va_space)" -ge 1 ] || fail "address space randomization is off"
	cp "$WORKLOADS/forkspin" "$T/forkspin2"
	# A first child, read while it spins 300 ms; then its pid given to the
	# child of another program (ns_last_pid: the parent takes the pid
	# before), which exits while lp-record is stopped (its parent stays):
	# gone when its samples are read, with the first child's process
	# still known by its pid.
	cat > "$T/reuse.sh" <<-EOF
		"$WORKLOADS/forkspin" 1 300 > "$T/first" || exit 1
		x=\$(sed -n 2p "$T/first")
		for i in \$(seq 50); do
			kill -STOP \$PPID
			echo \$((x - 2)) > /proc/sys/kernel/ns_last_pid
			"$T/forkspin2" 1 5 300 > "$T/second" &
			# Builtins only until the child has its pid: no fork.
			n=0 p2=
			while [ -z "\$p2" ] && [ \$n -lt 2000000 ]; do
				{ read -r p1 && read -r p2; } 2>/dev/null < "$T/second" || p2=
				n=\$((n + 1))
			done
			kill -CONT \$PPID
			wait \$! || exit 1
			if [ "\$(sed -n 2p "$T/second")" = "\$x" ]; then exit 0; fi
		done
		exit 1
	EOF
	run -0 --separate-stderr lp-record --freq 999 --output "$T/reuse.lp" -- sh "$T/reuse.sh"
	echo "$stderr"
	x=$(sed -n 2p "$T/first")
	lp-collapse --pid "$T/reuse.lp" > "$T/reuse.folded"
	grep "^forkspin2-$x;" "$T/reuse.folded" || fail "no sample of forkspin2's child $x"
	run -0 awk -v c="forkspin2-$x" '{ split($1, f, ";"); if (f[1] != c) next; t += $NF
		if ($0 ~ /;child_spin(;| [0-9]+$)/) spin += $NF; if ($0 ~ /\[unknown\]/) unk += $NF }
		END { print t + 0, spin + 0, unk + 0 }' "$T/reuse.folded"
	read -r t spin unk <<< "$output"
	[ "$unk" -eq 0 ]
	[ $((2 * spin)) -ge "$t" ]
}

# Runs workload $1 copied to /mnt/w, on a tmpfs of the namespace's own (a
# path the host does not have), as pid 1 of a mount and pid namespace of its
# own, with arguments $3...; $2 "tmp": a tmpfs of its own on /tmp too (its
# JIT map the host cannot see), "-": not; NS_LIB set: that file copied to
# /mnt/lib.so too.  Sets NS_PID, its pid as the host
# sees it, once it runs /mnt/w.
start_in_ns() {
	local prog=$1 tmp=$2 i mounts=""
	shift 2
	if [ "$tmp" = tmp ]; then mounts="&& mount -t tmpfs lp-ns-tmp /tmp"; fi
	if [ -n "${NS_LIB:-}" ]; then mounts="&& cp '$NS_LIB' /mnt/lib.so $mounts"; fi
	unshare --mount --pid --kill-child --mount-proc sh -c \
		"mount -t tmpfs lp-ns /mnt && cp '$prog' /mnt/w $mounts && exec /mnt/w \"\$@\"" \
		sh "$@" > "$T/ns.out" 3>&- &
	BG=$!
	for i in $(seq 200); do
		NS_PID=$(tr -d ' \n' < "/proc/$BG/task/$BG/children")
		if [ -n "$NS_PID" ] && [ "$(readlink "/proc/$NS_PID/exe")" = /mnt/w ]; then return 0; fi
		sleep 0.05
	done
	echo "no /mnt/w in a namespace of its own after 10 s"
	return 1
}

# record_in_ns PROG OUT LP-RECORD-OPTION...: PROG (a cpusplit) in a
# namespace of its own with a CPU budget of 1.5 s, recorded by lp-record
# -p until it exits, into OUT; again with 3 s, then 6 s, until OUT holds
# 300 samples (n the count, stderr lp-record's): lp-record's start (its
# BPF, its calibration) takes a part of the budget that grows with the
# machine's load (266 samples of 1.5 s beside a busy loop).
record_in_ns() {
	local prog=$1 out=$2 budget
	shift 2
	for budget in 1.5 3 6; do
		start_in_ns "$prog" - 30 "$budget"
		[ ! -e /mnt/w ] || fail "the host has a /mnt/w: the test would not tell the namespace's apart"
		run -0 --separate-stderr lp-record --pid "$NS_PID" --output "$out" "$@"
		reap "$BG" 0 10
		BG=
		n=$(awk -F'\t' '$1 == "sample"' "$out" | wc -l)
		echo "CPU budget $budget s: $n samples"
		[ "$n" -lt 300 ] || return 0
	done
	fail "fewer than 300 samples with a CPU budget of 6 s"
}

@test "a program in its own mount and pid namespace, at a path only it has: lp-record -p names its functions, nspid= beside the host's pid" {
	require_root
	record_in_ns "$WORKLOADS/cpusplit" "$T/ns.lp" --freq 499
	echo "$stderr"
	run -0 lp-cat --check "$T/ns.lp"
	lp-collapse "$T/ns.lp" > "$T/ns.folded"
	cat "$T/ns.folded"
	pct=$(awk '{ t += $NF; if ($0 ~ /;main;(a|b);spin/) m += $NF } END { printf "%.0f\n", 100 * m / t }' "$T/ns.folded")
	echo "samples with main;a or main;b named: $pct%"
	[ "$pct" -ge 90 ]
	run -1 grep -F '[w]' "$T/ns.folded"
	# Every sample the host's pid, and the namespace's pid 1 beside it.
	[ "$(awk -F'\t' -v p="$NS_PID" '$1 == "sample" && $3 == p && /\tnspid=1(\t|$)/' "$T/ns.lp" | wc -l)" -eq "$n" ] ||
		fail "not every sample has pid $NS_PID and nspid=1: $(grep -m3 '^sample' "$T/ns.lp")"
	NS_PID=
}

@test "a program in its own mount and pid namespace: lp-record --mode snapshot names its functions, nspid= beside the host's pid" {
	require_root
	start_in_ns "$WORKLOADS/cpusplit-nofp" - 30 1.5
	run -0 --separate-stderr lp-record --mode snapshot --pid "$NS_PID" --count 20 --interval 20ms --output "$T/snap.lp"
	echo "$stderr"
	run -0 lp-cat --check "$T/snap.lp"
	[ "$(awk -F'\t' '$1 == "sample"' "$T/snap.lp" | wc -l)" -eq 20 ]
	lp-collapse "$T/snap.lp" > "$T/snap.folded"
	cat "$T/snap.folded"
	[ "$(awk '$0 ~ /;main;(a|b);spin/ { m += $NF } END { print m + 0 }' "$T/snap.folded")" -ge 18 ]
	[ "$(awk -F'\t' -v p="$NS_PID" '$1 == "sample" && $3 == p && /\tnspid=1(\t|$)/' "$T/snap.lp" | wc -l)" -eq 20 ] ||
		fail "not every sample has pid $NS_PID and nspid=1: $(grep -m3 '^sample' "$T/snap.lp")"
	reap "$BG" 0 10
	BG= NS_PID=
}

@test "a program without frame pointers in its own mount namespace is unwound with DWARF" {
	require_root
	record_in_ns "$WORKLOADS/cpusplit-nofp" "$T/dw.lp" --freq 499 --call-graph dwarf
	echo "$stderr"
	lp-collapse "$T/dw.lp" > "$T/dw.folded"
	pct=$(awk '{ t += $NF; if ($0 ~ /;main;(a|b);spin/) m += $NF } END { printf "%.0f\n", 100 * m / t }' "$T/dw.folded")
	echo "$n samples, with main;a or main;b named: $pct%"
	[ "$pct" -ge 90 ]
	NS_PID=
}

@test "a program in its own mount and pid namespace: lp-trace -p traces it, every call, nspid= beside the host's pid" {
	require_root
	# sleeper waits for /mnt/go (its own /mnt) before its 50 calls.
	start_in_ns "$WORKLOADS/sleeper" - 50 /mnt/go
	lp-trace --output "$T/t.lp" nap --pid "$NS_PID" 2>"$T/err" 3>&- &
	tracer=$!
	KILL_AFTER=$tracer
	for i in $(seq 200); do
		if [ -s "$T/t.lp" ] || ! kill -0 "$tracer" 2>/dev/null; then break; fi
		sleep 0.05
	done
	# The header is written once the probes are attached.
	[ -s "$T/t.lp" ] || fail "lp-trace did not start: $(cat "$T/err")"
	touch "/proc/$NS_PID/root/mnt/go"
	reap "$tracer" 0 20
	cat "$T/err"
	run -0 lp-cat --check "$T/t.lp"
	run -0 awk -F'\t' -v p="$NS_PID" '$1 == "span" { n++; if ($4 != p || $6 != "nap") bad++
		if ($0 !~ /	nspid=1(	|$)/) nons++; if ($0 !~ "	ret=" 2 * i++ "(	|$)") badret++ }
		END { print n + 0, bad + 0, nons + 0, badret + 0 }' "$T/t.lp"
	[ "$output" = "50 0 0 0" ] || fail "spans, not nap of $NS_PID, without nspid=1, wrong ret=: $output"
	reap "$BG" 0 10
	BG= NS_PID=
}

@test "a JIT in its own mount and pid namespace: its /tmp/perf-1.map (its /tmp, its pid) names its code" {
	require_root
	start_in_ns "$WORKLOADS/jit" tmp 30
	[ ! -e /tmp/perf-1.map ] || fail "the host has a /tmp/perf-1.map: the test would not tell the namespace's apart"
	[ ! -e "/tmp/perf-$NS_PID.map" ]
	run -0 --separate-stderr lp-record --pid "$NS_PID" --freq 499 --duration 1.5 --output "$T/jit.lp"
	echo "$stderr"
	grep -qE $'^frame\t[0-9a-f]{16}\tj\t-\t/tmp/perf-1\\.map\tlp_jit_hot\t' "$T/jit.lp"
	lp-collapse "$T/jit.lp" > "$T/jit.folded"
	pct=$(awk '{ t += $NF; if ($0 ~ /lp_jit_hot/) h += $NF } END { printf "%.0f\n", 100 * h / t }' "$T/jit.folded")
	echo "lp_jit_hot in $pct% of samples"
	[ "$pct" -ge 80 ]
}

@test "a library at a path only its namespace has: lp-trace -p probes it, lp-record -p names it" {
	require_root
	NS_LIB=$WORKLOADS/libhot start_in_ns "$WORKLOADS/dlhot" - /mnt/lib.so 30
	for i in $(seq 200); do
		if grep -q ' /mnt/lib.so$' "/proc/$NS_PID/maps"; then break; fi
		sleep 0.05
	done
	grep -q ' /mnt/lib.so$' "/proc/$NS_PID/maps"
	[ ! -e /mnt/lib.so ]
	run -0 --separate-stderr lp-trace --duration 1 --output "$T/lib.lp" lib.so:lp_hot_in_library --pid "$NS_PID"
	echo "$stderr"
	run -0 awk -F'\t' '$1 == "span" { n++; if ($6 != "lib.so:lp_hot_in_library" || $0 !~ /\tnspid=1(\t|$)/) bad++ }
		END { print n + 0, bad + 0 }' "$T/lib.lp"
	read -r n bad <<< "$output"
	echo "$n spans, $bad not lib.so:lp_hot_in_library with nspid=1"
	[ "$n" -ge 100 ]
	[ "$bad" -eq 0 ]
	run -0 --separate-stderr lp-record --pid "$NS_PID" --freq 499 --duration 1 --output "$T/lib-rec.lp"
	run -0 grep -cE $'^frame\t[0-9a-f]{16}\tu\t[0-9a-f-]+\t/mnt/lib.so\tlp_hot_in_library\t' "$T/lib-rec.lp"
	lp-collapse "$T/lib-rec.lp" > "$T/lib.folded"
	pct=$(awk '{ t += $NF; if ($0 ~ /;lp_hot_in_library/) h += $NF } END { printf "%.0f\n", 100 * h / t }' "$T/lib.folded")
	echo "lp_hot_in_library in $pct% of samples"
	[ "$pct" -ge 80 ]
}
