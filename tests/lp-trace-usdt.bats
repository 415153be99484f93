#!/usr/bin/env bats
# lp-trace's USDT probes (usdt:[FILE:]PROVIDER:NAME): arguments typed from
# the probe's note, a semaphore set while traced, children, Debian's
# python3.11's probes, --list usdt, a missing probe's message
# (tests/workloads/usdtreq.c, usdtsem.c: known calls with known values).

load helpers/common
load helpers/producers
load helpers/bpf
load helpers/usdtreq

@test "lp-trace: usdt probes give one event a call with every argument, typed by size and sign" {
	require_root
	run -0 --separate-stderr lp-trace --output "$T/r.lp" usdt:lp:req usdt:lp:wide -- "$WORKLOADS/usdtreq"
	assert_output 1225
	assert_equal "$stderr" ""
	run -0 usdtreq_args "$T/r.lp"
	assert_output "50 50 0"
	# the biggest: 8 bytes signed, 1 byte unsigned
	run -0 grep -c -P '\targ0=-147000000000\targ1=249$' "$T/r.lp"
	assert_output 1
}

@test "lp-trace: usdt:PROVIDER:X is a span per X__start .. X__done pair, nested by thread with depth" {
	require_root
	run -0 --separate-stderr lp-trace --output "$T/w.lp" usdt:lp:work -- "$WORKLOADS/usdtreq"
	assert_output 1225
	# per req(i): work(2, i) > work(1, i) > work(0, i), written as they
	# end (innermost first); the span at depth d has k = 2 - d and holds
	# the span at depth d + 1 just written, and the 2 - d pairs inside
	# it cost it two calibrated hits each
	c=$(awk -F'\t' '$1 == "cost" && $3 == "usdt" && $5 == "probe=usdt:lp:work" { print $4 }' "$T/w.lp")
	[ "$c" -gt 0 ] || fail "no cost of usdt:lp:work's hits"
	run -0 awk -F'\t' -v c="$c" '$1 == "span" { n++; d = $7
		if ($6 != "usdt:lp:work" || $8 != "arg0=" 2 - d || $9 != "arg1=" int((n - 1) / 3) || NF != 10) bad++
		if ($10 != "lp_ns=" 2 * (2 - d) * c) bad++
		s[d] = $2; e[d] = $3
		if (d < 2 && (s[d + 1] < $2 || e[d + 1] > $3 || e[d + 1] == "")) bad++
		depths[d]++ }
		$1 == "event" { bad++ }
		END { print n + 0, depths[0] + 0, depths[1] + 0, depths[2] + 0, bad + 0 }' "$T/w.lp"
	assert_output "150 50 50 50 0"
	# a half alone stays a point probe
	run -0 --separate-stderr lp-trace --output "$T/h.lp" usdt:lp:work__start -- "$WORKLOADS/usdtreq"
	run -0 awk -F'\t' '$1 == "event" && $5 == "usdt:lp:work__start" { n++ } $1 == "span" { s++ }
		END { print n + 0, s + 0 }' "$T/h.lp"
	assert_output "150 0"
}

@test "lp-trace: a usdt probe's semaphore is set while traced; a forked child is traced from its attach on" {
	require_root
	run -0 "$WORKLOADS/usdtsem"
	assert_regex "$output" '^[0-9]+ 0$'
	run -0 --separate-stderr lp-trace --output "$T/s.lp" usdt:lp:sem -- "$WORKLOADS/usdtsem"
	pid=${output% *}
	assert_equal "${output#* }" 50
	run -0 awk -F'\t' -v pid="$pid" '$1 == "event" { if ($3 != pid || $5 != "usdt:lp:sem" || $6 != "arg0=" n + 0) bad++; n++ }
		END { print n + 0, bad + 0 }' "$T/s.lp"
	assert_output "50 0"
	# parent and child 50 calls 10 ms apart, both with the semaphore set
	# (the child's a copy of its parent's); the child's hits before it is
	# attached are lost, not more than a few.  Before its attach the
	# kernel may also take the parent's count out of the child's copy when
	# it removes the parent's breakpoints from it: a call or two of the
	# child's then sees the semaphore clear (49 of 50 in a clean-clone run)
	run -0 --separate-stderr lp-trace --output "$T/f.lp" usdt:lp:sem -- "$WORKLOADS/usdtsem" fork
	assert_equal "${#lines[@]}" 2
	for l in "${lines[@]}"; do
		[ "${l#* }" -ge 45 ] || fail "pid ${l% *}: the semaphore set in ${l#* } of 50 calls"
		[ "${l#* }" -le 50 ] || fail "pid ${l% *}: ${l#* } calls"
		n=$(awk -F'\t' -v pid="${l% *}" '$1 == "event" && $3 == pid' "$T/f.lp" | wc -l)
		[ "$n" -ge 40 ] || fail "pid ${l% *}: $n events of 50 calls"
		[ "$n" -le 50 ] || fail "pid ${l% *}: $n events of 50 calls"
	done
}

@test "lp-trace: python3.11's function__entry: each call of a Python function, its line number" {
	require_root
	[ -x /usr/bin/python3.11 ] || fail "no /usr/bin/python3.11 (make test-deps)"
	printf 'import sys\n\n\n\n\n\ndef f(x):\n    return x + 1\n\n\nfor i in range(1000):\n    f(i)\n' >"$T/loop.py"
	# CPython 3.11 reaches function__entry on every call only while its
	# line probe is enabled too (man/lp-trace.1)
	run -0 --separate-stderr lp-trace --output "$T/p.lp" usdt:python:function__entry usdt:python:line \
		-- /usr/bin/python3.11 "$T/loop.py"
	# f (first line 7) is called 1000 times: one funcname pointer has
	# exactly 1000 entries at line 7 (startup code may have others)
	run -0 bash -c "awk -F'\t' '\$1 == \"event\" && \$5 == \"usdt:python:function__entry\" && \$8 == \"arg2=7\" { print \$7 }' '$T/p.lp' | sort | uniq -c | sort -n | tail -1"
	assert_regex "$output" '^ *1000 arg1=[0-9]+$'
	# usdt:python:function: a span a call, f's inside the module's (depth 1)
	run -0 --separate-stderr lp-trace --output "$T/s.lp" usdt:python:function usdt:python:line \
		-- /usr/bin/python3.11 "$T/loop.py"
	run -0 bash -c "awk -F'\t' '\$1 == \"span\" && \$6 == \"usdt:python:function\" && \$10 == \"arg2=7\" { print \$7, \$9 }' '$T/s.lp' | sort | uniq -c | sort -n | tail -1"
	assert_regex "$output" '^ *1000 1 arg1=[0-9]+$'
	# the arguments named, the function's name read as a C string
	run -0 --separate-stderr lp-trace --output "$T/n.lp" 'usdt:python:function(arg1:str,arg2)' usdt:python:line \
		-- /usr/bin/python3.11 "$T/loop.py"
	run -0 awk -F'\t' '$1 == "span" && $8 == "arg1=f" { print $9, NF }' "$T/n.lp"
	[ "${#lines[@]}" -eq 1000 ] || fail "${#lines[@]} spans of f, not 1000"
	[ "$(sort -u <<<"$output")" = "arg2=7 10" ] || fail "$(sort -u <<<"$output" | head -3)"
}

@test "lp-trace: usdt:...:NAME(ARGS) captures the arguments named, ':str' as C strings; a bad list is refused, naming why" {
	require_root
	run -0 --separate-stderr lp-trace --output "$T/r.lp" 'usdt:lp:req(arg1)' -- "$WORKLOADS/usdtreq"
	# req(i) for i = 0..49: only arg1 = 3i
	run -0 awk -F'\t' '$1 == "event" { if (NF != 6 || $6 != "arg1=" 3 * n) bad++; n++ } END { print n, bad + 0 }' "$T/r.lp"
	[ "$output" = "50 0" ] || fail "events, of them wrong: $output"
	run -1 --separate-stderr lp-trace --output "$T/x.lp" 'usdt:lp:req(arg2)' -- "$WORKLOADS/usdtreq"
	[ "$stderr" = "lp-trace: probe 'usdt:lp:req(arg2)': lp:req in $WORKLOADS/usdtreq has 2 arguments (arg0 to arg1)" ] || fail "$stderr"
	run -2 --separate-stderr lp-trace --output "$T/x.lp" 'usdt:lp:req(n)' -- "$WORKLOADS/usdtreq"
	[ "$stderr" = "lp-trace: probe 'usdt:lp:req(n)': bad argument 'n' (arg0 to arg5, ':str' to read a C string)" ] || fail "$stderr"
}

@test "lp-trace -- python3: a python3 on PATH that is a shim exec'ing the interpreter is followed to it" {
	require_root
	[ -x /usr/bin/python3.11 ] || fail "no /usr/bin/python3.11 (make test-deps)"
	mkdir "$T/bin"
	printf '#!/bin/sh\nexec /usr/bin/python3.11 "$@"\n' >"$T/bin/python3"
	chmod +x "$T/bin/python3"
	# 37 collections asked for, generation i % 3, with the collector's own
	# off: generation 1 is collected exactly 12 times (startup and the
	# interpreter's end collect generations 0 and 2 too)
	printf 'import gc, sys\ngc.disable()\nfor i in range(int(sys.argv[1])):\n    gc.collect(i %% 3)\n' >"$T/gc.py"
	PATH=$T/bin:$PATH run -0 --separate-stderr lp-trace --verbose --output "$T/g.lp" usdt:python:gc__start -- python3 "$T/gc.py" 37
	run -0 grep -c "^lp-trace: 'python3' exec'd /usr/bin/python3.11: the probes go there\$" <<<"$stderr"
	run -0 awk -F'\t' '$1 == "event" && $5 == "usdt:python:gc__start" && $6 == "arg0=1"' "$T/g.lp"
	[ "${#lines[@]}" -eq 12 ] || fail "${#lines[@]} collections of generation 1, not 12"
}

@test "lp-trace: a usdt hit's cost is calibrated (a cost record, insn=emulated) and counted in the lp_ns of the span it lands in" {
	require_root
	# each req(i) call holds the two probes req and wide, once each
	run -0 --separate-stderr lp-trace --output "$T/r.lp" req usdt:lp:req usdt:lp:wide -- "$WORKLOADS/usdtreq"
	# sys/sdt.h's 1-byte nop is emulated after its trap, as a push is
	run -0 awk -F'\t' '$1 == "cost" && $3 == "usdt" && $6 == "insn=emulated" { print $5 }' "$T/r.lp"
	[ "$output" = $'probe=usdt:lp:req\nprobe=usdt:lp:wide' ] || fail "$(grep '^cost' "$T/r.lp")"
	want=$(awk -F'\t' '$1 == "cost" && $3 == "usdt" { w += $4 }
		$1 == "cost" && $5 == "probe=req" { sub(/inside_ns=/, "", $6); w += $6 } END { print w }' "$T/r.lp")
	[ "$want" -gt 400 ] || fail "costs: $(grep '^cost' "$T/r.lp")"
	# all 50 spans of req: its own probes' inside parts and both hits
	run -0 awk -F'\t' -v w="lp_ns=$want" '$1 == "span" && $6 == "req" { n++; if ($NF != w) bad++ } END { print n, bad + 0 }' "$T/r.lp"
	[ "$output" = "50 0" ] || fail "spans, of them not $want: $output"
	# a pair's span counts the usdt hits inside it only: with req's
	# probes traced too, its lp_ns is not known, and not written
	run -0 --separate-stderr lp-trace --output "$T/w.lp" usdt:lp:work req -- "$WORKLOADS/usdtreq"
	run -0 awk -F'\t' '$1 == "span" && $6 == "usdt:lp:work" { n++; if ($0 ~ /lp_ns=/) bad++ } END { print n, bad + 0 }' "$T/w.lp"
	[ "$output" = "150 0" ] || fail "usdt:lp:work spans, of them with lp_ns: $output"
}

@test "lp-trace: a missing usdt probe names the file and the provider's probes" {
	require_root
	exe=$(readlink -f "$WORKLOADS/usdtreq")
	run -1 --separate-stderr lp-trace --output "$T/m.lp" usdt:lp:nope -- "$WORKLOADS/usdtreq"
	assert_equal "$stderr" "lp-trace: probe 'usdt:lp:nope': no USDT probe lp:nope in $exe or the libraries it needs; its probes there: lp:never, lp:req, lp:wide, lp:work__done, lp:work__start"
	run -1 --separate-stderr lp-trace --output "$T/m.lp" usdt:pg:query -- "$WORKLOADS/usdtreq"
	assert_equal "$stderr" "lp-trace: probe 'usdt:pg:query': no USDT probe pg:query in $exe or the libraries it needs; its providers: lp"
	run -1 --separate-stderr lp-trace --output "$T/m.lp" usdt:/bin/true:lp:req -- "$WORKLOADS/usdtreq"
	assert_equal "$stderr" "lp-trace: probe 'usdt:/bin/true:lp:req': no USDT probes in /bin/true"
	run -2 --separate-stderr lp-trace --output "$T/m.lp" usdt:lp -- "$WORKLOADS/usdtreq"
	assert_equal "${stderr_lines[0]}" "lp-trace: probe 'usdt:lp': expected usdt:PROVIDER:NAME or usdt:FILE:PROVIDER:NAME"
}

@test "lp-trace --list usdt: a file's probes, their arguments and semaphores, sorted" {
	run -0 --separate-stderr lp-trace --list usdt "$WORKLOADS/usdtsem" "$WORKLOADS/usdtreq"
	assert_equal "${#lines[@]}" 6
	local q=$'\t' r="$WORKLOADS/usdtreq"
	assert_regex "${lines[0]}" "^usdt${q}usdt:$WORKLOADS/usdtsem:lp:sem$q$WORKLOADS/usdtsem$q-${q}1$q-4@[^ ,]+${q}semaphore=yes\$"
	assert_regex "${lines[1]}" "^usdt${q}usdt:$r:lp:never$q$r$q-${q}0$q-${q}semaphore=no\$"
	assert_regex "${lines[2]}" "^usdt${q}usdt:$r:lp:req$q$r$q-${q}2$q-4@[^ ,]+,-4@[^ ,]+${q}semaphore=no\$"
	assert_regex "${lines[3]}" "^usdt${q}usdt:$r:lp:wide$q$r$q-${q}2$q-8@[^ ,]+,1@[^ ,]+${q}semaphore=no\$"
	assert_regex "${lines[4]}" "^usdt${q}usdt:$r:lp:work__done$q$r$q-${q}1$q-4@[^ ,]+${q}semaphore=no\$"
	assert_regex "${lines[5]}" "^usdt${q}usdt:$r:lp:work__start$q$r$q-${q}2$q-4@[^ ,]+,-4@[^ ,]+${q}semaphore=no\$"
	# a file without probes: nothing, said; one that is not ELF: said, exit 1
	run -1 --separate-stderr lp-trace --list usdt /bin/true
	assert_output ""
	assert_equal "$stderr" "lp-trace: --list: nothing matches 'usdt' in /bin/true"
	printf 'not ELF\n' >"$T/text"
	run -1 --separate-stderr lp-trace --list usdt "$T/text"
	assert_equal "$stderr" "lp-trace: $T/text: not an ELF file"
	assert_output ""
}

@test "lp-trace: usdt:PROVIDER:NAME found in a library the executable needs" {
	require_root
	# throws 300: 100 exceptions out of inner (i % 3 == 0), 60 inside
	# contained (i % 5 == 0), each one libstdcxx:throw in libstdc++
	run -0 --separate-stderr lp-trace --output "$T/t.lp" usdt:libstdcxx:throw -- "$WORKLOADS/throws" 300
	assert_output "ok 30400 caught 100"
	run -0 awk -F'\t' '$1 == "event" && $5 == "usdt:libstdcxx:throw" && NF == 7' "$T/t.lp"
	assert_equal "${#lines[@]}" 160
}

@test "lp-trace --list usdt -p: the executable's probes and those of the files it maps" {
	require_root
	"$WORKLOADS/names" 20 &
	pid=$!
	KILL_AFTER=$pid
	sleep 0.3
	run -0 --separate-stderr lp-trace --list usdt -p "$pid"
	kill "$pid"
	list=$output
	run -0 grep -c -P '^usdt\tusdt:/[^\t]*/libstdc\+\+\.so\.6[.0-9]*:libstdcxx:throw\t/[^\t]*/libstdc\+\+\.so\.6[.0-9]*\t-\t2\t8@[^ ,]*,8@[^ ,]*\tsemaphore=no$' <<<"$output"
	assert_output 1
	# only USDT probes, each file's together
	run -0 awk -F'\t' '$1 != "usdt" || $3 != f && seen[$3]++ { bad++ } { f = $3 } END { print bad + 0 }' <<<"$list"
	assert_output 0
}

