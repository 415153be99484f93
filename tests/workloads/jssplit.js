// jssplit - known truth for readers of V8's CPU profiles: a() runs one
// round of work for every three b() runs, the rounds alike, so a() takes
// 25% of the time the two take.  Runs for argv[2] seconds of CPU (default
// 3) and prints
//	jssplit: a_rounds=R b_rounds=S
'use strict';
let sink = 0;
function spin(n) {
	for (let i = 0; i < n; i++)
		sink = (sink * 1103515245 + 12345) % 2147483648;
}
function a() { spin(20000); }
function b() { spin(20000); spin(20000); spin(20000); }
const budget = Number(process.argv[2] || 3) * 1e6;	// microseconds
const start = process.cpuUsage();
let ar = 0, br = 0;
for (;;) {
	const u = process.cpuUsage(start);
	if (u.user + u.system >= budget)
		break;
	for (let i = 0; i < 20; i++) {
		a();
		b();
	}
	ar += 20;
	br += 60;
}
process.stderr.write(`jssplit: a_rounds=${ar} b_rounds=${br}\n`);
