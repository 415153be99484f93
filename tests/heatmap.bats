#!/usr/bin/env bats
# lp-collapse --format heatmap and heatmap-tsv: flamescope's sub-second
# offset heatmap.  The streams are made here with known sample times, so
# every cell's count and range is known by construction; each cell's range,
# given to lp-split --time, must select exactly that cell's samples.

load helpers/common

setup() {
	load_bats_libs
	T=$BATS_TEST_TMPDIR
	T0=1000000000123	# the first sample: 1000 s and 123 ns
}

header() {
	printf 'lp-stream\t1\tproducer=test\n'
	printf 'frame\tf1\tu\t-\t/bin/app\tmain\t-\n'
	printf 'stack\ts1\tf1\n'
}

# sample TIME [EVENT]
sample() {
	printf 'sample\t%s\t7\t7\t0\tapp\t%s\t1\ts1\n' "$1" "${2:-cpu-clock}"
}

# One sample at each offset (ns) from T0, in the order given.
at_offsets() {
	header
	for off in "$@"; do
		sample $((T0 + off))
	done
}

# Three seconds from T0: one sample at T0, one every 100 ms at offsets 50,
# 150, ... 950 ms, and in second 1 a burst of 7 at 100, 103, ... 118 ms.
three_seconds() {
	header
	{
		sample "$T0"
		for s in 0 1 2; do
			for k in 0 1 2 3 4 5 6 7 8 9; do
				sample $((T0 + s * 1000000000 + 50000000 + k * 100000000))
			done
		done
		for i in 0 1 2 3 4 5 6; do
			sample $((T0 + 1100000000 + i * 3000000))
		done
	} | sort -t $'\t' -k2,2n
}

well_formed() {
	python3 -c 'import xml.dom.minidom, sys; xml.dom.minidom.parse(sys.argv[1])' "$1"
}

# Every cell of a heatmap-tsv output ($1) against lp-split on the stream
# ($2): its time range selects exactly as many samples as the cell counts,
# and the cells together hold every sample of the stream.
cells_agree_with_lp_split() {
	local second ms n range total=0
	while IFS=$'\t' read -r second ms n range; do
		if [ "$second" = second ]; then continue; fi
		lp-split --time "$range" --label -q "$2" >"$T/sel" 2>/dev/null
		got=$(grep -c 'group=outside$' "$T/sel" || [ $? -eq 1 ])
		[ "$got" -eq "$n" ] || { echo "cell $second $ms ($range): $n samples, lp-split selects $got"; return 1; }
		total=$((total + n))
	done <"$1"
	[ "$total" -eq "$(grep -c '^sample' "$2")" ] || { echo "cells hold $total samples"; return 1; }
}

@test "heatmap-tsv: 20 ms cells by default, counts and ranges exact, by second then offset" {
	three_seconds >"$T/s.lp"
	# the truth, written from the construction above
	{
		printf 'second\toffset_ms\tsamples\ttime\n'
		for s in 0 1 2; do
			base=$((T0 + s * 1000000000))
			if [ "$s" -eq 0 ]; then printf '0\t0\t1\t@%d-@%d\n' "$base" $((base + 20000000)); fi
			for k in 0 1 2 3 4 5 6 7 8 9; do
				ms=$((40 + 100 * k))
				if [ "$s$k" = 11 ]; then printf '1\t100\t7\t@%d-@%d\n' $((base + 100000000)) $((base + 120000000)); fi
				printf '%d\t%d\t1\t@%d-@%d\n' "$s" "$ms" $((base + ms * 1000000)) \
					$((base + (ms + 20) * 1000000))
			done
		done
	} >"$T/want"
	run -0 --separate-stderr lp-collapse --format heatmap-tsv "$T/s.lp"
	[ -z "$stderr" ]
	[ "$output" = "$(cat "$T/want")" ]
	assert_line --index 13 $'1\t100\t7\t@1001100000123-@1001120000123'
	[ "${#lines[@]}" -eq 33 ]	# the header, 32 cells
}

@test "heatmap-tsv --rows 10: exact 100 ms cells" {
	three_seconds >"$T/s.lp"
	run -0 lp-collapse --format heatmap-tsv --rows 10 "$T/s.lp"
	[ "${#lines[@]}" -eq 31 ]
	assert_line --index 1 $'0\t0\t2\t@1000000000123-@1000100000123'
	assert_line --index 2 $'0\t100\t1\t@1000100000123-@1000200000123'
	assert_line --index 12 $'1\t100\t8\t@1001100000123-@1001200000123'
	assert_line --index 30 $'2\t900\t1\t@1002900000123-@1003000000123'
	# every other cell holds one sample
	[ "$(cut -f3 <<<"$output" | sort | uniq -c | tr -s ' ')" = " 28 1
 1 2
 1 8
 1 samples" ]
}

@test "each cell's time range, given to lp-split --time, selects exactly that cell's samples" {
	three_seconds >"$T/s.lp"
	for rows in 10 50; do
		lp-collapse --format heatmap-tsv --rows "$rows" "$T/s.lp" >"$T/cells"
		cells_agree_with_lp_split "$T/cells" "$T/s.lp"
	done
	# the burst's cell: its seven samples and nothing else
	range=$(awk -F'\t' '$1 == 1 && $2 == 100 { print $4 }' "$T/cells")
	lp-split --time "$range" --label -q "$T/s.lp" 2>/dev/null >"$T/sel"
	run -0 awk -F'\t' '/group=outside$/ { print $2 - '"$T0"' }' "$T/sel"
	[ "$output" = "$(printf '%s\n' 1100000000 1103000000 1106000000 1109000000 1112000000 \
		1115000000 1118000000)" ]
}

@test "rows that do not divide a second: a cell starts at the first nanosecond that falls in it" {
	# 3 rows: row 1 starts at ceil(1e9 / 3) = 333333334 ns, row 2 at 666666667
	at_offsets 0 333333333 333333334 666666666 666666667 999999999 >"$T/s.lp"
	run -0 lp-collapse --format heatmap-tsv --rows 3 "$T/s.lp"
	[ "$output" = "second	offset_ms	samples	time
0	0	2	@1000000000123-@1000333333457
0	333.333	2	@1000333333457-@1000666666790
0	666.667	2	@1000666666790-@1001000000123" ]
	lp-collapse --format heatmap-tsv --rows 3 "$T/s.lp" >"$T/cells"
	cells_agree_with_lp_split "$T/cells" "$T/s.lp"
}

@test "samples out of order: an earlier one read later still counts, in whole-second columns before" {
	# read in this order: +500 ms (the first), then 0, +100 ms and +1400 ms
	at_offsets 500000000 0 100000000 1400000000 >"$T/s.lp"
	# column 0 now starts a whole second before the first sample read
	run -0 lp-collapse --format heatmap-tsv --rows 10 "$T/s.lp"
	[ "$output" = "second	offset_ms	samples	time
0	500	1	@1000000000123-@1000100000123
0	600	1	@1000100000123-@1000200000123
1	0	1	@1000500000123-@1000600000123
1	900	1	@1001400000123-@1001500000123" ]
	lp-collapse --format heatmap-tsv --rows 10 "$T/s.lp" >"$T/cells"
	cells_agree_with_lp_split "$T/cells" "$T/s.lp"
	# and much earlier ones: columns prepended, every count kept
	{ cat "$T/s.lp"; sample $((T0 - 600 * 1000000000)); sample $((T0 - 7 * 1000000000)); } >"$T/s2.lp"
	lp-collapse --format heatmap-tsv --rows 10 "$T/s2.lp" >"$T/cells"
	[ "$(sed -n 2p "$T/cells")" = $'0\t500\t1\t@400000000123-@400100000123' ]
	cells_agree_with_lp_split "$T/cells" "$T/s2.lp"
}

@test "samples without times (folded input) or more than a day apart: exit 1, FILE:LINE: why, no output" {
	printf 'main;work 3\nmain 1\n' >"$T/folded"
	for fmt in heatmap heatmap-tsv; do
		run -1 --separate-stderr lp-collapse --format "$fmt" "$T/folded"
		[ -z "$output" ]
		[ "$stderr" = "lp-collapse: $T/folded:1: a heatmap needs timestamps (folded input and perf script without times have none)" ]
	done
	# a day is 86400 columns: the last second's last nanosecond still fits
	{ header; sample "$T0"; sample $((T0 + 86400 * 1000000000 - 1)); } >"$T/day.lp"
	run -0 lp-collapse --format heatmap-tsv "$T/day.lp"
	assert_line --index 2 $'86399\t980\t1\t@87399980000123-@87400000000123'
	# (times are not negative: the earlier case starts a day and more later)
	t1=$((T0 + 86401 * 1000000000))
	for pair in "$T0 $((T0 + 86400 * 1000000000))" "$t1 $T0"; do
		read -r base far <<<"$pair"
		{ header; sample "$base"; sample "$base"; sample "$far"; } >"$T/far.lp"
		run -1 --separate-stderr lp-collapse --format heatmap "$T/far.lp"
		[ -z "$output" ]
		[ "$stderr" = "lp-collapse: $T/far.lp:6: sample at $far ns would stretch the heatmap past a day, its limit (the samples so far: $base to $base ns)" ]
	done
}

@test "perf script input: its timestamps place the samples" {
	{
		printf 'app 10/11 [000] 1.000001: 100 cycles: \n\t    401000 leaf+0x1 (/bin/app)\n\n'
		printf 'app 10/11 [000] 1.000002: 100 cycles: \n\t    401000 leaf+0x1 (/bin/app)\n\n'
		printf 'app 10/11 [001] 1.250001: 100 cycles: \n\t    401000 leaf+0x1 (/bin/app)\n\n'
	} >"$T/perf.txt"
	run -0 lp-collapse --format heatmap-tsv --rows 4 "$T/perf.txt"
	[ "$output" = "second	offset_ms	samples	time
0	0	2	@1000001000-@1250001000
0	250	1	@1250001000-@1500001000" ]
}

@test "only the samples that pass --event-filter and --group are counted" {
	{
		header
		sample "$T0" cycles
		sample $((T0 + 10)) cpu-clock
		sample $((T0 + 500000000)) cycles
	} >"$T/s.lp"
	run -0 lp-collapse --format heatmap-tsv --rows 2 --event-filter cycles "$T/s.lp"
	[ "$output" = "second	offset_ms	samples	time
0	0	1	@1000000000123-@1000500000123
0	500	1	@1000500000123-@1001000000123" ]
	# a cell's range through lp-split --label, then --group: that cell alone
	three_seconds >"$T/s.lp"
	lp-split --time @1001100000123-@1001120000123 --label -q "$T/s.lp" 2>/dev/null >"$T/lab.lp"
	run -0 lp-collapse --format heatmap-tsv --group outside "$T/lab.lp"
	[ "$output" = "second	offset_ms	samples	time
0	0	7	@1001100000123-@1001120000123" ]
}

@test "heatmap SVG: well-formed, one titled rect per non-empty cell, the tooltip says count and range" {
	three_seconds >"$T/s.lp"
	run -0 --separate-stderr lp-collapse --format heatmap -o "$T/h.svg" "$T/s.lp"
	[ -z "$output" ]
	[ -z "$stderr" ]
	well_formed "$T/h.svg"
	[ "$(grep -c '<rect [^>]*><title>' "$T/h.svg")" -eq 32 ]
	grep -qF '<title>second 1, offset 100–120 ms: 7 samples; lp-split --time @1001100000123-@1001120000123</title>' "$T/h.svg"
	grep -qF '<title>second 0, offset 0–20 ms: 1 sample; lp-split --time @1000000000123-@1000020000123</title>' "$T/h.svg"
	# the default title, the axes, the fullest cell darkest
	grep -qF '>Heatmap</text>' "$T/h.svg"
	grep -qF '>seconds</text>' "$T/h.svg"
	grep -qF '>offset (ms)</text>' "$T/h.svg"
	dark=$(grep -F 'offset 100–120 ms: 7' "$T/h.svg" | grep -o 'fill="#[0-9a-f]*"')
	[ "$(grep -cF "$dark" "$T/h.svg")" -eq 1 ]
	# --rows 10: as many cells as heatmap-tsv lists
	lp-collapse --format heatmap --rows 10 "$T/s.lp" >"$T/h10.svg"
	well_formed "$T/h10.svg"
	[ "$(grep -c '<rect [^>]*><title>' "$T/h10.svg")" -eq 30 ]
	grep -qF '<title>second 1, offset 100–200 ms: 8 samples; lp-split --time @1001100000123-@1001200000123</title>' "$T/h10.svg"
}

@test "heatmap SVG: titles are XML-escaped, invalid UTF-8 shows as \\xHH" {
	three_seconds >"$T/s.lp"
	run -0 lp-collapse --format heatmap --title $'a<b & "c" \'d\' \xff' "$T/s.lp"
	printf '%s\n' "$output" >"$T/h.svg"
	well_formed "$T/h.svg"
	grep -qF '<text id="title" x="' "$T/h.svg"
	grep -qF '>a&lt;b &amp; &quot;c&quot; &#39;d&#39; \xFF</text>' "$T/h.svg"
}

@test "no samples: an SVG that says so, a TSV of the header alone, exit 0" {
	: >"$T/empty"
	header >"$T/header.lp"
	for f in "$T/empty" "$T/header.lp"; do
		run -0 --separate-stderr lp-collapse --format heatmap "$f"
		[ -z "$stderr" ]
		printf '%s\n' "$output" >"$T/h.svg"
		well_formed "$T/h.svg"
		grep -qF '>no samples</text>' "$T/h.svg"
		grep -qF '>Heatmap</text>' "$T/h.svg"
		run -0 lp-collapse --format heatmap-tsv "$f"
		[ "$output" = $'second\toffset_ms\tsamples\ttime' ]
	done
}

@test "--rows outside 1..1000 is bad usage (exit 2)" {
	three_seconds >"$T/s.lp"
	for bad in 0 1001 x -3; do
		run -2 --separate-stderr lp-collapse --format heatmap --rows "$bad" "$T/s.lp"
		[ -z "$output" ]
		[[ "$stderr" == "lp-collapse: --rows '$bad': "* ]]
	done
	run -0 lp-collapse --format heatmap-tsv --rows 1 "$T/s.lp"
	assert_line --index 2 $'1\t0\t17\t@1001000000123-@1002000000123'
	run -0 lp-collapse --format heatmap-tsv --rows 1000 "$T/s.lp"
	assert_line --index 1 $'0\t0\t1\t@1000000000123-@1000001000123'
}
