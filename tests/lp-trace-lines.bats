#!/usr/bin/env bats
# lp-trace's line probes go where in the line a hit costs least
# (tests/workloads/cheapline.c: a line that opens with a load, which the
# kernel single-steps, then calls tick, which it emulates; a line with the
# load alone; tests/workloads/jumpline.c: a line entered by a jump into its
# middle).

load helpers/common
load helpers/producers
load helpers/bpf

setup() {
	load_bats_libs
	T=$BATS_TEST_TMPDIR
	SRC=$LP_TOP/tests/workloads/cheapline.c
	CHEAP=$(grep -n 'CHEAP \*/' "$SRC" | cut -d: -f1)
	STEPPED=$(grep -n 'STEPPED \*/' "$SRC" | cut -d: -f1)
}

@test "lp-trace: a line probe goes on the line's emulated statement (a call), its values read there" {
	require_root
	run -0 --separate-stderr lp-trace --verbose --output "$T/c.lp" "cheapline.c:$CHEAP(k,total)" -- "$WORKLOADS/cheapline"
	assert_output 7350
	run -0 grep -c "^lp-trace: cheapline.c:$CHEAP(k,total): $WORKLOADS/cheapline at 0x[0-9a-f]* (file offset 0x[0-9a-f]*, call instruction, a later statement of the line)\$" <<<"$stderr"
	assert_output 1
	run -1 grep -c 'single-stepped' <<<"$stderr"
	assert_output 0
	run -0 grep -c -P "^cost\t\d+\tline\t\d+\tprobe=cheapline.c:$CHEAP\tinsn=call\t" "$T/c.lp"
	assert_output 1
	# 50 hits, k = 3i in order; total read after the line's first
	# statement added k: 3i(i-1) + 3i = 3i^2 (at the line's first
	# instruction it would be 3i(i-1))
	run -0 awk -F'\t' '$1 == "event" { split($6, a, "="); split($7, b, "=")
		if (a[1] != "k" || a[2] != 3 * i || b[1] != "total" || b[2] != 3 * i * i) bad++; i++ }
		END { print i + 0, bad + 0 }' "$T/c.lp"
	assert_output "50 0"
}

@test "lp-trace: a line with no cheap instruction says what a hit costs; still every hit" {
	require_root
	run -0 --separate-stderr lp-trace --output "$T/s.lp" "cheapline.c:$STEPPED(k)" -- "$WORKLOADS/cheapline"
	assert_output 7350
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "${stderr_lines[0]}" "^lp-trace: note: probe 'cheapline.c:$STEPPED\(k\)': each hit at 0x[0-9a-f]+ is single-stepped out of line \(insn=stepped in its cost record: about ten times a function probe's cost\): it has no other statement\$"
	run -0 grep -c -P "^cost\t\d+\tline\t\d+\tprobe=cheapline.c:$STEPPED\tinsn=stepped\t" "$T/s.lp"
	assert_output 1
	run -0 awk -F'\t' '$1 == "event" { split($6, a, "="); if (a[2] != 3 * i) bad++; i++ } END { print i + 0, bad + 0 }' "$T/s.lp"
	assert_output "50 0"
}

@test "lp-trace: a line probe is not moved past a jump: every pass through the line is a hit" {
	require_root
	# "if (k & 1) odd();": the call is a statement of the line, but only
	# odd k reach it: the probe stays at the test, 50 hits
	line=$(grep -n 'BRANCHY \*/' "$SRC" | cut -d: -f1)
	run -0 --separate-stderr lp-trace --output "$T/b.lp" "cheapline.c:$line(k)" -- "$WORKLOADS/cheapline"
	run -0 awk -F'\t' '$1 == "event" { split($6, a, "="); if (a[2] != 3 * i) bad++; i++ } END { print i + 0, bad + 0 }' "$T/b.lp"
	assert_output "50 0"
	run -0 grep -c -P "^cost\t\d+\tline\t\d+\tprobe=cheapline.c:$line\tinsn=stepped\t" "$T/b.lp"
	assert_output 1
}

@test "lp-trace: a line probe is not moved to where a jump into the line lands: it counts passes through the line's start" {
	require_root
	J=$LP_TOP/tests/workloads/jumpline.c
	line=$(grep -n 'JUMPED \*/' "$J" | cut -d: -f1)
	# The truth by construction, in the code GCC made: the line opens
	# with a load (single-stepped) and runs straight on (no jump, no ret)
	# to its call of tick (emulated, an is_stmt row: where the probe
	# would rather go), and a conditional jump of step lands on that
	# call, past the load
	run -0 objdump -d -l --no-show-raw-insn --disassemble=step "$WORKLOADS/jumpline"
	run -0 awk -v line="$line" '
		/^\// { sub(/ \(discriminator [0-9]+\)$/, ""); n = split($0, p, ":"); cur = p[n]; next }
		/^ +[0-9a-f]+:\t/ { a = $1; sub(/:$/, "", a)
			if (cur == line && first == "") { first = $2; straight = 1 }
			if (cur == line && $2 == "call" && $4 == "<tick>" && call == "") call = a
			else if (first != "" && call == "" && ($2 ~ /^j/ || $2 == "ret")) straight = 0
			if ($2 ~ /^j/ && $3 ~ /^[0-9a-f]+$/) jumped[$3] = 1 }
		END { print first, straight ? "straight to the call," : "not straight to the call,",
			call != "" && jumped[call] ? "jumped into" : "no jump into it" }' <<<"$output"
	assert_output "mov straight to the call, jumped into"
	run -0 --separate-stderr lp-trace --output "$T/j.lp" "jumpline.c:$line(k)" -- "$WORKLOADS/jumpline"
	assert_output "2739 50"
	notes=("${stderr_lines[@]}")
	# The line's start runs for the i = 0..49 that are not multiples of
	# 4: 37 hits, k = 3i in order (a probe on the call would see 50)
	run -0 awk -F'\t' '$1 == "event" { split($6, a, "="); while (i % 4 == 0) i++
		if (a[1] != "k" || a[2] != 3 * i) bad++; i++; n++ } END { print n + 0, bad + 0 }' "$T/j.lp"
	assert_output "37 0"
	run -0 grep -c -P "^cost\t\d+\tline\t\d+\tprobe=jumpline.c:$line\tinsn=stepped\t" "$T/j.lp"
	assert_output 1
	assert_equal "${#notes[@]}" 1
	assert_regex "${notes[0]}" "^lp-trace: note: probe 'jumpline.c:$line\(k\)': each hit at 0x[0-9a-f]+ is single-stepped out of line \(insn=stepped in its cost record: about ten times a function probe's cost\): a jump of its function lands inside it, past its first instruction\$"
}

@test "lp-trace: a line probe without values goes on a cheaper instruction inside a statement: every pass a hit" {
	require_root
	# "if (k & 1) odd();": gcc states the test and the call; its
	# conditional jump, between them, is no statement but is the line's
	# and every pass reaches it.  Without values the probe goes there
	# (with k, a test above keeps it on the single-stepped test): 50 hits.
	line=$(grep -n 'BRANCHY \*/' "$SRC" | cut -d: -f1)
	run -0 --separate-stderr lp-trace -v --output "$T/b.lp" "cheapline.c:$line" -- "$WORKLOADS/cheapline"
	run -0 grep -o "^lp-trace: cheapline.c:$line: $WORKLOADS/cheapline at 0x[0-9a-f]* (file offset 0x[0-9a-f]*, emulated instruction, later in the line)\$" <<<"$stderr"
	local addr
	addr=$(sed -n 's/.* at 0x\([0-9a-f]*\) (file offset.*/\1/p' <<<"$output")
	# what is there, in the code gcc made: a conditional jump of the line
	run -0 objdump -d -l --no-show-raw-insn --disassemble=run "$WORKLOADS/cheapline"
	run -0 awk -v line="$line" -v addr="$addr" '
		/^\// { sub(/ \(discriminator [0-9]+\)$/, ""); n = split($0, p, ":"); cur = p[n]; next }
		/^ +[0-9a-f]+:\t/ { a = $1; sub(/:$/, "", a); if (a == addr) print cur, $2 }' <<<"$output"
	assert_output --regexp "^$line j[a-z]+\$"
	refute_output --regexp " jmp\$"
	run -0 grep -c '^event' "$T/b.lp"
	assert_output 50
	run -0 grep -c -P "^cost\t\d+\tline\t\d+\tprobe=cheapline.c:$line\tinsn=emulated\t" "$T/b.lp"
	assert_output 1
}

# build CC OPT DWARF HOW OUT: cheapline built by CC (gcc, clang) at OPT,
# DWARF version DWARF, its source named as HOW says: abs (an absolute
# path), rel (relative, from its directory: DW_AT_comp_dir joins them) or
# map (-ffile-prefix-map: a path that does not exist here).
build() {
	local cc=$1 opt=$2 dw=$3 how=$4 out=$5 dir
	dir=$(dirname "$SRC")
	case $how in
	abs) "$cc" "$opt" -g -gdwarf-"$dw" "$SRC" -o "$out" ;;
	rel) (
		cd "$dir"
		"$cc" "$opt" -g -gdwarf-"$dw" cheapline.c -o "$out"
	) ;;
	map) "$cc" "$opt" -g -gdwarf-"$dw" -ffile-prefix-map="$LP_TOP=/lp" "$SRC" -o "$out" ;;
	esac
}

@test "lp-trace: --lines, FILE:LINE(VAR), --vars and source lines of samples on gcc's and clang's builds, -O0 and -O2, DWARF 4 and 5, however the source is named" {
	require_root
	require_cmd clang
	local cc opt dw how b
	for b in gcc:-O0:4:abs gcc:-O2:4:abs gcc:-O0:5:abs gcc:-O2:5:abs gcc:-O2:5:rel gcc:-O2:5:map \
		clang:-O0:4:abs clang:-O2:4:abs clang:-O0:5:abs clang:-O2:5:abs clang:-O2:5:rel clang:-O2:5:map; do
		IFS=: read -r cc opt dw how <<<"$b"
		echo "build $b"
		build "$cc" "$opt" "$dw" "$how" "$T/w"
		# --lines run: the function's lines, the STEPPED one probed
		run -0 lp-trace --lines run "$T/w"
		run -0 awk -F'\t' -v l="$STEPPED" '$1 == l { print $2 }' <<<"$output"
		assert_output "cheapline.c:$STEPPED"
		# FILE:LINE(k): a hit each pass, k = 3i
		run -0 --separate-stderr lp-trace --calibrate 0 --output "$T/s.lp" "cheapline.c:$STEPPED(k)" -- "$T/w" 20
		assert_output 1140
		run -0 awk -F'\t' '$1 == "event" { split($6, a, "="); if (a[2] != 3 * i) bad++; i++ } END { print i + 0, bad + 0 }' "$T/s.lp"
		assert_output "20 0"
		# --vars: k, captured there
		run -0 lp-trace --vars "cheapline.c:$STEPPED" "$T/w"
		assert_line --regexp "^0x[0-9a-f]+	run	local	k	volatile long( int)?	.*	yes\$"
		# and that address's line as lp-record --srcline and lp-collapse
		# --inline name it (libdwfl's lookup, lp-symbolize --addr2line)
		local addr=${lines[0]%%	*}
		run -0 lp-symbolize --addr2line <<<"a	$T/w	$addr"
		assert_output "1
run	cheapline.c:$STEPPED"
	done
}
