#!/usr/bin/env bats
# Chrome's trace events, the Firefox Profiler's formats (Gecko, processed,
# samply's) and nflxprofile read as lp streams (formats/foreign.md): a live
# trace of Chromium against the page's own clock; small files written from
# the formats' schemas, read exactly (times, threads, weights, stacks,
# frames); the projects' own test files against what the projects say they
# hold; and damaged files refused, naming what is wrong.

load helpers/common

F=$FIXTURES/foreign-json

# samples FILE: each sample's TIME PID TID CPU COMM EVENT WEIGHT.
samples() {
	awk -F'\t' '$1 == "sample" { print $2, $3, $4, $5, $6, $7, $8 }' "$1"
}

# frames FILE: each frame's KIND MODULE SYMBOL SRCLINE, in stream order.
frames() {
	awk -F'\t' '$1 == "frame" { print $3, $5, $6, $7 }' "$1"
}

# refused FILE MESSAGE [OPTION...]: lp-cat OPTION... FILE exits 1, writes
# nothing, and says "lp-cat: FILE: MESSAGE".
refused() {
	run --separate-stderr lp-cat "${@:3}" "$1"
	[ "$status" -eq 1 ] || fail "$1: exit $status, said '$stderr'"
	[ -z "$output" ] || fail "$1: wrote ${output:0:200}"
	[ "$stderr" = "lp-cat: $1: $2" ] || fail "$1: said '$stderr', not 'lp-cat: $1: $2'"
}

# nflx OUT: writes to OUT the nflxprofile the python on stdin returns from
# profile(...), with the helpers below (the wire format by hand).
nflx() {
	{
		cat <<-'EOF'
		import struct, sys
		def varint(v):
		    out = b""
		    while True:
		        b = v & 0x7f
		        v >>= 7
		        if v:
		            out += bytes([b | 0x80])
		        else:
		            return out + bytes([b])
		def key(n, wire): return varint(n << 3 | wire)
		def ld(n, b): return key(n, 2) + varint(len(b)) + b
		def u(n, v): return key(n, 0) + varint(v)
		def dbl(n, x): return key(n, 1) + struct.pack("<d", x)
		def string(n, s): return ld(n, s.encode())
		def file(name, line): return string(1, name) + u(2, line)
		def frame(name, libtype="", path=None, line=0):
		    return string(1, name) + (string(2, libtype) if libtype else b"") + \
		        (ld(3, file(path, line)) if path else b"")
		def node(name, children=(), libtype="", parent=None, pid=None, tid=None, stack=(), path=None, line=0):
		    b = string(1, name) + u(2, 0) + b"".join(u(3, c) for c in children)
		    b += string(4, libtype) if libtype else b""
		    b += u(5, parent) if parent is not None else b""
		    b += (u(6, pid) if pid is not None else b"") + (u(7, tid) if tid is not None else b"")
		    b += b"".join(ld(10, s) for s in stack)
		    return b + (ld(11, file(path, line)) if path else b"")
		def profile(start, end, samples, deltas, nodes, params=(), pids=(), tids=(), cpus=()):
		    b = dbl(1, start) + dbl(2, end) + ld(3, b"".join(varint(s) for s in samples))
		    b += ld(4, b"".join(struct.pack("<d", d) for d in deltas))
		    b += b"".join(ld(5, u(1, k) + ld(2, v)) for k, v in nodes)
		    b += b"".join(ld(8, string(1, k) + string(2, v)) for k, v in params)
		    for n, vals in ((9, cpus), (10, pids), (11, tids)):
		        if vals:
		            b += ld(n, b"".join(varint(v) for v in vals))
		    return b
		EOF
		cat
		echo 'open(sys.argv[1], "wb").write(main())'
	} >"$T/nflx.py"
	python3 "$T/nflx.py" "$1"
}

# --- Chrome's trace events -------------------------------------------------

@test "chrometrace: Chromium's own trace of a page whose a() takes a quarter of its loop: a()'s share within 3 points of the page's clock" {
	require_cmd chromium
	require_cmd node
	# The page times a() and b() with performance.now() while Chromium's
	# V8 profiler samples it (Tracing over the DevTools protocol:
	# disabled-by-default-v8.cpu_profiler, Profile and ProfileChunk events).
	cat >"$T/trace.cjs" <<-'EOF'
	"use strict";
	const { spawn } = require("child_process");
	const fs = require("fs"), path = require("path");
	const [out, seconds] = process.argv.slice(2);
	const dir = fs.mkdtempSync(path.join(path.dirname(out), "chromium-"));	/* bats removes it */
	const chrome = spawn("chromium", ["--headless=new", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-extensions", "--remote-debugging-port=0",
		"--user-data-dir=" + dir, "about:blank"], { stdio: ["ignore", "ignore", "pipe"] });
	let log = "";
	chrome.stderr.on("data", (d) => { log += d; });
	const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
	function finish(code, msg) {
		if (msg) console.error("trace: " + msg + "\n" + log.split("\n").slice(-5).join("\n"));
		if (chrome.exitCode !== null || chrome.signalCode !== null) process.exit(code);
		chrome.on("exit", () => process.exit(code));
		chrome.kill("SIGKILL");
	}
	setTimeout(() => finish(1, "timed out after 90 s"), 90000).unref();
	async function endpoint() {
		for (let i = 0; i < 300; i++) {
			try {
				const [port, p] = fs.readFileSync(path.join(dir, "DevToolsActivePort"), "utf8").split("\n");
				if (port && p) return "ws://127.0.0.1:" + port + p;
			} catch (e) { /* not yet */ }
			await sleep(50);
		}
		throw new Error("chromium never listened");
	}
	async function main() {
		const ws = new WebSocket(await endpoint());
		await new Promise((ok, bad) => { ws.onopen = ok; ws.onerror = () => bad(new Error("no websocket")); });
		let id = 0, events = [], done;
		const complete = new Promise((r) => { done = r; });
		const waiting = new Map();
		ws.onmessage = (m) => {
			const msg = JSON.parse(m.data);
			if (msg.id && waiting.has(msg.id)) { waiting.get(msg.id)(msg); waiting.delete(msg.id); }
			else if (msg.method === "Tracing.dataCollected") events = events.concat(msg.params.value);
			else if (msg.method === "Tracing.tracingComplete") done();
		};
		const send = (method, params, sessionId) => new Promise((ok) => {
			const m = { id: ++id, method, params: params || {} };
			if (sessionId) m.sessionId = sessionId;
			waiting.set(m.id, ok);
			ws.send(JSON.stringify(m));
		});
		const t = await send("Target.createTarget", { url: "about:blank" });
		const s = (await send("Target.attachToTarget", { targetId: t.result.targetId, flatten: true })).result.sessionId;
		const r = await send("Tracing.start", { transferMode: "ReportEvents",
			traceConfig: { includedCategories: ["disabled-by-default-v8.cpu_profiler", "__metadata"] } });
		if (r.error) throw new Error("Tracing.start: " + r.error.message);
		const page = `(() => {
			let sink = 0;
			function spin(n) { for (let i = 0; i < n; i++) sink = (sink * 1103515245 + 12345) % 2147483648; }
			function a() { spin(100000); }
			function b() { spin(300000); }
			let ta = 0, tb = 0;
			const end = performance.now() + ${Number(seconds) * 1000};
			while (performance.now() < end) {
				const t0 = performance.now(); a();
				const t1 = performance.now(); b();
				const t2 = performance.now();
				ta += t1 - t0; tb += t2 - t1;
			}
			return { a: ta, b: tb, sink };
		})()`;
		const v = await send("Runtime.evaluate", { expression: page, returnByValue: true }, s);
		if (v.error || v.result.exceptionDetails) throw new Error("the page failed: " + JSON.stringify(v));
		await send("Tracing.end");
		await complete;
		fs.writeFileSync(out, JSON.stringify({ traceEvents: events }));
		const m = v.result.result.value;
		console.log((100 * m.a / (m.a + m.b)).toFixed(1));
		ws.close();
		finish(0);
	}
	main().catch((e) => finish(1, String(e)));
	EOF
	run --separate-stderr node --experimental-websocket "$T/trace.cjs" "$T/trace.json" 3
	[ "$status" -eq 0 ] || fail "node: $stderr"
	truth=$output
	run -0 lp-cat "$T/trace.json"
	echo "$output" >"$T/trace.lp"
	lp-collapse "$T/trace.lp" >"$T/trace.folded"
	# a()'s share of the time in a() or b(), as the samples' weights say
	s=$(awk '{ w = $NF; if ($0 ~ /;a;spin /) a += w; else if ($0 ~ /;b;spin /) b += w }
		END { if (a + b) printf "%.1f\n", 100 * a / (a + b) }' "$T/trace.folded")
	n=$(grep -c $'^sample\t' "$T/trace.lp")
	echo "chrometrace: a() $s% of a() and b() in $n samples; the page's clock: $truth%"
	[ "$n" -ge 1000 ] || fail "only $n samples"
	within "$s" "$(awk -v t="$truth" 'BEGIN { print t - 3 }')" "$(awk -v t="$truth" 'BEGIN { print t + 3 }')" \
		"a()'s share against the page's clock"
	# V8's samples of the page's thread: the renderer's main thread by
	# name, times on the trace's clock, JavaScript frames 'j'
	grep -q $'^sample\t[0-9]*\t[0-9]*\t[0-9]*\t-\tCrRendererMain\twall\t' "$T/trace.lp"
	grep -q $'^frame\t[0-9a-f]*\tj\t-\t-\ta\t-$' "$T/trace.lp"
}

@test "chrometrace: Profile and ProfileChunk events read exactly: nodes over chunks, times, weights to the next sample and to the end, thread names" {
	cat >"$T/t.json" <<-'EOF'
	{"traceEvents": [
	 {"name": "thread_name", "ph": "M", "pid": 10, "tid": 11, "args": {"name": "CrRendererMain"}},
	 {"name": "Profile", "ph": "P", "id": "0x1", "pid": 10, "tid": 11, "ts": 1000, "args": {"data": {"startTime": 1000}}},
	 {"name": "ProfileChunk", "ph": "P", "id": "0x1", "pid": 10, "tid": 12, "ts": 1100, "args": {"data": {
	   "cpuProfile": {"nodes": [{"id": 1, "callFrame": {"functionName": "(root)", "codeType": "other", "scriptId": 0}},
	     {"id": 2, "parent": 1, "callFrame": {"functionName": "main", "url": "https://site/app.js", "lineNumber": 9, "scriptId": 3, "codeType": "JS"}},
	     {"id": 3, "parent": 2, "callFrame": {"functionName": "", "scriptId": 3, "codeType": "JS"}}],
	     "samples": [2, 3]}, "timeDeltas": [100, 50]}}},
	 {"name": "RunTask", "ph": "X", "pid": 10, "tid": 11, "ts": 1000, "dur": 500},
	 {"name": "ProfileChunk", "ph": "P", "id": "0x1", "pid": 10, "tid": 12, "ts": 1300, "args": {"data": {
	   "cpuProfile": {"nodes": [{"id": 4, "parent": 1, "callFrame": {"functionName": "(idle)", "scriptId": 0, "codeType": "other"}}],
	     "samples": [4, 3]}, "timeDeltas": [200, 25]}}},
	 {"name": "ProfileChunk", "ph": "P", "id": "0x1", "pid": 10, "tid": 12, "ts": 1400, "args": {"data": {"endTime": 1500}}},
	 {"name": "Profile", "ph": "P", "id": "0x1", "pid": 20, "tid": 21, "ts": 1000, "args": {"data": {"startTime": 5000}}},
	 {"name": "ProfileChunk", "ph": "P", "id": "0x1", "pid": 20, "tid": 22, "ts": 5100, "args": {"data": {
	   "cpuProfile": {"nodes": [{"id": 1, "callFrame": {"functionName": "(root)"}}, {"id": 2, "parent": 1, "callFrame": {"functionName": "other"}}],
	     "samples": [2, 2]}, "timeDeltas": [10, 30]}}}
	]}
	EOF
	run -0 lp-cat "$T/t.json"
	echo "$output" >"$T/t.lp"
	# the chunks of id 0x1 in pid 10 are one profile, pid 20's another;
	# the last sample weighs to the end (1500 us), or, with no end, as
	# much as the gap before it
	run -0 samples "$T/t.lp"
	[ "$output" = "$(printf '%s\n' '1100000 10 11 - CrRendererMain wall 50000' \
		'1150000 10 11 - CrRendererMain wall 200000' '1350000 10 11 - CrRendererMain wall 25000' \
		'1375000 10 11 - CrRendererMain wall 125000' '5010000 20 21 - - wall 30000' \
		'5040000 20 21 - - wall 30000')" ]
	run -0 frames "$T/t.lp"
	[ "$output" = "$(printf '%s\n' 'j https://site/app.js main https://site/app.js:10' \
		'j - (anonymous) -' 'u - (idle) -' 'u - other -')" ]
	run -0 lp-collapse "$T/t.lp"
	[ "$output" = "$(printf '%s\n' 'CrRendererMain;(idle) 25000' 'CrRendererMain;main 50000' \
		'CrRendererMain;main;(anonymous) 325000' 'other 60000')" ]
	# the list form of a trace reads the same
	python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["traceEvents"]))' \
		"$T/t.json" >"$T/list.json"
	run -0 lp-cat "$T/list.json"
	[ "$output" = "$(cat "$T/t.lp")" ]
}

@test "chrometrace: the older stack samples: the stackFrames dictionary with samples, and P events with a stack" {
	cat >"$T/old.json" <<-'EOF'
	{"traceEvents": [{"name": "sample", "ph": "P", "pid": 3, "tid": 4, "ts": 50, "stack": ["main", "0x1a2b"]}],
	 "stackFrames": {"1": {"name": "main", "category": "/usr/bin/app"},
	                 "2": {"name": "parse", "category": "/usr/bin/app", "parent": "1"},
	                 "3": {"name": "memcpy", "category": "libc.so.6", "parent": 2}},
	 "samples": [{"cpu": 0, "tid": 4, "ts": 100.5, "name": "cycles", "sf": "3", "weight": 2},
	             {"cpu": 1, "tid": 5, "ts": 200, "name": "cycles", "sf": 2}]}
	EOF
	run -0 lp-cat "$T/old.json"
	echo "$output" >"$T/old.lp"
	run -0 samples "$T/old.lp"
	[ "$output" = "$(printf '%s\n' '50000 3 4 - - sample 1' '100500 - 4 0 - cycles 2' \
		'200000 - 5 1 - cycles 1')" ]
	run -0 lp-collapse --event-filter cycles "$T/old.lp"
	[ "$output" = "$(printf '%s\n' 'main;parse 1' 'main;parse;memcpy 2')" ]
	run -0 frames "$T/old.lp"
	[ "$output" = "$(printf '%s\n' 'u - main -' 'u - 0x1a2b -' 'u /usr/bin/app main -' \
		'u /usr/bin/app parse -' 'u libc.so.6 memcpy -')" ]
}

@test "chrometrace: a trace without samples, and damaged ones, are refused naming what is wrong" {
	r='"name": "Profile", "ph": "P", "id": "0x1", "pid": 1, "tid": 1, "args": {"data": {"startTime": 1}}'
	c='"name": "ProfileChunk", "ph": "P", "id": "0x1", "pid": 1, "tid": 2'
	while IFS='|' read -r json message; do
		printf '%s\n' "$json" >"$T/bad.json"
		refused "$T/bad.json" "chrometrace: $message"
	done <<-EOF
	{"traceEvents": [{"name": "RunTask", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}|no stack samples in the trace (lp reads its samples, not its events)
	[{"name": "RunTask", "ph": "B", "ts": 1, "pid": 1, "tid": 1}]|no stack samples in the trace (lp reads its samples, not its events)
	{"traceEvents": [{$c, "args": {"data": {"cpuProfile": {"nodes": [], "samples": []}, "timeDeltas": []}}}]}|ProfileChunk 0x1 of pid 1 has no Profile event
	{"traceEvents": [{$r}, {$c, "args": {"data": {"cpuProfile": {"nodes": [{"id": 1, "parent": 2}, {"id": 2, "parent": 1}], "samples": []}, "timeDeltas": []}}}]}|Profile 0x1 of pid 1: node 1 is its own ancestor
	{"traceEvents": [{$r}, {$c, "args": {"data": {"cpuProfile": {"nodes": [{"id": 1}], "samples": [9]}, "timeDeltas": [5]}}}]}|Profile 0x1 of pid 1: sample 0: no node 9
	{"traceEvents": [{$r}, {$c, "args": {"data": {"cpuProfile": {"nodes": [{"id": 1}, {"id": 2, "parent": 7}], "samples": []}, "timeDeltas": []}}}]}|Profile 0x1 of pid 1: node 2: no parent node of that id
	{"traceEvents": [{$r}, {$c, "args": {"data": {"cpuProfile": {"nodes": [{"id": 1}], "samples": [1, 1]}, "timeDeltas": [5]}}}]}|event 1 (ProfileChunk): 1 timeDeltas for 2 samples
	{"traceEvents": [{$r}, {$c, "args": {"data": {"cpuProfile": {"nodes": [{"id": 1}], "samples": [1]}, "timeDeltas": [-5]}}}]}|Profile 0x1 of pid 1: sample 0: time -4 us is not a time
	{"traceEvents": [], "stackFrames": {"1": {"name": "a", "parent": "2"}, "2": {"name": "b", "parent": "1"}}, "samples": [{"ts": 1, "tid": 1, "sf": "1"}]}|sample 0: stack frame 1 is its own ancestor
	{"traceEvents": [], "stackFrames": {"1": {"name": "a"}}, "samples": [{"ts": 1, "tid": 1, "sf": "9"}]}|sample 0: no stack frame 9
	{"traceEvents": [], "stackFrames": {"1": {"name": "a"}}, "samples": [{"ts": 1, "tid": 1, "sf": "1", "weight": -2}]}|sample 0: its weight is not a weight
	{"traceEvents": [{"name": "s", "ph": "P", "ts": 1, "pid": 1, "tid": 1, "stack": [1, 2]}]}|event 0: its stack is no list of names
	EOF
	# cut short, the JSON is what is wrong
	printf '{"traceEvents": [{"name": "Profile", "ph": "P"' >"$T/cut.json"
	run --separate-stderr lp-cat "$T/cut.json"
	[ "$status" -eq 1 ]
	[[ "$stderr" == "lp-cat: $T/cut.json:1:"*": not well-formed JSON: "* ]] || fail "said '$stderr'"
}

# --- the Firefox Profiler's formats ----------------------------------------

@test "gecko: a processed profile as samply writes it (version 66, shared tables) read exactly" {
	cat >"$T/p.json" <<-'EOF'
	{"meta": {"interval": 0.5, "startTime": 1700000000000, "startTimeAsClockMonotonicNanosecondsSinceBoot": 5000000000,
	   "preprocessedProfileVersion": 66, "version": 24, "product": "hand", "markerSchema": [],
	   "categories": [{"name": "User", "color": "yellow", "subcategories": ["Other"]},
	                  {"name": "Kernel", "color": "orange", "subcategories": ["Other"]}]},
	 "libs": [{"name": "app", "path": "/usr/bin/app", "debugName": "app", "debugPath": "/usr/bin/app", "breakpadId": "", "codeId": null, "arch": null},
	          {"name": "libc.so.6", "path": "", "debugName": "libc.so.6", "debugPath": "", "breakpadId": "", "codeId": null, "arch": null}],
	 "shared": {
	   "stringArray": ["main", "work", "memcpy", "schedule", "inner", "run", "/src/app.c", "https://site/app.js", "app", "libc.so.6"],
	   "sources": {"length": 2, "id": [null, null], "filename": [6, 7], "startLine": [1, 1], "startColumn": [1, 1], "sourceMapURL": [null, null], "content": [null, null]},
	   "resourceTable": {"length": 2, "lib": [0, 1], "name": [8, 9], "host": [null, null], "type": [1, 1]},
	   "funcTable": {"length": 6, "name": [0, 1, 2, 3, 4, 5], "isJS": [false, false, false, false, false, true],
	     "relevantForJS": [false, false, false, false, false, false], "resource": [0, 0, 1, -1, 0, -1],
	     "source": [0, 0, null, null, 0, 1], "lineNumber": [null, null, null, null, null, 5], "columnNumber": [null, null, null, null, null, null]},
	   "frameTable": {"length": 6, "func": [0, 1, 2, 3, 4, 5], "line": [10, 20, null, null, 25, 7],
	     "inlineDepth": [0, 0, 0, 0, 1, 0], "category": [0, 0, 0, 1, 0, 0], "subcategory": [0, 0, 0, 0, 0, 0],
	     "address": [16, 32, 48, -1, 32, -1], "nativeSymbol": [null, null, null, null, null, null], "innerWindowID": [0, 0, 0, 0, 0, 0],
	     "column": [null, null, null, null, null, null]},
	   "stackTable": {"length": 6, "frame": [0, 1, 4, 2, 3, 5], "prefixOffset": [0, 1, 1, 2, 1, 5]}},
	 "threads": [{"name": "app", "processName": "app", "pid": "42", "tid": "43", "isMainThread": true,
	   "samples": {"length": 4, "weightType": "samples", "stack": [2, 4, null, 5], "timeDeltas": [1, 1, 1, 2], "weight": [1, 3, 1, 2]}}]}
	EOF
	run -0 lp-cat "$T/p.json"
	echo "$output" >"$T/p.lp"
	# times: CLOCK_MONOTONIC's start plus the deltas; weights: the weight
	# times the 0.5 ms interval; the sample without a stack left out
	run -0 samples "$T/p.lp"
	[ "$output" = "$(printf '%s\n' '5001000000 42 43 - app wall 500000' \
		'5002000000 42 43 - app wall 1500000' '5005000000 42 43 - app wall 1000000')" ]
	# modules: the lib's path (its name when it has none), the script's URL
	# for JavaScript; lines: the function's file and the frame's line;
	# kinds: inlined, samply's Kernel category, JavaScript
	run -0 frames "$T/p.lp"
	[ "$output" = "$(printf '%s\n' 'u /usr/bin/app main /src/app.c:10' 'u /usr/bin/app work /src/app.c:20' \
		'i /usr/bin/app inner /src/app.c:25' 'u libc.so.6 memcpy -' 'k - schedule -' \
		'j https://site/app.js run https://site/app.js:7')" ]
	run -0 lp-collapse "$T/p.lp"
	[ "$output" = "$(printf '%s\n' 'app;main;run 1000000' 'app;main;work;inner_[i] 500000' \
		'app;main;work;memcpy;schedule 1500000')" ]
	# without startTimeAsClockMonotonicNanosecondsSinceBoot: startTime, the
	# Unix epoch's milliseconds; weightType tracing-ms: durations
	python3 - "$T/p.json" "$T/q.json" <<-'EOF'
	import json, sys
	p = json.load(open(sys.argv[1]))
	del p["meta"]["startTimeAsClockMonotonicNanosecondsSinceBoot"]
	p["threads"][0]["samples"]["weightType"] = "tracing-ms"
	json.dump(p, open(sys.argv[2], "w"))
	EOF
	run -0 lp-cat "$T/q.json"
	echo "$output" >"$T/q.lp"
	run -0 samples "$T/q.lp"
	[ "$output" = "$(printf '%s\n' '1700000000001000000 42 43 - app wall 1000000' \
		'1700000000002000000 42 43 - app wall 3000000' '1700000000005000000 42 43 - app wall 2000000')" ]
	# the layout of versions 58 and 59: the tables in the thread, the
	# strings and sources shared, stacks by "prefix": the same stream
	python3 - "$T/p.json" "$T/v58.json" <<-'EOF'
	import json, sys
	p = json.load(open(sys.argv[1]))
	for k in ["stackTable", "frameTable", "funcTable", "resourceTable"]:
	    p["threads"][0][k] = p["shared"].pop(k)
	st = p["threads"][0]["stackTable"]
	st["prefix"] = [None if o == 0 else i - o for i, o in enumerate(st.pop("prefixOffset"))]
	p["meta"]["preprocessedProfileVersion"] = 58
	json.dump(p, open(sys.argv[2], "w"))
	EOF
	run -0 lp-cat "$T/v58.json"
	[ "$output" = "$(cat "$T/p.lp")" ]
}

@test "gecko: a Gecko profile (Firefox's, {schema, data} tables) with a child process read exactly" {
	frametable='"frameTable": {"schema": {"location": 0, "relevantForJS": 1, "innerWindowID": 2, "implementation": 3, "line": 4, "column": 5, "category": 6, "subcategory": 7}'
	cat >"$T/g.json" <<-EOF
	{"meta": {"version": 27, "interval": 0.5, "startTime": 2000, "startTimeAsClockMonotonicNanosecondsSinceBoot": 7000000000, "processType": 0,
	   "categories": [{"name": "Other", "color": "grey", "subcategories": ["Other"]}]},
	 "libs": [{"start": 4096, "end": 8192, "offset": 0, "name": "libfoo.so", "path": "/usr/lib/libfoo.so", "debugName": "libfoo.so", "debugPath": "", "breakpadId": "", "arch": "x86_64"}],
	 "threads": [{"name": "GeckoMain", "processType": "default", "pid": 7, "tid": 7, "registerTime": 0, "unregisterTime": null,
	   "samples": {"schema": {"stack": 0, "time": 1, "eventDelay": 2}, "data": [[2, 1.0, 0], [3, 1.5, 0], [null, 2.0, 0], [3, 3.0, 0]]},
	   "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[null, 0], [0, 1], [1, 2], [1, 3]]},
	   $frametable, "data": [[0, false, 0, null, null, null, 0, 0], [1, false, 0, null, null, null, 0, 0],
	     [2, false, 0, null, 12, 5, 0, 0], [3, false, 0, null, null, null, 0, 0]]},
	   "stringTable": ["(root)", "0x1234", "run (https://site/a.js -> https://site/app.js:12:5)", "nsFoo::Bar (in libxul.so) + 42"],
	   "markers": {"schema": {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4, "data": 5}, "data": []}}],
	 "processes": [{"meta": {"version": 27, "interval": 0.5, "startTime": 2010, "startTimeAsClockMonotonicNanosecondsSinceBoot": 7010000000},
	   "libs": [],
	   "threads": [{"name": "GeckoMain", "processType": "tab", "pid": 8, "tid": 9,
	     "samples": {"schema": {"stack": 0, "time": 1, "eventDelay": 2}, "data": [[1, 0.5, 0]]},
	     "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[null, 0], [0, 1]]},
	     $frametable, "data": [[0], [1, true]]},
	     "stringTable": ["(root)", "js::RunScript"]}]}]}
	EOF
	run -0 lp-cat "$T/g.json"
	echo "$output" >"$T/g.lp"
	# the child process's times from its own start, 10 ms after the parent's
	run -0 samples "$T/g.lp"
	[ "$output" = "$(printf '%s\n' '7001000000 7 7 - GeckoMain wall 500000' \
		'7001500000 7 7 - GeckoMain wall 500000' '7003000000 7 7 - GeckoMain wall 500000' \
		'7010500000 8 9 - GeckoMain wall 500000')" ]
	# locations: an address in libfoo's mapping, a script (the last of its
	# chain) at a line, a function in a library, labels
	run -0 frames "$T/g.lp"
	[ "$output" = "$(printf '%s\n' 'u - (root) -' 'u /usr/lib/libfoo.so 0x1234 -' \
		'j https://site/app.js run https://site/app.js:12' 'u libxul.so nsFoo::Bar -' 'u - js::RunScript -')" ]
	run -0 lp-collapse --pid "$T/g.lp"
	[ "$output" = "$(printf '%s\n' 'GeckoMain-7;(root);0x1234;nsFoo::Bar 1000000' \
		'GeckoMain-7;(root);0x1234;run 500000' 'GeckoMain-8;(root);js::RunScript 500000')" ]
}

@test "gecko: samply's own writer (fxprof-processed-profile's test profiles) read exactly as its test says it made them" {
	# tests/integration_tests/main.rs, profile_without_js: process "test"
	# pid 123, thread 12345, samples at 1, 2 and 3 ms after 1636162232627 ms
	# (a first at 0 ms has no stack), every weight 1, the interval 1 ms
	run -0 lp-cat "$F/samply-without-js.json"
	echo "$output" >"$T/s.lp"
	run -0 samples "$T/s.lp"
	[ "$output" = "$(printf '%s\n' '1636162232628000000 123 12345 - test wall 1000000' \
		'1636162232629000000 123 12345 - test wall 1000000' '1636162232630000000 123 12345 - test wall 1000000')" ]
	run -0 lp-collapse "$T/s.lp"
	[ "$output" = "$(printf '%s\n' \
		'test;0x7ffdb4824837;0xc2704;0xde777;0x145418;0x23eb61;0x256d7e;libc_symbol_1 1000000' \
		'test;0x7ffdb4824837;0xc2704;libc_symbol_2;0x106992;0xdd2d6;0xef3ce;0x25318e 1000000' \
		'test;0x7ffdb4824837;0xc2704;libc_symbol_2;0x1571b8;0xb40e2;0x2778f4;libc_symbol_3 1000000')" ]
	grep -q $'^frame\t[0-9a-f]*\tu\t-\t/usr/lib/x86_64-linux-gnu/libc.so.6\tlibc_symbol_1\t-$' "$T/s.lp"
	grep -q $'^frame\t[0-9a-f]*\tu\t-\t/home/mstange/code/dump_syms/target/release/dump_syms\t0xc2704\t-$' "$T/s.lp"
	# profile_with_js: a JavaScript label frame, then an address
	run -0 lp-cat "$F/samply-with-js.json"
	echo "$output" >"$T/js.lp"
	run -0 frames "$T/js.lp"
	[ "$output" = "$(printf '%s\n' 'j - Some label string -' 'u - 0x7f76b7ffc0e6 -')" ]
	run -0 samples "$T/js.lp"
	[ "$output" = "1636162232628000000 123 12346 - test2 wall 1000000" ]
}

@test "gecko: the profiler's own test profile in the Gecko format and in its processed form: the same samples" {
	# gecko-2.json (Firefox's format, version 13, a child process) and
	# processed-3.json (the front end's, version 24): one profile, but for
	# the stack of the child process's last sample, which the profiler's
	# fixtures have come to differ in
	lp-cat "$F/gecko-2.json" >"$T/g.lp"
	lp-cat "$F/processed-3.json" >"$T/p.lp"
	run -0 samples "$T/g.lp"
	[ "${#lines[@]}" -eq 21 ]
	g=$output
	run -0 samples "$T/p.lp"
	[ "$output" = "$g" ]
	lp-collapse "$T/g.lp" >"$T/g.folded"
	lp-collapse "$T/p.lp" >"$T/p.folded"
	run -0 comm -3 "$T/g.folded" "$T/p.folded"
	[ "$output" = "$(printf '%s\n' \
		$'\tGeckoMain;(root);0x100000f84;0x100001a45;setTimeout handler;frobnicate;Element.getBoundingClientRect 1000000' \
		'GeckoMain;(root);0x100000f84;Startup::XRE_Main;AutoEntryScript Promise resolution or rejection;frobnicate;get CSSStyleRule.selectorText 1000000')" ]
	# 21 samples of 1 ms
	run -0 cat "$T/g.folded"
	[ "$output" = "$(printf '%s\n' 'Compositor;(root) 1000000' 'Compositor;(root);0x100000f84 2000000' \
		'Compositor;(root);0x100000f84;0x100001a45 2000000' 'Compositor;(root);0x100000f84;Startup::XRE_Main 1000000' \
		'Compositor;(root);0x100000f84;frobnicate 1000000' 'GeckoMain;(root) 2000000' \
		'GeckoMain;(root);0x100000f84 4000000' 'GeckoMain;(root);0x100000f84;0x100001a45 4000000' \
		'GeckoMain;(root);0x100000f84;Startup::XRE_Main 2000000' \
		'GeckoMain;(root);0x100000f84;Startup::XRE_Main;AutoEntryScript Promise resolution or rejection;frobnicate;get CSSStyleRule.selectorText 1000000' \
		'GeckoMain;(root);0x100000f84;frobnicate 1000000')" ]
	# the JavaScript frame, and an address in the firefox binary's mapping
	grep -q $'^frame\t[0-9a-f]*\tj\t-\tchrome://blargh\tfrobnicate\tchrome://blargh:34$' "$T/g.lp"
	grep -q $'^frame\t[0-9a-f]*\tu\t-\t/Applications/FirefoxNightly.app/Contents/MacOS/firefox\t0x100000f84\t-$' "$T/g.lp"
}

@test "gecko: damaged profiles are refused naming the thread, sample, stack or frame" {
	p='"meta": {"interval": 1, "startTime": 0, "preprocessedProfileVersion": 66}'
	sa='"stringArray": ["a"], "funcTable": {"length": 1, "name": [0], "isJS": [false], "resource": [-1]}'
	fr='"frameTable": {"length": 1, "func": [0], "line": [null]}'
	sm='"samples": {"length": 1, "stack": [0], "time": [1]}'
	gs='"frameTable": {"schema": {"location": 0}, "data": [[0]]}, "stringTable": ["a"]'
	while IFS='|' read -r json message; do
		printf '%s\n' "$json" >"$T/bad.json"
		refused "$T/bad.json" "gecko: $message"
	done <<-EOF
	{"meta": {"interval": 1, "startTime": 0}, "threads": [{"stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[1, 0], [0, 0]]}, $gs, $sm}]}|thread 0: stack 0 is its own ancestor
	{"meta": {"interval": 1, "startTime": 0}, "threads": [{"stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[null, 3]]}, $gs, $sm}]}|thread 0: stack 0: no frame 3
	{"meta": {"interval": 1, "startTime": 0}, "threads": [{"stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[null, 0]]}, "frameTable": {"schema": {"location": 0}, "data": [[4]]}, "stringTable": ["a"], $sm}]}|thread 0: sample 0: frame 0: its location is no string of the table
	{"meta": {"interval": 1, "startTime": 0}, "threads": [{"stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[null, 0]]}, $gs, "samples": {"schema": {"stack": 0, "time": 1}, "data": [[7, 1]]}}]}|thread 0: sample 0: no stack 7
	{$p, "shared": {$sa, $fr, "stackTable": {"length": 2, "frame": [0, 0], "prefixOffset": [0, 5]}}, "threads": [{$sm}]}|stack 1: no prefix stack 5
	{$p, "shared": {$sa, "frameTable": {"length": 1, "func": [3]}, "stackTable": {"length": 1, "frame": [0], "prefixOffset": [0]}}, "threads": [{$sm}]}|thread 0: sample 0: frame 0: no func 3
	{$p, "shared": {"stringArray": [], "funcTable": {"length": 1, "name": [2]}, $fr, "stackTable": {"length": 1, "frame": [0], "prefixOffset": [0]}}, "threads": [{$sm}]}|thread 0: sample 0: func 0: its name is no string of the table
	{$p, "shared": {$sa, $fr, "stackTable": {"length": 1, "frame": [0], "prefixOffset": [0]}}, "threads": [{"samples": {"length": 1, "stack": [0], "time": [1], "weight": [-1]}}]}|thread 0: sample 0: weight -1 is not a weight (lp weights are not negative)
	{$p, "shared": {$sa, $fr, "stackTable": {"length": 1, "frame": [0], "prefixOffset": [0]}}, "threads": [{"samples": {"length": 1, "stack": [0], "time": [1], "weightType": "tracing-ns"}}]}|thread 0: weightType 'tracing-ns' is not samples, tracing-ms or bytes
	{$p, "shared": {$sa, $fr, "stackTable": {"length": 1, "frame": [0], "prefixOffset": [0]}}, "threads": [{"samples": {"length": 1, "stack": [0], "timeDeltas": ["1"]}}]}|thread 0: sample 0: no time
	{$p, "shared": {$sa, $fr, "stackTable": {"length": 1, "frame": [0], "prefixOffset": [0]}}, "threads": [{"samples": {"length": 1, "stack": [0], "time": [-1]}}]}|thread 0: sample 0: time -1 ms from the start is no time of the clock
	{"meta": {"startTime": 0, "preprocessedProfileVersion": 66}, "threads": []}|meta.interval is no interval
	{$p, "threads": [{$sm}]}|thread 0: no stackTable
	{$p, "shared": {$sa, $fr, "stackTable": {"length": 1000000000, "frame": [0], "prefixOffset": [0]}}, "threads": [{$sm}]}|stackTable: its length 1000000000 is more than its columns hold
	EOF
}

# --- nflxprofile --------------------------------------------------------------

@test "nflx: stacks from the nodes' own stacks, from parents, and from children, read exactly" {
	# has_node_stack (what nflxprofile's V8 converter writes): the node is
	# the process, its stack the frames; samples_pid and samples_tid
	nflx "$T/stack.nflx" <<-'EOF'
	def main():
	    s1 = [frame("main", "user", "/src/app.c", 3), frame("do_read", "kernel")]
	    s2 = [frame("main", "user", "/src/app.c", 3), frame("LazyCompile:*run app.js:1", "jit"), frame("inl", "inlined")]
	    return profile(100.0, 101.5, [1, 2, 1], [0.5, 0.25, 0.25],
	                   [(0, node("root")), (1, node("app", pid=5, stack=s1)), (2, node("app", pid=5, stack=s2))],
	                   params=[("has_node_stack", "true"), ("has_samples_pid", "true")], pids=[5, 5, 6], tids=[7, 8, 9])
	EOF
	run -0 lp-cat "$T/stack.nflx"
	echo "$output" >"$T/stack.lp"
	# times from start_time by the deltas, weights to the next sample and
	# to end_time
	run -0 samples "$T/stack.lp"
	[ "$output" = "$(printf '%s\n' '100500000000 5 7 - app wall 250000000' \
		'100750000000 5 8 - app wall 250000000' '101000000000 6 9 - app wall 500000000')" ]
	run -0 frames "$T/stack.lp"
	[ "$output" = "$(printf '%s\n' 'u - main /src/app.c:3' 'k - do_read -' \
		'j - LazyCompile:*run app.js:1 -' 'i - inl -')" ]
	run -0 lp-collapse --pid "$T/stack.lp"
	[ "$output" = "$(printf '%s\n' 'app-5;main;LazyCompile:*run app.js:1;inl_[i] 250000000' \
		'app-5;main;do_read 250000000' 'app-6;main;do_read 500000000')" ]
	# has_parent: a node and its parents up to one without; node ids
	# need not be small
	nflx "$T/parent.nflx" <<-'EOF'
	def main():
	    nodes = [(900, node("root")), (901, node("main", parent=900, path="/src/m.c", line=7)),
	             (905, node("leaf", parent=901, libtype="kernel", pid=3, tid=4))]
	    return profile(2.0, 3.0, [905, 901], [0.5, 0.25], nodes, params=[("has_parent", "true")])
	EOF
	run -0 lp-cat "$T/parent.nflx"
	echo "$output" >"$T/parent.lp"
	run -0 samples "$T/parent.lp"
	[ "$output" = "$(printf '%s\n' '2500000000 3 4 - - wall 250000000' '2750000000 - - - - wall 250000000')" ]
	run -0 lp-collapse "$T/parent.lp"
	[ "$output" = "$(printf '%s\n' 'root;main 250000000' 'root;main;leaf 250000000')" ]
	grep -q $'^frame\t[0-9a-f]*\tu\t-\t-\tmain\t/src/m.c:7$' "$T/parent.lp"
	# neither: the tree of the nodes' children, from its root
	nflx "$T/children.nflx" <<-'EOF'
	def main():
	    nodes = [(0, node("root", children=[1, 2])), (1, node("a", children=[3])), (2, node("b")), (3, node("c"))]
	    return profile(1.0, 2.0, [3, 2, 3, 1], [0.25, 0.25, 0.25, 0.125], nodes)
	EOF
	run -0 lp-collapse "$T/children.nflx"
	[ "$output" = "$(printf '%s\n' 'root;a 125000000' 'root;a;c 375000000' 'root;b 250000000')" ]
}

@test "nflx: FlameScope's own test profile (nflxprofile's nodejs1) gives the flame graph FlameScope's test expects" {
	run -0 lp-cat "$F/nodejs1.nflxprofile"
	echo "$output" >"$T/n.lp"
	# Each sample counted once in FlameScope's tree (get_flame_graph's
	# default): lp's stacks, named as NodeJsStackProcessor names frames,
	# must rebuild nodejs1.json's tree, every node's value exactly.
	run -0 python3 - "$T/n.lp" "$F/nodejs1-flamegraph.json" <<-'EOF'
	import json, sys
	frames, stacks, tree = {}, {}, {"name": "root", "libtype": "", "value": 0, "children": []}
	kinds = {"k": "kernel", "j": "jit", "i": "inlined", "u": "user"}
	def clean(name):	# NodeJsStackProcessor.process_frame
	    if name.startswith("LazyCompile:") or name.startswith("InterpretedFunction:"):
	        name = name[name.index(":") + 1:]
	        name = name[1:] if name.startswith("*") else name
	        if " " in name:
	            parts, name, infile = name.split(" "), "", False
	            for p in parts:
	                infile = infile or "/" in p or ":" in p
	                if not infile:
	                    name += p + " "
	            name = name[:-1]
	        name = name or "(anonymous)"
	    return name.strip()
	n = 0
	for line in open(sys.argv[1]):
	    f = line.rstrip("\n").split("\t")
	    if f[0] == "frame":
	        frames[f[1]] = (clean(f[5]), kinds[f[2]])
	    elif f[0] == "stack":
	        stacks[f[1]] = [frames[i] for i in f[2].split(",")]
	    elif f[0] == "sample":
	        n += 1
	        at = tree
	        for name, libtype in [(f[5], "")] + stacks[f[8]]:
	            if "ArgumentsAdaptorTrampoline" in name:
	                continue
	            kids = [c for c in at["children"] if (c["name"], c["libtype"]) == (name, libtype)]
	            if not kids:
	                kids = [{"name": name, "libtype": libtype, "value": 0, "children": []}]
	                at["children"].append(kids[0])
	            at = kids[0]
	        at["value"] += 1
	def shape(t):
	    return (t["name"], t["libtype"], t["value"], sorted(shape(c) for c in t["children"]))
	want = json.load(open(sys.argv[2]))
	assert shape(tree) == shape(want), (shape(tree), shape(want))
	print(n)
	EOF
	[ "$output" = 6 ] || fail "$output"
	# the node's own stacks: the kernel's frames 'k', the process "node"
	grep -q $'^frame\t[0-9a-f]*\tk\t-\t-\t\\[unknown\\]\t-$' "$T/n.lp"
	run -0 samples "$T/n.lp"
	[ "${lines[0]%% *}" = 136087100000000 ]
	[[ "${lines[0]}" == *" 12783 12785 - node wall "* ]] || fail "${lines[0]}"
}

@test "nflx: damaged and cut profiles are refused naming what is wrong" {
	while IFS='|' read -r code message; do
		nflx "$T/bad.nflx" <<<"def main(): return $code"
		refused "$T/bad.nflx" "nflx: $message"
	done <<-'EOF'
	profile(1.0, 2.0, [0], [0.5], [(0, node("r", children=[1])), (1, node("a", children=[0]))])|node 0 is its own ancestor
	profile(1.0, 2.0, [0], [0.5], [(0, node("r", children=[1])), (1, node("a")), (2, node("b", children=[1]))])|node 1 has two parents
	profile(1.0, 2.0, [0], [0.5], [(0, node("r", children=[4]))])|node 0: no child 4
	profile(1.0, 2.0, [1], [0.5], [(1, node("a", parent=7))], params=[("has_parent", "true")])|node 1: no parent 7
	profile(1.0, 2.0, [5], [0.5], [(0, node("r"))])|sample 0: no node 5
	profile(1.0, 2.0, [0, 0], [0.5], [(0, node("r"))])|1 time_deltas for 2 samples
	profile(1.0, 2.0, [0], [-5.0], [(0, node("r"))])|sample 0: time -4 s is not a time
	profile(1.0, 2.0, [0, 0], [0.5, 0.5], [(0, node("r"))], tids=[1])|samples_cpu, samples_pid or samples_tid do not match the 2 samples
	profile(1.0, 2.0, [0], [0.5], [(0, node("r", stack=[b"\x0a\x05ab"]))], params=[("has_node_stack", "true")])|node 0: its stack is not well-formed
	EOF
	# cut short: still nflxprofile's opening, its reader says why
	nflx "$T/whole.nflx" <<<'def main(): return profile(1.0, 2.0, [0, 0], [0.5, 0.25], [(0, node("root"))])'
	head -c 30 "$T/whole.nflx" >"$T/cut.nflx"
	refused "$T/cut.nflx" "nflx: not a well-formed protocol buffer"
	# forced on what is no nflxprofile
	printf '\x0a\x02\x08\x01' >"$T/other.pb"
	refused "$T/other.pb" "nflx: field 1 is not as nflxprofile.proto says" -f nflx
}
