#!/usr/bin/env bats
# lp-trace --list, --lines and --vars: what can be probed, read from the
# binaries (the bundled demo, tests/workloads/lines.c, inl.c, scopes.c,
# throws.cc, gogrow.go: functions, lines, inlined calls, blocks and
# variables known from their source), a
# stripped binary with a debug link, a running process, PostgreSQL (its
# size: under a second) and python3.11's USDT probes.

load helpers/common

setup() {
	load_bats_libs
	T=$BATS_TEST_TMPDIR
	DEMO=$LP_BUILD/examples/demo
	DEMO_C=$LP_TOP/examples/demo.c
	LINES_C=$LP_TOP/tests/workloads/lines.c
	HIT=$(grep -n 'HIT \*/' "$LINES_C" | cut -d: -f1)
	TAB=$'\t'
}

# The line of FILE where function NAME is defined ("... NAME(" opening a line).
def_line() {
	grep -n -E "^[a-z_].*[ *]$2\(" "$1" | head -1 | cut -d: -f1
}

# The line of tests/workloads/scopes.c whose comment holds the word MARK.
scopes_line() {
	grep -n -E "/\* (.* )?$1( .*)? \*/" "$LP_TOP/tests/workloads/scopes.c" | cut -d: -f1
}

@test "lp-trace --list: each function of the demo, with its source line, its typed arguments and a uretprobe" {
	run -0 --separate-stderr lp-trace --list "$DEMO"
	assert_equal "$stderr" ""
	# every function demo.c defines, at the line it is defined on
	for f in now_ns parse_request rebuild_index build_response handle_request wait_for_request main; do
		assert_line "func${TAB}$f${TAB}$DEMO${TAB}demo.c:$(def_line "$DEMO_C" $f)${TAB}$(grep -E "^[a-z_].*[ *]$f\(" "$DEMO_C" | sed 's/.*(\(.*\)).*/\1/' | awk -F, '{ print ($0 == "void" ? 0 : NF) }')${TAB}$(grep -E "^[a-z_].*[ *]$f\(" "$DEMO_C" | sed 's/.*(\(.*\)).*/\1/')${TAB}uretprobe${TAB}-"
	done
	# the C runtime's, without DWARF
	assert_line "func${TAB}_start${TAB}$DEMO${TAB}-${TAB}-${TAB}-${TAB}uretprobe${TAB}-"
	# as many lines as function symbols
	run -0 bash -c "nm --defined-only '$DEMO' | grep -c ' [tT] '"
	n=$output
	run -0 bash -c "lp-trace --list '$DEMO' | wc -l"
	assert_output "$n"
}

@test "lp-trace --list PATTERN: a glob on the names (C++'s demangled too); nothing matched is exit 1, said" {
	run -0 --separate-stderr lp-trace --list '*_request' "$DEMO"
	assert_equal "${#lines[@]}" 3
	assert_equal "$(cut -f2 <<<"$output" | tr '\n' ' ')" "handle_request parse_request wait_for_request "
	run -0 --separate-stderr lp-trace --list 'traced*' "$WORKLOADS/throws"
	assert_output "func${TAB}_Z6tracedl${TAB}$WORKLOADS/throws${TAB}throws.cc:$(def_line "$LP_TOP/tests/workloads/throws.cc" traced)${TAB}1${TAB}long int i${TAB}insn: throws has exception tables (.gcc_except_table)${TAB}-"
	run -1 --separate-stderr lp-trace --list 'nothing*' "$DEMO"
	assert_output ""
	assert_equal "$stderr" "lp-trace: --list: nothing matches 'nothing*' in $DEMO"
}

@test "lp-trace --list: returns as lp-trace sees them when it traces the function" {
	require_root
	run -0 bash -c "lp-trace --list 'traced*' '$WORKLOADS/throws' | cut -f7"
	assert_output "insn: throws has exception tables (.gcc_except_table)"
	why=${output#insn: }
	run -0 --separate-stderr lp-trace -v --calibrate 0 -o "$T/t.lp" _Z6tracedl -- "$WORKLOADS/throws" 3
	run -0 grep -F "lp-trace: _Z6tracedl: returns probed at " <<<"$stderr"
	assert_output --partial ", not a uretprobe: $why)"
}

@test "lp-trace --list: returns as lp-trace would see them: probed at their instructions in a Go binary" {
	require_cmd go
	run -0 --separate-stderr lp-trace --list 'main.handle' "$WORKLOADS/gogrow"
	assert_regex "$output" "^func${TAB}main\\.handle${TAB}$WORKLOADS/gogrow${TAB}[^$TAB]+${TAB}2${TAB}int i, int ~r0${TAB}insn: gogrow is a Go binary \\(its runtime reads return addresses when a goroutine's stack grows\\)${TAB}-\$"
}

@test "lp-trace --lines FUNC: the function's source, each line with code marked with its probe" {
	run -0 --separate-stderr lp-trace --lines handle_request "$DEMO"
	assert_equal "$stderr" ""
	first=$(def_line "$DEMO_C" handle_request)
	last=$(awk -v f="$first" 'NR > f && /^}/ { print NR; exit }' "$DEMO_C")
	# the lines from the definition to the closing brace, as in the file
	assert_equal "${#lines[@]}" $((last - first + 1))
	run -0 bash -c "lp-trace --lines handle_request '$DEMO' | cut -f5-"
	assert_output "$(sed -n "${first},${last}p" "$DEMO_C")"
	# marked: the lines with a statement in the line table (objdump's
	# reading of it), and no other
	require_cmd objdump
	run -0 bash -c "objdump --dwarf=decodedline '$DEMO' | awk '\$1 == \"demo.c\" && \$NF == \"x\" && \$2 >= $first && \$2 <= $last { print \$2 }' | sort -nu | tr '\n' ' '"
	want=$output
	run -0 bash -c "lp-trace --lines handle_request '$DEMO' | awk -F'\t' '\$2 != \"-\" { print \$1 }' | tr '\n' ' '"
	assert_equal "$output" "$want"
	call=$(grep -n 'rebuild_index(id);' "$DEMO_C" | cut -d: -f1)
	run -0 lp-trace --lines handle_request "$DEMO"
	assert_line --regexp "^$call${TAB}demo\\.c:$call${TAB}(nop|emulated|call|stepped)${TAB}1${TAB}		rebuild_index\\(id\\);\$"
}

@test "lp-trace --lines: a source file that cannot be read gives the line numbers alone, said" {
	require_cmd gcc
	mkdir "$T/src"
	printf 'int sq(int x)\n{\n\treturn x * x;\n}\nint main(void) { return sq(3) - 9; }\n' >"$T/src/gone.c"
	gcc -g -O0 -o "$T/gone" "$T/src/gone.c"
	rm "$T/src/gone.c"
	run -0 --separate-stderr lp-trace --lines sq "$T/gone"
	assert_equal "$stderr" "lp-trace: note: cannot read $T/src/gone.c (No such file or directory): line numbers only"
	# gcc -O0 puts sq's first instructions on its '{'
	assert_equal "$(cut -f1,2,4,5 <<<"$output" | tr '\t\n' ',;')" "1,-,0,;2,gone.c:2,1,;3,gone.c:3,1,;4,gone.c:4,1,;"
}

@test "lp-trace --blocks FUNC: a branch's arm is a block of its own; loops, nested, each with the probe that counts its iterations" {
	BR=$LP_TOP/tests/workloads/branchreq.c
	L=$(grep -n 'BRANCH \*/' "$BR" | cut -d: -f1)
	run -0 --separate-stderr lp-trace --blocks handle_request "$WORKLOADS/branchreq"
	assert_equal "$stderr" ""
	# No loop; the branch's line alone in a block the entry's jump reaches.
	refute_line --regexp '^loop'
	run -0 awk -F'\t' -v l="branchreq.c:$L" '$1 == "block" && $5 == l { print $2 }' <<<"$output"
	arm=$output
	[ -n "$arm" ] || fail "no block of line $L alone"
	run -0 lp-trace --blocks handle_request "$WORKLOADS/branchreq"
	assert_line --regexp "^block${TAB}0${TAB}0x[0-9a-f]+${TAB}0x[0-9a-f]+${TAB}branchreq\.c:[0-9-]+${TAB}([0-9]+,)?$arm(,[0-9]+)?${TAB}-${TAB}entry\$"
	# main: the calibration's 50 runs (WORK's own loop inside them) and
	# the request loop.
	lp-trace --blocks main "$WORKLOADS/branchreq" >"$T/main"
	run -0 awk -F'\t' '$1 == "loop" { n++; if ($3 != "-") nested++ } END { print n, nested }' "$T/main"
	assert_output "3 1"
	R=$(grep -n 'for (int r = 0; r < 50; r++)' "$BR" | cut -d: -f1)
	I=$(grep -n 'for (id = 0; now_ns() < end; id++)' "$BR" | cut -d: -f1)
	run -0 awk -F'\t' -v r="$R" -v i="$I" '$1 == "loop" && $3 == "-" {
		split($6, a, "[:-]"); lo = a[2]; hi = a[3] ? a[3] : a[2]
		if (lo <= r + 1 && hi >= r + 1) print "runs", $8
		if (lo <= i && hi >= i + 1) print "requests", $8 }' "$T/main"
	assert_equal "${#lines[@]}" 2
	runs=$(awk '$1 == "runs" { print $2 }' <<<"$output")
	requests=$(awk '$1 == "requests" { print $2 }' <<<"$output")
	# Each loop's probe counts its iterations: 50 runs, as many requests
	# as the program says it served.
	run -0 --separate-stderr lp-trace -o "$T/l.lp" "$runs" "$requests" -- "$WORKLOADS/branchreq" 0.2
	served=$(sed -n 's/^branchreq: \([0-9]*\) requests$/\1/p' <<<"$stderr")
	[ -n "$served" ] || fail "branchreq said no count: $stderr"
	run -0 awk -F'\t' -v r="$runs" -v q="$requests" '$1 == "event" { n[$5]++ } END { print n[r] + 0, n[q] + 0 }' "$T/l.lp"
	assert_output "50 $served"
}

@test "lp-trace --blocks FUNC: its inlined calls and lexical blocks, nested, as the source has them, each block with its variables" {
	run -0 --separate-stderr lp-trace --blocks work "$WORKLOADS/scopes"
	assert_equal "$stderr" ""
	out=$output
	# scopes.c's work(): mid inlined at MID_CALL, leaf inlined into it at
	# LEAF_CALL; a block declaring a, holding a block declaring b and c,
	# and leaf inlined again at LEAF_CALL2.  In tree order (each after
	# what holds it, siblings as work's code is laid out), numbered
	# together: number, parent, depth, then the callee and its call site
	# or the block's lines and variables.
	run -0 awk -F'\t' '$1 == "inline" { print $2, $3, $4, $5, $6 }
		$1 == "scope" { print $2, $3, $4, "{}", $5, $7 }' <<<"$out"
	assert_output "0 - 1 mid scopes.c:$(scopes_line MID_CALL)
1 0 2 leaf scopes.c:$(scopes_line LEAF_CALL)
2 - 1 {} scopes.c:$(scopes_line BLOCK1_FIRST)-$(scopes_line BLOCK1_LAST) a
3 2 2 {} scopes.c:$(scopes_line BLOCK2_FIRST)-$(scopes_line BLOCK2_LAST) b,c
4 2 2 leaf scopes.c:$(scopes_line LEAF_CALL2)"
	# Each one's code within the code of what holds it (work's symbol
	# for the outermost); an inlined call's probe, FUNC+OFF, at an
	# address of its own code.
	read -r start size < <(nm -S "$WORKLOADS/scopes" | awk '$3 ~ /^[tT]$/ && $4 == "work" { print $1, $2 }')
	run -0 awk -F'\t' -v w0=$((16#$start)) -v w1=$((16#$start + 16#$size)) '
		function parse(s, lo, hi,   a, b, n, i) {
			n = split(s, a, ",")
			for (i = 1; i <= n; i++) { split(a[i], b, "-"); lo[i] = strtonum(b[1]); hi[i] = strtonum(b[2]) }
			return n
		}
		function inside(s, t,   lo, hi, plo, phi, n, m, i, j, ok) {
			n = parse(s, lo, hi); m = parse(t, plo, phi)
			for (i = 1; i <= n; i++) {
				ok = lo[i] < hi[i]
				for (j = 1; j <= m && ok; j++) if (lo[i] >= plo[j] && hi[i] <= phi[j]) break
				if (!ok || j > m) return 0
			}
			return n > 0
		}
		$1 == "inline" || $1 == "scope" {
			r = $1 == "inline" ? $7 : $6
			code[$2] = r
			if (!inside(r, $3 == "-" ? sprintf("0x%x-0x%x", w0, w1) : code[$3])) print "node " $2 ": " r " outside its parent"
			if ($1 == "inline") {
				if ($8 !~ /^work\+0x[0-9a-f]+$/) { print "node " $2 ": probe " $8; next }
				e = w0 + strtonum(substr($8, 6))
				if (!inside(sprintf("0x%x-0x%x", e, e + 1), r)) print "node " $2 ": probe " $8 " outside " r
			}
			n++
		}
		END { print n + 0, "nodes" }' <<<"$out"
	assert_output "5 nodes"
	# A block's probe: its first line with a site in it, where --vars
	# lists its variables first, then those of what holds it.
	run -0 awk -F'\t' '$1 == "scope" { print $8 }' <<<"$out"
	assert_output "scopes.c:$(scopes_line BLOCK1_FIRST)
scopes.c:$(scopes_line BLOCK2_FIRST)"
	run -0 --separate-stderr lp-trace --vars "scopes.c:$(scopes_line BLOCK2_FIRST)" "$WORKLOADS/scopes"
	run -0 awk -F'\t' '{ printf "%s%s", (NR > 1 ? "," : ""), $4 } END { print "" }' <<<"$output"
	assert_output "b,c,a,n,total"
	run -0 --separate-stderr lp-trace --vars "scopes.c:$(scopes_line BLOCK1_FIRST)" "$WORKLOADS/scopes"
	run -0 awk -F'\t' '{ printf "%s%s", (NR > 1 ? "," : ""), $4 } END { print "" }' <<<"$output"
	assert_output "a,n,total"
	# main: its loop's block, declaring i
	run -0 lp-trace --blocks main "$WORKLOADS/scopes"
	run -0 awk -F'\t' '$1 == "inline" || $1 == "scope" { print $1, $3, $4, $7 }' <<<"$output"
	assert_output "scope - 1 i"
	# branchreq's main (-O1): its timing loop's blocks, one a line whose
	# probe lands in it (not 'for (int r = 0; ...', whose first code is
	# before the block), --vars there listing the block's variables.
	run -0 lp-trace --blocks main "$WORKLOADS/branchreq"
	mapfile -t scopes < <(awk -F'\t' '$1 == "scope" && $8 != "-" { print $8, $7 }' <<<"$output")
	[ "${#scopes[@]}" -ge 2 ]
	for s in "${scopes[@]}"; do
		read -r probe vars <<<"$s"
		run -0 --separate-stderr lp-trace --vars "$probe" "$WORKLOADS/branchreq"
		for v in ${vars//,/ }; do
			assert_line --regexp "^0x[0-9a-f]+${TAB}main${TAB}local${TAB}$v${TAB}"
		done
	done
}

@test "lp-trace --blocks: the probe it gives an inlined call traces that call, an event each time it runs" {
	require_root
	run -0 lp-trace --blocks work "$WORKLOADS/scopes"
	run -0 awk -F'\t' '$1 == "inline" { print $8 }' <<<"$output"
	assert_equal "${#lines[@]}" 3
	mid=${lines[0]} leaf1=${lines[1]} leaf2=${lines[2]}
	# work(0) .. work(6): mid and the leaf in it run 7 times, the block
	# holding the other leaf for 0, 3 and 6 alone.
	run -0 --separate-stderr lp-trace -o "$T/i.lp" "$mid" "$leaf1" "$leaf2" -- "$WORKLOADS/scopes" 7
	run -0 awk -F'\t' -v a="$mid" -v b="$leaf1" -v c="$leaf2" '$1 == "event" { n[$5]++ }
		END { print n[a] + 0, n[b] + 0, n[c] + 0 }' "$T/i.lp"
	assert_output "7 7 3"
}

@test "lp-trace FUNC of a function only inlined: says so, its copies as the probes --blocks gives them" {
	run -0 lp-trace --blocks work "$WORKLOADS/scopes"
	run -0 awk -F'\t' '$1 == "inline" && $5 == "leaf" { printf "%s%s (%s)", (n++ ? ", " : ""), $8, $6 }' <<<"$output"
	copies=$output
	[[ $copies == work+0x*", work+0x"* ]] || fail "--blocks gave: $copies"
	run -1 --separate-stderr lp-trace leaf -- "$WORKLOADS/scopes" 7
	assert_equal "$stderr" "lp-trace: probe 'leaf': leaf has no code of its own in $WORKLOADS/scopes: it is inlined, 2 copies: $copies; a copy's entry is a probe as named there (an event: a copy has no return), a line of its body probes every copy (FILE:LINE)"
	# A name nothing has is still "no function".
	run -1 --separate-stderr lp-trace lefa -- "$WORKLOADS/scopes" 7
	assert_equal "$stderr" "lp-trace: probe 'lefa': no function 'lefa' in $WORKLOADS/scopes"
}

@test "lp-trace --vars FILE:LINE: where each variable lives at the probe, and what FILE:LINE(VAR) captures" {
	run -0 --separate-stderr lp-trace --vars "lines.c:$HIT" "$WORKLOADS/lines"
	assert_equal "$stderr" ""
	# lines.c: sq and total volatile (in the frame), i and n in
	# registers, twice computed (DW_OP_stack_value)
	assert_line --regexp "^0x[0-9a-f]+${TAB}accumulate${TAB}local${TAB}sq${TAB}volatile long int${TAB}stack:CFA-[0-9]+${TAB}yes\$"
	assert_line --regexp "^0x[0-9a-f]+${TAB}accumulate${TAB}local${TAB}total${TAB}volatile long int${TAB}stack:CFA-[0-9]+${TAB}yes\$"
	assert_line --regexp "^0x[0-9a-f]+${TAB}accumulate${TAB}local${TAB}i${TAB}int${TAB}reg:[a-z0-9]+${TAB}yes\$"
	assert_line --regexp "^0x[0-9a-f]+${TAB}accumulate${TAB}param${TAB}n${TAB}int${TAB}reg:[a-z0-9]+${TAB}yes\$"
	assert_line --regexp "^0x[0-9a-f]+${TAB}accumulate${TAB}local${TAB}twice${TAB}long int${TAB}computed${TAB}no: cannot capture 'twice' at 0x[0-9a-f]+: its location there is DW_OP_stack_value \\(a computed value\\), not a register, a frame or register offset or a fixed address\$"
	assert_equal "${#lines[@]}" 5
}

@test "lp-trace --vars: the variables a 'yes' names are captured by lp-trace FILE:LINE(VAR), with their values" {
	require_root
	run -0 bash -c "lp-trace --vars 'lines.c:$HIT' '$WORKLOADS/lines' | awk -F'\t' '\$7 == \"yes\" { print \$4 }' | sort | paste -sd,"
	assert_output "i,n,sq,total"
	run -0 --separate-stderr lp-trace -o "$T/v.lp" "lines.c:$HIT(i,n,sq,total)" -- "$WORKLOADS/lines"
	# 37 hits, i = 0..36, n = 37, sq = i * i, total the sum of the squares before
	run -0 awk -F'\t' '$1 == "event" { if ($6 != "i=" k + 0 || $7 != "n=37" || $8 != "sq=" k * k || $9 != "total=" t + 0) bad++; t += k * k; k++ }
		END { print k + 0, bad + 0 }' "$T/v.lp"
	assert_output "37 0"
}

@test "lp-trace --vars: an inlined line, at each copy, with the variables of the functions it is inlined into" {
	L=$(grep -n 'INL \*/' "$LP_TOP/tests/workloads/inl.c" | cut -d: -f1)
	run -0 --separate-stderr lp-trace --vars "inl.c:$L" "$WORKLOADS/inl"
	# bump(x) inlined into twice(x) and thrice(x): two sites, bump's x
	# found first (captured), the caller's x behind it
	assert_equal "$(cut -f1 <<<"$output" | sort -u | wc -l)" 2
	assert_equal "$(grep -c -P "^0x[0-9a-f]+\tinlined:bump\tparam\tx\tint\t[a-z]+:[^\t]+\tyes$" <<<"$output")" 2
	assert_line --regexp "^0x[0-9a-f]+${TAB}twice${TAB}param${TAB}x${TAB}int${TAB}[^$TAB]+${TAB}no: shadowed by a nearer 'x' \\(of bump\\)\$"
	assert_line --regexp "^0x[0-9a-f]+${TAB}thrice${TAB}param${TAB}x${TAB}int${TAB}[^$TAB]+${TAB}no: shadowed by a nearer 'x' \\(of bump\\)\$"
}

@test "lp-trace --list, --lines, --vars: a stripped binary with a debug link reads as the original" {
	stripped_with_debuglink "$T/dbg"
	run -0 --separate-stderr lp-trace --list accumulate "$T/dbg/lines"
	assert_output "func${TAB}accumulate${TAB}$T/dbg/lines${TAB}lines.c:$(def_line "$LINES_C" accumulate)${TAB}1${TAB}int n${TAB}uretprobe${TAB}-"
	run -0 lp-trace --lines accumulate "$WORKLOADS/lines"
	want=$output
	run -0 lp-trace --lines accumulate "$T/dbg/lines"
	assert_equal "$output" "$want"
	run -0 lp-trace --vars "lines.c:$HIT" "$WORKLOADS/lines"
	want=$output
	run -0 lp-trace --vars "lines.c:$HIT" "$T/dbg/lines"
	assert_equal "$output" "$want"
}

@test "lp-trace --list -p: the functions of every file the process maps, a library's named FILE:FUNC" {
	"$DEMO" 30 >/dev/null &
	pid=$!
	KILL_AFTER=$pid
	sleep 0.3
	run -0 --separate-stderr lp-trace --list -p "$pid"
	kill "$pid"
	list=$output
	# the executable's as in the file's listing; libc's malloc typed
	# from its debug file (libc6-dbg)
	run -0 grep -c -P "^func\thandle_request\t$DEMO\tdemo\.c:$(def_line "$DEMO_C" handle_request)\t1\tint id\turetprobe\t-$" <<<"$list"
	assert_output 1
	run -0 grep -c -P '^func\t(/[^\t]*/libc\.so\.6):malloc\t\1\tmalloc\.c:\d+\t1\tsize_t bytes\t' <<<"$list"
	assert_output 1
	# each mapped file: the executable, libc, ld.so
	run -0 awk -F'\t' '{ f[$3] } END { print length(f) }' <<<"$list"
	assert_output 3
}

@test "lp-trace --lines, --vars -p: a running process's" {
	"$DEMO" 30 >/dev/null &
	pid=$!
	KILL_AFTER=$pid
	sleep 0.3
	run -0 lp-trace --lines build_response "$DEMO"
	want=$output
	run -0 lp-trace --lines build_response -p "$pid"
	assert_equal "$output" "$want"
	L=$(grep -n 'sink += id;' "$DEMO_C" | tail -1 | cut -d: -f1)
	run -0 --separate-stderr lp-trace --vars "demo.c:$L" -p "$pid"
	kill "$pid"
	assert_line --regexp "^0x[0-9a-f]+${TAB}build_response${TAB}param${TAB}id${TAB}int${TAB}[^$TAB]+${TAB}yes\$"
}

@test "lp-trace --list: PostgreSQL's 10,000 functions and its USDT probes in under a second" {
	PG=/usr/lib/postgresql/15/bin/postgres
	require_cmd "$PG"	# postgresql-15, from make test-deps
	lp-trace --list "$PG" >/dev/null	# its pages read once
	# Its CPU time (user + system): the wall time on this shared machine
	# is that and the waits for a CPU.
	local TIMEFORMAT='%R %U %S'
	{ time lp-trace --list "$PG" >"$T/pg.txt" 2>"$T/pg.err"; } 2>"$T/time" || fail "lp-trace --list $PG failed: $(cat "$T/pg.err")"
	read -r wall user sys <"$T/time"
	run -0 cat "$T/pg.txt"
	ms=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%d", (u + s) * 1000 }')
	echo "# lp-trace --list $PG: ${#lines[@]} lines, ${ms} ms of CPU, ${wall} s wall" >&3
	[ "$ms" -lt 1000 ] || fail "took $ms ms of CPU"
	# its functions, stripped: from .dynsym, no DWARF
	assert_line --regexp "^func${TAB}PostgresMain${TAB}$PG${TAB}-${TAB}-${TAB}-${TAB}(uretprobe|insn: [^$TAB]*)${TAB}-\$"
	assert_line --regexp "^func${TAB}PortalRun${TAB}$PG${TAB}-${TAB}-${TAB}-${TAB}(uretprobe|insn: [^$TAB]*)${TAB}-\$"
	assert_line --regexp "^usdt${TAB}usdt:$PG:postgresql:query__start${TAB}$PG${TAB}-${TAB}1${TAB}8@[^$TAB,]+${TAB}semaphore=yes\$"
	run -0 bash -c "readelf --dyn-syms -W '$PG' | awk '\$4 == \"FUNC\" && \$7 != \"UND\"' | wc -l"
	n=$output
	run -0 bash -c "lp-trace --list '$PG' | grep -c '^func'"
	[ "$output" -ge $((n - 20)) ] || fail "$output functions listed, $n in .dynsym"
}

@test "lp-trace --list: python3.11's USDT probes, with their argument counts" {
	PY=/usr/bin/python3.11
	require_cmd "$PY"
	run -0 --separate-stderr lp-trace --list 'function__*' "$PY"
	assert_equal "${#lines[@]}" 2
	assert_line --regexp "^usdt${TAB}usdt:$PY:python:function__entry${TAB}$PY${TAB}-${TAB}3${TAB}[^$TAB]+${TAB}semaphore=yes\$"
	assert_line --regexp "^usdt${TAB}usdt:$PY:python:function__return${TAB}$PY${TAB}-${TAB}3${TAB}[^$TAB]+${TAB}semaphore=yes\$"
}

@test "lp-trace --lines, --vars: a function or a line that is not there is exit 1, said as lp-trace says it" {
	run -1 --separate-stderr lp-trace --lines no_such_function "$DEMO"
	assert_output ""
	assert_equal "$stderr" "lp-trace: probe 'no_such_function': no function 'no_such_function' in $DEMO"
	run -1 --separate-stderr lp-trace --vars lines.c:23 "$WORKLOADS/lines"
	assert_equal "$stderr" "lp-trace: probe 'lines.c:23': no code at line 23; nearest lines with code: 22, 24"
	run -1 --separate-stderr lp-trace --vars nosuch.c:3 "$WORKLOADS/lines"
	assert_equal "$stderr" "lp-trace: probe 'nosuch.c:3': no source file 'nosuch.c' in the line table of $WORKLOADS/lines"
	run -1 --separate-stderr lp-trace --lines _start "$DEMO"
	assert_equal "$stderr" "lp-trace: _start: $DEMO has no DWARF line information for _start (build with -g)"
	run -1 --separate-stderr lp-trace --lines libc:malloc "$DEMO"
	assert_equal "$stderr" "lp-trace: --lines 'libc:malloc': line probes go in the executable only (FILE:LINE has no LIB:)"
	run -1 --separate-stderr lp-trace --list "$T/none"
	assert_equal "$stderr" "lp-trace: cannot open '$T/none': No such file or directory"
}

@test "lp-trace --list, --lines, --vars: usage errors are exit 2" {
	run -2 --separate-stderr lp-trace --list
	assert_equal "${stderr_lines[0]}" "lp-trace: give -p PID, a BINARY or -- CMD"
	run -2 --separate-stderr lp-trace --lines demo.c:3 "$DEMO"
	assert_equal "$stderr" "lp-trace: --lines 'demo.c:3': expected a function, FUNC or LIB:FUNC"
	run -2 --separate-stderr lp-trace --vars handle_request "$DEMO"
	assert_equal "$stderr" "lp-trace: --vars 'handle_request': expected a source line, FILE:LINE"
	run -2 --separate-stderr lp-trace --list --vars demo.c:3 "$DEMO"
	assert_equal "$stderr" "lp-trace: --list, --lines, --blocks and --vars exclude each other"
	run -2 --separate-stderr lp-trace --lines main -p 1 "$DEMO"
	assert_equal "${stderr_lines[0]}" "lp-trace: unexpected argument '$DEMO'"
	run -2 --separate-stderr lp-trace --lines main "$DEMO" "$T/x"
	assert_equal "${stderr_lines[0]}" "lp-trace: unexpected argument '$T/x'"
}

