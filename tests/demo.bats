#!/usr/bin/env bats
# make demo's script end to end on the demo service, whose slow requests are
# slow because of rebuild_index() and nothing else (examples/demo.c).

load helpers/common

# The share (%) of a stream's sample weight whose stack holds FUNC.
share() {
	local -
	set -o pipefail		# lp-collapse's status, not only awk's
	lp-collapse "$1" | awk -v f="$2" '{ n = $NF; t += n; if (index(";" $0, ";" f ";") || index(";" $0, ";" f " ")) h += n }
		END { printf "%.1f\n", t ? 100 * h / t : -1 }'
}

@test "demo: says it needs root, and stops, when it is not root" {
	require_cmd setpriv
	# The demo runs from the tree: a checkout in a directory other users
	# cannot enter (a 0700 mktemp -d) would fail this test for that reason.
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$LP_TOP/examples/demo.sh" ||
		{ echo "uid 65534 cannot run $LP_TOP/examples/demo.sh: the checkout is not world-readable"; false; }
	run --separate-stderr -1 setpriv --reuid=65534 --regid=65534 --clear-groups \
		env O="$LP_BUILD" "$LP_TOP/examples/demo.sh" "$BATS_TEST_TMPDIR/out"
	[[ "$stderr" == "lp demo: needs root: "* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
}

@test "demo: above p90 rebuild_index holds >= 70% of the samples, below p90 <= 2%; the line names it" {
	require_root
	out=$BATS_TEST_TMPDIR/demo
	run --separate-stderr -0 env O="$LP_BUILD" LP_DEMO_SECONDS=4 "$LP_TOP/examples/demo.sh" "$out"
	echo "$stderr" >&3
	echo "$output" >&3
	[[ "$output" == "slow requests (handle_request above p90, "*" spend "*" of their samples in rebuild_index (fast requests: "* ]]
	for f in slow fast diff; do
		head -c 200 "$out/$f.svg" | grep -q '<svg'
	done
	grep -q 'rebuild_index' "$out/report.txt"
	[ "$(grep -c '^sample' "$out/slow.lp")" -ge 100 ]
	[ "$(grep -c '^sample' "$out/fast.lp")" -ge 100 ]
	slow=$(share "$out/slow.lp" rebuild_index)
	fast=$(share "$out/fast.lp" rebuild_index)
	echo "rebuild_index: ${slow}% above p90, ${fast}% at or below" >&3
	awk -v s="$slow" -v f="$fast" 'BEGIN { exit !(s >= 70 && f <= 2) }'
	# The page: the same split, its ranked table led by rebuild_index.
	"$LP_TOP/tests/helpers/report-data" "$out/report.html" > "$out/d.json"
	run -0 python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(d["table"]["rows"][0]["function"], d["cuts"][0]["label"], [f["group"] for f in d["flames"]])' "$out/d.json"
	[ "$output" = "rebuild_index p90 ['above', 'below']" ]
	# The joined stream: every sample inside a handle_request span says so.
	[ "$(grep '^sample' "$out/slow.lp" | grep -vc 'span=handle_request')" -eq 0 ]
}
