#!/usr/bin/env bats
# lp-trace never breaks the program it traces: where a uretprobe would (it
# puts the kernel's trampoline where the return address was, and C++'s
# unwinder, backtrace(3) and Go's runtime read return addresses), returns
# are probed at the function's own ret and tail-call instructions; calls an
# exception or longjmp leaves are spans marked unwound=1; a command killed by
# a signal is said, and is lp-trace's exit status.  Workloads:
# tests/workloads/throws.cc, dlthrow.c (with libthrow.cc), gogrow.go (and copies that say an older Go
# built them: helpers/go-as-older), walkstack.c, unreturned.c.

load helpers/common
load helpers/producers

# Spans by probe, depth and marks (unwound=1, tail=1), and lost records.
span_kinds() {
	awk -F'\t' '$1 == "span" { k = $6 " depth=" $7
			for (i = 8; i <= NF; i++) if ($i ~ /^(unwound|tail)=/) k = k " " $i
			n[k]++ }
		$1 == "lost" { n["lost " $3] += $4 }
		END { for (k in n) print k, n[k] }' "$1" | sort
}

@test "lp-trace-noharm: --returns takes auto, uretprobe or insn" {
	run -2 lp-trace --returns maybe traced -- true
	assert_output "lp-trace: --returns 'maybe': expected auto, uretprobe or insn"
}

@test "lp-trace-noharm: C++ exceptions through traced calls: the program runs to the end, every return a span, the calls left end at the catch" {
	require_root
	# traced -> mid -> inner throws on i % 3 == 0, caught in main;
	# contained throws and catches inside itself on i % 5 == 0
	run -0 lp-trace -v -o "$T/t.lp" traced mid inner contained -- "$WORKLOADS/throws" 3000
	assert_line "ok 3004000 caught 1000"
	assert_line --partial "lp-trace: traced: returns probed at "
	assert_line --partial "not a uretprobe: throws has exception tables (.gcc_except_table))"
	assert_line --regexp "^lp-trace: traced: calls an exception leaves end at __cxa_begin_catch in .*libstdc\+\+"
	run -0 span_kinds "$T/t.lp"
	assert_output "contained(long) depth=1 3000
inner(long) depth=2 2000
inner(long) depth=2 unwound=1 1000
mid(long) depth=1 2000
mid(long) depth=1 unwound=1 1000
traced(long) depth=0 2000
traced(long) depth=0 unwound=1 1000"
	# returned calls carry their values (traced(i) = i + 2); the three
	# calls one exception left end together, at its catch
	run -0 awk -F'\t' '$1 == "span" && $6 == "traced(long)" && $NF !~ /unwound/ { for (i = 8; i <= NF; i++) if ($i ~ /^ret=/) s += substr($i, 5) }
		$1 == "span" && /unwound=1/ { ends[$3]++ }
		END { for (e in ends) { n++; if (ends[e] != 3) bad++ } print s, n, bad + 0 }' "$T/t.lp"
	assert_output "3004000 1000 0"
}

# sessions: whether this kernel has uprobe sessions (lp-trace --features).
sessions() {
	local table
	table=$(lp-trace --features)
	awk '$1 == "uprobe_session" { ok = $3 == "yes" } END { exit !ok }' <<<"$table"
}

# dlthrow_truth FILE: dlthrow's spans in FILE as its truth has them: 30
# calls before any library is loaded, 30 after a C library, then 30 after
# its C++ plugin, 10 of those left by an exception (i % 3 == 0: every
# third, from the first), each ended by the next call (no probe on a catch
# that was not loaded yet), not after it began; the others return 2i + 1.
dlthrow_truth() {
	run -0 span_kinds "$1"
	assert_output "traced depth=0 80
traced depth=0 unwound=1 10"
	run -0 awk -F'\t' '$1 != "span" { next }
		{ for (i = 8; i <= NF; i++) if ($i ~ /^ret=/) s[n < 60] += substr($i, 5)
		  if (n >= 60 && ((n - 60) % 3 == 0) != ($NF == "unwound=1")) bad++
		  if (n && open && $2 < end) late++
		  open = $NF == "unwound=1"; end = $3; n++ }
		END { print s[1], s[0], bad + 0, late + 0 }' "$1"
	assert_output "1800 620 0 0"
}

@test "lp-trace-noharm: a C program whose C++ plugin (dlopen) throws through the traced call runs to the end, every return a span" {
	require_root
	# dlthrow has no C++ of its own: traced(i) 30 times with no library
	# loaded, 30 after loading a C library (libhot), then libthrow (C++),
	# which calls traced(i) back in a try block, and traced's call into it
	# throws on i % 3 == 0; 300 ms after each load.  With uprobe sessions,
	# a uretprobe per call until libthrow (and the libstdc++ it brings) is
	# loaded, then the ret instruction: every call a span, none lost.
	sessions || skip "this kernel has no uprobe sessions (Linux 6.13): the next test forces the fallback"
	run -0 lp-trace -v -o "$T/d.lp" traced -- "$WORKLOADS/dlthrow" "$WORKLOADS/libthrow" 30 300 "$WORKLOADS/libhot"
	assert_line "plain 900 900"
	assert_line "ok 620 caught 10"
	assert_line "lp-trace: traced: a uretprobe armed per call until the program loads a library that can throw, then its 1 return instruction (dlthrow calls dlopen (a library it loads later may throw or unwind through the traced calls))"
	# The one it names is the first in the process's maps (by address,
	# which ASLR's gaps order): libthrow, or what it brings, libstdc++ or
	# libgcc_s (which unwinds exceptions; named so once in a clean-clone run).
	assert_line --regexp "^lp-trace: note: pid [0-9]+ loaded a library that can throw \((libthrow|libstdc\+\+\.so\.6[.0-9]*|libgcc_s\.so\.1) .*\): the returns of traced are probed at their instructions from now on$"
	dlthrow_truth "$T/d.lp"
	# the return's cost: a uretprobe's, then the probed ret's from the switch
	run -0 awk -F'\t' '$1 == "cost" && $3 == "return" { for (i = 5; i <= NF; i++) if ($i ~ /^returns=/) print $i }' "$T/d.lp"
	assert_output "returns=uretprobe
returns=insn"
	# a uretprobe, as --returns can force: the unwinder finds no frame for
	# the trampoline and the program dies
	run -134 lp-trace --returns uretprobe -o "$T/u.lp" traced -- "$WORKLOADS/dlthrow" "$WORKLOADS/libthrow" 30
	assert_line "lp-trace: warning: probe 'traced': uretprobe as --returns says, though dlthrow calls dlopen (a library it loads later may throw or unwind through the traced calls): the program may break"
	assert_line "terminate called after throwing an instance of 'std::runtime_error'"
	assert_line --regexp "^lp-trace: .*/dlthrow killed by signal 6 \(Aborted\)$"
}

@test "lp-trace-noharm: without uprobe sessions, a program that calls dlopen has its returns probed at their instructions from the start" {
	require_root
	LP_HIDE_FEATURES=uprobe_session run -0 lp-trace -v -o "$T/d.lp" traced -- "$WORKLOADS/dlthrow" "$WORKLOADS/libthrow" 30 300 "$WORKLOADS/libhot"
	assert_line "plain 900 900"
	assert_line "ok 620 caught 10"
	assert_line --regexp "^lp-trace: traced: returns probed at [0-9]+ instructions? \(stepped, not a uretprobe: dlthrow calls dlopen \(a library it loads later may throw or unwind through the traced calls\)\)$"
	refute_line --partial "loaded a library that can throw"
	dlthrow_truth "$T/d.lp"
	run -0 awk -F'\t' '$1 == "cost" && $3 == "return" { for (i = 5; i <= NF; i++) if ($i ~ /^returns=/) print $i }' "$T/d.lp"
	assert_output "returns=insn"
}

@test "lp-trace-noharm: a process that had loaded its C++ plugin before lp-trace -p came gets no uretprobe: every call a span" {
	require_root
	sessions || skip "this kernel has no uprobe sessions (Linux 6.13): without, such returns are never uretprobes"
	# dlthrow loads libthrow, then waits for SIGUSR1, sent once lp-trace
	# is attached (its cost records written)
	"$WORKLOADS/dlthrow" "$WORKLOADS/libthrow" 30 signal >"$T/out" 3>&- &
	local pid=$! i
	for ((i = 0; i < 200; i++)); do
		if grep -q libthrow "/proc/$pid/maps"; then break; fi
		sleep 0.05
	done
	lp-trace -v -p "$pid" -o "$T/p.lp" traced 2>"$T/err" 3>&- &
	local tr=$!
	for ((i = 0; i < 600; i++)); do
		if grep -q '^cost' "$T/p.lp" 2>/dev/null; then break; fi
		sleep 0.05
	done
	kill -USR1 "$pid"
	reap "$pid" 0 30
	reap "$tr" 0 30
	cat "$T/err"
	run -0 cat "$T/out"
	assert_output "ok 620 caught 10"
	run -0 grep -E "^lp-trace: note: pid $pid has loaded a library that can throw \((libthrow|libstdc\+\+\.so\.6[.0-9]*|libgcc_s\.so\.1) .*\): no uretprobe on the functions of a program that calls dlopen$" "$T/err"
	run -0 span_kinds "$T/p.lp"
	assert_output "traced depth=0 20
traced depth=0 unwound=1 10"
}

@test "lp-trace-noharm: the return probed at a ret costs what a point probe there does: cost records say returns=insn; spans corrected by it" {
	require_root
	run -0 lp-trace -o "$T/c.lp" --calibrate 100ms traced -- "$WORKLOADS/throws" 30
	run -0 awk -F'\t' '$1 == "cost" && $3 == "return" { for (i = 5; i <= NF; i++) if ($i ~ /^(returns|insn)=/) printf "%s ", $i; print ($4 > 0) }' "$T/c.lp"
	assert_output "returns=insn insn=stepped 1"
	# costnest's child(N) is almost empty (tests/trace-cost.bats): its
	# spans less lp_ns= are near 0, though its ret is single-stepped
	# (the step after the probe's clock read, outside the span; the
	# breakpoint's trap before it inside, measured at a ret: it is not a
	# uretprobe's system call).  Also where breakpoints are 7 us dearer
	# than system calls (LP_TRACE_DEAR_TRAP_NS, tests/trace-cost.bats):
	# there, within a quarter of the raw median (a uretprobe's figures
	# left 48% of it); here within half, the calibration's own spread
	# between runs (-170 to +175 ns of 620-850 here).
	local dear part raw corr
	for dear in 0 7000; do
		part=$((dear ? 4 : 2))
		LP_TRACE_DEAR_TRAP_NS=$dear run -0 lp-trace --returns insn -o "$T/e.lp" child -- "$WORKLOADS/costnest" nest 50 100 0
		run -0 awk -F'\t' '$1 == "cost" && $3 == "return" && $5 == "probe=child" { for (i = 6; i <= NF; i++) if ($i ~ /^(returns|insn)=/) printf "%s ", $i; print "" }' "$T/e.lp"
		assert_output "returns=insn insn=stepped "
		raw=$(awk -F'\t' '$1 == "span" && $6 == "child" { print $3 - $2 }' "$T/e.lp" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
		corr=$(awk -F'\t' '$1 == "span" && $6 == "child" { for (i = 8; i <= NF; i++) if ($i ~ /^lp_ns=/) print $3 - $2 - substr($i, 7) }' "$T/e.lp" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
		echo "# child with a probed ret, breakpoints $dear ns dearer: raw $raw ns, corrected $corr ns" >&3
		[ "$((part * ${corr#-}))" -le "$raw" ] || fail "breakpoints $dear ns dearer: corrected median $corr ns, raw $raw ns"
	done
}

@test "lp-trace-noharm: --returns uretprobe on C++ that throws through: the program dies, and lp-trace says so and fails" {
	require_root
	run -134 lp-trace --returns uretprobe -o "$T/u.lp" traced -- "$WORKLOADS/throws" 30
	assert_line --partial "lp-trace: warning: probe 'traced': uretprobe as --returns says, though throws has exception tables"
	assert_line "terminate called after throwing an instance of 'std::runtime_error'"
	assert_line --regexp "^lp-trace: .*/throws killed by signal 6 \(Aborted\)$"
}

@test "lp-trace-noharm: Go: goroutines whose stacks grow and that change threads under the traced call run to the end; spans per goroutine" {
	require_root
	# 200 goroutines each call handle(i) once: it calls big(i), whose
	# 16 KiB frame grows the stack in big's prologue (big starts over: two
	# entries, one call), grows it again 100 KiB deep, sleeps 1 ms and
	# yields, then calls leaf(i); handle = 5050 + 2i, big = i + 1, leaf = 2i
	run -0 lp-trace -v -o "$T/g.lp" main.handle main.big main.leaf -- "$WORKLOADS/gogrow" 200
	assert_line --regexp "^calls 200 migrated [1-9][0-9]* moved 200 sum 1049800$"
	assert_line --partial "not a uretprobe: gogrow is a Go binary (its runtime reads return addresses when a goroutine's stack grows)); calls kept per goroutine"
	run -0 span_kinds "$T/g.lp"
	assert_output "main.big depth=1 200
main.handle depth=0 200
main.leaf depth=1 200"
	# each return paired with its own goroutine's entry: values and sleeps
	run -0 awk -F'\t' '$1 == "span" { for (i = 8; i <= NF; i++) if ($i ~ /^ret=/) s[$6] += substr($i, 5) }
		$1 == "span" && $6 == "main.handle" && $3 - $2 < 1000000 { short++ }
		END { print s["main.handle"], s["main.big"], s["main.leaf"], short + 0 }' "$T/g.lp"
	assert_output "1049800 20100 39800 0"
}

@test "lp-trace-noharm: Go before 1.17 (no register ABI) is refused, naming the version; Go 1.17's header without a version is told by its .abi0 symbols" {
	require_root
	# Debian ships Go 1.19 only. lp-trace tells a Go's version from
	# .go.buildinfo alone (the version inline since Go 1.18; before, a
	# header whose version lp does not read, and then .abi0 symbols, the
	# ABI0 wrappers Go 1.17 began with): helpers/go-as-older rewrites those
	# bytes of a copy as an older Go wrote them, and Go's own reader agrees
	OLDER=$LP_TOP/tests/helpers/go-as-older
	run -0 "$OLDER" "$WORKLOADS/gogrow" "$T/go116" go1.16
	run -0 go version "$T/go116"
	assert_output "$T/go116: go1.16"
	run -1 lp-trace -o "$T/o.lp" main.handle -- "$T/go116" 20
	assert_output "lp-trace: probe 'main.handle': $T/go116 was built by go1.16, before Go 1.17's register ABI: a return cannot be matched to its goroutine, and a uretprobe would kill the program at its first stack growth; not traced"
	# Go 1.16's header: no inline version, no .abi0 symbol
	run -0 "$OLDER" "$WORKLOADS/gogrow" "$T/go116h" go1.16 old-header no-abi0
	run -0 go version "$T/go116h"
	assert_output "$T/go116h: go1.16"
	run -1 lp-trace -o "$T/h.lp" main.handle -- "$T/go116h" 20
	assert_output "lp-trace: probe 'main.handle': $T/go116h was built by a Go older than 1.17, before Go 1.17's register ABI: a return cannot be matched to its goroutine, and a uretprobe would kill the program at its first stack growth; not traced"
	# Go 1.17's: the same header, .abi0 symbols: traced, every call a span
	run -0 "$OLDER" "$WORKLOADS/gogrow" "$T/go117" go1.17 old-header
	run -0 go version "$T/go117"
	assert_output "$T/go117: go1.17"
	run -0 lp-trace -o "$T/s.lp" main.handle -- "$T/go117" 20
	assert_output --regexp "^calls 20 migrated [0-9]+ moved 20 sum 101380$"
	run -0 span_kinds "$T/s.lp"
	assert_output "main.handle depth=0 20"
}

@test "lp-trace-noharm: backtrace(3) and _Unwind_Backtrace under traced calls: cut at the call by a uretprobe, said; whole under --returns insn" {
	require_root
	run -0 "$WORKLOADS/walkstack" 20
	untraced=$output
	assert_line "calls 20 lost-main 0"
	# the default: a uretprobe (walkstack calls backtrace, nothing that
	# throws), and each walk ends at the innermost traced call's return
	run -0 lp-trace -o "$T/d.lp" outer middle walk -- "$WORKLOADS/walkstack" 20
	assert_line --regexp "^lp-trace: note: walkstack calls (backtrace|_Unwind_Backtrace): a backtrace it takes during a call of outer ends at that call \(a uretprobe; --returns insn keeps it whole\)\$"
	assert_line "calls 20 lost-main 40"
	run -0 span_kinds "$T/d.lp"
	assert_output "middle depth=1 20
outer depth=0 20
walk depth=2 20"
	# the return instructions probed: the walks find what they find untraced
	run -0 lp-trace --returns insn -o "$T/w.lp" outer middle walk -- "$WORKLOADS/walkstack" 20
	assert_output "$untraced"
	run -0 span_kinds "$T/w.lp"
	assert_output "middle depth=1 20
outer depth=0 20
walk depth=2 20"
}

@test "lp-trace-noharm: longjmp across traced calls, either way of probing returns: output intact, the calls left are spans marked unwound" {
	require_root
	# step(i) calls leaf(i); on odd i it longjmps back to main, on even i it
	# tail-calls tail(i) with a jmp
	run -0 "$WORKLOADS/unreturned" 101
	untraced=$output
	run -0 lp-trace --returns uretprobe -o "$T/u.lp" 'step(i)' leaf tail -- "$WORKLOADS/unreturned" 101
	assert_output "$untraced"
	# a uretprobe: the tail call returns through step's, nested in it
	run -0 span_kinds "$T/u.lp"
	assert_output "leaf depth=1 101
step depth=0 51
step depth=0 unwound=1 50
tail depth=1 51"
	run -0 lp-trace --returns insn -o "$T/i.lp" 'step(i)' leaf tail -- "$WORKLOADS/unreturned" 101
	assert_output "$untraced"
	# the jmp ends step (tail=1); tail runs in its place, at step's depth
	run -0 span_kinds "$T/i.lp"
	assert_output "leaf depth=1 101
step depth=0 tail=1 51
step depth=0 unwound=1 50
tail depth=0 51"
	# unwound calls are the odd ones, tail-called the even ones
	run -0 awk -F'\t' '$1 == "span" && $6 == "step" { i = substr($8, 3); if ((i % 2) != ($NF ~ /unwound/)) bad++ } END { print bad + 0 }' "$T/i.lp"
	assert_output "0"
}

@test "lp-trace-noharm: a command killed by a signal: lp-trace says so and exits 128 + N" {
	require_root
	run -134 lp-trace -o "$T/a.lp" syscall:getpid -- sh -c 'kill -ABRT $$'
	assert_output "lp-trace: sh killed by signal 6 (Aborted)"
	run -139 lp-trace -o "$T/s.lp" syscall:getpid -- sh -c 'kill -SEGV $$'
	assert_output "lp-trace: sh killed by signal 11 (Segmentation fault)"
	# lp-trace's own SIGTERM at the end of -d is no failure
	run -0 lp-trace -d 300ms -o "$T/d.lp" syscall:getpid -- sleep 10
	assert_output ""
	# nor is a command asked to stop by someone else: it is said
	run -0 lp-trace -o "$T/t.lp" syscall:getpid -- sh -c 'kill -TERM $$'
	assert_output "lp-trace: sh killed by signal 15 (Terminated)"
}

@test "lp-trace-noharm: returns probed at instructions: jmp, jcc and jmp *reg tail calls end the caller (tail=1), a switch's jmp *reg does not" {
	require_root
	run -0 "$WORKLOADS/tailcalls" 100
	untraced=$output
	run -0 lp-trace --returns insn -o "$T/i.lp" 'ctail(i)' 'jcctail(arg0)' sw ptail other -- "$WORKLOADS/tailcalls" 100
	assert_output "$untraced"
	run -0 span_kinds "$T/i.lp"
	assert_output "ctail depth=0 50
ctail depth=0 tail=1 50
jcctail depth=0 50
jcctail depth=0 tail=1 50
other depth=0 200
ptail depth=0 tail=1 100
sw depth=0 100"
	# the tail calls are the odd i's (a jne not taken is no return)
	run -0 awk -F'\t' '$1 == "span" && ($6 == "ctail" || $6 == "jcctail") { i = substr($8, index($8, "=") + 1); if ((i % 2) != ($NF == "tail=1")) bad++ } END { print bad + 0 }' "$T/i.lp"
	assert_output "0"
	# with uretprobes the callee returns through its caller's return
	run -0 lp-trace --returns uretprobe -o "$T/u.lp" ctail jcctail sw ptail other -- "$WORKLOADS/tailcalls" 100
	assert_output "$untraced"
	run -0 span_kinds "$T/u.lp"
	assert_output "ctail depth=0 100
jcctail depth=0 100
other depth=1 200
ptail depth=0 100
sw depth=0 100"
}

@test "lp-trace-noharm: a function that reads its own return address (glibc's dlsym, to know its caller) keeps it" {
	require_root
	run -0 lp-trace -v -o "$T/d.lp" libc:___dlsym -- "$WORKLOADS/dlnext" 10
	assert_line "dlsym RTLD_NEXT found 10 of 10"
	assert_line --regexp "^lp-trace: libc:___dlsym: returns probed at [0-9]+ instructions? \(stepped, not a uretprobe: ___dlsym reads its return address \(at \+[0-9]+\)\)$"
	run -0 span_kinds "$T/d.lp"
	assert_output "libc:___dlsym depth=0 10"
	# a uretprobe: dlsym sees the trampoline as its caller
	run -0 lp-trace --returns uretprobe -o "$T/u.lp" libc:___dlsym -- "$WORKLOADS/dlnext" 10
	assert_line "dlsym RTLD_NEXT found 0 of 10: RTLD_NEXT used in code not dynamically loaded"
}
