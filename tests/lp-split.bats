#!/usr/bin/env bats
# lp-split: groups by the enclosing span's latency.  Streams come from
# tests/fixtures/join/gen-split.awk through lp-join, so their truth is known:
# dist=perm has one span of each duration 1us, 2us, ..., n us and one sample
# in each (see the generator).

load helpers/common

setup() {
	T=$BATS_TEST_TMPDIR
	GEN=$FIXTURES/join/gen-split.awk
}

# gen N DIST [W]: $T/j.lp, the joined stream.
gen() {
	awk -v n="$1" -v dist="$2" -v w="${3:-100}" -v S="$T/s.lp" -v P="$T/p.lp" -f "$GEN"
	lp-join "$T/s.lp" "$T/p.lp" > "$T/j.lp"
}

# The span durations (ns) of the samples of a stream, one a line.
durations() {
	awk -F'\t' '$1 == "sample" { s = e = ""
		for (i = 10; i <= NF; i++) { if ($i ~ /^span_start=/) s = substr($i, 12); if ($i ~ /^span_end=/) e = substr($i, 10) }
		print (s == "" ? "none" : e - s) }' "$1"
}

@test "lp-split: exact membership at p90 of 1000 known durations" {
	gen 1000 perm
	run --separate-stderr -0 lp-split --percentile 90 --probe req --above "$T/a.lp" --below "$T/b.lp" "$T/j.lp"
	[[ "$stderr" == "# probe req: 1000 spans, p90 = 900000 ns (exact)"* ]]
	# Exactly the 100 spans slower than 900us are above, with their samples.
	[ "$(durations "$T/a.lp" | wc -l)" -eq 100 ]
	[ "$(durations "$T/a.lp" | awk '$1 > 900000' | wc -l)" -eq 100 ]
	[ "$(durations "$T/b.lp" | grep -vc none)" -eq 900 ]
	[ "$(durations "$T/b.lp" | awk '$1 != "none" && $1 <= 900000' | wc -l)" -eq 900 ]
	[ "$(grep -c '^span.*req' "$T/a.lp")" -eq 100 ]
	[ "$(grep -c '^span.*req' "$T/b.lp")" -eq 900 ]
	# The report: per group spans, samples, quantiles of the group.
	grep -qx "above	100	100	950000	990000	999000	1000000	95050000	10000	0.0%" <<<"$stderr"
	grep -qx "below	900	900	450000	810000	891000	900000	405450000	90000	0.0%" <<<"$stderr"
	grep -qx "outside	-	1	-	-	-	-	-	100	-" <<<"$stderr"
}

@test "lp-split: several cut points, a file per band by pattern" {
	gen 1000 perm
	run -0 lp-split -P 99,50,90 --probe req -O "$T/g-%s.lp" -q "$T/j.lp"
	[ "$(durations "$T/g-p0-p50.lp" | awk '$1 <= 500000' | wc -l)" -eq 500 ]
	[ "$(durations "$T/g-p50-p90.lp" | awk '$1 > 500000 && $1 <= 900000' | wc -l)" -eq 400 ]
	[ "$(durations "$T/g-p90-p99.lp" | awk '$1 > 900000 && $1 <= 990000' | wc -l)" -eq 90 ]
	[ "$(durations "$T/g-p99-p100.lp" | awk '$1 > 990000' | wc -l)" -eq 10 ]
	for f in p0-p50 p50-p90 p90-p99 p99-p100; do
		[ "$(grep -c '^sample' "$T/g-$f.lp")" -eq "$(durations "$T/g-$f.lp" | wc -l)" ]
	done
	[ "$(grep -c '^sample' "$T/g-outside.lp")" -eq 1 ]
	[ ! -e "$T/g-excluded.lp" ]
	[ ! -e "$T/g-unranked.lp" ]
}

@test "lp-split: --threshold, one pass, the same from stdin" {
	gen 1000 perm
	run -0 bash -c "lp-split --threshold 250us --probe req --above '$T/a.lp' --below '$T/b.lp' -q < '$T/j.lp'"
	[ "$(durations "$T/a.lp" | awk '$1 > 250000' | wc -l)" -eq 750 ]
	[ "$(grep -c '^sample' "$T/a.lp")" -eq 750 ]
	[ "$(durations "$T/b.lp" | awk '$1 != "none" && $1 <= 250000' | wc -l)" -eq 250 ]
	# Percentiles from a pipe (spooled): the same as from the file.
	run -0 bash -c "cat '$T/j.lp' | lp-split -P 90 --probe req --above '$T/a2.lp' --below /dev/null -q"
	run -0 lp-split -P 90 --probe req --above "$T/a1.lp" --below /dev/null -q "$T/j.lp"
	cmp "$T/a1.lp" "$T/a2.lp"
}

@test "lp-split: --where on a captured value decides which spans count" {
	gen 1000 perm
	run --separate-stderr -0 lp-split -P 90 --probe req --where arg0=1 --above "$T/a.lp" --below "$T/b.lp" \
		--group "excluded=$T/x.lp" "$T/j.lp"
	# i % 3 == 1 for 334 of i = 1..1000.
	[[ "$stderr" == "# probe req: 334 spans, p90 = "* ]]
	[ "$(grep -c '^sample' "$T/x.lp")" -eq 666 ]
	# nearest rank: ceil(0.9 * 334) = 301 at or below the cut, 33 above.
	[ "$(grep -c "^sample" "$T/a.lp")" -eq 33 ]
	[ "$(grep -c "^sample" "$T/b.lp")" -eq 301 ]
	run -0 awk '/^sample/ && /span=/ && !/span\.arg0=1/' "$T/a.lp" "$T/b.lp"
	[ "$output" = "" ]
	run --separate-stderr -2 lp-split -P 90 --where 'arg0<x' --above /dev/null "$T/j.lp"
	[ "$stderr" = "lp-split: --where 'arg0<x': <, <=, > and >= need a number" ]
}

@test "lp-split: --time keeps the samples of a range" {
	gen 1000 perm
	# Spans every 10 ms from 10 ms: [2s, 3s) after the first time holds 100.
	run -0 lp-split --time 2s-3s --probe req -O "$T/r-%s.lp" -q "$T/j.lp"
	[ "$(grep -c '^sample' "$T/r-selected.lp")" -eq 100 ]
	[ "$(grep -c '^sample' "$T/r-excluded.lp")" -eq 901 ]
	run -0 lp-split --time @2000000000- --probe req -O "$T/t-%s.lp" -q "$T/j.lp"
	[ "$(grep -c '^sample' "$T/t-selected.lp")" -eq 801 ]
}

@test "lp-split: --label, and lp-collapse --group reads it" {
	gen 1000 perm
	run -0 lp-split -P 90 --probe req --label -q -o "$T/l.lp" "$T/j.lp"
	[ "$(grep '^sample' "$T/l.lp" | grep -c 'group=above$')" -eq 100 ]
	[ "$(grep '^sample' "$T/l.lp" | grep -c 'group=below$')" -eq 900 ]
	[ "$(grep '^sample' "$T/l.lp" | grep -c 'group=outside$')" -eq 1 ]
	run -0 lp-collapse --group outside "$T/l.lp"
	[ "$output" = "x;main;slow 100" ]
	run -0 lp-collapse --group above "$T/l.lp"
	[ "$output" = "x;main 10000" ]
}

@test "lp-split: coverage is the share of span time the samples explain" {
	# Above p90 the spans (901..1000 us) add up to 95.05 ms; one sample of
	# weight 95.05 us in each of the 100 explains 10% of that.
	gen 1000 perm 95050
	run --separate-stderr -0 lp-split -P 90 --probe req --above /dev/null "$T/j.lp"
	# 100 samples of 95.05 us over 95.05 ms of spans: 10%.
	grep -q "^above	100	100	.*	95050000	9505000	10.0%$" <<<"$stderr"
}

@test "lp-split: --live estimates p90 within its stated 1% of the exact value" {
	gen 5000 log
	exact=$(durations "$T/j.lp" | grep -v none | sort -n | awk '{ v[NR] = $1 } END { r = int(0.9 * NR); if (r < 0.9 * NR) r++; print v[r] }')
	# Spans first, then the samples: every sample sees the final estimate.
	{ grep -v '^sample' "$T/j.lp"; grep '^sample' "$T/j.lp"; } > "$T/sorted.lp"
	run --separate-stderr -0 lp-split --live -P 90 --probe req --label -o "$T/l.lp" "$T/sorted.lp"
	est=$(sed -n 's/.*p90 = \([0-9]*\) ns (live.*relative error <= 1%).*/\1/p' <<<"$stderr")
	echo "exact $exact, estimate $est" >&3
	[ -n "$est" ]
	awk -v e="$est" -v x="$exact" 'BEGIN { r = (e - x) / x; if (r < 0) r = -r; exit !(r <= 0.01) }'
	# Membership: clear of the error band, every sample is where it belongs.
	grep '^sample' "$T/l.lp" > "$T/ls"
	paste <(durations "$T/ls") <(grep -o 'group=[a-z]*' "$T/ls") |
		awk -v x="$exact" '$1 != "none" && (($1 > x * 1.01 && $2 != "group=above") || ($1 < x * 0.99 && $2 != "group=below")) { bad++ } END { exit bad > 0 }'
	# The estimate is not exact by luck: the exact mode differs from it.
	run --separate-stderr -0 lp-split -P 90 --probe req --above /dev/null "$T/j.lp"
	[[ "$stderr" == *"p90 = $exact ns (exact)"* ]]
}

@test "lp-split: --live forgets spans that left the sliding window" {
	# 200 spans 1 s apart: 1-2 ms for 100 s, then 100-200 ms.
	gen 200 shift
	run --separate-stderr -0 lp-split --live --window 20s -P 50 --probe req --label -q "$T/j.lp"
	run --separate-stderr -0 lp-split --live --window 20s -P 50 --probe req --above /dev/null "$T/j.lp"
	est=$(sed -n 's/.*p50 = \([0-9]*\) ns (live.*/\1/p' <<<"$stderr")
	# Only the last 20 s (100-200 ms spans) are in the window.
	[ "$est" -gt 100000000 ]
	[ "$est" -lt 200000000 ]
	# Without a window that forgets, the median is near the boundary.
	run --separate-stderr -0 lp-split --live --window 1000s -P 50 --probe req --above /dev/null "$T/j.lp"
	est=$(sed -n 's/.*p50 = \([0-9]*\) ns (live.*/\1/p' <<<"$stderr")
	[ "$est" -lt 3000000 ]
}

@test "lp-split: usage errors exit 2 with a reason" {
	run --separate-stderr -2 lp-split --percentile 100 --above /dev/null
	[ "$stderr" = "lp-split: --percentile '100': must be between 0 and 100" ]
	run --separate-stderr -2 lp-split -P 90 --group fast=/dev/null x.lp
	[[ "$stderr" == "lp-split: no group 'fast' with these options (groups: below, above, outside, excluded, unranked, uncertain, lp, unprobed)" ]]
	run --separate-stderr -2 lp-split -P 90 --label --above a.lp x.lp
	[[ "$stderr" == "lp-split: --label writes one stream"* ]]
	run --separate-stderr -2 lp-split -P 90 -t 1ms --above a.lp x.lp
	run --separate-stderr -2 lp-split -P 90 -O 'x.lp' x.lp
	[ "$stderr" = "lp-split: --output-pattern 'x.lp': expected exactly one %s" ]
	run --separate-stderr -2 lp-split -P 90 --time 1s x.lp
	run --separate-stderr -1 lp-split -P 90 --above "$T/a.lp" "$T/missing.lp"
	[[ "$stderr" == *"missing.lp"*"No such file or directory"* ]]
	[ ! -e "$T/a.lp" ]
}

@test "lp-split: malformed input is an error naming the line, never a quiet result" {
	printf 'lp-stream\t1\nspan\t1\t2\t1\t1\tf\t0\nsample\tbad\n' > "$T/bad.lp"
	run --separate-stderr -1 lp-split -P 90 --above "$T/a.lp" "$T/bad.lp"
	[[ "$stderr" == "lp-split: $T/bad.lp:3: "* ]]
	[ ! -e "$T/a.lp" ]
}

@test "lp-split: --help lists every option, all in the man page; --version" {
	run -0 lp-split --help
	[[ "$output" == usage:* ]]
	for opt in $(grep -o -- '--[a-z][a-z-]*' <<<"$output" | sort -u); do
		grep -q -- "${opt//-/\\\\-}" "$LP_TOP/man/lp-split.1" || { echo "$opt not in man page"; false; }
	done
	run -0 lp-split --version
	[[ "$output" == "lp-split (lp) "* ]]
}

@test "lp-split: the man page's examples run" {
	cd "$T"
	awk -v n=300 -v dist=perm -v S=s.lp -v P=p.lp -f "$GEN"
	sed 's/\treq\t/\thandle_request\t/' p.lp > p2.lp
	lp-join s.lp p2.lp > joined.lp
	# --auto's examples need two modes: split-auto.bats runs them.
	sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$LP_TOP/man/lp-split.1" | sed -n 's/^\\fB\$ \(.*\)\\fR$/\1/p' |
		sed 's/\\-/-/g' | grep -v 'lp-record\|lp-trace\|--auto' > examples
	[ "$(wc -l < examples)" -ge 5 ]
	while read -r cmd; do
		echo "running: $cmd"
		bash -c "set -o pipefail; $cmd" > /dev/null
	done < examples
	[ "$(grep -c '^sample' slow.lp)" -eq 30 ]
	[ -s bands.txt ]
	[ -e band-p99-p100.lp ]
	[ -e range-selected.lp ]
}

@test "lp-split: --probe finds its span among lp-join --all-spans' outer spans" {
	J=$FIXTURES/join
	lp-join --all-spans "$J/samples.lp" "$J/spans.lp" > "$T/all.lp"
	# B [3000, 5000) encloses 3200, 3500, 3999 (inside C) and 4000.
	run -0 lp-split -t 1us --probe B --above "$T/a.lp" -q "$T/all.lp"
	[ "$(awk -F'\t' '$1 == "sample" { print $2 }' "$T/a.lp" | sort -n | tr '\n' ' ')" = "3200 3500 3999 4000 " ]
	# Without --all-spans only the innermost is known: 3500 and 3999 are C's.
	lp-join "$J/samples.lp" "$J/spans.lp" > "$T/inner.lp"
	run -0 lp-split -t 1us --probe B --above "$T/a.lp" -q "$T/inner.lp"
	[ "$(awk -F'\t' '$1 == "sample" { print $2 }' "$T/a.lp" | sort -n | tr '\n' ' ')" = "3200 4000 " ]
}

@test "lp-split: says so when the input has no spans to split by" {
	gen 100 perm
	run --separate-stderr -0 lp-split -P 90 --above /dev/null -q "$T/s.lp"
	[ "$stderr" = "lp-split: no sample carries a span (span=): is the input lp-join's output?" ]
	run --separate-stderr -0 lp-split -P 90 --probe nosuch --above /dev/null -q "$T/j.lp"
	[ "$stderr" = "lp-split: no span of probe 'nosuch' in the input" ]
	# --quiet leaves the report out, not the warnings: 100 spans split at
	# p90 leave 10 above, too few to show anything.
	run --separate-stderr -0 lp-split -P 90 --probe req --above /dev/null -q "$T/j.lp"
	[ "$stderr" = "lp-split: warning: group above has 10 spans and 10 samples: too few to compare; record longer or move the cut" ]
	gen 1000 perm
	run --separate-stderr -0 lp-split -P 90 --probe req --above /dev/null -q "$T/j.lp"
	[ -z "$stderr" ]
}

# Probe records (lp-trace --control): req attached from 1000 to 5000 ns.
# Samples at 1500, 3500 and 4500 fall in no span of req while it was
# attached: outside; 500, 5500 and 6500 while it was not: unprobed, not
# outside; 2500 in its span [2000, 3000).  Without the records, all six
# are outside.
@test "lp-split: samples taken while the probe was not attached are unprobed, not outside" {
	load_bats_libs
	{
		printf 'lp-stream\t1\tproducer=lp-record\n'
		printf 'frame\tf1\tu\t-\t/bin/svc\tmain\t-\nstack\ts1\tf1\n'
		for t in 500 1500 2500 3500 4500 5500 6500; do
			printf 'sample\t%s\t100\t100\t0\tsvc\tcpu-clock\t1000\ts1\n' "$t"
		done
	} >"$T/smp.lp"
	{
		printf 'lp-stream\t1\tproducer=lp-trace\n'
		printf 'probe\t1000\tattach\treq\tspec=req(x)\n'
		printf 'span\t2000\t3000\t100\t100\treq\t0\n'
		printf 'span\t4000\t4400\t100\t100\treq\t0\n'
		printf 'probe\t5000\tdetach\treq\tspec=req(x)\topen=0\n'
	} >"$T/spn.lp"
	lp-join "$T/smp.lp" "$T/spn.lp" >"$T/j.lp"
	# lp-join passes the records on.
	[ "$(grep -c '^probe' "$T/j.lp")" -eq 2 ]
	run --separate-stderr -0 lp-split -t 1ms --probe req --label "$T/j.lp"
	run -0 awk -F'\t' '$1 == "sample" { for (i = 10; i <= NF; i++) if ($i ~ /^group=/) print $2, substr($i, 7) }' <<<"$output"
	[ "$output" = "500 unprobed
1500 outside
2500 below
3500 outside
4500 outside
5500 unprobed
6500 unprobed" ] || fail "groups: $output"
	# A file of its own when asked for; none made otherwise.
	run --separate-stderr -0 lp-split -t 1ms --probe req -O "$T/g-%s.lp" -g "unprobed=$T/u.lp" "$T/j.lp"
	grep -qx "unprobed	-	3	-	-	-	-	-	3000	-" <<<"$stderr" || fail "report: $stderr"
	[ "$(grep -c '^sample' "$T/u.lp")" -eq 3 ]
	[ "$(grep -c '^sample' "$T/g-outside.lp")" -eq 3 ]
	[ ! -e "$T/g-unprobed.lp" ]
	# Without probe records: attached throughout.
	grep -v '^probe' "$T/j.lp" >"$T/j0.lp"
	run --separate-stderr -0 lp-split -t 1ms --probe req --label "$T/j0.lp"
	[ "$(grep -c 'group=outside' <<<"$output")" -eq 6 ]
	# A live split reads them as they come.
	run --separate-stderr -0 lp-split --live -t 1ms --probe req --label "$T/j.lp"
	[ "$(grep -c 'group=unprobed' <<<"$output")" -eq 3 ]
	# A python: probe's records name its glob, its spans the function.
	sed '/^span/s/\treq\t/\tpython:Shop.checkout\t/; s/^\(probe\t[0-9]*\t[a-z]*\t\)req/\1python:Shop.*/' "$T/spn.lp" >"$T/py.lp"
	grep -q "attach	python:Shop\.\*	" "$T/py.lp"
	lp-join "$T/smp.lp" "$T/py.lp" >"$T/jp.lp"
	run --separate-stderr -0 lp-split -t 1ms --probe python:Shop.checkout --label "$T/jp.lp"
	[ "$(grep -c 'group=unprobed' <<<"$output")" -eq 3 ]
	[ "$(grep -c 'group=outside' <<<"$output")" -eq 3 ]
	# A malformed one is an error naming the line.
	printf 'probe\tx\tattach\treq\n' >>"$T/spn.lp"
	run -1 lp-join "$T/smp.lp" "$T/spn.lp"
	[[ "$output" == *"spn.lp:6: probe: bad time 'x'"* ]] || fail "$output"
}

@test "lp-split: --label ends with split records: the probe, cut, modes, groups, features, notes" {
	gen 1000 perm
	run -0 lp-split -P 90 --probe req --label -q -o "$T/l.lp" "$T/j.lp"
	# After the last sample and span: lp-split's decisions, nothing else.
	last_data=$(grep -n -v '^split' "$T/l.lp" | tail -1 | cut -d: -f1)
	first_split=$(grep -n '^split' "$T/l.lp" | head -1 | cut -d: -f1)
	[ "$first_split" -gt "$last_data" ]
	grep -qx "split	probe	req	-	spans=1000	cuts=exact" "$T/l.lp"
	grep -qx "split	cut	p90	900000" "$T/l.lp"
	grep -qx "split	group	above	-	spans=100	samples=100	p50_ns=950000	p90_ns=990000	p99_ns=999000	max_ns=1000000	span_ns=95050000	sample_ns=10000	coverage=0.000105208" "$T/l.lp"
	grep -qx "split	group	below	-	spans=900	samples=900	p50_ns=450000	p90_ns=810000	p99_ns=891000	max_ns=900000	span_ns=405450000	sample_ns=90000	coverage=0.000221976" "$T/l.lp"
	grep -qx "split	group	outside	-	samples=1	sample_ns=100" "$T/l.lp"
	# A uniform distribution: one mode.
	[ "$(grep -c '^split	mode	' "$T/l.lp")" -eq 1 ]
	grep -q '^split	note	cost	-	text=lp.s own cost taken out: .*no cost records' "$T/l.lp"
	# Every routed span carries the duration the split decided on: here,
	# without cost records, the measured one.
	[ "$(awk -F'\t' '$1 == "span" && $6 == "req" && $0 ~ ("\tcorrected_ns=" ($3 - $2) "(\t|$)")' "$T/l.lp" | wc -l)" -eq 1000 ]
	# arg0 = i % 3 is spread evenly: no feature tells above from below.
	run -0 awk -F'\t' '$1 == "split" && $2 == "feature" && $4 + 0 < 0.001' "$T/l.lp"
	[ -z "$output" ]
}

@test "lp-split: a warning is a note record too; a feature that separates is one, with its p" {
	gen 1000 perm
	# p99.5: 5 spans above, too few to compare.
	run --separate-stderr -0 lp-split -P 99.5 --probe req --label -q -o "$T/l.lp" "$T/j.lp"
	[[ "$stderr" == *"warning: group above has 5 spans and 5 samples: too few"* ]]
	grep -q "^split	note	warning	-	text=group above has 5 spans and 5 samples: too few" "$T/l.lp"
	# --took: the spans that reached a line are the group; the feature
	# "reached" it separates them perfectly.
	awk -F'\t' -v OFS='\t' '$1 == "span" && $6 == "req" { $0 = $0 "\tat.x.c:9=" ($3 - $2 > 900000 ? 1 : 0) } 1' \
		"$T/j.lp" | sed 's/\tat\.x\.c:9=0//' > "$T/jt.lp"
	run -0 lp-split --took x.c:9 --probe req --label -q -o "$T/t.lp" "$T/jt.lp"
	grep -q "^split	group	took	-	spans=100	" "$T/t.lp"
	run -0 awk -F'\t' '$1 == "split" && $2 == "feature" { print $3; exit }' "$T/t.lp"
	[ "$output" = "reached x.c:9" ]
}
