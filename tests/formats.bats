#!/usr/bin/env bats
# lp-collapse's --format latency, trace-event and speedscope outputs on
# inputs whose figures are known by construction.
bats_require_minimum_version 1.5.0
load helpers/common

F=$FIXTURES/formats
VALIDATE=$SHARED_TOOLS/validate-speedscope

# node with load(FILE): strict JSON, and bytes that are not UTF-8 throw.
js() {
	node -e 'const fs = require("fs"), assert = require("assert")
const load = f => JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(fs.readFileSync(f)))
'"$1" "${@:2}"
}

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
	run js '
const d = load(process.argv[1]), ev = d.traceEvents, sf = d.stackFrames
const stack = e => { const o = []; for (let n = e.sf; n !== undefined; n = sf[n].parent) o.unshift(sf[n].name); return o.join(";") }
const X = ev.filter(e => e.ph === "X"), B = ev.filter(e => e.ph === "B")
const S = ev.filter(e => e.ph === "i" && e.cat === "sample")
const E = ev.filter(e => e.ph === "i" && e.cat === "event")
const L = ev.filter(e => e.ph === "i" && e.cat === "lost")
const M = ev.filter(e => e.ph === "M")
assert.strictEqual(ev.length, 12)
assert.deepStrictEqual(X.map(e => [e.name, e.ts, e.dur, e.tid]),
	[["handle", 1500, 3000, 42], ["parse", 1600, 1.234, 42]])
assert.deepStrictEqual(X[0].args, { depth: 0, arg0: 7, path: "/x\ty" })
assert.deepStrictEqual(B.map(e => [e.name, e.ts, e.tid, e.dur]), [["handle", 6000, 43, undefined]])
assert.deepStrictEqual(S.map(e => [e.ts, e.tid, stack(e), e.args.weight]), [
	[1000, 42, "main;work;leaf_a", 1000000],
	[2000, 42, "main;work;leaf_a", 1000000],
	[3000, 43, "main;work;sys_read", 1000000],
	[4000, 43, "main;0x7f0000001234", 1000000],
	[5000, 42, "main;odd\"q\\b\x01\ufffd\u20acend", 1000000]])
assert.strictEqual(S[1].args.group, "slow")
assert.ok(S.every(e => e.name === stack(e).split(";").pop()))
assert.strictEqual(sf[S[2].sf].category, "[kernel.kallsyms]")
assert.deepStrictEqual(E.map(e => [e.name, e.ts, e.args]), [["mark", 2500, { value: 12 }]])
assert.deepStrictEqual(L.map(e => [e.name, e.ts, e.s, e.args]), [["lost ring", 5500, "g", { count: 17 }]])
assert.deepStrictEqual(M.map(e => [e.tid, e.name, e.args.name]), [[42, "thread_name", "app"], [43, "thread_name", "app worker"]])
assert.strictEqual(d.otherData.host, "box")
console.log("ok")' "$BATS_TEST_TMPDIR/t.json"
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}

@test "trace-event: a perf script input gives one event per sample, weights summing to the folded total" {
	in=$CORPUS/flamegraph/test/perf-funcab-cmd-01.txt
	run --separate-stderr lp-collapse --format trace-event "$in"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/t.json"
	total=$(set -o pipefail; lp-collapse "$in" | awk '{ s += $NF } END { print s }')
	nsamples=$(grep -cE '^[^ #].* [0-9]+(\.[0-9]+)?: ' "$in" || [ $? -eq 1 ])
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
	run -0 js 'const d = JSON.parse(process.argv[1]); console.log(d.traceEvents.length, Object.keys(d.stackFrames).length)' "$output"
	[ "$output" = "0 0" ]
}

# --- speedscope ---------------------------------------------------------

@test "speedscope: the document is a shared frame table and one sampled profile of the distinct stacks" {
	printf 'a;b 3\na;c 2\nd 1\n' > "$BATS_TEST_TMPDIR/in.folded"
	run --separate-stderr lp-collapse --format speedscope "$BATS_TEST_TMPDIR/in.folded"
	[ "$status" -eq 0 ]
	run -0 js '
const d = JSON.parse(process.argv[1])
assert.strictEqual(d.$schema, "https://www.speedscope.app/file-format-schema.json")
assert.deepStrictEqual(d.shared.frames.map(f => f.name), ["a", "b", "c", "d"])
assert.strictEqual(d.profiles.length, 1)
const p = d.profiles[0]
assert.deepStrictEqual([p.type, p.unit, p.startValue, p.endValue], ["sampled", "none", 0, 6])
assert.deepStrictEqual(p.samples, [[0, 1], [0, 2], [3]])
assert.deepStrictEqual(p.weights, [3, 2, 1])
console.log("ok")' "$output"
	[ "$output" = ok ]
}

@test "speedscope: quotes, backslashes, control bytes and invalid UTF-8 in names stay valid JSON" {
	# frames: a"q  b\s  c<01>  d<ff>  e<e2 82> (truncated)  f<c0 af> (overlong)
	# g<ed a0 80> (surrogate)  h€  i😀
	printf 'a"q;b\\s;c\001 1\nd\377;e\342\202;f\300\257 2\ng\355\240\200;h\342\202\254;i\360\237\230\200 3\n' \
		> "$BATS_TEST_TMPDIR/odd.folded"
	run -0 lp-collapse "$BATS_TEST_TMPDIR/odd.folded"
	lp-collapse --format speedscope "$BATS_TEST_TMPDIR/odd.folded" > "$BATS_TEST_TMPDIR/odd.json"
	js 'load(process.argv[1])' "$BATS_TEST_TMPDIR/odd.json"
	# What speedscope reads must be lp-collapse's folded bytes as a browser
	# decodes them (U+FFFD per maximal ill-formed subsequence).
	lp-collapse "$BATS_TEST_TMPDIR/odd.folded" > "$BATS_TEST_TMPDIR/odd.out"
	node -e 'let b = []; process.stdin.on("data", c => b.push(c)).on("end", () =>
		process.stdout.write(new TextDecoder().decode(Buffer.concat(b))))' < "$BATS_TEST_TMPDIR/odd.out" |
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
	# node's status for an uncaught exception (a SyntaxError here) is 1
	run -1 js 'JSON.parse(process.argv[1])' "$output"
}

@test "man page EXAMPLES of the latency and trace-event formats run" {
	cd "$BATS_TEST_TMPDIR"
	spans
	run -0 lp-collapse --format latency --human spans.lp
	[ "${lines[0]}" = "probe = Zeta" ]
	run -0 lp-collapse --format trace-event -o trace.json spans.lp
	run -0 js 'console.log(load("trace.json").traceEvents.length)'
	[ "$output" = 211 ]	# 208 X, 3 B (unfinished)
}

@test "speedscope: 3000 stacks of random bytes read back as a browser decodes lp-collapse's folded output" {
	# Names drawn mostly from bytes that matter to UTF-8 and JSON (lead and
	# continuation bytes, overlong and surrogate starts, quotes, backslash,
	# controls), with a fixed seed.
	js '
let x = 7; const rnd = n => Math.floor((x = x * 48271 % 2147483647) / 2147483647 * n)
const pool = [0x01, 0x09, 0x1f, 0x22, 0x5c, 0x41, 0x7f, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf,
	0xe0, 0xa0, 0x9f, 0xed, 0xef, 0xf0, 0x90, 0x8f, 0xf4, 0xf5, 0xff, 0x20, 0x61]
const out = []
for (let i = 0; i < 3000; i++) {
	const frames = []
	for (let j = 0, nf = 1 + rnd(5); j < nf; j++) {
		const b = []
		for (let k = 0, n = 1 + rnd(8); k < n; k++) {
			let c = rnd(5) ? pool[rnd(pool.length)] : 1 + rnd(255)
			if (c === 0x3b || c === 0x0a || c === 0x0d) c = 0x78	/* ; \n \r */
			b.push(c)
		}
		frames.push(Buffer.from(b))
	}
	out.push(Buffer.concat([Buffer.concat(frames.flatMap((f, i) => i ? [Buffer.from(";"), f] : [f])),
		Buffer.from(" " + (1 + rnd(9)) + "\n")]))
}
fs.writeFileSync(process.argv[1], Buffer.concat(out))' "$BATS_TEST_TMPDIR/rand.folded"
	lp-collapse "$BATS_TEST_TMPDIR/rand.folded" > "$BATS_TEST_TMPDIR/rand.out"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/rand.out")" -gt 2900 ]
	lp-collapse --format speedscope "$BATS_TEST_TMPDIR/rand.folded" > "$BATS_TEST_TMPDIR/rand.json"
	js 'load(process.argv[1])' "$BATS_TEST_TMPDIR/rand.json"
	# Decoded, distinct byte strings may become one name: sum them again.
	js '
const t = new TextDecoder().decode(fs.readFileSync(process.argv[1])), m = new Map()
for (const l of t.split("\n")) {
	if (!l) continue
	const i = l.lastIndexOf(" "), k = l.slice(0, i)
	m.set(k, (m.get(k) || 0) + Number(l.slice(i + 1)))
}
const keys = [...m.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
process.stdout.write(keys.map(k => k + " " + m.get(k) + "\n").join(""))' "$BATS_TEST_TMPDIR/rand.out" > "$BATS_TEST_TMPDIR/want"
	"$VALIDATE" -q --folded "$BATS_TEST_TMPDIR/rand.json" > "$BATS_TEST_TMPDIR/got"
	cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
}
