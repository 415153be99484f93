#!/usr/bin/env bats
# lp-collapse's --format latency, trace-event and speedscope outputs on
# inputs whose figures are known by construction.
bats_require_minimum_version 1.5.0
load helpers/common

F=$FIXTURES/formats
VALIDATE=$SHARED_TOOLS/validate-speedscope

spans() {
	awk -f "$F/gen-spans.awk" > "$BATS_TEST_TMPDIR/spans.lp"
}

# --- latency ------------------------------------------------------------

@test "latency: exact nearest-rank figures per probe, ordered by name" {
	spans
	run --separate-stderr lp-collapse --format latency "$BATS_TEST_TMPDIR/spans.lp"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s\n' \
		'probe	count	min_ns	p50_ns	p90_ns	p99_ns	max_ns' \
		'Zeta	1	5	5	5	5	5' \
		'handle	200	1000	100000	180000	198000	200000' \
		'query	7	1	5	9	9	9' \
		'zz open	0	-	-	-	-	-')" ]
	[ "$stderr" = "$(printf '%s\n' \
		'lp-collapse: query: 2 unfinished spans not counted' \
		'lp-collapse: zz open: 1 unfinished span not counted')" ]
}

@test "latency: nearest rank at ranks that are not integers (100001 spans)" {
	# durations 1..100001 ns, scrambled: p50 is the 50001st (ceil 50000.5),
	# p90 the 90001st, p99 the 99001st.
	awk 'BEGIN { OFS = "\t"; print "lp-stream", 1
		for (k = 0; k < 100001; k++) { d = (k * 7919) % 100001 + 1
			print "span", k * 10, k * 10 + d, 1, 1, "p", 0 } }' > "$BATS_TEST_TMPDIR/big.lp"
	run --separate-stderr lp-collapse --format latency "$BATS_TEST_TMPDIR/big.lp"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "p	100001	1	50001	90001	99001	100001" ]
	[ -z "$stderr" ]
}

@test "latency --human: log2 histograms with exact buckets, unit by range" {
	spans
	run --separate-stderr lp-collapse --format latency --human "$BATS_TEST_TMPDIR/spans.lp"
	[ "$status" -eq 0 ]
	want=$(cat <<'END'
probe = Zeta
     nsecs               : count    distribution
         4 -> 7          : 1        |****************************************|
count = 1, avg = 5 nsecs, total = 5 nsecs, p50 = 5 ns, p99 = 5 ns, max = 5 ns

probe = handle
     usecs               : count    distribution
         0 -> 1          : 1        |                                        |
         2 -> 3          : 2        |*                                       |
         4 -> 7          : 4        |**                                      |
         8 -> 15         : 8        |****                                    |
        16 -> 31         : 16       |********                                |
        32 -> 63         : 32       |*****************                       |
        64 -> 127        : 64       |***********************************     |
       128 -> 255        : 73       |****************************************|
count = 200, avg = 100 usecs, total = 20100 usecs, p50 = 100000 ns, p99 = 198000 ns, max = 200000 ns

probe = query
     nsecs               : count    distribution
         0 -> 1          : 1        |********************                    |
         2 -> 3          : 2        |****************************************|
         4 -> 7          : 2        |****************************************|
         8 -> 15         : 2        |****************************************|
count = 7, avg = 5 nsecs, total = 35 nsecs, p50 = 5 ns, p99 = 9 ns, max = 9 ns, unfinished = 2

probe = zz open
no finished span (1 unfinished)
END
)
	[ "$output" = "$want" ]
}

@test "latency: no spans gives the header alone, exit 0" {
	: > "$BATS_TEST_TMPDIR/empty"
	run --separate-stderr lp-collapse --format latency "$BATS_TEST_TMPDIR/empty"
	[ "$status" -eq 0 ]
	[ "$output" = "probe	count	min_ns	p50_ns	p90_ns	p99_ns	max_ns" ]
	run --separate-stderr lp-collapse --format latency --human "$BATS_TEST_TMPDIR/empty"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "latency: a span that ends before it starts is bad input: file:line, exit 1" {
	printf 'lp-stream\t1\nspan\t100\t200\t1\t1\tp\t0\nspan\t500\t400\t1\t1\tp\t0\n' \
		> "$BATS_TEST_TMPDIR/bad.lp"
	run --separate-stderr lp-collapse --format latency "$BATS_TEST_TMPDIR/bad.lp"
	[ "$status" -eq 1 ]
	[[ "$stderr" == "lp-collapse: $BATS_TEST_TMPDIR/bad.lp:3: "* ]]
	[ -z "$output" ]
}

# --- trace-event --------------------------------------------------------

@test "trace-event: spans, samples, events and lost records with exact times" {
	run --separate-stderr lp-collapse --format trace-event "$F/trace.lp"
	[ "$status" -eq 0 ]
	[ "$stderr" = "lp-collapse: 1 sample without a timestamp left out of the trace" ]
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/t.json"
	run python3 - "$BATS_TEST_TMPDIR/t.json" <<'END'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))   # strict: no raw control chars
ev = d["traceEvents"]
sf = d["stackFrames"]
def stack(e):
    out, n = [], e.get("sf")
    while n is not None:
        out.append(sf[n]["name"]); n = sf[n].get("parent")
    return ";".join(reversed(out))
X = [e for e in ev if e["ph"] == "X"]
B = [e for e in ev if e["ph"] == "B"]
S = [e for e in ev if e["ph"] == "i" and e["cat"] == "sample"]
E = [e for e in ev if e["ph"] == "i" and e["cat"] == "event"]
L = [e for e in ev if e["ph"] == "i" and e["cat"] == "lost"]
M = [e for e in ev if e["ph"] == "M"]
assert len(ev) == 12, len(ev)
assert [(e["name"], e["ts"], e["dur"], e["tid"]) for e in X] == \
    [("handle", 1500.0, 3000.0, 42), ("parse", 1600.0, 1.234, 42)], X
assert X[0]["args"] == {"depth": 0, "arg0": 7, "path": "/x\ty"}, X[0]["args"]
assert [(e["name"], e["ts"], e["tid"]) for e in B] == [("handle", 6000.0, 43)], B
assert [(e["ts"], e["tid"], stack(e), e["args"]["weight"]) for e in S] == [
    (1000.0, 42, "main;work;leaf_a", 1000000),
    (2000.0, 42, "main;work;leaf_a", 1000000),
    (3000.0, 43, "main;work;sys_read", 1000000),
    (4000.0, 43, "main;0x7f0000001234", 1000000),
    (5000.0, 42, 'main;odd"q\\b\x01\ufffd\u20acend', 1000000)], [stack(e) for e in S]
assert S[1]["args"]["group"] == "slow"
assert all(e["name"] == stack(e).split(";")[-1] for e in S)
assert sf[S[2]["sf"]]["category"] == "[kernel.kallsyms]"
assert [(e["name"], e["ts"], e["args"]) for e in E] == [("mark", 2500.0, {"value": 12})]
assert [(e["name"], e["ts"], e["s"], e["args"]) for e in L] == [("lost ring", 5500.0, "g", {"count": 17})]
assert sorted((e["tid"], e["args"]["name"]) for e in M) == [(42, "app"), (43, "app worker")]
assert d["otherData"]["host"] == "box"
print("ok")
END
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}

@test "trace-event: a perf script input gives one event per sample, weights summing to the folded total" {
	in=$CORPUS/flamegraph/test/perf-funcab-cmd-01.txt
	run --separate-stderr lp-collapse --format trace-event "$in"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/t.json"
	total=$(lp-collapse "$in" | awk '{ s += $NF } END { print s }')
	nsamples=$(grep -cE '^[^ #].* [0-9]+(\.[0-9]+)?: ' "$in" || true)
	run node -e '
		const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
		const s = d.traceEvents.filter(e => e.ph === "i" && e.cat === "sample")
		let w = 0; for (const e of s) w += e.args.weight
		console.log(s.length, w, s.every(e => d.stackFrames[e.sf] !== undefined))' "$BATS_TEST_TMPDIR/t.json"
	[ "$status" -eq 0 ]
	[ "$output" = "$nsamples $total true" ]
}

@test "trace-event: empty input is an empty trace, still valid JSON" {
	: > "$BATS_TEST_TMPDIR/empty"
	run --separate-stderr lp-collapse --format trace-event "$BATS_TEST_TMPDIR/empty"
	[ "$status" -eq 0 ]
	run python3 -c 'import json,sys; d = json.loads(sys.argv[1]); print(len(d["traceEvents"]), len(d["stackFrames"]))' "$output"
	[ "$output" = "0 0" ]
}

# --- speedscope ---------------------------------------------------------

@test "speedscope: the document is a shared frame table and one sampled profile of the distinct stacks" {
	printf 'a;b 3\na;c 2\nd 1\n' > "$BATS_TEST_TMPDIR/in.folded"
	run --separate-stderr lp-collapse --format speedscope "$BATS_TEST_TMPDIR/in.folded"
	[ "$status" -eq 0 ]
	run python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["$schema"] == "https://www.speedscope.app/file-format-schema.json"
assert [f["name"] for f in d["shared"]["frames"]] == ["a", "b", "c", "d"]
(p,) = d["profiles"]
assert (p["type"], p["unit"], p["startValue"], p["endValue"]) == ("sampled", "none", 0, 6), p
assert p["samples"] == [[0, 1], [0, 2], [3]] and p["weights"] == [3, 2, 1], p
print("ok")' "$output"
	[ "$output" = ok ]
}

@test "speedscope: quotes, backslashes, control bytes and invalid UTF-8 in names stay valid JSON" {
	# frames: a"q  b\s  c<01>  d<ff>  e<e2 82> (truncated)  f<c0 af> (overlong)
	# g<ed a0 80> (surrogate)  h€  i😀
	printf 'a"q;b\\s;c\001 1\nd\377;e\342\202;f\300\257 2\ng\355\240\200;h\342\202\254;i\360\237\230\200 3\n' \
		> "$BATS_TEST_TMPDIR/odd.folded"
	run -0 lp-collapse "$BATS_TEST_TMPDIR/odd.folded"
	lp-collapse --format speedscope "$BATS_TEST_TMPDIR/odd.folded" > "$BATS_TEST_TMPDIR/odd.json"
	python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$BATS_TEST_TMPDIR/odd.json"
	# What speedscope reads must be lp-collapse's folded bytes as a browser
	# decodes them (U+FFFD per maximal ill-formed subsequence).
	lp-collapse "$BATS_TEST_TMPDIR/odd.folded" |
		node -e 'let b = []; process.stdin.on("data", c => b.push(c)).on("end", () =>
			process.stdout.write(new TextDecoder().decode(Buffer.concat(b))))' |
		LC_ALL=C sort > "$BATS_TEST_TMPDIR/want"
	"$VALIDATE" -q --folded "$BATS_TEST_TMPDIR/odd.json" | LC_ALL=C sort > "$BATS_TEST_TMPDIR/got"
	run diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	[ "$status" -eq 0 ]
	# The replacement is the WHATWG one: one U+FFFD for the truncated e2 82,
	# two for the overlong c0 af, three for the surrogate ed a0 80.
	grep -qF $'d\xef\xbf\xbd;e\xef\xbf\xbd;f\xef\xbf\xbd\xef\xbf\xbd 2' "$BATS_TEST_TMPDIR/got"
	grep -qF $'g\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd;h\xe2\x82\xac;i\xf0\x9f\x98\x80 3' "$BATS_TEST_TMPDIR/got"
}

@test "speedscope: empty input gives a file speedscope loads, with one empty profile" {
	: > "$BATS_TEST_TMPDIR/empty"
	run --separate-stderr lp-collapse --format speedscope "$BATS_TEST_TMPDIR/empty"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/empty.json"
	run --separate-stderr "$VALIDATE" --folded "$BATS_TEST_TMPDIR/empty.json"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[[ "$stderr" == *"OK $BATS_TEST_TMPDIR/empty.json: "*"1 profile(s)"* ]]
}

@test "trace-event: bad input stops with file:line, exit 1, and a document that is not closed" {
	{ head -12 "$F/trace.lp"; printf 'span\tnot-a-time\t5\t1\t1\tp\t0\n'; } > "$BATS_TEST_TMPDIR/bad.lp"
	run --separate-stderr lp-collapse --format trace-event "$BATS_TEST_TMPDIR/bad.lp"
	[ "$status" -eq 1 ]
	[[ "$stderr" == "lp-collapse: $BATS_TEST_TMPDIR/bad.lp:13: "* ]]
	run python3 -c 'import json,sys; json.loads(sys.argv[1])' "$output"
	[ "$status" -ne 0 ]
}

@test "man page EXAMPLES of the latency and trace-event formats run" {
	cd "$BATS_TEST_TMPDIR"
	spans
	run -0 lp-collapse --format latency --human spans.lp
	[ "${lines[0]}" = "probe = Zeta" ]
	run -0 lp-collapse --format trace-event -o trace.json spans.lp
	run -0 python3 -c 'import json; print(len(json.load(open("trace.json"))["traceEvents"]))'
	[ "$output" = 211 ]	# 208 X, 3 B (unfinished)
}
