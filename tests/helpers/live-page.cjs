// live-page.cjs - look at a live page (lp-serve's) in a real browser:
// headless chromium driven over the DevTools protocol, in real time (a
// page fed by an event stream never settles, so chromium's virtual time
// and --dump-dom cannot wait for it).
//
//   node --experimental-websocket live-page.cjs URL UNTIL EXPR...
//
// Opens URL, waits until the expression UNTIL is true (20 s at most),
// then evaluates each EXPR in turn (a promise is awaited) and prints
// JSON.stringify of its value, one line each.  Exit 1 with a message when
// chromium fails, the page throws, or UNTIL never holds.  With
// LIVE_PAGE_PNG=FILE in the environment, the page is then saved as a PNG
// screenshot (README's pictures).
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const [url, until, ...exprs] = process.argv.slice(2);
if (!url || !until) {
	console.error("usage: live-page.cjs URL UNTIL [EXPR...]");
	process.exit(2);
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "live-page-"));
const chrome = spawn("chromium", ["--headless=new", "--no-sandbox", "--disable-gpu",
	"--no-first-run", "--disable-background-networking", "--disable-component-update",
	"--disable-sync", "--disable-extensions", "--remote-debugging-port=0",
	"--user-data-dir=" + dir, "--window-size=1400,2000", "about:blank"],
	{ stdio: ["ignore", "ignore", "pipe"] });
let log = "";
chrome.stderr.on("data", (d) => { log += d; });

function die(msg) {
	console.error("live-page: " + msg);
	if (log) console.error(log.split("\n").slice(-10).join("\n"));
	finish(1);
}
function finish(code) {
	const done = () => {
		try { fs.rmSync(dir, { recursive: true, force: true }); } catch (e) { /* still written */ }
		process.exit(code);
	};
	if (chrome.exitCode !== null || chrome.signalCode !== null) return done();
	chrome.on("exit", done);
	chrome.kill("SIGKILL");
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
setTimeout(() => die("timed out after 60 s"), 60000).unref();

async function endpoint() {
	for (let i = 0; i < 300; i++) {
		try {
			const [port, p] = fs.readFileSync(path.join(dir, "DevToolsActivePort"), "utf8").split("\n");
			if (port && p) return "ws://127.0.0.1:" + port + p;
		} catch (e) { /* not yet */ }
		if (chrome.exitCode !== null) die("chromium exited (" + chrome.exitCode + ")");
		await sleep(50);
	}
	die("chromium never listened");
}

async function main() {
	const ws = new WebSocket(await endpoint());
	await new Promise((ok, bad) => { ws.onopen = ok; ws.onerror = () => bad(new Error("no websocket")); });
	let id = 0;
	const waiting = new Map();
	const thrown = [];
	ws.onmessage = (m) => {
		const msg = JSON.parse(m.data);
		if (msg.id && waiting.has(msg.id)) {
			waiting.get(msg.id)(msg);
			waiting.delete(msg.id);
		} else if (msg.method === "Runtime.exceptionThrown") {
			const d = msg.params.exceptionDetails;
			thrown.push((d.exception && d.exception.description) || d.text);
		}
	};
	const send = (method, params, sessionId) => new Promise((ok) => {
		const m = { id: ++id, method, params: params || {} };
		if (sessionId) m.sessionId = sessionId;
		waiting.set(m.id, ok);
		ws.send(JSON.stringify(m));
	});
	const t = await send("Target.createTarget", { url: "about:blank" });
	const a = await send("Target.attachToTarget", { targetId: t.result.targetId, flatten: true });
	const s = a.result.sessionId;
	await send("Runtime.enable", {}, s);
	await send("Page.enable", {}, s);
	await send("Page.navigate", { url }, s);
	const evaluate = async (expression) => {
		const r = await send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true }, s);
		if (r.error) die(expression + ": " + r.error.message);
		if (r.result.exceptionDetails) {
			const d = r.result.exceptionDetails;
			die(expression + ": " + ((d.exception && d.exception.description) || d.text));
		}
		return r.result.result.value;
	};
	let held = false;
	for (let i = 0; i < 400 && !held; i++) {
		if (thrown.length) die("the page threw: " + thrown.join("; "));
		held = await evaluate("(function () { try { return !!(" + until + "); } catch (e) { return false; } })()");
		if (!held) await sleep(50);
	}
	if (!held) die("never true: " + until);
	for (const e of exprs) console.log(JSON.stringify(await evaluate(e)));
	if (thrown.length) die("the page threw: " + thrown.join("; "));
	if (process.env.LIVE_PAGE_PNG) {
		const shot = await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true }, s);
		if (shot.error) die("screenshot: " + shot.error.message);
		fs.writeFileSync(process.env.LIVE_PAGE_PNG, Buffer.from(shot.result.data, "base64"));
	}
	ws.close();
	finish(0);
}
main().catch((e) => die(String(e)));
