#!/usr/bin/env bats
# lp-record: on-CPU sampling of workloads whose truth is known by
# construction (cpusplit: a() 25%, b() 75% of its CPU), with frame pointers
# and with DWARF unwinding of a build without them; every thread seen; a
# shared library's and a JIT map's functions named; clean ends (SIGINT,
# SIGKILL, closed output, the target's exit) leaving nothing attached; the
# errors.  Privileged: they load BPF programs (root, under CI=true too).

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/bpf
load helpers/producers
load helpers/cpusplit

setup() {
	load_bats_libs		# fail, for the checks that say why
	# Not bats' own folder: uid 65534 runs lp-record from this one, and
	# cannot enter bats' temporary folders.
	T=$(mktemp -d)
}

teardown() {
	if [ -n "${BG:-}" ]; then kill "$BG" 2>/dev/null || true; wait "$BG" 2>/dev/null || true; fi
	# What a failed test may have left running (a reader it stopped...).
	kill_after
	rm -rf "$T"
}

@test "--help lists every option, and the man page documents each" {
	run -0 lp-record --help
	[[ $output == usage:* ]]
	opts=$(grep -oE -- '--[a-z][a-z-]+' <<<"$output" | sort -u)
	[ -n "$opts" ]
	man=$(sed 's/\\-/-/g' "$LP_TOP/man/lp-record.1")
	for o in $opts; do
		grep -qF -- "$o" <<<"$man" || { echo "man page lacks $o"; return 1; }
	done
	run -0 lp-record --version
}

@test "bad usage exits 2 with a message" {
	run -2 --separate-stderr lp-record -d 1
	[[ $stderr == *"lp-record: name one target: -p PID, -a or -- CMD"* ]]
	run -2 --separate-stderr lp-record --freq 0 --all
	[ "$stderr" = "lp-record: --freq '0': must be at least 1" ]
	run -2 --separate-stderr lp-record --call-graph frob --all
	[ "$stderr" = "lp-record: --call-graph 'frob': expected auto, fp, dwarf or dwarf,BYTES" ]
	run -2 --separate-stderr lp-record -p 1 -a
	run -2 --separate-stderr lp-record --ring-size 5000 --all
	[ "$stderr" = "lp-record: --ring-size '5000': must be a power of two" ]
	run -2 --separate-stderr lp-record --ring-size 2048 --all
	[ "$stderr" = "lp-record: --ring-size '2048': must be at least 4096" ]
	run -2 --separate-stderr lp-record --stack-memory 1000 --all
	[ "$stderr" = "lp-record: --stack-memory '1000': must be at least 65536" ]
}

@test "no such pid: a clear error, exit 1" {
	require_root
	run -1 --separate-stderr lp-record -d 1 -p 999999999
	[ "$stderr" = "lp-record: --pid '999999999': too large" ] ||
		[[ $stderr == "lp-record: no process with pid 999999999"* ]]
	# A pid that is free now.
	pid=$(bash -c 'echo $$')
	run -1 --separate-stderr lp-record -d 1 -p "$pid"
	[ "$stderr" = "lp-record: no process with pid $pid" ]
	[ -z "$output" ]
}

@test "without privileges: a line naming what BPF lacks; -a then refused by the kernel, saying why, exit 1" {
	require_root
	require_cmd setpriv
	cp "$LP_BUILD/bin/lp-record" "$T/"
	chmod 755 "$T" "$T/lp-record"
	run -1 --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all "$T/lp-record" -a -d 1
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	[ "${stderr_lines[0]}" = "lp-record: BPF needs root, or CAP_BPF and CAP_PERFMON (missing: CAP_BPF CAP_PERFMON): sampling with perf events instead (--backend perf)" ]
	[ "${stderr_lines[1]}" = "lp-record: cannot sample the whole system: the kernel allows it to root, CAP_PERFMON, or everyone only with kernel.perf_event_paranoid <= 0 (it is $paranoid)" ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ -z "$output" ]
}

@test "frame pointers: a() 25% / b() 75% within 3 points" {
	require_root
	# 2 s of CPU (at most 30 s of wall): the same samples on a loaded machine.
	run -0 --separate-stderr lp-record -F 999 --call-graph fp -o "$T/fp.lp" -- "$WORKLOADS/cpusplit" 30 2
	[[ $stderr == "lp-record: "*" samples (cpu-clock at 999 Hz, fp), 0 lost (ring full)"* ]]
	run -0 lp-cat --check "$T/fp.lp"
	n=$(nsamples "$T/fp.lp")
	[ "$n" -ge 800 ]
	head -1 "$T/fp.lp" > "$T/header"
	grep -qE $'^lp-stream\t1\t' "$T/header"
	for key in clock=monotonic period_ns=1001001 'realtime_offset_ns=[0-9]+' mode=cpu event=cpu-clock; do
		grep -qE $'\t'"$key"$'(\t|$)' "$T/header" || { echo "header lacks $key"; false; }
	done
	lp-collapse "$T/fp.lp" > "$T/fp.folded"
	s=$(share_a "$T/fp.folded")
	echo "share of a: $s% of $n samples"
	near_25 "$s"
	# Whole stacks: through main, named, in the workload's module.
	grep -q '^cpusplit;.*main;a;spin' "$T/fp.folded"
	grep -q "	u	-	$WORKLOADS/cpusplit	b	" "$T/fp.lp"
	# Kernel frames (the clock syscalls) are named from kallsyms.
	grep -qE $'^frame\t[0-9a-f]{16}\tk\t-\t\\[kernel.kallsyms\\]\t[a-z_]' "$T/fp.lp"
	# Every sample says its unwinder.
	[ "$(grep '^sample' "$T/fp.lp" | grep -c 'unwind=fp')" -eq "$n" ]
}

@test "dwarf: a build without frame pointers, 25/75 within 3 points and >= 99% of stacks reach main" {
	require_root
	run -0 lp-record -F 999 --call-graph dwarf -o "$T/dw.lp" -- "$WORKLOADS/cpusplit-nofp" 30 2
	run -0 lp-cat --check "$T/dw.lp"
	n=$(nsamples "$T/dw.lp")
	[ "$n" -ge 800 ]
	[ "$(grep '^sample' "$T/dw.lp" | grep -c 'unwind=dwarf')" -eq "$n" ]
	lp-collapse "$T/dw.lp" > "$T/dw.folded"
	s=$(share_a "$T/dw.folded")
	main=$(awk '{ t += $NF; if ($0 ~ /;main;/) m += $NF } END { printf "%.2f\n", 100 * m / t }' "$T/dw.folded")
	echo "share of a: $s%; reaching main: $main% of $n samples"
	near_25 "$s"
	awk -v m="$main" 'BEGIN { exit !(m >= 99) }'
	# The same build with frame pointers loses its callers: the test above
	# measures the DWARF unwinder, not a lucky binary.
	run -0 lp-record -F 999 --call-graph fp -o "$T/nofp.lp" -- "$WORKLOADS/cpusplit-nofp" 30 0.5
	lp-collapse "$T/nofp.lp" > "$T/nofp.folded"
	bad=$(awk '{ t += $NF; if ($0 ~ /;main;(a|b);/) m += $NF } END { printf "%.0f\n", 100 * m / t }' "$T/nofp.folded")
	echo "frame pointers on the no-fp build: $bad% with main;a or main;b"
	[ "$bad" -lt 50 ]
}

@test "dwarf: a copy too small for the stack gives truncated stacks, counted in lost records" {
	require_root
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf,512 -o "$T/small.lp" -- "$WORKLOADS/cpusplit-nofp" 30 0.5
	n=$(nsamples "$T/small.lp")
	[ "$n" -ge 100 ]
	t=$(awk '/^sample/ && /truncated=1/ { n++ } END { print n + 0 }' "$T/small.lp")
	lost_unwind=$(awk -F'\t' '$1 == "lost" && $3 == "unwind" { s += $4 } END { print s + 0 }' "$T/small.lp")
	lost_trunc=$(awk -F'\t' '$1 == "lost" && $3 == "truncated" { s += $4 } END { print s + 0 }' "$T/small.lp")
	echo "$t truncated samples; lost records: unwind $lost_unwind, truncated $lost_trunc; $stderr"
	# a 512-byte copy ends most unwinds early: some are truncated
	[ "$lost_trunc" -gt 0 ]
	# each sample marked truncated=1 is counted once, in one of the two records
	[ $((lost_unwind + lost_trunc)) -eq "$t" ]
	# and the summary says the same two numbers
	[[ $stderr =~ ", "([0-9]+)" unwinds failed, "([0-9]+)" truncated; " ]] || fail "no counts in: $stderr"
	[ "${BASH_REMATCH[1]}" -eq "$lost_unwind" ]
	[ "${BASH_REMATCH[2]}" -eq "$lost_trunc" ]
}

@test "every thread of a multithreaded process (-p) is seen" {
	require_root
	"$WORKLOADS/threads" 20 4 &
	BG=$!
	# The workers exist once there are 5 tasks.
	for i in $(seq 50); do if [ "$(ls /proc/$BG/task | wc -l)" -ge 5 ]; then break; fi; sleep 0.1; done
	workers=$(ls /proc/$BG/task | grep -vx "$BG")
	[ "$(wc -w <<<"$workers")" -eq 4 ]
	run -0 lp-record -F 499 -d 2 -o "$T/t.lp" -p "$BG"
	seen=$(awk -F'\t' '$1 == "sample" { print $4 }' "$T/t.lp" | sort -u)
	for tid in $workers; do
		grep -qx "$tid" <<<"$seen" || { echo "thread $tid not seen"; return 1; }
	done
	# And only that process.
	[ "$(awk -F'\t' '$1 == "sample" && $3 != '"$BG"'' "$T/t.lp" | wc -l)" -eq 0 ]
	grep -q 'worker_loop' "$T/t.lp"
}

@test "a hot function in a shared library is named, with its module" {
	require_root
	run -0 lp-record -F 499 -d 1.5 -o "$T/so.lp" -- "$WORKLOADS/dlhot" "$WORKLOADS/libhot" 30
	grep -qE $'^frame\t[0-9a-f]{16}\tu\t-\t'"$WORKLOADS/libhot"$'\tlp_hot_in_library\t' "$T/so.lp"
	lp-collapse "$T/so.lp" > "$T/so.folded"
	pct=$(awk '{ t += $NF; if ($0 ~ /lp_hot_in_library/) h += $NF } END { printf "%.0f\n", 100 * h / t }' "$T/so.folded")
	echo "lp_hot_in_library in $pct% of samples"
	[ "$pct" -ge 80 ]
}

@test "code described in /tmp/perf-PID.map is named as a JIT frame" {
	require_root
	run -0 lp-record -F 499 -d 1.5 -o "$T/jit.lp" -- "$WORKLOADS/jit" 30
	grep -qE $'^frame\t[0-9a-f]{16}\tj\t-\t/tmp/perf-[0-9]+\\.map\tlp_jit_hot\t' "$T/jit.lp"
	lp-collapse "$T/jit.lp" > "$T/jit.folded"
	pct=$(awk '{ t += $NF; if ($0 ~ /lp_jit_hot/) h += $NF } END { printf "%.0f\n", 100 * h / t }' "$T/jit.folded")
	echo "lp_jit_hot in $pct% of samples"
	[ "$pct" -ge 80 ]
}

@test "SIGINT mid-run: exit 0, a complete valid stream, nothing left attached" {
	require_root
	"$WORKLOADS/cpusplit" 30 &
	BG=$!
	lp-record -F 999 -p "$BG" -o "$T/int.lp" 2>"$T/err" &
	rec=$!
	# Attached while running (after its calibration, up to 10 s on a
	# busy machine): the sampler, exec, fork and exit programs, their
	# links.
	for _ in $(seq 100); do
		links=$(held_ids "$rec" link_id)
		if [ "$(wc -w <<<"$links")" -ge 4 ]; then break; fi
		sleep 0.1
	done
	sleep 0.5	# recording a while
	progs=$(held_ids "$rec" prog_id)
	links=$(held_ids "$rec" link_id)
	[ "$(wc -w <<<"$progs")" -eq 4 ]
	[ "$(wc -w <<<"$links")" -ge 4 ]
	kill -INT "$rec"
	st=0
	wait "$rec" || st=$?
	[ "$st" -eq 0 ]
	cat "$T/err"
	grep -qE '^lp-record: [0-9]+ samples' "$T/err"
	run -0 lp-cat --check "$T/int.lp"
	[ "$(nsamples "$T/int.lp")" -ge 50 ]
	[ "$(tail -c 1 "$T/int.lp" | od -An -c | tr -d ' ')" = '\n' ]
	all_gone "$progs" "$links"
	# The target is left running.
	kill -0 "$BG"
}

@test "SIGKILL of lp-record leaves no program or link behind" {
	require_root
	"$WORKLOADS/cpusplit" 30 &
	BG=$!
	lp-record -F 999 -p "$BG" -o "$T/kill.lp" 2>/dev/null &
	rec=$!
	# Every program is attached by the cost record (a fixed second was
	# too short for a busy machine: fewer than 4 held then).
	wait_recording "$T/kill.lp"
	progs=$(held_ids "$rec" prog_id)
	links=$(held_ids "$rec" link_id)
	[ "$(wc -w <<<"$progs")" -eq 4 ]
	kill -KILL "$rec"
	reap "$rec" 137
	all_gone "$progs" "$links"
}

@test "SIGTERM mid-run: drains, a complete valid stream, exit 0, nothing left attached" {
	require_root
	"$WORKLOADS/cpusplit" 30 &
	BG=$!
	lp-record --freq 999 --pid "$BG" --output "$T/term.lp" 2>"$T/err" &
	rec=$!
	wait_recording "$T/term.lp"
	sleep 1.5
	progs=$(held_ids "$rec" prog_id)
	links=$(held_ids "$rec" link_id)
	[ "$(wc -w <<<"$progs")" -eq 4 ]
	kill -TERM "$rec"
	st=0
	wait "$rec" || st=$?
	cat "$T/err"
	[ "$st" -eq 0 ]
	summary=$(grep -oE '^lp-record: [0-9]+ samples' "$T/err" | grep -oE '[0-9]+')
	run -0 lp-cat --check "$T/term.lp"
	[ "$(nsamples "$T/term.lp")" -ge 500 ]
	# Drained: every sample it counted is in the stream, which ends whole.
	[ "$(nsamples "$T/term.lp")" -eq "$summary" ]
	[ "$(tail -c 1 "$T/term.lp" | od -An -c | tr -d ' ')" = '\n' ]
	all_gone "$progs" "$links"
	kill -0 "$BG"
}

@test "a second SIGINT ends lp-record at once, killed by SIGINT, nothing left attached" {
	require_root
	require_cmd python3
	"$WORKLOADS/cpusplit" 30 &
	BG=$!
	# Its output a pipe nobody reads any more: lp-record blocks in write,
	# with everything attached, and the first SIGINT cannot end that.
	mkfifo "$T/fifo"
	cat "$T/fifo" >/dev/null &
	reader=$!
	start_reporting_end "$T/pid" "$T/end" lp-record --freq 999 --pid "$BG" --output "$T/fifo"
	wait_file "$T/pid"
	rec=$(cat "$T/pid")
	KILL_AFTER="$reader $rec"
	wait_opened "$rec" "$T/fifo"
	second_sigint_kills "$rec" "$reader" "$T/end" prog_id 4
	kill -KILL "$reader"
	kill -0 "$BG"
}

@test "the target's exit ends the recording; the command's status is lp-record's" {
	require_root
	run -0 --separate-stderr lp-record -F 999 -o "$T/end.lp" -- "$WORKLOADS/cpusplit" 30 0.5
	[ "$(nsamples "$T/end.lp")" -ge 50 ]
	run -3 lp-record -F 99 -o "$T/three.lp" -- sh -c 'exit 3'
	run -0 lp-cat --check "$T/three.lp"
	run -127 --separate-stderr lp-record -o "$T/none.lp" -- "$T/no-such-command"
	[[ $stderr == "lp-record: cannot run '$T/no-such-command': No such file or directory"* ]]
	# -p: the process exits, lp-record ends by itself.
	"$WORKLOADS/cpusplit" 30 0.5 &
	BG=$!
	SECONDS=0
	run -0 lp-record -F 99 -o "$T/p.lp" -p "$BG"
	[ "$SECONDS" -lt 10 ]
}

@test "a process that maps a relocatable object (as a linker maps its inputs) is recorded, not crashed on" {
	require_root
	printf 'int f(void) { return 1; }\n' > "$T/f.c"
	cc -c -o "$T/f.o" "$T/f.c"
	run -0 readelf -h "$T/f.o"
	assert_output --regexp 'Type: +REL'
	# Before the fix: killed by SIGSEGV in libdwfl (exit 139).
	run -0 --separate-stderr lp-record -F 499 -o "$T/o.lp" -- "$WORKLOADS/mapobj" "$T/f.o" 1
	run -0 lp-collapse "$T/o.lp"
	run -0 awk '/;main( |;)/ { n += $NF } END { print n + 0 }' <<<"$output"
	[ "$output" -ge 50 ] || fail "only $output samples in main"
}

@test "children of a started command are followed" {
	require_root
	run -0 lp-record -F 499 -o "$T/kids.lp" -- sh -c "'$WORKLOADS/cpusplit' 30 0.3 & '$WORKLOADS/cpusplit' 30 0.3; wait"
	pids=$(awk -F'\t' '$1 == "sample" && $6 == "cpusplit" { print $3 }' "$T/kids.lp" | sort -u | wc -l)
	[ "$pids" -eq 2 ]
}

@test "--max-pids: children the pid set has no room for are lost records, exactly; exited ones leave it" {
	require_root
	# The set holds the command and 2 children: of 5 children alive at
	# once, 3 are not followed.  Once they have exited, 5 children one
	# after the other are each followed.
	run -0 --separate-stderr lp-record --freq 999 --max-pids 3 --output "$T/few.lp" -- sh -c "
		sleep 1 & sleep 1 & sleep 1 & sleep 1 & sleep 1 & wait
		for i in 1 2 3 4 5; do '$WORKLOADS/cpusplit' 30 0.2; done"
	echo "$stderr"
	run -0 lp-cat --check "$T/few.lp"
	lost=$(awk -F'\t' '$1 == "lost" && $3 == "children" { s += $4 } END { print s + 0 }' "$T/few.lp")
	[ "$lost" -eq 3 ]
	[[ $stderr == *", 3 children not followed (pid set full);"* ]]
	pids=$(awk -F'\t' '$1 == "sample" && $6 == "cpusplit" { print $3 }' "$T/few.lp" | sort -u | wc -l)
	[ "$pids" -eq 5 ]
	# Bad values.
	run -2 --separate-stderr lp-record --max-pids 0 --all
	[ "$stderr" = "lp-record: --max-pids '0': must be at least 1" ]
	run -2 --separate-stderr lp-record --max-pids 1 --pid "$$,$PPID"
	[ "$stderr" = "lp-record: -p names 2 processes, more than --max-pids 1" ]
}

@test "a followed child's pid, reused by the kernel once it exited, is not sampled" {
	require_root
	lp-record --freq 999 --output "$T/reuse.lp" -- sh -c \
		"'$WORKLOADS/cpusplit' 30 0.3 & echo \$! > '$T/kid.new'; mv '$T/kid.new' '$T/kid'; wait; sleep 30" \
		2>"$T/err" &
	rec=$!
	KILL_AFTER=$rec
	wait_file "$T/kid"
	kid=$(cat "$T/kid")
	for i in $(seq 200); do [ -e "/proc/$kid" ] || break; sleep 0.05; done
	[ ! -e "/proc/$kid" ]
	# The kid's pid to a busy process of no target's.
	start_with_pid "$kid" "$WORKLOADS/fixedwork" 50 2>/dev/null
	BG=$BG_PID
	wait "$BG"
	BG=
	kill -INT "$rec"
	st=0
	wait "$rec" || st=$?
	cat "$T/err"
	[ "$st" -eq 0 ]
	run -0 lp-cat --check "$T/reuse.lp"
	# The child was sampled while it was ours; the pid's next owner never.
	[ "$(awk -F'\t' -v p="$kid" '$1 == "sample" && $3 == p && $6 == "cpusplit"' "$T/reuse.lp" | wc -l)" -ge 30 ]
	[ "$(awk -F'\t' '$1 == "sample" && $6 == "fixedwork"' "$T/reuse.lp" | wc -l)" -eq 0 ]
}

@test "--stack-depth: stacks cut at N frames, leaf kept, marked truncated and counted" {
	require_root
	run -0 --separate-stderr lp-record --freq 499 --no-kernel --stack-depth 3 --output "$T/d3.lp" \
		-- "$WORKLOADS/cpusplit" 30 0.5
	run -0 lp-cat --check "$T/d3.lp"
	n=$(nsamples "$T/d3.lp")
	[ "$n" -ge 100 ]
	# Cut, all but the few taken in ld.so before main (shallower).
	t=$(grep '^sample' "$T/d3.lp" | grep -c $'\ttruncated=1\twhy=max-frames')
	echo "$t of $n samples truncated"
	[ $((100 * t / n)) -ge 95 ]
	# Every truncated sample is counted once (a copy that ended first, in
	# ld.so at the start, says end-of-copy).
	all=$(grep '^sample' "$T/d3.lp" | grep -c $'\ttruncated=1')
	lost=$(awk -F'\t' '$1 == "lost" && $3 == "truncated" { s += $4 } END { print s + 0 }' "$T/d3.lp")
	[ "$lost" -eq "$all" ]
	lp-collapse "$T/d3.lp" > "$T/d3.folded"
	# comm;f1;f2;f3 weight: never more than three frames, the innermost.
	[ "$(awk '{ if (split($1, f, ";") > 4) bad++ } END { print bad + 0 }' "$T/d3.folded")" -eq 0 ]
	grep -qE '^cpusplit;main;[ab];spin ' "$T/d3.folded"
	run -2 --separate-stderr lp-record --stack-depth 0 --all
	[ "$stderr" = "lp-record: --stack-depth '0': must be at least 1" ]
	run -2 --separate-stderr lp-record --stack-depth 128 --all
	[ "$stderr" = "lp-record: --stack-depth '128': must be at most 127" ]
}

@test "a closed output ends the recording: exit 0, at once" {
	require_root
	SECONDS=0
	run -0 timeout 20 bash -c "lp-record -a -F 999 2>/dev/null | head -c 1000 >/dev/null; exit \${PIPESTATUS[0]}"
	[ "$SECONDS" -lt 10 ]
}

@test "a target that execs another program is symbolized with the new one" {
	require_root
	run -0 lp-record -F 999 -o "$T/exec.lp" -- sh -c \
		"i=0; while [ \$i -lt 50000 ]; do i=\$((i+1)); done; exec '$WORKLOADS/cpusplit' 30 1.5"
	lp-collapse "$T/exec.lp" > "$T/exec.folded"
	grep -q '^sh;' "$T/exec.folded"
	s=$(share_a "$T/exec.folded")
	echo "share of a after the exec: $s%"
	near_25 "$s"
	grep -q '^cpusplit;.*main;b;spin' "$T/exec.folded"
}

@test "--inline: an inlined function is a frame of kind i under its caller; --srcline gives file:line" {
	require_root
	run -0 lp-record -F 499 --inline --srcline -o "$T/in.lp" -- "$WORKLOADS/inlined" 1
	grep -qE $'^frame\t[0-9a-f]{16}\ti\t-\t'"$WORKLOADS/inlined"$'\thot_inlined\ttests/workloads/inlined.c:1[34]$' "$T/in.lp"
	grep -qE $'^frame\t[0-9a-f]{16}\tu\t-\t'"$WORKLOADS/inlined"$'\touter\ttests/workloads/inlined.c:19$' "$T/in.lp"
	lp-collapse "$T/in.lp" > "$T/in.folded"
	pct=$(awk '{ t += $NF; if ($0 ~ /;outer;hot_inlined/) h += $NF } END { printf "%.0f\n", 100 * h / t }' "$T/in.folded")
	echo "outer;hot_inlined in $pct% of samples"
	[ "$pct" -ge 80 ]
	# Without --inline the same addresses are outer's.
	run -0 lp-record -F 499 -o "$T/noin.lp" -- "$WORKLOADS/inlined" 0.5
	run -1 grep -q hot_inlined "$T/noin.lp"
	grep -q $'\touter\t-$' "$T/noin.lp"
}

@test "--inline: inlines two deep are a frame each, each at its own call site with --srcline" {
	require_root
	src=tests/workloads/inlinenest.c
	mid_call=$(grep -n '/\* MID_CALL \*/' "$src" | cut -d: -f1)
	hot_call=$(grep -n '/\* HOT_CALL \*/' "$src" | cut -d: -f1)
	hot_loop=$(grep -n '/\* HOT_LOOP \*/' "$src" | cut -d: -f1)
	run -0 lp-record -F 499 --inline --srcline -o "$T/nest.lp" -- "$WORKLOADS/inlinenest" 1
	f=$'^frame\t[0-9a-f]{16}\t'
	m=$'\t-\t'"$WORKLOADS/inlinenest"$'\t'
	# Each call site is in the caller's frame: outer's is its call of
	# mid_inlined, mid_inlined's its call of hot_inlined.
	grep $'^frame\t' "$T/nest.lp" | grep inlinenest
	grep -qE "${f}u${m}outer"$'\t'"$src:$mid_call\$" "$T/nest.lp"
	grep -qE "${f}i${m}mid_inlined"$'\t'"$src:$hot_call\$" "$T/nest.lp"
	grep -qE "${f}i${m}hot_inlined"$'\t'"$src:($((hot_loop - 1))|$hot_loop)\$" "$T/nest.lp"
	lp-collapse "$T/nest.lp" > "$T/nest.folded"
	pct=$(awk '{ t += $NF; if ($0 ~ /;outer;mid_inlined_\[i\];hot_inlined_\[i\]/) h += $NF } END { printf "%.0f\n", 100 * h / t }' "$T/nest.folded")
	echo "outer;mid_inlined_[i];hot_inlined_[i] in $pct% of samples"
	[ "$pct" -ge 80 ]
}

@test "samples the ring had no room for are counted: lost records and the summary agree" {
	require_root
	"$WORKLOADS/cpusplit" 30 &
	BG=$!
	# About 2 KiB a sample at 999 Hz fills a 64 KiB ring in well under a
	# second while the recorder is stopped.
	lp-record -F 999 --ring-size 65536 -p "$BG" -o "$T/lost.lp" 2>"$T/err" &
	rec=$!
	wait_recording "$T/lost.lp"
	sleep 0.5
	kill -STOP "$rec"
	sleep 2
	kill -CONT "$rec"
	sleep 0.3
	kill -INT "$rec"
	st=0
	wait "$rec" || st=$?
	cat "$T/err"
	[ "$st" -eq 0 ]
	run -0 lp-cat --check "$T/lost.lp"
	lost=$(awk -F'\t' '$1 == "lost" && $3 == "ring" { s += $4 } END { print s + 0 }' "$T/lost.lp")
	echo "lost (ring): $lost"
	[ "$lost" -gt 0 ]
	grep -qE "^lp-record: [0-9]+ samples .*, $lost lost \(ring full\)" "$T/err"
}

@test "node --perf-basic-prof: the hot JavaScript function is named from its JIT map" {
	require_root
	require_cmd node
	cd "$T"
	run -0 lp-record -F 499 -o "$T/node.lp" -- node --perf-basic-prof -e '
		function lpHot() { let s = 0; for (let i = 0; i < 1e6; i++) s += i * i % 7; return s }
		const end = Date.now() + 2000; let t = 0; while (Date.now() < end) t += lpHot();'
	# node leaves its map behind.
	for pid in $(awk -F'\t' '$1 == "sample" { print $3 }' "$T/node.lp" | sort -u); do
		rm -f "/tmp/perf-$pid.map"
	done
	grep -qE $'^frame\t[0-9a-f]{16}\tj\t-\t/tmp/perf-[0-9]+\\.map\tJS:\\*?[~^*]?lpHot' "$T/node.lp"
	lp-collapse "$T/node.lp" > "$T/node.folded"
	# JIT names have spaces: the weight is the last field.
	pct=$(awk '{ w = $NF; t += w; if ($0 ~ /lpHot/) h += w } END { printf "%.0f\n", 100 * h / t }' "$T/node.folded")
	echo "lpHot in $pct% of samples"
	[ "$pct" -ge 50 ]
}

@test "SIGKILL of the started command: a valid stream, its status, nothing left attached" {
	require_root
	lp-record -F 999 -o "$T/k.lp" -- "$WORKLOADS/cpusplit" 30 2>"$T/err" &
	rec=$!
	for i in $(seq 50); do if cmd=$(pgrep -P "$rec" -x cpusplit); then break; fi; sleep 0.1; done
	[ -n "$cmd" ]
	sleep 1
	progs=$(held_ids "$rec" prog_id)
	links=$(held_ids "$rec" link_id)
	kill -KILL "$cmd"
	st=0
	wait "$rec" || st=$?
	[ "$st" -eq 137 ]
	run -0 lp-cat --check "$T/k.lp"
	[ "$(nsamples "$T/k.lp")" -ge 50 ]
	all_gone "$progs" "$links"
}

@test "short-lived children of a command are symbolized (mappings read at their exec)" {
	require_root
	# 30 children of 30 ms of CPU each, recorded into a pipe nobody reads
	# for their first 3 s: lp-record's reader, blocked on its output,
	# gets to most children's samples after they ended (frame pointers:
	# small samples, which the ring holds meanwhile).
	set -o pipefail
	lp-record -F 999 --call-graph fp -o - -- sh -c \
		"for i in \$(seq 30); do '$WORKLOADS/cpusplit' 30 0.03; done" 2>"$T/err" |
		{ sleep 3; cat; } >"$T/short.lp" || fail "$(cat "$T/err")"
	grep -q ' 0 lost (ring full)' "$T/err" || fail "$(cat "$T/err")"
	# Each cpusplit sample as "pid<TAB>frame;frame;...", names or bare
	# addresses (a user frame whose module was never read).
	awk -F'\t' '$1 == "frame" { f[$2] = $6 == "-" && $5 == "-" ? $4 : $6 }
		$1 == "stack" { s[$2] = $3 }
		$1 == "sample" && $6 == "cpusplit" {
			n = split(s[$9], a, ","); line = ""
			for (i = 1; i <= n; i++) line = line ";" f[a[i]]
			print $3 "\t" line }' "$T/short.lp" >"$T/stacks"
	# Every child's main named, in a() or b().
	children=$(awk -F'\t' '$2 ~ /;main;(a|b);spin/ { print $1 }' "$T/stacks" | sort -u | wc -l)
	echo "children with main;a or main;b named: $children of 30"
	[ "$children" -eq 30 ]
	# No frame left a bare address, but in the exec itself (the old
	# program's address, its maps gone with it).
	if grep -v '__x64_sys_execve' "$T/stacks" | grep -E ';0x[0-9a-f]+(;|$)' >&2; then
		fail "frames above unresolved"
	fi
	# The rest is the children's start (ld.so, the exec: ~10% here,
	# where a page fault is dear) and exit.
	pct=$(awk -F'\t' '{ t++; if ($2 ~ /;main;(a|b);spin/) m++ } END { printf "%.0f\n", 100 * m / t }' \
		"$T/stacks")
	echo "cpusplit samples with main;a or main;b named: $pct%"
	[ "$pct" -ge 80 ]
}

@test "lp-record -a that falls behind its samples (its output read slower than they come) stops at the first SIGINT, its stream whole" {
	require_root
	# Behind by construction, whatever the machine's speed: lp-record
	# writes each sample as it reads it from the ring, to a pipe read
	# 4 KiB every 50 ms (82 KB/s at most), while a CPU spins, sampled at
	# 4999 Hz (~100 bytes a sample: 500 KB/s at least).  Its writes block
	# and the ring stays full.  libbpf's ring_buffer__consume reads until
	# it finds the ring empty, and never does: the 1 MiB ring holds ~490
	# samples (2.1 KB each with --call-graph fp), 12 times what one 4 KiB
	# write of lp-record's takes, and fills again while lp-record waits
	# on the pipe.  A read of the ring must end (after 100 ms) for the
	# stop to be seen.  What the ring holds at the stop goes through the
	# same pipe (~50 KB: 0.6 s).
	"$WORKLOADS/cpusplit" 60 &
	BG=$!
	mkfifo "$T/out"
	python3 -c 'import os, sys, time
dst = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
src = os.open(sys.argv[1], os.O_RDONLY)
while b := os.read(src, 4096):
	os.write(dst, b)
	time.sleep(0.05)' "$T/out" "$T/behind.lp" &
	local reader=$!
	KILL_AFTER=$reader
	lp-record -a -F 4999 --call-graph fp --ring-size 1048576 -o "$T/out" 2>"$T/err" &
	local rec=$!
	wait_recording "$T/behind.lp"
	sleep 2
	local t0=$EPOCHREALTIME
	kill -INT "$rec"
	reap "$rec" 0 5 || fail "lp-record went on after SIGINT: $(cat "$T/err")"
	awk -v t0="$t0" -v t1="$EPOCHREALTIME" 'BEGIN { printf "lp-record ended %.2f s after SIGINT\n", t1 - t0 }'
	# The pipe's last 64 KiB, 0.8 s to read.
	reap "$reader" 0 5
	cat "$T/err"
	run -0 lp-cat --check "$T/behind.lp"
	grep -qE '^lp-record: [0-9]+ samples.* \(Interrupt\)$' "$T/err" || fail "no summary: $(cat "$T/err")"
	# It was behind: the ring was full, what it could not hold counted.
	run -0 awk -F'\t' '$1 == "lost" && $3 == "ring" { s += $4 } END { print s + 0 }' "$T/behind.lp"
	echo "lost (ring full): $output"
	((output > 0)) || fail "nothing lost: lp-record kept up"
}

# lp-record's resident memory in kB, every 0.2 s while process $1 lives,
# one a line, into file $2 (the last read may find it gone: no line).
rss_while() {
	while kill -0 "$1" 2>/dev/null; do
		cat "/proc/$1/status" 2>/dev/null | awk '$1 == "VmRSS:" { print $2 }' >>"$2"
		sleep 0.2
	done
}

@test "--stack-memory: a thread whose stacks never repeat leaves lp-record's memory bounded; every stack defined before its use, again after it was forgotten" {
	require_root
	# paths: every walk goes 40 levels down through left() or right() as
	# the bits of its number say: each sample a stack never seen.
	lp-record -F 4999 --stack-memory 1048576 -o "$T/bound.lp" -- "$WORKLOADS/paths" 8 \
		>"$T/bound.out" 2>"$T/bound.err" &
	local rec=$!
	rss_while "$rec" "$T/bound.rss"
	reap "$rec" 0 || fail "$(cat "$T/bound.err")"
	lp-record -F 4999 -o "$T/all.lp" -- "$WORKLOADS/paths" 8 >"$T/all.out" 2>"$T/all.err" &
	rec=$!
	rss_while "$rec" "$T/all.rss"
	reap "$rec" 0 || fail "$(cat "$T/all.err")"
	cat "$T/bound.err" "$T/all.err"
	for run in bound all; do
		# Every stack and frame defined before a sample uses it.
		run -0 lp-cat --check "$T/$run.lp"
		# Each sample in bottom() has its whole path: 40 left or right.
		run -0 lp-collapse "$T/$run.lp"
		run -0 awk '/;bottom [0-9]+$/ { n++; k = 0; m = split($1, f, ";")
				for (i = 1; i <= m; i++) if (f[i] == "left" || f[i] == "right") k++
				if (k != 40) bad += $2 } END { print n + 0, bad + 0 }' <<<"$output"
		echo "$run: stacks in bottom, samples with a path not 40 deep: $output"
		read -r nbottom bad <<<"$output"
		[ "$nbottom" -ge 10000 ] || fail "$run: only $nbottom stacks in bottom"
		[ "$bad" -eq 0 ] || fail "$run: $bad samples lost part of their path"
		# Stack definitions, and how many of them define a stack again.
		run -0 awk -F'\t' '$1 == "stack" { n++; if (seen[$2]++) again++ } END { print n + 0, again + 0 }' "$T/$run.lp"
		echo "$run: stack records, repeated: $output"
		read -r "nstacks_$run" "again_$run" <<<"$output"
		# Growth of the resident memory after the start (loading BPF,
		# calibrating: 2 s is well after).
		run -0 awk 'NR == 10 { first = $1 } NR >= 10 && $1 > max { max = $1 } END { print first + 0, max - first }' "$T/$run.rss"
		echo "$run: RSS at 2 s, growth after (kB): $output"
		read -r _ "grew_$run" <<<"$output"
	done
	# Unbounded, each stack is defined once, and memory grows with them.
	[ "$again_all" -eq 0 ] || fail "$again_all stacks defined twice without a bound"
	if grep -q 'took more than --stack-memory' "$T/all.err"; then fail "a bound said without one"; fi
	((grew_all >= 8192)) || fail "unbounded, RSS grew only $grew_all kB: the workload did not test the bound"
	# Bounded: forgotten and defined again, said in the summary, and the
	# growth is the 1 MiB bound and the frames, not the stacks.
	((again_bound > 0)) || fail "no stack defined again under a 1 MiB bound"
	grep -qE '^lp-record: the stacks seen took more than --stack-memory 1048576 bytes [1-9][0-9]* times' "$T/bound.err" ||
		fail "the summary does not say the stacks were forgotten"
	((grew_bound <= 4096)) || fail "bounded, RSS grew $grew_bound kB"
}

@test "lp-record -a while processes come and go: it keeps up, and gives their memory back once they stop" {
	require_root
	lp-record -a -F 999 -o "$T/churn.lp" 2>"$T/err" &
	local rec=$!
	wait_recording "$T/churn.lp"
	# Its own start-up settled first (the kernel's symbols, the running
	# processes' modules: 50 MB here; a clean-clone run beside the VM
	# stage read 17 MB a second in, and counted the rest as churn's).
	local before after prev=0 i
	for i in $(seq 30); do
		sleep 0.5
		before=$(awk '$1 == "RssAnon:" { print $2 }' "/proc/$rec/status")
		if ((i > 2 && before - prev < 1024 && prev - before < 1024)); then break; fi
		prev=$before
	done
	# Some 200 processes a second, each symbolized: its maps, its files
	# (libdw's 0.4 MB or so for its modules while it is known).
	(end=$((SECONDS + 15)); while ((SECONDS < end)); do python3 -c pass; perl -e 1; ls /usr >/dev/null; done)
	sleep 3
	after=$(awk '$1 == "RssAnon:" { print $2 }' "/proc/$rec/status")
	kill -INT "$rec"
	reap "$rec" 0 5 || fail "lp-record went on after SIGINT: $(cat "$T/err")"
	cat "$T/err"
	echo "RssAnon before, 3 s after the processes: $before $after kB"
	run -0 lp-cat --check "$T/churn.lp"
	# It kept up: (almost) no sample lost for a full ring; none here.  One
	# that fell behind for good lost 6-45% in 40 s.
	run -0 awk -F'\t' '$1 == "sample" { n++ } $1 == "lost" && $3 == "ring" { l += $4 }
		END { print n + 0, l + 0 }' "$T/churn.lp"
	read -r nsamples lost <<<"$output"
	((lost * 50 <= nsamples)) || fail "$lost samples lost for $nsamples written: lp-record fell behind"
	# The processes' memory is given back: each one's modules (libdw's
	# 0.4 MB or so) for ~3,000 processes would be over 1 GB, and glibc
	# kept 200 to 230 MB more before malloc_trim.  What stays is what
	# starts over at a bound: the caches of addresses and of identities
	# (2^18 answers each, symbolize-procs.c), the frames and the stacks.
	# Churned on, lp-record's RssAnon grows by 10-20 MB a cycle of 8 s
	# until the caches start over, then stays at 100-115 MB here (from
	# 35 MB settled); a clean-clone run read 17 MB then 150 MB.
	((after - before <= 163840)) || fail "RssAnon $before kB before, $after kB after"
}
