#!/usr/bin/env bats
# lp-split --auto, the distribution in the report, and the warning when a
# cut falls inside a mode.  Streams come from tests/fixtures/split/gen-modes.awk:
# lognormal populations truncated at +-3.5 sigma, so with medians 30 us and
# 400 us (sigma 0.3) no fast span is above 86 us and no slow one below
# 139 us: which spans are slow is known by construction (frame pop1), and
# any cut between the two populations must put exactly them above (110 us,
# given to check_slow_above when the cut is not said, is one).

load helpers/common

setup() {
	T=$BATS_TEST_TMPDIR
	GEN=$FIXTURES/split/gen-modes.awk
}

# gen N MODES [SIGMA [SEED]]: $T/j.lp, a joined stream.
gen() {
	awk -v n="$1" -v modes="$2" -v sigma="${3:-0.3}" -v seed="${4:-1}" -f "$GEN" > "$T/j.lp"
}

# count POP FILE: samples of that population (pop0 the first, pop1...),
# by the frame their stack ends in (lp-split writes its own ids).
count() {
	awk -F'\t' -v p="$1" '$1 == "frame" { name[$2] = $6 }
		$1 == "stack" { k = split($3, f, ","); leaf[$2] = name[f[k]] }
		$1 == "sample" && leaf[$9] == p { n++ } END { print n + 0 }' "$2"
}

# The durations (ns) of a stream's spans of req, one a line.
span_durations() {
	awk -F'\t' '$1 == "span" && $6 == "req" { print $3 - $2 }' "$1"
}

# check_slow_above CUT A B: A holds exactly the slow populations' samples
# and spans (all but pop0), B exactly the fast one's (pop0).
check_slow_above() {
	local slow fast
	slow=$(($(grep -c '^sample' "$T/j.lp") - 1 - $(count pop0 "$T/j.lp")))
	fast=$(count pop0 "$T/j.lp")
	[ "$(grep -c '^sample' "$2")" -eq "$slow" ]
	[ "$(count pop0 "$2")" -eq 0 ]
	[ "$(grep -c '^sample' "$3")" -eq "$fast" ]
	[ "$(count pop0 "$3")" -eq "$fast" ]
	[ "$(span_durations "$2" | wc -l)" -eq "$slow" ]
	[ "$(span_durations "$3" | wc -l)" -eq "$fast" ]
	[ "$(span_durations "$2" | awk -v c="$1" '$1 <= c' | wc -l)" -eq 0 ]
	[ "$(span_durations "$3" | awk -v c="$1" '$1 > c' | wc -l)" -eq 0 ]
}

# The cut --auto reports, in ns ("" when the first line does not say).
auto_cut() {
	sed -n '1s/^# probe req: [0-9]* spans, auto cut \([0-9]*\) ns at the valley between modes at .*/\1/p' <<<"$1"
}

@test "split-auto: --auto cuts between a 5% slow mode at 400us and the fast one at 30us, groups exact" {
	gen 10000 30000:0.95,400000:0.05
	# The golden-ratio sequence gives the 5% to within a span.
	[ "$(count pop1 "$T/j.lp")" -ge 499 ]
	[ "$(count pop1 "$T/j.lp")" -le 501 ]
	run --separate-stderr -0 lp-split --auto --probe req --above "$T/a.lp" --below "$T/b.lp" "$T/j.lp"
	echo "$stderr" | head -1 >&3
	[[ "${stderr%%$'\n'*}" =~ ^"# probe req: 10000 spans, auto cut "[0-9]+" ns at the valley between modes at "[0-9.]+" us (95.0%) and "[0-9.]+" us (5.0%)"$ ]]
	cut=$(auto_cut "$stderr")
	[ "$cut" -gt 60000 ]
	[ "$cut" -lt 300000 ]
	check_slow_above "$cut" "$T/a.lp" "$T/b.lp"
	# The modes it names: near the populations' modes (median e^-sigma^2).
	run -0 sed -n '1s/.* modes at \([0-9.]*\) us (95.0%) and \([0-9.]*\) us .*/\1 \2/p' <<<"$stderr"
	read -r fast slow <<<"$output"
	awk -v f="$fast" -v s="$slow" 'BEGIN { exit !(f > 25 && f < 35 && s > 300 && s < 480) }'
	# The groups and the other records as for any split.
	[ "$(grep -c '^sample' "$T/b.lp")" -eq "$(count pop0 "$T/j.lp")" ]
	grep -qx "outside	-	1	-	-	-	-	-	100	-" <<<"$stderr"
}

@test "split-auto: --auto finds 2% and 20% slow modes, and a third mode's valley is not the cut" {
	for share in 0.02 0.2; do
		gen 10000 "30000:$(awk -v s=$share 'BEGIN { print 1 - s }'),400000:$share"
		run --separate-stderr -0 lp-split --auto --probe req --above "$T/a.lp" --below "$T/b.lp" "$T/j.lp"
		pct=$(awk -v s=$share 'BEGIN { printf "%.1f", 100 * s }')
		[[ "${stderr%%$'\n'*}" == *" us ($pct%)" ]]
		cut=$(auto_cut "$stderr")
		[ "$cut" -gt 60000 ]
		[ "$cut" -lt 300000 ]
		check_slow_above "$cut" "$T/a.lp" "$T/b.lp"
	done
	# Three populations, 3 us, 30 us and 2% at 400 us: the cut separates
	# the slowest from both others.
	gen 10000 3000:0.5,30000:0.48,400000:0.02
	run --separate-stderr -0 lp-split --auto --probe req --above "$T/a.lp" --below "$T/b.lp" "$T/j.lp"
	[[ "$stderr" == *"# distribution of the 10000 span durations: 3 modes, "* ]]
	[[ "${stderr%%$'\n'*}" == *" us (48.0%) and "*" us (2.0%)" ]]
	cut=$(auto_cut "$stderr")
	[ "$cut" -gt 60000 ]
	[ "$cut" -lt 300000 ]
	[ "$(grep -c '^sample' "$T/a.lp")" -eq "$(count pop2 "$T/j.lp")" ]
	[ "$(count pop2 "$T/b.lp")" -eq 0 ]
}

@test "split-auto: a diffuse slow population beside a narrow fast one is one mode, cut below it" {
	# 30 us with sigma 0.1 (at most 42.6 us), 2% at 1 ms with sigma 0.8
	# (at least 60.8 us): a bandwidth right for the fast mode sees lumps of
	# noise in the slow one, or smooths it away (a fixed bandwidth did one
	# or the other in 2 of these 6 draws, and in 4 of 20 simulated ones).
	for seed in 1 2 3 4 5 6; do
		gen 10000 30000:0.98:0.1,1000000:0.02:0.8 0 "$seed"
		run --separate-stderr -0 lp-split --auto --probe req --above "$T/a.lp" --below "$T/b.lp" "$T/j.lp"
		[[ "$stderr" == *$'\n'"# distribution of the 10000 span durations: 2 modes, "* ]]
		cut=$(auto_cut "$stderr")
		[ "$cut" -gt 42600 ]
		[ "$cut" -lt 60800 ]
		check_slow_above "$cut" "$T/a.lp" "$T/b.lp"
	done
}

@test "split-auto: a shoulder is not a valley: 5% at 100 us beside 30 us dips to some 80% of its peak" {
	gen 20000 30000:0.95,100000:0.05
	run --separate-stderr -1 lp-split --auto --probe req --above /dev/null "$T/j.lp"
	[[ "$stderr" == *$'\n'"# distribution of the 20000 span durations: 1 mode, at "* ]]
	[[ "${stderr##*$'\n'}" == "lp-split: no valley: the span durations have one mode, at "* ]]
	# 10% at 120 us dips to some 40%: a valley (the populations overlap a
	# little, so the groups are only nearly them).
	gen 20000 30000:0.9,120000:0.1
	run --separate-stderr -0 lp-split --auto --probe req --above "$T/a.lp" "$T/j.lp"
	[[ "$stderr" =~ $'\n'"# distribution of the 20000 span durations: 2 modes, "[^$'\n']*"(density "([0-9]+)"% of the smaller peak)"$'\n' ]]
	[ "${BASH_REMATCH[1]}" -gt 30 ]
	[ "${BASH_REMATCH[1]}" -le 50 ]
	cut=$(auto_cut "$stderr")
	[ "$cut" -gt 50000 ]
	[ "$cut" -lt 100000 ]
	[ "$(grep -c '^sample' "$T/a.lp")" -gt 1800 ]
	[ "$(grep -c '^sample' "$T/a.lp")" -lt 2200 ]
}

@test "split-auto: a mode needs 0.5% of the spans: 0.4% of 100k slow spans are not one, 1% are" {
	gen 100000 30000:0.996,400000:0.004
	run --separate-stderr -1 lp-split --auto --probe req --above /dev/null -q "$T/j.lp"
	[[ "$stderr" == "lp-split: no valley: the span durations have one mode, at "* ]]
	gen 100000 30000:0.99,400000:0.01
	run --separate-stderr -0 lp-split --auto --probe req --above "$T/a.lp" --below "$T/b.lp" "$T/j.lp"
	[[ "${stderr%%$'\n'*}" == *" us (99.0%) and "*" us (1.0%)" ]]
	check_slow_above 110000 "$T/a.lp" "$T/b.lp"
}

@test "split-auto: one lognormal mode of 100k spans has no valley: said, exit 1, no group written" {
	gen 100000 30000:1 0.5
	run --separate-stderr -1 lp-split --auto --probe req --above "$T/a.lp" --below "$T/b.lp" "$T/j.lp"
	[[ "${stderr%%$'\n'*}" == "# probe req: 100000 spans, no valley" ]]
	[[ "$stderr" == *$'\n'"# distribution of the 100000 span durations: 1 mode, at "* ]]
	last=${stderr##*$'\n'}
	[[ "$last" =~ ^"lp-split: no valley: the span durations have one mode, at "[0-9.]+" us; use --percentile or --threshold"$ ]]
	[ ! -e "$T/a.lp" ]
	[ ! -e "$T/b.lp" ]
	# Quiet: the error alone.
	run --separate-stderr -1 lp-split --auto --probe req --above "$T/a.lp" -q "$T/j.lp"
	[ "$stderr" = "$last" ]
	# A percentile cut of one mode is inside it, but there is no valley
	# to offer: nothing to warn about.
	run --separate-stderr -0 lp-split --percentile 75 --probe req --above /dev/null -q "$T/j.lp"
	[ -z "$stderr" ]
	# Wider and skewed unimodal shapes: no valley either.
	gen 20000 30000:1 1.2
	run --separate-stderr -1 lp-split --auto --probe req --above /dev/null -q "$T/j.lp"
	[[ "$stderr" == "lp-split: no valley: "* ]]
}

@test "split-auto: a p90 cut inside a 20% slow mode warns, naming the valley and the percentile to use" {
	gen 10000 30000:0.8,400000:0.2
	run --separate-stderr -0 lp-split --percentile 90 --probe req --above "$T/p90.lp" -q "$T/j.lp"
	[[ "$stderr" =~ ^"lp-split: warning: the p90 cut ("[0-9.]+" us) falls inside a mode ("[0-9.]+"-"[0-9.]+" us, 20.0% of spans); the valley is at "[0-9.]+" us: try --auto or --percentile "(80(\.[0-9]+)?)$ ]]
	pct=${BASH_REMATCH[1]}
	# The percentile it suggests cuts at the valley: no warning, and the
	# same groups as --auto.
	run --separate-stderr -0 lp-split --percentile "$pct" --probe req --above "$T/p80.lp" --below "$T/b80.lp" -q "$T/j.lp"
	[ -z "$stderr" ]
	run --separate-stderr -0 lp-split --auto --probe req --above "$T/auto.lp" --below /dev/null -q "$T/j.lp"
	[ -z "$stderr" ]
	cmp "$T/p80.lp" "$T/auto.lp"
	check_slow_above 110000 "$T/p80.lp" "$T/b80.lp"
	# With the report in a file, the warning still goes to stderr, and the
	# exit status is 0.
	run --separate-stderr -0 lp-split --percentile 90 --probe req --above /dev/null --report "$T/r.txt" "$T/j.lp"
	[[ "$stderr" == "lp-split: warning: the p90 cut ("* ]]
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	grep -q ' p90 cut [0-9.]* us' "$T/r.txt"
}

@test "split-auto: a p75 cut inside the fast mode (2% slow) warns; p98, at the valley, does not" {
	gen 10000 30000:0.98,400000:0.02
	run --separate-stderr -0 lp-split --percentile 75 --probe req --above /dev/null -q "$T/j.lp"
	[[ "$stderr" =~ ^"lp-split: warning: the p75 cut ("[0-9.]+" us) falls inside a mode ("[0-9.]+"-"[0-9.]+" us, 98.0% of spans); the valley is at "[0-9.]+" us: try --auto or --percentile 98"$ ]]
	run --separate-stderr -0 lp-split --percentile 98 --probe req --above /dev/null -q "$T/j.lp"
	[ -z "$stderr" ]
	# Several cut points: each is judged; p50 and p99 are inside a mode.
	run --separate-stderr -0 lp-split --percentile 50,98,99.5 --probe req -O "$T/g-%s.lp" -q "$T/j.lp"
	[ "$(wc -l <<<"$stderr")" -eq 2 ]
	[[ "$stderr" == "lp-split: warning: the p50 cut ("*$'\n'"lp-split: warning: the p99.5 cut ("*", 2.0% of spans)"* ]]
}

@test "split-auto: a threshold inside a mode warns with the threshold to use, which then splits as --auto" {
	gen 10000 30000:0.95,400000:0.05
	run --separate-stderr -0 lp-split --threshold 30us --probe req --above /dev/null -q "$T/j.lp"
	[[ "$stderr" =~ ^"lp-split: warning: the threshold 30 us falls inside a mode ("[0-9.]+"-"[0-9.]+" us, 95.0% of spans); the valley is at "[0-9.]+" us: try --auto or --threshold "([0-9.]+us)$ ]]
	th=${BASH_REMATCH[1]}
	run --separate-stderr -0 lp-split --threshold "$th" --probe req --above "$T/a.lp" --below "$T/b.lp" -q "$T/j.lp"
	[ -z "$stderr" ]
	check_slow_above 110000 "$T/a.lp" "$T/b.lp"
	# Thresholds are one pass: the same from a pipe, warning included.
	run --separate-stderr -0 bash -c "lp-split --threshold 30us --probe req --above /dev/null -q < '$T/j.lp'"
	[[ "$stderr" == "lp-split: warning: the threshold 30 us falls inside a mode ("* ]]
}

# check_histogram REPORT DURATIONS: the report's histogram rows are
# contiguous, their edges round (ratios of a 10-a-decade ladder) and each
# count is the number of durations in [from, to); leaves the rows in
# $T/rows and their edges in ns in $T/edges.
check_histogram() {
	sed -n '/^from	to	spans/,$p' "$1" | tail -n +2 > "$T/rows"
	[ "$(wc -l < "$T/rows")" -ge 10 ]
	[ "$(wc -l < "$T/rows")" -le 30 ]
	awk -F'\t' 'function ns(x,  u) { u = x; sub(/^[0-9.]+/, "", u); x += 0
		return int(x * (u == "us" ? 1e3 : u == "ms" ? 1e6 : u == "s" ? 1e9 : 1) + 0.5) }
		{ print ns($1), ns($2), $3 }' "$T/rows" > "$T/edges"
	awk 'NR > 1 && $1 != to { bad = 1 } { to = $2 } END { exit bad }' "$T/edges"
	awk 'NR == FNR { lo[FNR] = $1; hi[FNR] = $2; want[FNR] = $3; n = FNR; next }
		{ for (i = 1; i <= n; i++) if ($1 >= lo[i] && $1 < hi[i]) got[i]++ }
		END { for (i = 1; i <= n; i++) if (got[i] + 0 != want[i]) { print "row " i ": " got[i] + 0 " != " want[i]; bad = 1 }; exit bad }' \
		"$T/edges" "$2"
	[ "$(awk '{ s += $3 } END { print s }' "$T/edges")" -eq "$(wc -l < "$2")" ]
	# 10 a decade: 1.25, 1.28, 1.25, 1.25, 1.28, 1.25, 1.25, 1.28, 1.25
	awk '$1 > 0 { r = $2 / $1; if (r < 1.24 || r > 1.29) bad = 1 } END { exit bad }' "$T/edges"
}

@test "split-auto: the histogram's rows have round log-spaced edges and exact counts, the cut and modes marked" {
	gen 10000 30000:0.95,400000:0.05
	run --separate-stderr -0 lp-split --auto --probe req --above /dev/null --report "$T/r.txt" "$T/j.lp"
	[ -z "$stderr" ]
	cut=$(auto_cut "$(cat "$T/r.txt")")
	grep -qx '# distribution of the 10000 span durations: 2 modes, at [0-9.]* us (95.0%), [0-9.]* us (5.0%); valley at [0-9.]* us (density [0-9]*% of the smaller peak)' "$T/r.txt"
	grep -qx 'from	to	spans	log scale, 10 rows a decade; # = [0-9.]* spans' "$T/r.txt"
	span_durations "$T/j.lp" > "$T/d"
	check_histogram "$T/r.txt" "$T/d"
	# The bar: the fullest row is 40 long; the auto cut's row is marked,
	# and so is each mode's.
	[ "$(awk -F'\t' '{ b = $4; sub(/ .*/, "", b); if (length(b) > m) m = length(b) } END { print m }' "$T/rows")" -eq 40 ]
	row=$(awk -v c="$cut" '$1 <= c && c < $2 { print NR }' "$T/edges")
	sed -n "${row}p" "$T/rows" | grep -q "<- auto cut [0-9.]* us$"
	[ "$(grep -c '<- mode ' "$T/rows")" -eq 2 ]
	[ "$(grep -c 'auto cut' "$T/rows")" -eq 1 ]
	# Durations on the edges themselves (1 us, 2 us... 800 us, in 1 us
	# steps): each counts in the row it starts.
	awk -v n=800 -v dist=perm -v S="$T/s.lp" -v P="$T/p.lp" -f "$FIXTURES/join/gen-split.awk"
	lp-join "$T/s.lp" "$T/p.lp" > "$T/perm.lp"
	run --separate-stderr -0 lp-split --threshold 100us --probe req --above /dev/null --report "$T/r2.txt" "$T/perm.lp"
	span_durations "$T/perm.lp" > "$T/d2"
	check_histogram "$T/r2.txt" "$T/d2"
	grep -qx '1us	1.25us	1	\.' "$T/rows"
	grep -qx '640us	800us	160	########################################' "$T/rows"
	grep -qx '800us	1ms	1	\.' "$T/rows"
	grep -qx '80us	100us	20	#*' "$T/rows"
	grep -qx '100us	125us	25	#* *<- threshold 100 us' "$T/rows"
}

@test "split-auto: the histogram shows for percentiles and thresholds on files, not for --live nor with --quiet" {
	gen 2000 30000:0.9,400000:0.1
	run --separate-stderr -0 lp-split --percentile 50,90 --probe req -O "$T/g-%s.lp" "$T/j.lp"
	[[ "$stderr" == *$'\n'"# distribution of the 2000 span durations: 2 modes, "* ]]
	[[ "$stderr" == *" p50 cut "* ]]
	[[ "$stderr" == *" p90 cut "* ]]
	run --separate-stderr -0 lp-split --threshold 100us --probe req --above /dev/null "$T/j.lp"
	[[ "$stderr" == *"<- threshold 100 us"* ]]
	run --separate-stderr -0 lp-split --live --percentile 50 --probe req --above /dev/null "$T/j.lp"
	[[ "$stderr" != *"# distribution"* ]]
	run --separate-stderr -0 lp-split --auto --probe req --above /dev/null -q "$T/j.lp"
	[ -z "$stderr" ]
	# Without cut points there is no split, and no histogram.
	run --separate-stderr -0 lp-split --probe req -O "$T/s-%s.lp" "$T/j.lp"
	[[ "$stderr" != *"# distribution"* ]]
}

@test "split-auto: --auto reads a pipe as it reads a file" {
	gen 5000 30000:0.95,400000:0.05
	run -0 lp-split --auto --probe req --above "$T/a1.lp" --below "$T/b1.lp" -q "$T/j.lp"
	run -0 bash -c "cat '$T/j.lp' | lp-split --auto --probe req --above '$T/a2.lp' --below '$T/b2.lp' -q"
	cmp "$T/a1.lp" "$T/a2.lp"
	cmp "$T/b1.lp" "$T/b2.lp"
	run -0 lp-split --auto --probe req --label -q -o "$T/l.lp" "$T/j.lp"
	[ "$(grep '^sample' "$T/l.lp" | grep -c 'group=above$')" -eq "$(grep -c '^sample' "$T/a1.lp")" ]
}

@test "split-auto: usage errors and an input without spans" {
	gen 1000 30000:0.95,400000:0.05
	run --separate-stderr -2 lp-split --auto --live --above /dev/null "$T/j.lp"
	[ "$stderr" = "lp-split: --auto needs every duration before the first sample is routed: it cannot be combined with --live (use --live --percentile)" ]
	run --separate-stderr -2 lp-split --auto --percentile 90 --above /dev/null "$T/j.lp"
	[ "$stderr" = "lp-split: --auto decides the cut: it cannot be combined with --percentile" ]
	run --separate-stderr -2 lp-split --auto --threshold 1ms --above /dev/null "$T/j.lp"
	[ "$stderr" = "lp-split: --auto decides the cut: it cannot be combined with --threshold" ]
	run --separate-stderr -2 lp-split --auto --group fast=/dev/null "$T/j.lp"
	[ "$stderr" = "lp-split: no group 'fast' with these options (groups: below, above, outside, excluded, unranked, uncertain, lp, unprobed)" ]
	run --separate-stderr -1 lp-split --auto --probe nosuch --above "$T/a.lp" "$T/j.lp"
	[ "$stderr" = "lp-split: --auto: no span of probe 'nosuch' in the input" ]
	[ ! -e "$T/a.lp" ]
	# A threshold with no span to show: no distribution, no complaint.
	run --separate-stderr -0 lp-split --threshold 1ms --probe nosuch --above /dev/null -q "$T/j.lp"
	[ "$stderr" = "lp-split: no span of probe 'nosuch' in the input" ]
	# Too few spans for a mode of 20: one mode, no valley.
	gen 30 30000:0.5,400000:0.5
	run --separate-stderr -1 lp-split --auto --probe req --above "$T/a.lp" -q "$T/j.lp"
	[[ "$stderr" == "lp-split: no valley: "* ]]
}

@test "split-auto: durations of a few exact values: their modes are where the values are" {
	# 100 spans of exactly 5 us, then 50 of 30 us and 50 of 400 us: their
	# gcd is no clock's quantum, and spreading over it would move them.
	for i in $(seq 100); do echo "5000"; done > "$T/d1"
	for i in $(seq 50); do printf '30000\n400000\n'; done > "$T/d2"
	for d in d1 d2; do
		awk 'BEGIN { OFS = "\t"; print "lp-stream", "1"; print "frame", "f0", "u", "-", "/bin/x", "main", "-"; print "stack", "s0", "f0" }
			{ st = NR * 1000000; print "span", st, st + $1, 10, 11, "req", 0
			  print "sample", st, 10, 11, 0, "x", "cpu-clock", 100, "s0", "span=req", "span_start=" st, "span_end=" (st + $1), "span_depth=0" }' \
			"$T/$d" > "$T/$d.lp"
	done
	run --separate-stderr -1 lp-split --auto --probe req --above /dev/null "$T/d1.lp"
	[[ "$stderr" == *$'\n'"# distribution of the 100 span durations: 1 mode, at 5 us (100.0%)"$'\n'* ]]
	run --separate-stderr -0 lp-split --auto --probe req --above "$T/a.lp" "$T/d2.lp"
	[[ "${stderr%%$'\n'*}" =~ " modes at "(29.[5-9]|30|30.[0-4])" us (50.0%) and "(39[5-9]|40[0-4])" us (50.0%)"$ ]]
	[ "$(grep -c '^sample' "$T/a.lp")" -eq 50 ]
}

@test "split-auto: --auto on a real request loop: every slow request above, the cut between the populations" {
	# Privileged: lp-trace puts uprobes on reqblock.  Its request i spins
	# 0.3 ms, and when i % 12 == 11 also sleeps 3 ms: 100 slow requests of
	# 1200, each at least 3.3 ms long.  Real-time (SCHED_FIFO, lp-trace
	# and the child it starts), so that the machine's other work neither
	# stretches fast requests nor delays slow ones' wakeups: on a loaded
	# machine a wakeup waits for a time slice (0.8 or 5 ms more beside two
	# CPU-bound jobs on two CPUs), the slow requests are then modes of
	# their own, and --auto cuts below the slowest of them.
	require_root
	require_cmd chrt
	run -0 --separate-stderr chrt -f 10 lp-trace --args -o "$T/t.lp" handle_request -- "$WORKLOADS/reqblock" 1200
	[ "$(grep -c $'^span\t.*\thandle_request\t' "$T/t.lp")" -eq 1200 ]
	run -0 --separate-stderr lp-split --auto --probe handle_request --above "$T/a.lp" --below "$T/b.lp" "$T/t.lp"
	echo "${stderr%%$'\n'*}" >&3
	[[ "${stderr%%$'\n'*}" =~ ^"# probe handle_request: 1200 spans, auto cut "([0-9]+)" ns at the valley between modes at "[0-9.]+" "[mu]"s ("[0-9.]+"%) and "([0-9.]+)" ms ("[0-9.]+"%)"$ ]]
	cut=${BASH_REMATCH[1]} slow=${BASH_REMATCH[2]}
	[ "$cut" -gt 350000 ]
	[ "$cut" -lt 3300000 ]
	awk -v s="$slow" 'BEGIN { exit !(s >= 3.2 && s < 4) }'
	# The fastest mode is the 0.3 ms requests.
	[[ "$stderr" =~ $'\n'"# distribution of the 1200 span durations: "[0-9]" modes, at "(3[0-9][0-9])" us" ]]
	# Every slow request is above; a fast one only when something (a page
	# fault, preemption) stretched it past the valley: at most 2% of them.
	[ "$(awk -F'\t' '$1 == "span" && $8 ~ /^i=/ { i = substr($8, 3); if (i % 12 == 11) n++ } END { print n + 0 }' "$T/a.lp")" -eq 100 ]
	[ "$(awk -F'\t' '$1 == "span" && $8 ~ /^i=/ { i = substr($8, 3); if (i % 12 == 11) n++ } END { print n + 0 }' "$T/b.lp")" -eq 0 ]
	[ "$(awk -F'\t' '$1 == "span" && $8 ~ /^i=/' "$T/b.lp" | wc -l)" -ge 1078 ]
}

@test "split-auto: the man page's --auto examples run" {
	cd "$T"
	gen 2000 30000:0.95,400000:0.05
	sed 's/\treq\t/\thandle_request\t/; s/span=req\t/span=handle_request\t/' j.lp > joined.lp
	sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$LP_TOP/man/lp-split.1" | sed -n 's/^\\fB\$ \(.*\)\\fR$/\1/p' |
		sed 's/\\-/-/g' | grep -e '--auto' > examples
	[ "$(wc -l < examples)" -ge 1 ]
	while read -r cmd; do
		echo "running: $cmd"
		bash -c "set -o pipefail; $cmd" > /dev/null
	done < examples
	[ "$(grep -c '^sample' slow.lp)" -eq "$(count pop1 joined.lp)" ]
	grep -q '<- auto cut' auto.txt
}
