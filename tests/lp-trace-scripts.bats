#!/usr/bin/env bats
# lp-trace -- CMD where CMD is a #! script: the probes go on the program it
# finally runs (its interpreter, or what a shim execs), attached before that
# program's first instruction, so every call is a span (tests/workloads/
# fib.c: 1973 calls of fib for 15; sleeper.c: 200 calls of nap).

load helpers/common
load helpers/producers
load helpers/bpf

teardown() {
	if [ -s "$T/sleep.pid" ]; then kill "$(cat "$T/sleep.pid")" 2>/dev/null || true; fi
}

@test "lp-trace: a #!/bin/sh shim that execs the workload: every call a span" {
	require_root
	printf '#!/bin/sh\nexec %s "$@"\n' "$WORKLOADS/fib" >"$T/shim"
	chmod +x "$T/shim"
	run -0 --separate-stderr lp-trace --verbose --output "$T/f.lp" 'fib(n)' -- "$T/shim" 15
	assert_output "610"
	run -0 grep -c '^span' "$T/f.lp"
	assert_output 1973
	# the shell first, then the program that holds fib
	run -0 grep -c "^lp-trace: '$T/shim' exec'd .*: the probes are not all there: following on\$" <<<"$stderr"
	assert_output 1
	run -0 grep -c "^lp-trace: '$T/shim' exec'd $WORKLOADS/fib: the probes go there\$" <<<"$stderr"
	assert_output 1
	run -0 awk -F'\t' '$1 == "span" && $7 == 0' "$T/f.lp"
	assert_output --regexp '	fib	0	n=15	ret=610	lp_ns=[0-9]+$'
}

@test "lp-trace: a #! script whose interpreter is the workload, directly and through env" {
	require_root
	# the kernel runs "sleeper 200 SCRIPT": 200 calls, SCRIPT exists
	printf '#!%s 200\n' "$WORKLOADS/sleeper" >"$T/script"
	chmod +x "$T/script"
	run -0 lp-trace --output "$T/s.lp" 'nap(i)' -- "$T/script"
	assert_output "39800"
	run -0 grep -c '^span' "$T/s.lp"
	assert_output 200
	# as a python3 script names its interpreter: env execs it from PATH
	printf '#!/usr/bin/env -S sleeper 200\n' >"$T/envscript"
	chmod +x "$T/envscript"
	PATH="$WORKLOADS:$PATH" run -0 lp-trace --output "$T/e.lp" 'nap(i)' -- "$T/envscript"
	assert_output "39800"
	run -0 grep -c '^span' "$T/e.lp"
	assert_output 200
	# every i once
	run -0 awk -F'\t' '$1 == "span" { split($8, a, "="); seen[a[2]]++ }
		END { for (i = 0; i < 200; i++) if (seen[i] != 1) bad++; print bad + 0 }' "$T/e.lp"
	assert_output 0
}

@test "lp-trace: a script that runs no program with the probes: says why in the last one, exit 1" {
	require_root
	printf '#!/bin/sh\nexec %s "$@"\n' "$WORKLOADS/fib" >"$T/shim"
	chmod +x "$T/shim"
	run -1 --separate-stderr lp-trace --output "$T/f.lp" nosuchfunc -- "$T/shim" 5
	assert_output "5"	# it ran, untraced
	assert_equal "${#stderr_lines[@]}" 2
	assert_regex "${stderr_lines[0]}" "^lp-trace: probe 'nosuchfunc': no function 'nosuchfunc' in $WORKLOADS/fib"
	assert_equal "${stderr_lines[1]}" "lp-trace: '$T/shim' exited (status 0) without running a program that holds the probes; the last it ran: $WORKLOADS/fib"
}

@test "lp-trace: -d bounds the wait for a script's program: said, the script ended, exit 1" {
	require_root
	# its sleep writes nowhere (an orphan holding run's pipe would hold
	# the test) and is ended by teardown
	printf '#!/bin/sh\nsleep 30 </dev/null >/dev/null 2>&1 &\necho $! >%s\nwait\nexec %s "$@"\n' \
		"$T/sleep.pid" "$WORKLOADS/fib" >"$T/slow"
	chmod +x "$T/slow"
	t0=$(date +%s%N)
	run -1 --separate-stderr lp-trace --duration 1 --output "$T/f.lp" fib -- "$T/slow"
	t1=$(date +%s%N)
	assert_equal "$stderr" "lp-trace: stopped (duration reached) before '$T/slow' ran a program that holds the probes: nothing traced"
	# within a second of -d (the script's sleep child may hold it no longer)
	[ $(((t1 - t0) / 1000000)) -lt 2000 ] || fail "took $(((t1 - t0) / 1000000)) ms"
	run -1 pgrep -f "^/bin/sh $T/slow\$"
}

@test "lp-trace -p on a shim still in its shell: follows its execs to the program, every call a span; a shell that is no shim is refused" {
	require_root
	# A shim as pyenv's and rbenv's are (a #! script in a shims
	# directory), held in its shell until lp-trace has seized it.
	mkdir "$T/shims"
	mkfifo "$T/go"
	printf '#!/bin/bash\nread -r _ <"%s"\nexec %s "$@"\n' "$T/go" "$WORKLOADS/fib" >"$T/shims/fib"
	chmod +x "$T/shims/fib"
	"$T/shims/fib" 15 >"$T/out" &
	echo $! >"$T/sleep.pid"
	lp-trace --output "$T/f.lp" 'fib(n)' -p "$(cat "$T/sleep.pid")" 2>"$T/err" &
	local tracer=$! i
	for i in $(seq 100); do
		if grep -q 'following its execs' "$T/err"; then break; fi
		sleep 0.05
	done
	run -0 cat "$T/err"
	assert_output "lp-trace: note: pid $(cat "$T/sleep.pid") is still a shim ($T/shims/fib), not yet the program it runs: following its execs, as with -- CMD"
	echo >"$T/go"
	reap "$tracer" 0 20
	run -0 cat "$T/out"
	assert_output 610
	run -0 grep -c '^span' "$T/f.lp"
	assert_output 1973
	# A shell running anything else is refused as today, untouched.
	bash -c 'while :; do sleep 0.1; done' &
	echo $! >"$T/sleep.pid"
	run -1 --separate-stderr lp-trace --output "$T/b.lp" 'fib' -p "$(cat "$T/sleep.pid")"
	assert_regex "$stderr" "lp-trace: probe 'fib': no function 'fib' in /usr/bin/bash"
	refute_regex "$stderr" "shim"
}
