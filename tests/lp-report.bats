#!/usr/bin/env bats
# lp-report: one self-contained page from lp-split's labelled stream.  The
# streams come from tests/fixtures/report/gen-report.awk through lp-join and
# lp-split, so their truth is known by construction: 9 in 10 requests are
# fast (1.0-1.2 ms, 3 samples in 10 in parse, 7 in lookup), every 10th is
# slow (20-24 ms, 9 samples in 10 in rebuild_index, 1 in lookup).

load helpers/common

setup() {
	T=$BATS_TEST_TMPDIR
	GEN=$FIXTURES/report/gen-report.awk
	DATA=$LP_TOP/tests/helpers/report-data
}

# gen N [LEAVES]: $T/l.lp, the labelled stream split at p90, and the
# generator's own streams $T/s.lp and $T/p.lp.
gen() {
	awk -v n="$1" -v leaves="${2:-0}" -v S="$T/s.lp" -v P="$T/p.lp" -f "$GEN"
	lp-join "$T/s.lp" "$T/p.lp" > "$T/j.lp"
	lp-split -e handle_request -P 90 --label -q -o "$T/l.lp" "$T/j.lp"
}

# jq-like: a Python expression over the page's data (d), printed.
data() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$T/d.json" "$1"
}

@test "lp-report: the page's data is the split's truth: distribution, cut, modes, groups" {
	gen 1000
	run -0 lp-report -o "$T/r.html" "$T/l.lp"
	"$DATA" "$T/r.html" > "$T/d.json"
	[ "$(data 'd["probe"]["name"]')" = handle_request ]
	[ "$(data 'd["durations"]["n"]')" -eq 1000 ]
	[ "$(data 'sum(b[2] for b in d["durations"]["bins"])')" -eq 1000 ]
	# Each bin's count is the number of durations in it, from the spans.
	awk -F'\t' '$1 == "span" { print $3 - $2 }' "$T/p.lp" > "$T/durs"
	run -0 python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); v = [int(x) for x in open(sys.argv[2])]
bins = d["durations"]["bins"]
for i, (lo, hi, n) in enumerate(bins):
    last = i == len(bins) - 1
    got = sum(1 for x in v if lo <= x and (x < hi or (last and x <= hi)))
    assert got == n, (lo, hi, n, got)
print(len(bins))' "$T/d.json" "$T/durs"
	# The cut: p90 of 1000, the 900th duration, the slowest fast one.
	p90=$(sort -n "$T/durs" | sed -n 900p)
	[ "$(data 'd["cuts"]')" = "[{'ns': $p90, 'label': 'p90'}]" ]
	# Two modes, 90% and 10%, one in each population.
	[ "$(data '[m["share"] for m in d["modes"]]')" = "[0.9, 0.1]" ]
	[ "$(data 'int(1e6 <= d["modes"][0]["ns"] <= 1.2e6 and 2e7 <= d["modes"][1]["ns"] <= 2.4e7)')" -eq 1 ]
	# The groups, as lp-split counted them.
	[ "$(data '[(g["name"], g["spans"]) for g in d["groups"] if g["name"] in ("below", "above")]')" = "[('below', 900), ('above', 100)]" ]
	slow=$(awk -F'\t' '$1 == "span" && $8 == "ret=1" { n += int(($3 - $2) / 100000) } END { print n }' "$T/p.lp")
	[ "$(data '[g["samples"] for g in d["groups"] if g["name"] == "above"][0]')" -eq "$slow" ]
	grep -q "lp's own cost taken out" <<<"$(data 'd["notes"]')"
}

@test "lp-report: flame graphs and the diff hold each group's samples; the ranked table names rebuild_index" {
	gen 1000
	run -0 lp-report -o "$T/r.html" "$T/l.lp"
	"$DATA" "$T/r.html" > "$T/d.json"
	# Slowest first; the specials are not drawn.
	[ "$(data '[f["group"] for f in d["flames"]]')" = "['above', 'below']" ]
	[[ "$(data 'd["flames"][0]["title"]')" == "above p90 ("*" ms)" ]]
	# The truth from the generator's stacks: rebuild_index's samples are
	# the slow requests' 9 in 10.
	rebuild=$(awk -F'\t' '$1 == "sample" && $9 == "s_rebuild"' "$T/s.lp" | wc -l)
	lookup_slow=$(awk -F'\t' '$1 == "span" && $8 == "ret=1" { n += int(int(($3 - $2) / 100000) / 10) } END { print n }' "$T/p.lp")
	# all; the process (comm); main; handle_request; its callees
	H="['root']['c'][0]['c'][0]['c'][0]['c']"
	node() { data "[c for c in d['flames'][$1]$H if c['n'] == '$2'][0]['v']"; }
	[ "$(data 'd["unit"]')" = samples ]
	[ "$(data '[d["flames"][0]["root"]["c"][0]["n"], d["flames"][0]["root"]["c"][0]["c"][0]["n"]]')" = "['demo', 'main']" ]
	[ "$(node 0 rebuild_index)" -eq "$rebuild" ]
	[ "$(node 0 lookup)" -eq "$lookup_slow" ]
	[ "$(data 'd["flames"][0]["total"]')" -eq "$((rebuild + lookup_slow))" ]
	# Fast requests never rebuild.
	[ "$(data "[c['n'] for c in d['flames'][1]$H]")" = "['lookup', 'parse']" ]
	# The diff: below against above, both sides' weights.
	[ "$(data '(d["diff"]["a"], d["diff"]["b"])')" = "('below', 'above')" ]
	[ "$(data "[(c['a'], c['b']) for c in d['diff']$H if c['n'] == 'rebuild_index'][0]")" = "(0, $rebuild)" ]
	# lp-diff's table: rebuild_index first, significant, its share exact.
	[ "$(data 'd["table"]["rows"][0]["function"]')" = rebuild_index ]
	[ "$(data 'd["table"]["rows"][0]["significant"]')" = True ]
	[ "$(data 'round(d["table"]["rows"][0]["total_b"] * ('"$rebuild + $lookup_slow"'))')" -eq "$rebuild" ]
	# What separates the slow spans: ret=1, all of them.
	[ "$(data '(d["features"][0]["name"], d["features"][0]["hi_rate"], d["features"][0]["lo_rate"])')" = "('ret=1', 1, 0)" ]
}

@test "lp-report: the page is self-contained: nothing fetched from elsewhere" {
	gen 300
	run -0 lp-report -o "$T/r.html" "$T/l.lp"
	# No element that loads anything: no src=, no link, no import, no url(),
	# no address but SVG's namespace (a name, never fetched).
	run -1 grep -Pio '<(script|img|iframe|link|embed|object|audio|video|source)[^>]*(src|href)=|@import|url\(|fetch\(|XMLHttpRequest|https?://(?!www\.w3\.org/2000/svg")' "$T/r.html"
	# A frame named like markup cannot end the script that holds the data.
	sed 's/\tlookup\t-$/\t<\/script><b>x<\/b>\t-/' "$T/s.lp" > "$T/s2.lp"
	lp-join "$T/s2.lp" "$T/p.lp" > "$T/j2.lp"
	lp-split -e handle_request -P 90 --label -q -o "$T/l2.lp" "$T/j2.lp"
	run -0 lp-report -o "$T/r2.html" "$T/l2.lp"
	run -1 grep -c '</script><b>' "$T/r2.html"
	run -1 grep -c '<b>x' "$T/r2.html"
	"$DATA" "$T/r2.html" > "$T/d.json"
	grep -q '</script><b>x</b>' <<<"$(data 'd["flames"][1]')"
}

@test "lp-report: a pipe gives the page a file gives; a stream labelled by hand makes a page" {
	gen 300
	run -0 lp-report -o "$T/f.html" "$T/l.lp"
	lp-report < "$T/l.lp" > "$T/p.html"
	cat "$T/l.lp" | lp-report -o "$T/q.html" -
	sed "s|$T/l.lp|stdin|" "$T/f.html" > "$T/f2.html"
	cmp "$T/f2.html" "$T/p.html"
	cmp "$T/f2.html" "$T/q.html"
	# No split records (an older lp-split, or labels by hand): the groups
	# are counted from the stream, the modes found in the durations.
	grep -v '^split' "$T/l.lp" > "$T/bare.lp"
	run -0 lp-report -o "$T/b.html" "$T/bare.lp"
	"$DATA" "$T/b.html" > "$T/d.json"
	[ "$(data 'len(d["modes"])')" -eq 2 ]
	[ "$(data '[f["group"] for f in d["flames"]]')" = "['above', 'below']" ]
	[ "$(data 'd["table"]["rows"][0]["function"]')" = rebuild_index ]
}

@test "lp-report: -e and a cut split lp-join's output first: the page lp-split --label | lp-report gives" {
	gen 1000
	run -0 lp-report -o "$T/piped.html" "$T/l.lp"
	run -0 lp-report -e handle_request -P 90 -o "$T/split.html" "$T/j.lp"
	sed "s|$T/l.lp|$T/j.lp|" "$T/piped.html" > "$T/want.html"
	cmp "$T/want.html" "$T/split.html"
	# From a pipe too, and --auto finds the same cut here (the valley).
	cat "$T/j.lp" | lp-report -e handle_request --auto -o "$T/auto.html"
	"$DATA" "$T/auto.html" > "$T/d.json"
	[ "$(data '(d["cuts"][0]["label"], [f["group"] for f in d["flames"]], d["table"]["rows"][0]["function"])')" = "('auto', ['above', 'below'], 'rebuild_index')" ]
	run --separate-stderr -2 lp-report -e handle_request "$T/j.lp"
	[ "$stderr" = "lp-report: splitting needs a cut: --percentile, --threshold, --auto or --took" ]
	run --separate-stderr -2 lp-report -P 90 -t 1ms "$T/j.lp"
	[ "$stderr" = "lp-report: --percentile and --threshold cannot be combined" ]
}

@test "lp-report: bad input is an error naming where, and no page" {
	gen 300
	# Not labelled: says what would label it.
	run --separate-stderr -1 lp-report -o "$T/r.html" "$T/j.lp"
	[[ "$stderr" == "lp-report: $T/j.lp: no sample or span has a group"*"lp-split --label"* ]]
	[ ! -s "$T/r.html" ]
	# A malformed record: the input and its line.
	{ head -20 "$T/l.lp"; printf 'sample\t1\tx\n'; tail -n +21 "$T/l.lp"; } > "$T/bad.lp"
	run --separate-stderr -1 lp-report "$T/bad.lp"
	[[ "$stderr" == "lp-report: $T/bad.lp:21: "* ]]
	[ -z "$output" ]
	run --separate-stderr -1 lp-report "$T/missing.lp"
	[[ "$stderr" == "lp-report: $T/missing.lp: "* ]]
	run --separate-stderr -2 lp-report --group below "$T/l.lp"
	[ "$stderr" = "lp-report: --group 'below': expected A,B" ]
	run --separate-stderr -2 lp-report --min-share 2 "$T/l.lp"
	run --separate-stderr -2 lp-report a b
}

@test "lp-report: --group picks the diff's sides, --top the table's rows, --title the title" {
	awk -v n=1000 -v leaves=0 -v S="$T/s.lp" -v P="$T/p.lp" -f "$GEN"
	lp-join "$T/s.lp" "$T/p.lp" > "$T/j.lp"
	lp-split -e handle_request -P 50,90 --label -q -o "$T/l3.lp" "$T/j.lp"
	run -0 lp-report --group p0-p50,p90-p100 --top 2 --title 'three bands' -o "$T/r.html" "$T/l3.lp"
	"$DATA" "$T/r.html" > "$T/d.json"
	[ "$(data '[f["group"] for f in d["flames"]]')" = "['p90-p100', 'p50-p90', 'p0-p50']" ]
	[ "$(data '(d["diff"]["a"], d["diff"]["b"], len(d["table"]["rows"]), d["title"])')" = "('p0-p50', 'p90-p100', 2, 'three bands')" ]
	run --separate-stderr -1 lp-report --group p0-p50,nosuch "$T/l3.lp"
	[[ "$stderr" == *nosuch* ]]
}

@test "lp-report: a million samples make a page of a few MB in seconds, its small frames pruned" {
	gen 32000 20000
	[ "$(grep -c '^sample' "$T/l.lp")" -ge 1000000 ]
	start=$(date +%s%N)
	run -0 lp-report -o "$T/r.html" "$T/l.lp"
	ms=$((($(date +%s%N) - start) / 1000000))
	size=$(stat -c %s "$T/r.html")
	echo "# 1M samples: $size bytes in $ms ms" >&3
	((size < 4000000)) || fail "$size bytes"
	((ms < 20000)) || fail "$ms ms"
	"$DATA" "$T/r.html" > "$T/d.json"
	# Each leaf is 1/20000 of lookup: under the default 0.0002 share, left
	# out, its time in lookup; --min-share 0 keeps every one.
	H="['root']['c'][0]['c'][0]['c'][0]['c']"
	[ "$(data "[c['n'] for c in d['flames'][1]$H]")" = "['lookup', 'parse']" ]
	[ "$(data "len([c for c in d['flames'][1]$H if c['n'] == 'lookup'][0].get('c', []))")" -eq 0 ]
	run -0 lp-report --min-share 0 -o "$T/all.html" "$T/l.lp"
	"$DATA" "$T/all.html" > "$T/d.json"
	[ "$(data "len([c for c in d['flames'][1]$H if c['n'] == 'lookup'][0]['c'])")" -eq 20000 ]
}

@test "lp-report: --help lists every option, all in the man page; --version; the man page's example runs" {
	run -0 lp-report --help
	[[ "$output" == usage:* ]]
	for opt in $(grep -o -- '--[a-z][a-z-]*' <<<"$output" | sort -u); do
		grep -q -- "${opt//-/\\\\-}" "$LP_TOP/man/lp-report.1" || fail "$opt not in man page"
	done
	run -0 lp-report --version
	[[ "$output" == "lp-report (lp) "* ]]
	cd "$T"
	awk -v n=1000 -v S=s.lp -v P=p.lp -f "$GEN"
	lp-join s.lp p.lp > joined.lp
	sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$LP_TOP/man/lp-report.1" | sed -n 's/^\\fB\$ \(.*\)\\fR$/\1/p' |
		sed 's/\\-/-/g' > examples
	[ "$(wc -l < examples)" -ge 3 ]
	while read -r cmd; do
		echo "running: $cmd"
		bash -c "set -o pipefail; $cmd" > /dev/null
	done < examples
	"$DATA" report.html > d.json
	[ "$(python3 -c 'import json; print(json.load(open("d.json"))["diff"]["a"])')" = p0-p50 ]
}

# page FILE JS: the expression's value, as JSON, once the page is ready in
# headless chromium (tests/helpers/report-page).
page() {
	"$LP_TOP/tests/helpers/report-page" eval "$@"
}

@test "lp-report in a browser: every part drawn from the data; search and zoom find rebuild_index" {
	require_cmd chromium
	gen 1000
	run -0 lp-report -o "$T/r.html" "$T/l.lp"
	"$DATA" "$T/r.html" > "$T/d.json"
	run -0 page "$T/r.html" 'lpReport.errors'
	[ "$output" = "[]" ]
	# The distribution: a bar per bin, a line per cut, a mark per mode.
	nbins=$(data 'len(d["durations"]["bins"])')
	run -0 page "$T/r.html" '[".bar", ".cut", ".mode"].map(function (c) { return document.querySelectorAll("#distribution " + c).length; })'
	[ "$output" = "[$nbins,1,2]" ]
	# The graphs, slowest first, then the differential one.
	run -0 page "$T/r.html" 'lpReport.graphs.map(function (g) { return g.group; })'
	[ "$output" = '["above","below","diff"]' ]
	# A search across the graphs: rebuild_index's share is its samples'
	# share in the slow group, none in the fast one.
	rebuild=$(awk -F'\t' '$1 == "sample" && $9 == "s_rebuild"' "$T/s.lp" | wc -l)
	total=$(data 'd["flames"][0]["total"]')
	run -0 page "$T/r.html" 'lpReport.search("^rebuild_index$").map(function (r) { return r.matched + ":" + r.share.toFixed(6); })'
	want=$(awk -v r="$rebuild" -v t="$total" 'BEGIN { printf "1:%.6f", r / t }')
	[ "$output" = "[\"$want\",\"0:0.000000\",\"$want\"]" ]
	run -0 page "$T/r.html" '[lpReport.zoom(0, "rebuild_index"), lpReport.zoom(1, "rebuild_index")]'
	[ "$output" = "[true,false]" ]
	# The tables: a row per group, per ranked function, per feature, per note.
	run -0 page "$T/r.html" '["#groups", "#diff-table", "#features", "#notes"].map(function (id) { return document.querySelectorAll(id + " tbody tr, " + id + " li").length; })'
	echo "# rows: $output" >&3
	[ "$output" = "[$(data 'len(d["groups"])'),$(data 'len(d["table"]["rows"])'),$(data 'len(d["features"])'),$(data 'len(d["notes"])')]" ]
	# The summary names the cause, with its shares.
	run -0 page "$T/r.html" 'document.getElementById("summary").textContent'
	[[ "$output" == *"spend 90% of their samples in rebuild_index vs 0% for fast ones"* ]]
}

@test "lp-report in a browser: the screenshot shows graphs in colour; the template alone says it has no data" {
	require_cmd chromium
	gen 1000
	run -0 lp-report -o "$T/r.html" "$T/l.lp"
	run -0 "$LP_TOP/tests/helpers/report-page" png "$T/r.html" "$T/r.png" 1400x1600
	echo "# $output" >&3
	colours=$(sed -n 's/^size 1400x1600 colours \([0-9]*\)$/\1/p' <<<"$output")
	# A page of text alone has a few hundred (anti-aliasing); the flame
	# graphs' hues and the chart add far more.
	((colours > 1000)) || fail "$output"
	# A page without its graphs (their canvases hidden) has far fewer.
	sed 's|</style>|.flame canvas, #distribution svg { display: none } </style>|' "$T/r.html" > "$T/bare.html"
	run -0 "$LP_TOP/tests/helpers/report-page" png "$T/bare.html" "$T/bare.png" 1400x1600
	bare=$(sed -n 's/^size 1400x1600 colours \([0-9]*\)$/\1/p' <<<"$output")
	((colours > 2 * bare)) || fail "$colours colours with the graphs, $bare without"
	# The template as built, without data: a message, no error.
	cp "$LP_BUILD/lib/output/report.html" "$T/empty.html"
	run -0 page "$T/empty.html" '[lpReport.errors.length, document.body.textContent.indexOf("No data") >= 0]'
	[ "$output" = "[0,true]" ]
}

@test "lp-report in a browser: a million samples, every frame kept, ready in under 2 s" {
	require_cmd chromium
	gen 32000 20000
	run -0 lp-report --min-share 0 -o "$T/r.html" "$T/l.lp"
	size=$(stat -c %s "$T/r.html")
	run -0 page "$T/r.html" '[lpReport.readyMs, lpReport.graphs.map(function (g) { return g.nodes; }), lpReport.errors.length]'
	echo "# $size bytes, [ready ms, [frames drawn], errors]: $output" >&3
	((size < 5000000)) || fail "$size bytes"
	ready=$(sed 's/^\[\([0-9]*\),.*/\1/' <<<"$output")
	((ready < 2000)) || fail "ready after $ready ms"
	[[ "$output" == *",0]" ]]
	run -0 page "$T/r.html" 'lpReport.search("leaf_1234$")[1].matched'
	[ "$output" = 1 ]
}
