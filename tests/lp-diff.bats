#!/usr/bin/env bats
# lp-diff: difffolded.pl's output (the corpus cases are in corpus-diff.bats),
# stream and perf script inputs, the refusal of profiles that are not
# comparable, the report on profiles of known truth, bad input.

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/cpusplit

setup() {
	T=$BATS_TEST_TMPDIR
	D=$FIXTURES/diff
}

# The report's data rows (no comment lines, no column header).
rows() {
	grep -v '^#' | grep -v '^ self_A'
}

# The number of distinct frame names in folded files.
nfuncs() {
	sed 's/ [^ ]*$//' "$@" | tr ';' '\n' | sort -u | wc -l
}

@test "--help lists every option, and the man page documents each" {
	run -0 lp-diff --help
	[[ $output == usage:* ]]
	opts=$(printf '%s\n' "$output" | grep -oE -- '--[a-z][a-z-]+' | sort -u)
	[ "$(printf '%s\n' "$opts" | wc -l)" -ge 20 ]
	for o in $opts; do
		# roff escapes every '-' of an option as '\-'
		grep -qF -- "${o//-/\\-}" "$LP_TOP/man/lp-diff.1" || { echo "missing in man: $o"; false; }
	done
	run -0 lp-diff --version
	[[ $output == *0.* ]]
}

@test "usage errors exit 2" {
	run -2 lp-diff
	run -2 lp-diff "$D/shift-before.folded"
	run -2 lp-diff "$D/shift-before.folded" "$D/shift-after.folded" third
	run -2 lp-diff --format pdf "$D/shift-before.folded" "$D/shift-after.folded"
	run -2 lp-diff --alpha 2 --report "$D/shift-before.folded" "$D/shift-after.folded"
	run -2 lp-diff --alpha x --report "$D/shift-before.folded" "$D/shift-after.folded"
	run -2 lp-diff --top -1 --report "$D/shift-before.folded" "$D/shift-after.folded"
	run -2 lp-diff --adjust bonf --report "$D/shift-before.folded" "$D/shift-after.folded"
	run -2 lp-diff --input-format xml "$D/shift-before.folded" "$D/shift-after.folded"
	run -2 lp-diff --frobnicate "$D/shift-before.folded" "$D/shift-after.folded"
}

@test "a missing file: its name and strerror, exit 1, nothing on stdout" {
	cd "$T"
	run --separate-stderr lp-diff nope.txt "$D/shift-after.folded"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "lp-diff: nope.txt: No such file or directory" ]
	run --separate-stderr lp-diff "$D/shift-after.folded" nope.txt
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "lp-diff: nope.txt: No such file or directory" ]
}

@test "folded output: union of stacks, 0 where missing, lines sorted bytewise" {
	printf 'a;b 3\nb;c 1.5\n' >"$T/A"
	printf 'b;c 2\na;d 7\na;b 1\n' >"$T/B"
	run -0 lp-diff "$T/A" "$T/B"
	[ "$output" = "$(printf 'a;b 3 1\na;d 0 7\nb;c 1.5 2')" ]
	# whole lines in C order, not stacks: "b c  0 0" (stack "b c ") sorts
	# before "b c 6 7" (stack "b c"), and a tab before a space
	printf 'b c 6\nb c  0.\nx\ty 1\nx 2\n' >"$T/A"
	printf 'b c 7\n' >"$T/B"
	run -0 lp-diff "$T/A" "$T/B"
	[ "$output" = "$(printf 'b c  0 0\nb c 6 7\nx\ty 1 0\nx 2 0')" ]
	[ "$output" = "$(printf '%s\n' "$output" | LC_ALL=C sort)" ]
}

@test "-n scales BEFORE by totalB/totalA, truncated to an integer" {
	printf 'a 10\nb 5\n' >"$T/A"	# total 15
	printf 'a 10\nb 30\nc 1\n' >"$T/B"	# total 41
	run -0 lp-diff -n "$T/A" "$T/B"
	# 10*41/15 = 27.33 -> 27; 5*41/15 = 13.67 -> 13
	[ "$output" = "$(printf 'a 27 10\nb 13 30\nc 0 1')" ]
	run -0 lp-diff --normalize "$T/A" "$T/B"
	[ "$output" = "$(printf 'a 27 10\nb 13 30\nc 0 1')" ]
	# an empty BEFORE cannot be scaled (difffolded.pl dies dividing by zero)
	: >"$T/empty"
	run --separate-stderr lp-diff -n "$T/empty" "$T/B"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "lp-diff: $T/empty has no samples: cannot normalize it to $T/B" ]
	run -0 lp-diff -n "$T/B" "$T/empty"
	[ "$output" = "$(printf 'a 0 0\nb 0 0\nc 0 0')" ]
}

@test "-s merges stacks that differ only in hex addresses" {
	printf 'main;0x7f3a10;f 2\nmain;0x0x1G;g 1\n' >"$T/A"
	printf 'main;0xDEAD;f 5\n' >"$T/B"
	run -0 lp-diff -s "$T/A" "$T/B"
	[ "$output" = "$(printf 'main;0x...;f 2 5\nmain;0x...x1G;g 1 0')" ]
	run -0 lp-diff "$T/A" "$T/B"
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 3 ]
}

@test "the same file twice: every row unchanged, nothing significant" {
	run -0 lp-diff "$D/noise-before.folded" "$D/noise-before.folded"
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 40 ]
	[ -z "$(printf '%s\n' "$output" | awk '$(NF-1) != $NF')" ]
	n=$(nfuncs "$D/noise-before.folded")
	run -0 lp-diff --report --top 0 "$D/noise-before.folded" "$D/noise-before.folded"
	[[ $output == *"# $n of $n functions not significant at alpha 0.01"* ]]
	[ -z "$(printf '%s\n' "$output" | rows | awk '$3 != "+0.00" || $6 != "+0.00" || $9 != 1')" ]
}

@test "empty inputs: empty output, exit 0 (svg: a graph saying so)" {
	: >"$T/empty"
	run -0 lp-diff --format svg "$T/empty" "$T/empty"
	[[ $output == *"<svg"*">no samples<"*"</svg>"* ]]
	run -0 lp-diff "$T/empty" "$T/empty"
	[ -z "$output" ]
	run -0 lp-diff -n -s "$T/empty" "$T/empty"
	[ -z "$output" ]
	run -0 lp-diff --report "$T/empty" "$T/empty"
	[ -z "$output" ]
	# One side empty: the other's stacks against zeros.
	run -0 lp-diff "$T/empty" "$D/shift-before.folded"
	[ "$(printf '%s\n' "$output" | awk '$(NF-1) != 0' | wc -l)" -eq 0 ]
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 7 ]
}

@test "report: the one function whose share moved ranks first, with a tiny p-value" {
	# shift-*: hot's self share goes 10% -> 30% (exact counts, 10000 samples
	# a side); lex, cold, read, write lose 5 points each (tests/fixtures/diff/gen.py).
	run -0 lp-diff --report "$D/shift-before.folded" "$D/shift-after.folded"
	first=$(printf '%s\n' "$output" | rows | head -1)
	read -r sa sb ds ta tb dt na nb p fn <<<"$first"
	[ "$fn" = hot ]
	[ "$sa $sb $ds $ta $tb $dt $na $nb" = "10.00% 30.00% +20.00 10.00% 30.00% +20.00 1000 3000" ]
	awk -v p="$p" 'BEGIN { exit !(p + 0 < 1e-100) }'
	# compute (hot's caller, +15 points of total) comes next, then io (-10).
	[ "$(printf '%s\n' "$output" | rows | awk '{print $NF}' | head -3 | tr '\n' ' ')" = "hot compute io " ]
	# the 5-point losers are significant; idle and main did not move.
	[[ $output == *"# 2 of 10 functions not significant at alpha 0.01"* ]]
	[ "$(printf '%s\n' "$output" | rows | awk '$NF == "idle" || $NF == "main" {print $9}' | tr '\n' ' ')" = "1 1 " ]
	[[ $output == *"# A: $D/shift-before.folded (10000 samples)"* ]]
}

@test "report: swapping the inputs negates every change, same ranking" {
	run -0 lp-diff --report --top 0 "$D/shift-before.folded" "$D/shift-after.folded"
	fwd=$(printf '%s\n' "$output" | rows | awk '{print $NF, $3, $6, $9}')
	run -0 lp-diff --report --top 0 "$D/shift-after.folded" "$D/shift-before.folded"
	rev=$(printf '%s\n' "$output" | rows | awk '{d3 = $3; d6 = $6; sub(/^-/, "+", d3) || sub(/^\+/, "-", d3); sub(/^-/, "+", d6) || sub(/^\+/, "-", d6); if (d3 == "-0.00") d3 = "+0.00"; if (d6 == "-0.00") d6 = "+0.00"; print $NF, d3, d6, $9}')
	[ "$fwd" = "$rev" ]
}

@test "report: binomial noise alone is not significant at alpha 0.01" {
	# Two seeded draws of 20000 samples from one distribution.
	n=$(nfuncs "$D/noise-before.folded" "$D/noise-after.folded")
	[ "$n" -ge 40 ]
	run -0 lp-diff --report --top 0 "$D/noise-before.folded" "$D/noise-after.folded"
	[[ $output == *"# $n of $n functions not significant at alpha 0.01"* ]]
	[ "$(printf '%s\n' "$output" | rows | wc -l)" -eq "$n" ]
	# The shares do move a little: the test is not vacuous.
	[ -n "$(printf '%s\n' "$output" | rows | awk '$3 != "+0.00"')" ]
	# Holm is more conservative still.
	run -0 lp-diff --report --adjust holm "$D/noise-before.folded" "$D/noise-after.folded"
	[[ $output == *"# $n of $n functions not significant at alpha 0.01"* ]]
}

@test "report: inputs that differ only in total show no change" {
	# scaled-after is scaled-before with every count tripled.
	run -0 lp-diff --report --top 0 "$D/scaled-before.folded" "$D/scaled-after.folded"
	[ -z "$(printf '%s\n' "$output" | rows | awk '$3 != "+0.00" || $6 != "+0.00" || $9 != 1')" ]
	[[ $output == *"not significant"* ]]
	n=$(printf '%s\n' "$output" | rows | wc -l)
	[[ $output == *"# $n of $n functions not significant at alpha 0.01"* ]]
	# normalised folded output: both columns equal
	run -0 lp-diff -n "$D/scaled-before.folded" "$D/scaled-after.folded"
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 25 ]
	[ -z "$(printf '%s\n' "$output" | awk '$(NF-1) != $NF')" ]
	# and without -n, A's counts are a third of B's
	run -0 lp-diff "$D/scaled-before.folded" "$D/scaled-after.folded"
	[ -z "$(printf '%s\n' "$output" | awk '3 * $(NF-1) != $NF')" ]
}

@test "report: --top, --alpha, recursion counted once per stack" {
	run -0 lp-diff --report --top 3 "$D/shift-before.folded" "$D/shift-after.folded"
	[ "$(printf '%s\n' "$output" | rows | wc -l)" -eq 3 ]
	[[ $output == *"# 7 more functions not shown (--top 0 shows all)"* ]]
	run -0 lp-diff --report --alpha 1e-30 "$D/shift-before.folded" "$D/shift-after.folded"
	[[ $output == *"# 7 of 10 functions not significant at alpha 1e-30"* ]]
	# f recurses: its total is 100% on both sides, its self 50% -> 25%.
	printf 'main;f;f;f 10\nmain;g 10\n' >"$T/A"
	printf 'main;f;f 10\nmain;g 30\n' >"$T/B"
	run -0 lp-diff --report "$T/A" "$T/B"
	[ "$(printf '%s\n' "$output" | rows | awk '$NF == "f" {print $1, $2, $4, $5, $7, $8}')" = "50.00% 25.00% 50.00% 25.00% 10 10" ]
	[ "$(printf '%s\n' "$output" | rows | awk '$NF == "main" {print $4, $5, $7, $8}')" = "100.00% 100.00% 20 40" ]
}

@test "output is deterministic" {
	run -0 lp-diff --report --top 0 "$D/noise-before.folded" "$D/noise-after.folded"
	a=$output
	run -0 lp-diff --report --top 0 "$D/noise-before.folded" "$D/noise-after.folded"
	[ "$a" = "$output" ]
	run -0 lp-diff "$D/noise-before.folded" "$D/noise-after.folded"
	[ "$output" = "$(printf '%s\n' "$output" | LC_ALL=C sort)" ]
}

@test "bad input in AFTER: FILE:LINE, exit 1, nothing on stdout, no -o file" {
	printf 'a 1\nb 2\nthis line has no count\nc 3\n' >"$T/bad"
	run --separate-stderr lp-diff "$D/shift-before.folded" "$T/bad"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == "lp-diff: $T/bad:3: "* ]]
	run --separate-stderr lp-diff --report -o "$T/out" "$D/shift-before.folded" "$T/bad"
	[ "$status" -eq 1 ]
	[ ! -e "$T/out" ]
}

@test "-o writes the file" {
	run -0 lp-diff -o "$T/out" "$D/shift-before.folded" "$D/shift-after.folded"
	[ -z "$output" ]
	[ "$(wc -l <"$T/out")" -eq 7 ]
	grep -qx 'main;compute;hot 1000 3000' "$T/out"
}

@test "stdin as one input" {
	run -0 bash -c 'lp-diff - "$1" <"$2"' _ "$D/shift-after.folded" "$D/shift-before.folded"
	grep -qx 'main;compute;hot 1000 3000' <<<"$output"
}

@test "streams recorded at different periods are refused unless -n" {
	cd "$D"
	run --separate-stderr lp-diff cpu-10ms.lp cpu-1ms.lp
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "lp-diff: cpu-10ms.lp and cpu-1ms.lp were recorded at different periods (10101010 ns vs 1001001 ns): use --normalize" ]
	run --separate-stderr lp-diff --report cpu-10ms.lp cpu-1ms.lp
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	run -0 lp-diff -n cpu-10ms.lp cpu-1ms.lp
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 3 ]
}

@test "streams recorded in different modes are refused unless -n" {
	cd "$D"
	run --separate-stderr lp-diff cpu-10ms.lp off-10ms.lp
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "lp-diff: cpu-10ms.lp and off-10ms.lp were recorded in different modes (cpu vs off): use --normalize" ]
	run -0 lp-diff --normalize cpu-10ms.lp off-10ms.lp
}

@test "stream inputs: stacks as lp-collapse formats them, cpu samples counted" {
	cd "$D"
	run -0 lp-diff cpu-10ms.lp cpu-10ms-b.lp
	# the comm is the first frame, as stackcollapse-perf.pl prints it; a
	# cpu recording's counts are its samples (tests/folded-counts.bats)
	[ "$output" = "$(printf '%s\n' 'demo;main;do_syscall_64 2 6' 'demo;main;work 3 3' 'demo;main;work;hot 5 1')" ]
	run -0 lp-diff --kernel cpu-10ms.lp cpu-10ms-b.lp
	grep -qx 'demo;main;do_syscall_64_\[k\] 2 6' <<<"$output"
	run -0 lp-diff --pid cpu-10ms.lp cpu-10ms-b.lp
	grep -qx 'demo-42;main;work;hot 5 1' <<<"$output"
	# the report counts samples, not weights
	run -0 lp-diff --report cpu-10ms.lp cpu-10ms-b.lp
	[ "$(printf '%s\n' "$output" | rows | awk '$NF == "hot" {print $1, $2, $7, $8}')" = "50.00% 10.00% 5 1" ]
	[[ $output == *"# A: cpu-10ms.lp (10 samples)"* ]]
}

@test "stream input with -s: hex numbers in symbols merged after formatting" {
	{
		printf 'lp-stream\t1\tperiod_ns=1000\n'
		printf 'frame\tf1\tu\t-\t/bin/x\tmain\t-\n'
		printf 'frame\tf2\tj\t-\t/tmp/perf-1.map\tstub_0x7f00aa\t-\n'
		printf 'frame\tf3\tj\t-\t/tmp/perf-1.map\tstub_0x7f00bb\t-\n'
		printf 'stack\ts1\tf1,f2\nstack\ts2\tf1,f3\n'
		printf 'sample\t1\t1\t1\t0\tx\tcpu-clock\t1000\ts1\n'
		printf 'sample\t2\t1\t1\t0\tx\tcpu-clock\t1000\ts2\n'
		printf 'sample\t3\t1\t1\t0\tx\tcpu-clock\t1000\ts2\n'
	} >"$T/j.lp"
	run -0 lp-diff -s --jit "$T/j.lp" "$T/j.lp"
	[ "$output" = "x;main;stub_0x..._[j] 3000 3000" ]
	run -0 lp-diff --jit "$T/j.lp" "$T/j.lp"
	[ "$output" = "$(printf 'x;main;stub_0x7f00aa_[j] 1000 1000\nx;main;stub_0x7f00bb_[j] 2000 2000')" ]
	run -0 lp-diff -s --report "$T/j.lp" "$T/j.lp"
	[[ $output == *"# A: $T/j.lp (3 samples)"* ]]
	[ "$(printf '%s\n' "$output" | rows | awk '$NF == "stub_0x..." {print $1, $7}')" = "100.00% 3" ]
}

# A stream labelled by group (as lp-split --label writes), of known truth:
# slow requests spend half their samples in lock_wait, fast ones none; parse
# is 50% of fast and 25% of slow; one sample has no label.
labelled_stream() {
	{
		printf 'lp-stream\t1\tperiod_ns=1000\tmode=cpu\n'
		printf 'frame\tf1\tu\t-\t/bin/srv\thandle\t-\n'
		printf 'frame\tf2\tu\t-\t/bin/srv\tparse\t-\n'
		printf 'frame\tf3\tu\t-\t/bin/srv\tlock_wait\t-\n'
		printf 'frame\tf4\tu\t-\t/bin/srv\treply\t-\n'
		printf 'stack\ts1\tf1,f2\nstack\ts2\tf1,f3\nstack\ts3\tf1,f4\n'
		for i in $(seq 1 200); do
			printf 'sample\t%d\t1\t1\t0\tsrv\tcpu-clock\t1000\ts%d\tgroup=fast\n' "$i" $((i % 2 ? 1 : 3))
			printf 'sample\t%d\t1\t1\t0\tsrv\tcpu-clock\t1000\ts%d\tgroup=slow\n' "$i" $((i % 2 ? 2 : i % 4 ? 1 : 3))
		done
		printf 'sample\t999\t1\t1\t0\tsrv\tcpu-clock\t1000\ts3\n'
	}
}

@test "--groups: two groups of one labelled stream, from a file or from stdin read once" {
	labelled_stream >"$T/l.lp"
	run -0 lp-diff --report --group fast,slow "$T/l.lp" "$T/l.lp"
	first=$(printf '%s\n' "$output" | rows | head -1)
	[ "$(awk '{print $NF, $1, $2, $7, $8}' <<<"$first")" = "lock_wait 0.00% 50.00% 0 100" ]
	awk -v p="$(awk '{print $9}' <<<"$first")" 'BEGIN { exit !(p + 0 < 1e-10) }'
	[[ $output == *"(200 samples)"* ]]
	file=$output
	run -0 bash -c 'lp-diff --report -g fast,slow - - <"$1"' _ "$T/l.lp"
	[ "$output" = "${file//$T\/l.lp/-}" ]
	run -0 lp-diff -g fast,slow "$T/l.lp" "$T/l.lp"
	[ "$output" = "$(printf 'srv;handle;lock_wait 0 100\nsrv;handle;parse 100 50\nsrv;handle;reply 100 50')" ]
	# an empty name keeps every sample of its side (the unlabelled one too)
	run -0 lp-diff -g ,slow "$T/l.lp" "$T/l.lp"
	grep -qx 'srv;handle;reply 151 50' <<<"$output"
	run -2 lp-diff -g fast "$T/l.lp" "$T/l.lp"
}

@test "perf script input: stacks exactly as stackcollapse-perf.pl's" {
	# For each corpus perf script with its stackcollapse-perf.pl output, the
	# diff of the file with itself is that output with its count twice.
	n=0
	while IFS=$'\t' read -r name kind input opts expected _; do
		[ "$kind" = collapse ] || continue
		case $input in *.gz) continue ;; esac
		case $opts in '(none)') opts= ;; --pid|--tid|--kernel|--all|--addrs) ;; *) continue ;; esac
		[ -s "$CORPUS/$expected" ] || continue
		# shellcheck disable=SC2086
		lp-diff --input-format perf $opts "$CORPUS/$input" "$CORPUS/$input" >"$T/out" 2>/dev/null ||
			{ echo "lp-diff failed: $name"; false; }
		awk '{ n = $NF; $NF = ""; sub(/ $/, ""); print }' "$T/out" >"$T/got"
		diff -q "$T/got" "$CORPUS/$expected" >/dev/null || { echo "differs: $name"; false; }
		n=$((n + 1))
		[ "$n" -lt 40 ] || break
	done <"$CORPUS/cases.tsv"
	[ "$n" -ge 20 ]
}

@test "perf script recorded on different events: refused unless -n; --event-filter" {
	cd "$CORPUS/flamegraph/test"
	a=perf-funcab-cmd-01.txt b=perf-cycles-instructions-01.txt
	run --separate-stderr lp-diff "$a" "$b"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "lp-diff: $a and $b were recorded on different events (cpu-clock vs instructions): use --normalize" ]
	run -0 lp-diff -n "$a" "$b"
	# auto-detected as perf script, as forced
	run -0 lp-diff "$b" "$b"
	auto=$output
	run -0 lp-diff --input-format perf "$b" "$b"
	[ "$auto" = "$output" ]
	# the file's second event, as lp-collapse --event-filter shows it
	run -0 lp-collapse --event-filter cycles "$b"
	want=$output
	run -0 lp-diff --event-filter cycles "$b" "$b"
	[ "$(printf '%s\n' "$output" | awk '{ $NF = ""; sub(/ $/, ""); print }')" = "$want" ]
	[ "$output" != "$auto" ]
}

@test "--format svg: a differential flame graph" {
	run -0 lp-diff --format svg "$D/shift-before.folded" "$D/shift-after.folded"
	[[ $output == *"<svg"* ]]
	[[ $output == *"</svg>"* ]]
	for f in main compute hot cold lex read write idle; do
		[[ $output == *">$f<"* || $output == *"$f ("* ]] || { echo "no frame $f"; false; }
	done
	a=$output
	run -0 lp-diff --format svg "$D/shift-after.folded" "$D/shift-before.folded"
	[ "$a" != "$output" ]
	run -0 lp-diff --format svg "$D/shift-before.folded" "$D/shift-after.folded"
	[ "$a" = "$output" ]
}

# The centre of the rectangle of frame $2 in SVG file $1: "X,Y".
rect_centre() {
	grep -A1 "^<g><title>$2\$" "$1" | sed -n 's/.*<rect x="\([0-9.]*\)" y="\([0-9.]*\)" width="\([0-9.]*\)" height="\([0-9.]*\)".*/\1 \2 \3 \4/p' |
		awk '{ printf "%d,%d\n", $1 + $3 / 2, $2 + $4 / 2 }'
}

@test "--format svg in chromium: the frame that grew is red, the ones that shrank blue" {
	require_cmd chromium
	lp-diff --format svg -o "$T/d.svg" "$D/shift-before.folded" "$D/shift-after.folded"
	hot=$(rect_centre "$T/d.svg" hot)
	cold=$(rect_centre "$T/d.svg" cold)
	idle=$(rect_centre "$T/d.svg" idle)
	[ -n "$hot" ]
	[ -n "$cold" ]
	[ -n "$idle" ]
	run -0 "$BATS_TEST_DIRNAME/helpers/render-svg" png "$T/d.svg" "$T/d.png" "$hot" "$cold" "$idle"
	echo "$output"
	# hot: +20 points, saturated red; cold: -5 points, blue; idle: no change, white-ish grey
	read -r _ _ _ r g b <<<"$(grep "^pixel ${hot/,/ } " <<<"$output")"
	[ "$r" -ge 200 ]
	[ "$g" -le 80 ]
	[ "$b" -le 80 ]
	read -r _ _ _ r g b <<<"$(grep "^pixel ${cold/,/ } " <<<"$output")"
	[ "$b" -ge 200 ]
	[ "$r" -lt "$b" ]
	read -r _ _ _ r g b <<<"$(grep "^pixel ${idle/,/ } " <<<"$output")"
	[ "$r" -eq "$b" ]
	# --negate swaps the hues
	lp-diff --format svg --negate -o "$T/n.svg" "$D/shift-before.folded" "$D/shift-after.folded"
	run -0 "$BATS_TEST_DIRNAME/helpers/render-svg" png "$T/n.svg" "$T/n.png" "$hot"
	read -r _ _ _ r g b <<<"$(grep "^pixel " <<<"$output")"
	[ "$b" -ge 200 ]
	[ "$r" -le 80 ]
}

@test "edge cases: no final newline, CRLF, invalid UTF-8, a 1 MiB line, - twice" {
	printf 'a;b 1\nc 2' >"$T/nonl"
	run -0 lp-diff "$T/nonl" "$T/nonl"
	[ "$output" = "$(printf 'a;b 1 1\nc 2 2')" ]
	printf 'a;b 1\r\nc 2\r\n' >"$T/crlf"
	run -0 lp-diff "$T/crlf" "$T/nonl"
	[ "$output" = "$(printf 'a;b 1 1\nc 2 2')" ]
	printf 'a;\377\376x 3\n' >"$T/utf"
	run -0 lp-diff "$T/utf" "$T/nonl"
	[ "$output" = "$(printf 'a;b 0 1\na;\377\376x 3 0\nc 0 2')" ]
	{ printf 'x;'; head -c 1048576 /dev/zero | tr '\0' y; printf ' 4\n'; } >"$T/big"
	run -0 lp-diff "$T/big" "$T/nonl"
	[ "${#output}" -gt 1048576 ]
	[ "$(printf '%s\n' "$output" | sed -n 3p | cut -c1-4)" = "x;yy" ]
	[[ "$(printf '%s\n' "$output" | sed -n 3p)" == *"y 4 0" ]]
	run -0 bash -c 'lp-diff - - <"$1"' _ "$T/nonl"
	[ "$output" = "$(printf 'a;b 1 1\nc 2 2')" ]
	# control bytes in a name stay on one report row
	printf 'a;b\tc 3\n' >"$T/tab"
	run -0 lp-diff --report "$T/tab" "$T/tab"
	[[ $output == *' b\x09c'* ]]
}

@test "NUL bytes: FILE:LINE, exit 1, nothing on stdout" {
	printf 'a 1\nc\0d 2\n' >"$T/nul"
	run --separate-stderr lp-diff "$D/shift-before.folded" "$T/nul"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == "lp-diff: $T/nul:2: "* ]]
}

@test "streams and perf script: the same stacks and counts as lp-collapse" {
	run -0 lp-collapse "$D/cpu-10ms.lp"
	want=$output
	run -0 lp-diff "$D/cpu-10ms.lp" "$D/cpu-10ms.lp"
	[ "$(printf '%s\n' "$output" | awk '{ $NF = ""; sub(/ $/, ""); print }')" = "$want" ]
	f=$CORPUS/flamegraph/test/perf-cycles-instructions-01.txt
	for opts in "" "--tid --all" "--event-filter instructions"; do
		# shellcheck disable=SC2086
		run -0 lp-collapse $opts "$f"
		want=$output
		# shellcheck disable=SC2086
		run -0 lp-diff $opts "$f" "$f"
		[ "$(printf '%s\n' "$output" | awk '{ $NF = ""; sub(/ $/, ""); print }')" = "$want" ]
	done
}

@test "two real recordings of one workload: its known split on both sides, no significant change [root]" {
	require_root
	# cpusplit by rounds: a() 25% and b() 75% of its loop's rounds by
	# construction, in both runs alike (split by CPU time, a run in which
	# the host took time from the virtual CPU inside a() sampled a() at 20%
	# and the next at 30%: a true change lp-diff rightly called
	# significant).  499 Hz for 3 s: ~1500 samples a side when idle, still
	# hundreds on a loaded machine; +-10 points is then more than 4
	# standard deviations.
	CPUSPLIT_BY_ROUNDS=1 lp-record -F 499 -o "$T/1.lp" -- "$WORKLOADS/cpusplit" 3 0 "$T/t1" 2>/dev/null
	CPUSPLIT_BY_ROUNDS=1 lp-record -F 499 -o "$T/2.lp" -- "$WORKLOADS/cpusplit" 3 0 "$T/t2" 2>/dev/null
	[ "$(truth_a "$T/t1")" = 25.0 ] || fail "run 1 split its rounds $(cat "$T/t1")"
	[ "$(truth_a "$T/t2")" = 25.0 ] || fail "run 2 split its rounds $(cat "$T/t2")"
	run -0 lp-diff --report --top 0 --alpha 0.001 "$T/1.lp" "$T/2.lp"
	echo "$output"
	for f in a b; do
		row=$(printf '%s\n' "$output" | rows | awk -v f="$f" '$NF == f')
		[ -n "$row" ]
		read -r _ _ _ ta tb _ na nb p _ <<<"$row"
		want=$([ "$f" = a ] && echo 25 || echo 75)
		awk -v a="${ta%\%}" -v b="${tb%\%}" -v w="$want" -v p="$p" -v na="$na" \
			'BEGIN { exit !(a > w - 10 && a < w + 10 && b > w - 10 && b < w + 10 && p >= 0.001 && na >= 20) }'
	done
	# recorded at another rate: refused, then accepted with -n
	lp-record -F 199 -o "$T/3.lp" -- "$WORKLOADS/cpusplit" 1 2>/dev/null
	run --separate-stderr lp-diff "$T/1.lp" "$T/3.lp"
	[ "$status" -eq 1 ]
	[[ $stderr == "lp-diff: $T/1.lp and $T/3.lp were recorded at different periods ("*" ns vs "*" ns): use --normalize" ]]
	run -0 lp-diff -n "$T/1.lp" "$T/3.lp"
	grep -q '^cpusplit;.*;main;b;spin [0-9.]* [0-9.]*$' <<<"$output"
}

@test "every EXAMPLES line of the man page that needs only lp runs" {
	cp "$D/shift-before.folded" "$T/before.folded"
	cp "$D/shift-after.folded" "$T/after.folded"
	labelled_stream >"$T/labelled.lp"
	cd "$T"
	examples=$(sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$LP_TOP/man/lp-diff.1" | grep '^lp-diff ' | grep -v '\.perf\|before\.lp\|after\.lp')
	[ "$(printf '%s\n' "$examples" | wc -l)" -ge 5 ]
	while IFS= read -r line; do
		bash -c "$line" || { echo "failed: $line"; false; }
	done <<<"$examples"
	[ -s diff.folded ]
	[ -s diff.svg ]
	[ -s shrink.svg ]
}
