#!/usr/bin/env bats
# lp-trace against workloads whose truth is known by construction
# (tests/workloads/sleeper.c, fib.c, mtcalls.c, lines.c, sysrw.c).

load helpers/common
load helpers/producers
load helpers/bpf

# span fields: 1 span 2 start 3 end 4 pid 5 tid 6 probe 7 depth 8.. key=value
attr() {	# attr KEY: prints the value of KEY= on each line of stdin
	awk -F'\t' -v k="$1=" '{ for (i = 8; i <= NF; i++) if (index($i, k) == 1) print substr($i, length(k) + 1) }'
}

@test "lp-trace: usage errors exit 2" {
	run -2 lp-trace
	assert_output --partial "no probe given"
	run -2 lp-trace fib
	assert_output --partial "no target: give -p PID or -- CMD"
	run -2 lp-trace --min-duration 3parsecs fib -- true
	run -2 lp-trace --duration 0 fib -- true
	assert_output "lp-trace: --duration '0': must be positive"
	run -2 lp-trace --ring-size 5000 fib -- true
	assert_output "lp-trace: --ring-size '5000': must be a power of two"
	run -2 lp-trace 'syscall:frobnicate' -- true
	assert_output --partial "lp-trace: probe 'syscall:frobnicate': no system call 'frobnicate'"
	run -2 lp-trace fib -p 1 -- true
	assert_output --partial "lp-trace: -p and a command exclude each other"
	run -0 lp-trace --help
	assert_output --partial "--min-duration"
	run -0 lp-trace --version
}

@test "lp-trace: --help options are all in the man page" {
	run -0 lp-trace --help
	for opt in $(grep -oE -- '--[a-z-]+' <<<"$output" | sort -u); do
		grep -q -- "${opt//-/\\\\-}" "$LP_TOP/man/lp-trace.1" || fail "man page lacks $opt"
	done
}

@test "lp-trace: 200 calls with known sleeps: exact count, args, return values, durations" {
	require_root
	run -0 lp-trace -o "$T/s.lp" 'nap(i,usec)' -- "$WORKLOADS/sleeper"
	assert_output "39800"	# the workload's own stdout: the sum of 2 * i
	run -0 head -1 "$T/s.lp"
	assert_output --regexp '^lp-stream	1	clock=monotonic	host=.*realtime_offset_ns=[0-9]+'
	[ "$(grep -c '^span' "$T/s.lp")" -eq 200 ]
	# every i once, with ret = 2 * i and usec = 1000 / 3000 by parity
	run -0 awk -F'\t' '$1 == "span" {
		split($8, a, "="); split($9, b, "="); split($10, r, "=");
		i = a[2] + 0; seen[i]++
		if (b[2] != (i % 2 ? 3000 : 1000) || r[2] != 2 * i || $7 != 0) bad++
		d = $3 - $2
		if (d < b[2] * 1000) short++
		if (d < b[2] * 1000 + 20000000) ok++
	} END { for (i = 0; i < 200; i++) if (seen[i] != 1) bad++; print bad + 0, short + 0, ok + 0 }' "$T/s.lp"
	# none shorter than its sleep; nearly all within 20 ms of it on a loaded VM
	read -r bad short ok <<<"$output"
	[ "$bad" -eq 0 ]
	[ "$short" -eq 0 ]
	[ "$ok" -ge 190 ]
	# lp-collapse's latency summary agrees
	run -0 lp-collapse --format latency "$T/s.lp"
	assert_line --index 1 --regexp '^nap	200	'
	min=$(awk -F'\t' 'NR == 2 { print $3 }' <<<"$output")
	p90=$(awk -F'\t' 'NR == 2 { print $5 }' <<<"$output")
	[ "$min" -ge 1000000 ]
	[ "$p90" -ge 3000000 ]
}

@test "lp-trace: --min-duration filters in the kernel" {
	require_root
	run -0 lp-trace --min-duration 2500us -o "$T/s.lp" 'nap(i)' -- "$WORKLOADS/sleeper"
	# the 100 odd calls sleep 3 ms: all there; nothing shorter than 2.5 ms
	run -0 awk -F'\t' '$1 == "span" { split($8, a, "="); if (a[2] % 2) odd++; if ($3 - $2 < 2500000) short++ }
		END { print odd + 0, short + 0 }' "$T/s.lp"
	assert_output "100 0"
}

@test "lp-trace: recursion: exact count and proper nesting" {
	require_root
	run -0 lp-trace -o "$T/f.lp" 'fib(n)' -- "$WORKLOADS/fib" 15
	assert_output "610"
	[ "$(grep -c '^span' "$T/f.lp")" -eq 1973 ]
	# depth-0 span: fib(15) = 610; maximal depth 14; calls at depth d: n <= 15 - d
	run -0 awk -F'\t' '$1 == "span" && $7 == 0' "$T/f.lp"
	assert_output --regexp '	fib	0	n=15	ret=610	lp_ns=[0-9]+$'
	run -0 awk -F'\t' '$1 == "span" { split($8, a, "="); if (a[2] + $7 > 15) bad++; if ($7 > m) m = $7 }
		END { print m, bad + 0 }' "$T/f.lp"
	assert_output "14 0"
	# each span lies inside the innermost open span one level up
	run -0 bash -c "grep '^span' '$T/f.lp' | sort -t'	' -k2,2n -k7,7n | awk -F'\t' '{
		d = \$7; if (d > 0 && !(s[d-1] <= \$2 && \$3 <= e[d-1])) bad++
		s[d] = \$2; e[d] = \$3 } END { print bad + 0 }'"
	assert_output "0"
}

@test "lp-trace: multi-threaded target: spans on every thread" {
	require_root
	run -0 lp-trace -o "$T/m.lp" --args work -- "$WORKLOADS/mtcalls"
	run -0 awk -F'\t' '$1 == "span" { n[$5]++; pid = $4; if ($5 == $4) main++
		split($8, t, "="); split($9, i, "="); split($10, r, "=")
		if (r[2] != t[2] * 1000 + i[2]) bad++; th[$5] = th[$5] == "" || th[$5] == t[2] ? t[2] : "mixed" }
		END { for (k in n) { c++; if (n[k] != 50 || th[k] == "mixed") bad++ } print c + 0, main + 0, bad + 0 }' "$T/m.lp"
	assert_output "4 0 0"
}

@test "lp-trace: SIGINT mid-run on -p: complete stream, unfinished calls, nothing left attached" {
	require_root
	"$WORKLOADS/fib" 20 100000 >/dev/null &
	local target=$!
	wait_exec "$target" "$WORKLOADS/fib"
	lp-trace -o "$T/i.lp" 'fib(n)' -p "$target" 2>"$T/err" &
	local tracer=$!
	# A second of tracing once every link is in place (starting, BPF
	# and calibration, can take that second on a busy machine: 1,000
	# spans were not there in one CI run).
	links=$(wait_links "$tracer" 4)
	sleep 1
	progs=$(held_ids "$tracer" prog_id)
	# lp_entry, lp_return, the others loaded; two uprobe links and the
	# fork and exit tracepoints' (checked once the processes are stopped)
	local nprogs nlinks
	nprogs=$(wc -w <<<"$progs") nlinks=$(wc -w <<<"$links")
	kill -INT "$tracer" || { cat "$T/err"; kill "$target"; false; }
	local rc=0
	wait "$tracer" || rc=$?
	kill "$target"
	reap "$target" 143
	[ "$rc" -eq 0 ] || { cat "$T/err"; false; }
	[ "$nprogs" -ge 2 ] || fail "lp-trace held $nprogs programs, want at least 2"
	[ "$nlinks" -eq 4 ] || fail "lp-trace held $nlinks links, want 4"
	run -0 head -1 "$T/i.lp"
	assert_output --partial "lp-stream	1	"
	# every line a whole record; some finished spans; the open calls
	# as unfinished spans with depths 0, 1, 2... on the target's thread
	# (attached mid-recursion: depths count from the first call seen, so
	# n + depth never passes 20, and no call is left unreturned)
	run -0 awk -F'\t' '$1 == "span" && NF < 7 { bad++ } $1 !~ /^(lp-stream|cost|span|lost)$/ { bad++ }
		$1 == "span" && substr($8, 3) + $7 > 20 { bad++ } $1 == "lost" && $3 == "unreturned" { bad++ }
		$1 == "span" && $3 != "-" { done++ } $1 == "span" && $3 == "-" { if ($7 != open++) bad++ }
		END { print bad + 0, (done > 1000), open + 0 }' "$T/i.lp"
	read -r bad many open <<<"$output"
	[ "$bad" -eq 0 ]
	[ "$many" -eq 1 ]
	[ "$open" -le 20 ]
	run -0 lp-cat --check "$T/i.lp"
	all_gone "$progs" "$links"
}

@test "lp-trace: SIGTERM mid-run on -p: drains, a complete valid stream, exit 0, nothing left attached" {
	require_root
	"$WORKLOADS/fib" 20 100000 >/dev/null &
	local target=$!
	KILL_AFTER=$target
	wait_exec "$target" "$WORKLOADS/fib"
	lp-trace --output "$T/term.lp" 'fib(n)' --pid "$target" 2>"$T/err" &
	local tracer=$!
	sleep 1
	links=$(wait_links "$tracer" 4)
	progs=$(held_ids "$tracer" prog_id)
	[ "$(wc -w <<<"$links")" -eq 4 ] || fail "lp-trace held links $links, want 4"
	kill -TERM "$tracer"
	local rc=0
	wait "$tracer" || rc=$?
	cat "$T/err"
	[ "$rc" -eq 0 ]
	run -0 lp-cat --check "$T/term.lp"
	# many finished spans; the calls open at the stop as unfinished spans,
	# depths 0, 1, 2... (the order write_unfinished gives them)
	run -0 awk -F'\t' '$1 == "span" && $3 != "-" { done++ } $1 == "span" && $3 == "-" { if ($7 != open++) bad++ }
		END { print bad + 0, (done > 1000), (open <= 20) }' "$T/term.lp"
	assert_output "0 1 1"
	[ "$(tail -c 1 "$T/term.lp" | od -An -c | tr -d ' ')" = '\n' ]
	all_gone "$progs" "$links"
	kill -0 "$target"
}

@test "lp-trace: a second SIGINT ends it at once, killed by SIGINT, nothing left attached" {
	require_root
	require_cmd python3
	"$WORKLOADS/fib" 20 100000 >/dev/null &
	local target=$!
	wait_exec "$target" "$WORKLOADS/fib"
	# Its output a pipe nobody reads any more: lp-trace blocks in write,
	# with everything attached, and the first SIGINT cannot end that.
	mkfifo "$T/fifo"
	cat "$T/fifo" >/dev/null &
	local reader=$!
	KILL_AFTER="$target $reader"
	start_reporting_end "$T/pid" "$T/end" lp-trace --output "$T/fifo" 'fib(n)' --pid "$target"
	wait_file "$T/pid"
	local tracer
	tracer=$(cat "$T/pid")
	KILL_AFTER="$target $reader $tracer"
	wait_opened "$tracer" "$T/fifo"
	second_sigint_kills "$tracer" "$reader" "$T/end" link_id 4
	kill -0 "$target"
}

@test "lp-trace: --max-pids: children the filter has no room for are lost records, exactly; exited ones leave it" {
	require_root
	# The filter holds the command and 2 processes: of 5 children alive at
	# once, 3 are not followed.  Then forker (followed) forks 3 children
	# one after the other, each writing 10 times: each followed, as the
	# one before has left.
	run -0 --separate-stderr lp-trace --max-pids 3 --output "$T/few.lp" syscall:write -- sh -c \
		"sleep 1 & sleep 1 & sleep 1 & sleep 1 & sleep 1 & wait; '$WORKLOADS/forker' 3 10"
	echo "$stderr"
	run -0 lp-cat --check "$T/few.lp"
	run -0 awk -F'\t' '$1 == "span" { n++; pids[$4] = 1 } $1 == "lost" && $3 == "children" { l += $4 }
		END { print n + 0, length(pids), l + 0 }' "$T/few.lp"
	assert_output "30 3 3"
	run -2 --separate-stderr lp-trace --max-pids 0 fib -- true
	[ "$stderr" = "lp-trace: --max-pids '0': must be at least 1" ]
	run -2 --separate-stderr lp-trace --max-pids 1 fib --pid "$$,$PPID"
	[ "$stderr" = "lp-trace: -p names 2 processes, more than --max-pids 1" ]
}

@test "lp-trace: a followed child's pid, reused by the kernel once it exited, is not traced" {
	require_root
	# The child writes 10 times; the pid's next owner, no child of the
	# target's, 100 times.
	lp-trace --output "$T/reuse.lp" syscall:write -- sh -c \
		"dd if=/dev/zero of=/dev/null bs=1 count=10 status=none & echo \$! > '$T/kid.new'; mv '$T/kid.new' '$T/kid'; wait; sleep 30" \
		2>"$T/err" &
	local tracer=$!
	KILL_AFTER=$tracer
	wait_file "$T/kid"
	local kid
	kid=$(cat "$T/kid")
	for _ in $(seq 200); do [ -e "/proc/$kid" ] || break; sleep 0.05; done
	[ ! -e "/proc/$kid" ]
	start_with_pid "$kid" dd if=/dev/zero of=/dev/null bs=1 count=100 status=none
	wait "$BG_PID"
	sleep 0.3
	kill -INT "$tracer"
	local rc=0
	wait "$tracer" || rc=$?
	cat "$T/err"
	[ "$rc" -eq 0 ]
	run -0 lp-cat --check "$T/reuse.lp"
	run -0 awk -F'\t' -v p="$kid" '$1 == "span" && $4 == p { n++ } END { print n + 0 }' "$T/reuse.lp"
	assert_output 10
}

@test "lp-trace: -d stops, terminates the command it started, detaches" {
	require_root
	local rc=0 t0
	local calls=$((1000000 + $$ % 100000))	# a command line of our own for pgrep
	lp-trace -d 1 -o "$T/d.lp" nap -- "$WORKLOADS/sleeper" "$calls" &
	local tracer=$!
	# Two uprobes, the fork and exit tracepoints (once attached: -d
	# counts from there; its start, BPF and calibration, takes seconds
	# on a busy machine).
	links=$(wait_links "$tracer" 4)
	t0=$SECONDS
	progs=$(held_ids "$tracer" prog_id)
	[ "$(wc -w <<<"$links")" -eq 4 ] || fail "lp-trace held links $links, want 4"
	wait "$tracer" || rc=$?
	[ "$rc" -eq 0 ]
	[ $((SECONDS - t0)) -le 4 ] || fail "ended $((SECONDS - t0)) s after attaching, -d 1"
	n=$(grep -c '^span' "$T/d.lp")
	[ "$n" -ge 50 ]
	[ "$n" -le 600 ]
	all_gone "$progs" "$links"
	# the command it started was terminated, not left running
	run -1 pgrep -f "$WORKLOADS/sleeper $calls"
}

@test "lp-trace: syscall spans: read and write byte counts match the workload" {
	require_root
	run -0 lp-trace -o "$T/y.lp" syscall:read syscall:write -- "$WORKLOADS/sysrw"
	run -0 grep -c -P '^span\t.*\tsyscall:read\t0\tfd=[0-9]+\tbuf=0x[0-9a-f]+\tcount=4096\tret=4096$' "$T/y.lp"
	assert_output 5
	run -0 grep -c -P '^span\t.*\tsyscall:write\t0\tfd=[0-9]+\tbuf=0x[0-9a-f]+\tcount=1000\tret=1000$' "$T/y.lp"
	assert_output 7
	# and nothing of lp-trace's own code between fork and exec
	run -0 awk -F'\t' '$6 == "syscall:read"' "$T/y.lp"
	refute_output --partial "count=1	"
	# a system call in progress at the end is an unfinished span
	run -0 lp-trace -d 0.5 syscall:clock_nanosleep -- sleep 5
	run -0 grep -c -P '^span\t\d+\t-\t\d+\t\d+\tsyscall:clock_nanosleep\t0\twhich_clock=0\t' <<<"$output"
	assert_output 1
}

@test "lp-trace: a line probe: exact hits and local, global and string values" {
	require_root
	line=$(grep -n 'HIT \*/' "$LP_TOP/tests/workloads/lines.c" | cut -d: -f1)
	run -0 lp-trace -o "$T/l.lp" "lines.c:$line(i,sq,total,calls,label,n)" -- "$WORKLOADS/lines"
	[ "$(grep -c '^event' "$T/l.lp")" -eq 37 ]
	# event fields: 6.. key=value; i, sq = i*i, total = sum of squares so far
	run -0 awk -F'\t' '$1 == "event" { for (f = 6; f <= NF; f++) { split($f, kv, "="); v[kv[1]] = kv[2] }
		i = v["i"]; if (i != k || v["sq"] != i * i || v["total"] != tot || v["calls"] != i + 1 ||
		    v["label"] != "squares" || v["n"] != 37 || $5 != "lines.c:" L) bad++
		tot += i * i; k++ } END { print k, bad + 0 }' L="$line" "$T/l.lp"
	assert_output "37 0"
}

@test "lp-trace: a line without code names the nearest lines with code" {
	require_root
	line=$(grep -n 'NOCODE' "$LP_TOP/tests/workloads/lines.c" | cut -d: -f1)
	run -1 lp-trace "lines.c:$line" -- "$WORKLOADS/lines"
	assert_output "lp-trace: probe 'lines.c:$line': no code at line $line; nearest lines with code: $((line - 1)), $((line + 1))"
	run -1 lp-trace 'nosuch.c:3' -- "$WORKLOADS/lines"
	assert_output "lp-trace: probe 'nosuch.c:3': no source file 'nosuch.c' in the line table of $WORKLOADS/lines"
}

@test "lp-trace: a computed local is refused, saying why" {
	require_root
	line=$(grep -n 'HIT \*/' "$LP_TOP/tests/workloads/lines.c" | cut -d: -f1)
	run -1 lp-trace "lines.c:$line(twice)" -- "$WORKLOADS/lines"
	assert_output --regexp "^lp-trace: probe 'lines.c:$line\(twice\)': cannot capture 'twice' at 0x[0-9a-f]+: its location there is DW_OP_stack_value \(a computed value\), not a register, a frame or register offset or a fixed address\$"
	run -1 lp-trace "lines.c:$line(nosuch)" -- "$WORKLOADS/lines"
	assert_output --regexp "^lp-trace: probe 'lines.c:$line\(nosuch\)': no variable 'nosuch' in scope at 0x[0-9a-f]+\$"
}

@test "lp-trace: unknown function suggests close names; gone pid; stripped binary" {
	require_root
	run -1 lp-trace fibb -- "$WORKLOADS/fib"
	assert_output "lp-trace: probe 'fibb': no function 'fibb' in $WORKLOADS/fib; did you mean: fib"
	run -1 lp-trace 'fib(m)' -- "$WORKLOADS/fib"
	assert_output "lp-trace: probe 'fib(m)': fib has no parameter 'm' (it has: n)"
	"$WORKLOADS/sleeper" 1 >/dev/null
	sleep 0.1 &
	local gone=$!
	wait $gone
	run -1 lp-trace nap -p "$gone"
	assert_output "lp-trace: no process with pid $gone"
	run -1 lp-trace nap -p 12x
	assert_output "lp-trace: --pid '12x': not a number"
	cp "$WORKLOADS/fib" "$T/fib-stripped"
	strip "$T/fib-stripped"
	run -1 lp-trace fib -- "$T/fib-stripped"
	assert_line --index 0 "lp-trace: note: $T/fib-stripped is stripped: using its dynamic symbols (.dynsym)"
	assert_line --index 1 --partial "lp-trace: probe 'fib': no function 'fib' in $T/fib-stripped"
	run -127 lp-trace nap -- /nonexistent/cmd
	assert_output "lp-trace: cannot run '/nonexistent/cmd': No such file or directory"
}

@test "lp-trace: LIB:FUNC in libc, tracepoint fields" {
	require_root
	run -0 lp-trace -o "$T/c.lp" libc:nanosleep tp:sched:sched_process_exit -- "$WORKLOADS/sleeper" 10
	# no DWARF for libc: the return register untyped, 0 from nanosleep
	[ "$(grep -c -P '^span\t.*\tlibc:nanosleep\t0\tret=0\tlp_ns=[0-9]+$' "$T/c.lp")" -eq 10 ]
	run -0 grep -P '^event\t.*\ttp:sched:sched_process_exit\t' "$T/c.lp"
	assert_output --regexp 'comm=sleeper	pid=[0-9]+	prio=[0-9]+'
	run -1 lp-trace c:strlen -- "$WORKLOADS/sleeper" 1
	assert_output --regexp "^lp-trace: probe 'c:strlen': strlen in /.*libc\.so\.6 is an IFUNC resolver, run once by ld\.so; probe its implementation"

}

@test "lp-trace: past the ring's capacity every call is a span or counted lost" {
	require_root
	# fib(20) makes 21891 calls, 20 deep at most: none lost to depth.  The
	# reader waits 2 s: the pipe fills, lp-trace blocks, the ring overflows.
	run -0 bash -c "set -o pipefail; lp-trace --ring-size 4096 fib -- '$WORKLOADS/fib' 20 | { sleep 2; cat > '$T/r.lp'; }"
	run -0 awk -F'\t' '$1 == "span" { s++ } $1 == "lost" && $3 == "ring" { l += $4 }
		$1 == "lost" && $3 != "ring" { other++ } END { print s + l, (l > 0), other + 0 }' "$T/r.lp"
	assert_output "21891 1 0"
}

@test "lp-trace: a closed output stops it: detached, exit 0, command terminated" {
	require_root
	local t0=$SECONDS
	local rounds=$((100000 + $$ % 100000))	# a command line of our own for pgrep
	run -0 bash -c "lp-trace fib -- '$WORKLOADS/fib' 20 $rounds 2>'$T/err' | head -2 >'$T/h'; echo \${PIPESTATUS[0]}"
	assert_output "0"
	[ $((SECONDS - t0)) -le 10 ]
	[ "$(wc -l <"$T/h")" -eq 2 ]
	[ ! -s "$T/err" ]
	run -1 pgrep -f "$WORKLOADS/fib 20 $rounds"
	# a full disk is a failure, not a reader gone
	run -1 lp-trace -o /dev/full fib -- "$WORKLOADS/fib" 20
	assert_output "lp-trace: cannot write /dev/full: No space left on device"
}

@test "lp-trace: endbr64 then push: probed at the push, every call seen" {
	require_root
	run -0 objdump -d --no-show-raw-insn "$WORKLOADS/cetloop"
	assert_output --regexp '<tick>:
 *[0-9a-f]+:	endbr64 *
 *[0-9a-f]+:	push +%rbp'
	run -0 lp-trace -v -o "$T/c.lp" tick -- "$WORKLOADS/cetloop" 1000
	assert_line "lp-trace: tick: starts with endbr64: probing the push, call or jump at +4 (emulated, not single-stepped)"
	[ "$(grep -c '^span' "$T/c.lp")" -eq 1000 ]
	run -0 awk -F'\t' '$1 == "span" { split($8, r, "="); if (r[2] != (n++ % 8)) bad++ } END { print n, bad + 0 }' "$T/c.lp"
	assert_output "1000 0"
}

@test "lp-trace: without privileges: what it needs and what works without, exit 1" {
	require_root
	require_cmd setpriv
	# a directory nobody can enter (the checkout may be under /root)
	local d
	d=$(mktemp -d /tmp/lp-trace-priv.XXXXXX)
	chmod 755 "$d"
	cp "$LP_BUILD/bin/lp-trace" "$WORKLOADS/sleeper" "$d/"
	run -1 setpriv --reuid=65534 --regid=65534 --clear-groups "$d/lp-trace" nap -- "$d/sleeper" 1
	rm -rf "$d"
	assert_output "lp-trace: tracing needs root, or CAP_BPF and CAP_PERFMON (missing: CAP_BPF CAP_PERFMON): the kernel lets no ordinary user place uprobes or attach BPF programs to them
lp-trace: without them: lp-record -- CMD (or -p PID) samples your own processes through perf events; lp-trace --list, --lines and --vars need no privileges"
}

@test "lp-trace: FUNC+OFF and a raw address are point events at every pass" {
	require_root
	addr=$(nm "$WORKLOADS/fib" | awk '$3 == "fib" { print $1 }')
	run -0 lp-trace -o "$T/o.lp" "0x$addr" fib+4 -- "$WORKLOADS/fib" 15
	[ "$(grep -c -P "^event\t[0-9]+\t[0-9]+\t[0-9]+\t0x$addr\$" "$T/o.lp")" -eq 1973 ]
	[ "$(grep -c -P '^event\t[0-9]+\t[0-9]+\t[0-9]+\tfib\+4$' "$T/o.lp")" -eq 1973 ]
	run -1 lp-trace fib+4000 -- "$WORKLOADS/fib"
	assert_output --regexp "^lp-trace: probe 'fib\+4000': offset 4000 is past the end of fib \([0-9]+ bytes\)$"
	run -1 lp-trace fib 'fib(n)' -- "$WORKLOADS/fib"
	assert_output "lp-trace: probes 'fib' and 'fib(n)' are at the same address: give one"
}

@test "lp-trace: -p with two processes traces both" {
	require_root
	"$WORKLOADS/sleeper" 100000 >/dev/null &
	local a=$!
	"$WORKLOADS/sleeper" 100000 >/dev/null &
	local b=$!
	wait_exec "$a" "$WORKLOADS/sleeper"
	wait_exec "$b" "$WORKLOADS/sleeper"
	run -0 lp-trace -d 1 -o "$T/p.lp" nap -p "$a,$b"
	kill "$a" "$b"
	reap "$a" 143
	reap "$b" 143
	run -0 awk -F'\t' '$1 == "span" { n[$4]++ } END { for (p in n) if (n[p] >= 20) print p }' "$T/p.lp"
	[ "${#lines[@]}" -eq 2 ]
	assert_line "$a"
	assert_line "$b"
}

@test "lp-trace: a line in every inlined copy; C string arguments" {
	require_root
	line=$(grep -n 'INL \*/' "$LP_TOP/tests/workloads/inl.c" | cut -d: -f1)
	run -0 lp-trace -o "$T/n.lp" "inl.c:$line(x)" 'greet(who,n)' -- "$WORKLOADS/inl"
	# bump() inlined into twice() (x = 0..9) and thrice() (x = 0..4)
	run -0 awk -F'\t' '$1 == "event" && $5 == "inl.c:" L { printf "%s ", $6 } END { print "" }' L="$line" "$T/n.lp"
	assert_output "x=0 x=1 x=2 x=3 x=4 x=5 x=6 x=7 x=8 x=9 x=0 x=1 x=2 x=3 x=4 "
	run -0 awk -F'\t' '$1 == "span" && $6 == "greet" { print $7, $8, $9, $10 }' "$T/n.lp"
	assert_output "0 who=alpha n=1 ret=6
0 who=beta n=2 ret=6
0 who=gamma n=3 ret=8"
}

@test "lp-trace: deeper than the per-thread stack: outer calls exact, the rest counted" {
	require_root
	# down(100) makes 101 nested calls; 32 are kept (depths 0..31, n = 100 - depth);
	# the kernel installs no uretprobe past 64 pending: returns still pair by stack pointer
	run -0 lp-trace -o "$T/d.lp" 'down(n)' -- "$WORKLOADS/deep" 100
	assert_output --partial "lp-trace: 32 records, 69 events lost (target exited)"
	run -0 awk -F'\t' '$1 == "span" { s++; if ($8 != "n=" 100 - $7 || $9 != "ret=" 100 - $7) bad++ }
		$1 == "lost" { lost[$3] += $4 } END { print s, lost["depth"] + 0, bad + 0 }' "$T/d.lp"
	assert_output "32 69 0"
}

@test "lp-trace: longjmp out of a call ends its span, marked unwound; a tail call nests: depths stay exact" {
	require_root
	# step(i) calls leaf(i); on odd i it longjmps out, on even i it
	# tail-calls tail(i) with a jmp (checked below), sharing step's return
	run -0 objdump --disassemble=step --no-show-raw-insn "$WORKLOADS/unreturned"
	assert_output --regexp $'\tjmp +[0-9a-f]+ <tail>'
	run -0 lp-trace -o "$T/u.lp" 'step(i)' leaf tail -- "$WORKLOADS/unreturned" 101
	run -0 awk -F'\t' '$1 == "span" { n[$6 " depth=" $7 ($3 == "-" ? " open" : "") ($NF == "unwound=1" ? " unwound" : "")]++ }
		$1 == "lost" { n["lost " $3] += $4 }
		$1 == "span" && $6 == "step" && $NF != "unwound=1" && ($8 !~ /^i=[0-9]*[02468]$/ || $9 != "ret=" 2 * substr($8, 3)) { n["bad step"]++ }
		$1 == "span" && $6 == "step" && $NF == "unwound=1" && $8 !~ /^i=[0-9]*[13579]$/ { n["bad unwound step"]++ }
		END { for (k in n) print k, n[k] }' "$T/u.lp"
	run -0 sort <<<"$output"
	assert_output "leaf depth=1 101
step depth=0 51
step depth=0 unwound 50
tail depth=1 51"
}

@test "lp-trace: forked children are traced: syscalls from their fork, uprobes soon after" {
	require_root
	# 4 children, one after the other: each writes 10 times at once, then
	# 200 ms later calls work(i) 10 times; the parent makes no such calls
	run -0 lp-trace -o "$T/f.lp" 'work(i)' syscall:write -- "$WORKLOADS/forker" 4 10
	run -0 awk -F'\t' '$1 == "span" { n[$6]++; if (!($4 in seen)) pids++; seen[$4] = 1
		if ($6 == "work" && $9 != "ret=" 2 * substr($8, 3)) bad++ }
		END { print n["work"] + 0, n["syscall:write"] + 0, pids + 0, bad + 0 }' "$T/f.lp"
	assert_output "40 40 4 0"
	# --no-follow: the parent alone, which calls neither
	run -0 lp-trace --no-follow -o "$T/n.lp" 'work(i)' syscall:write -- "$WORKLOADS/forker" 2 10
	[ "$(grep -c '^span' "$T/n.lp")" -eq 0 ]
}

@test "lp-trace: a file another process maps too: probes on the targets alone, their threads in, their forks as --no-follow says" {
	require_root
	# A bystander mapping both programs (as lp-record -a's symbolizer
	# maps every program it names): the probes are tracefs events with
	# perf events on the targets, passed on to their threads, and to
	# their forks only when children are followed.
	python3 -c 'import mmap, sys, time
files = [open(p, "rb") for p in sys.argv[1:]]
maps = [mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) for f in files]
print("mapped", flush=True); time.sleep(60)' "$WORKLOADS/forker" "$WORKLOADS/mtcalls" >"$T/by" &
	KILL_AFTER="$!"
	wait_line mapped "$T/by" || fail "the bystander did not map them"
	run -0 --separate-stderr lp-trace -v -o "$T/f.lp" 'work(i)' -- "$WORKLOADS/forker" 4 10
	[[ $stderr == *"attached to the traced processes alone, inherited at fork (pid $KILL_AFTER maps it too)"* ]] || fail "$stderr"
	run -0 grep -c '^span' "$T/f.lp"
	assert_output 40
	run -0 lp-trace --no-follow -o "$T/n.lp" 'work(i)' -- "$WORKLOADS/forker" 4 10
	run -1 grep -c '^span' "$T/n.lp"
	run -0 lp-trace --no-follow -o "$T/m.lp" work -- "$WORKLOADS/mtcalls"
	run -0 awk -F'\t' '$1 == "span" { n++; tid[$5] = 1 } END { print n + 0, length(tid) }' "$T/m.lp"
	assert_output "200 4"
}

@test "lp-trace: a stripped binary with a separate debug file (.gnu_debuglink)" {
	require_root
	stripped_with_debuglink "$T/dbg"
	line=$(grep -n 'HIT \*/' "$LP_TOP/tests/workloads/lines.c" | cut -d: -f1)
	run -0 lp-trace -v -o "$T/g.lp" 'accumulate(n)' "lines.c:$line(i)" -- "$T/dbg/lines"
	assert_line "lp-trace: note: $T/dbg/lines is stripped: using its debug file $T/dbg/.debug/lines.debug"
	run -0 awk -F'\t' '$1 == "span" { print $6, $8, $9 } $1 == "event" { e++ } END { print e }' "$T/g.lp"
	assert_output "accumulate n=37 ret=16206
37"
}

@test "lp-trace: arg0..arg5 are the raw argument registers" {
	require_root
	run -0 lp-trace -o "$T/a.lp" 'nap(arg0,arg1)' -- "$WORKLOADS/sleeper" 4
	run -0 awk -F'\t' '$1 == "span" { print $8, $9, $10 }' "$T/a.lp"
	assert_output "arg0=0 arg1=1000 ret=0
arg0=1 arg1=3000 ret=2
arg0=2 arg1=1000 ret=4
arg0=3 arg1=3000 ret=6"
}

@test "lp-trace: tracefs not mounted: mounts it, says so (in a private mount namespace)" {
	require_root
	require_cmd unshare
	run -0 unshare -m --propagation private sh -c \
		"umount /sys/kernel/tracing /sys/kernel/debug/tracing /sys/kernel/debug 2>/dev/null; lp-trace tp:sched:sched_process_exit -- '$WORKLOADS/sleeper' 1"
	assert_line "lp-trace: note: mounted tracefs at /sys/kernel/tracing (it was not mounted)"
	assert_line --regexp '^event	[0-9]+	[0-9]+	[0-9]+	tp:sched:sched_process_exit	comm=sleeper	pid=[0-9]+	'
}
