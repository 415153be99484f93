#!/usr/bin/env bats
# lp-cat: the lp stream through its reader and writer: round trips,
# content-derived ids, escaping, pass-through, and bad input named by line.

load helpers/common

setup() {
	T=$BATS_TEST_TMPDIR
	S=$FIXTURES/stream
}

@test "lp-cat --help and --version" {
	run -0 lp-cat --help
	[[ $output == usage:* ]]
	run -0 lp-cat --version
	[[ $output == "lp-cat (lp) "* ]]
	run -2 lp-cat --bogus
	run -2 lp-cat --input-format nope
}

@test "a stream reads back to the same stream, ids derived from content" {
	run -0 lp-cat "$S/basic.lp"
	printf '%s\n' "$output" > "$T/once.lp"
	run -0 lp-cat "$T/once.lp"
	[ "$output" = "$(cat "$T/once.lp")" ]
	# hand-written ids became 16-hex-digit content hashes
	[ "$(grep -c '^frame' "$T/once.lp")" -eq 3 ]
	[ "$(grep -cE $'^frame\t[0-9a-f]{16}\t' "$T/once.lp")" -eq 3 ]
	# escaped symbol survived: tab inside, ';' and space kept
	grep -qF 'foo<int;\tx> bar' "$T/once.lp"
}

@test "unknown record kinds and comments pass through unchanged, in place" {
	run -0 lp-cat "$S/basic.lp"
	[[ $output == *$'\ngizmo\tfrom\ta newer producer\n'* ]]
	[[ $output == *$'\n# a comment\n'* ]]
	# every sample, span, event and lost record is there
	[ "$(grep -c '^sample' <<<"$output")" -eq 2 ]
	[ "$(grep -c '^span' <<<"$output")" -eq 2 ]
	grep -q $'^span\t60\t-\t10\t12\thandle\t0$' <<<"$output"
	grep -q $'^sample\t200\t.*\tgroup=slow$' <<<"$output"
	grep -q $'^lost\t300\tring\t4$' <<<"$output"
}

@test "concatenated streams stay valid; repeated definitions are harmless" {
	lp-cat "$S/basic.lp" > "$T/a.lp"
	cat "$T/a.lp" "$T/a.lp" > "$T/twice.lp"
	run -0 lp-cat "$T/twice.lp"
	[ "$(grep -c '^lp-stream' <<<"$output")" -eq 2 ]
	[ "$(grep -c '^sample' <<<"$output")" -eq 4 ]
	# the writer defines each frame once
	[ "$(grep -c '^frame' <<<"$output")" -eq 3 ]
	run -0 lp-cat "$S/basic.lp" - < "$S/basic.lp"
	[ "$(grep -c '^sample' <<<"$output")" -eq 4 ]
}

@test "a definition must come before its use" {
	printf 'lp-stream\t1\nsample\t1\t2\t3\t0\tc\te\t1\tnope\n' > "$T/bad.lp"
	run --separate-stderr -1 lp-cat "$T/bad.lp"
	[ "$stderr" = "lp-cat: $T/bad.lp:2: sample: stack 'nope' is not defined before its use" ]
}

@test "malformed records are errors naming file and line" {
	while IFS='|' read -r line message; do
		printf 'lp-stream\t1\n%b\n' "$line" > "$T/bad.lp"
		run --separate-stderr -1 lp-cat --check "$T/bad.lp"
		[ "$stderr" = "lp-cat: $T/bad.lp:2: $message" ] || {
			echo "line: $line"; echo "got: $stderr"; echo "want: $message"; false; }
	done <<'EOF_TABLE'
span\t10\t5\t1\t1\tf\t0|span: ends (5) before it starts (10)
span\tx\t5\t1\t1\tf\t0|span: bad start 'x'
span\t1\t5\t1\t1\tf|span: expected 7 fields, got 6
sample\t1\t2|sample: expected 9 fields, got 3
sample\t1\t2\t3\t0\tc\te\t-5\t-|sample: bad weight '-5'
frame\tf1\tz\t-\tm\ts\t-|frame: unknown kind 'z' (u, k, j or i)
lost\t1\tring\tmany|lost: bad count 'many'
lp-stream\t9|stream version 9 is newer than this program's (1)
span\t-5\t5\t1\t1\tf\t0|span: bad start '-5': times are 0 to 9223372036854775807 ns
span\t-9223372036854775807\t9223372036854775807\t1\t1\tf\t0|span: bad start '-9223372036854775807': times are 0 to 9223372036854775807 ns
span\t0\t9223372036854775808\t1\t1\tf\t0|span: bad end '9223372036854775808': times are 0 to 9223372036854775807 ns
span\t0\t-1\t1\t1\tf\t0|span: bad end '-1': times are 0 to 9223372036854775807 ns
sample\t-1\t2\t3\t0\tc\te\t1\t-|sample: bad time '-1': times are 0 to 9223372036854775807 ns
sample\t99999999999999999999\t2\t3\t0\tc\te\t1\t-|sample: bad time '99999999999999999999': times are 0 to 9223372036854775807 ns
sample\t1\t2\t3\t0\tc\te\tnan\t-|sample: bad weight 'nan'
sample\t1\t2\t3\t0\tc\te\t1e999\t-|sample: bad weight '1e999'
event\t-3\t1\t1\tp|event: bad time '-3': times are 0 to 9223372036854775807 ns
lost\t-3\tring\t1|lost: bad time '-3': times are 0 to 9223372036854775807 ns
lost\t1\tring\t-1|lost: bad count '-1'
EOF_TABLE
}

@test "times at the limits: 0 and 9223372036854775807 ns read and write back exactly" {
	printf 'lp-stream\t1\nspan\t0\t9223372036854775807\t1\t1\tf\t0\nsample\t9223372036854775807\t1\t1\t0\tc\te\t1\t-\nevent\t0\t1\t1\tp\nlost\t9223372036854775807\tring\t9223372036854775807\n' > "$T/limits.lp"
	run -0 lp-cat "$T/limits.lp"
	# (a sample without a stack gets the empty stack's definition)
	[ "$(grep -v '^stack' <<<"$output" | sed 's/\t[0-9a-f]\{16\}$/\t-/')" = "$(cat "$T/limits.lp")" ]
}

@test "a stream cut off mid-record is reported, not read as complete" {
	printf 'lp-stream\t1\nspan\t1\t2\t3\t4\tf\t0\nspan\t1\t2' > "$T/cut.lp"
	run --separate-stderr -1 lp-cat "$T/cut.lp"
	[ "$stderr" = "lp-cat: $T/cut.lp:3: last record has no newline: truncated stream?" ]
}

@test "CRLF, NUL bytes, a 1 MiB field, invalid UTF-8" {
	printf 'lp-stream\t1\r\nspan\t1\t2\t3\t4\tf\t0\r\n' > "$T/crlf.lp"
	run -0 lp-cat "$T/crlf.lp"
	grep -q $'^span\t1\t2\t3\t4\tf\t0$' <<<"$output"
	printf 'lp-stream\t1\nspan\t1\t2\t3\t4\tf\0x\t0\n' > "$T/nul.lp"
	run --separate-stderr -1 lp-cat "$T/nul.lp"
	[ "$stderr" = "lp-cat: $T/nul.lp:2: NUL byte in a record" ]
	{ printf 'lp-stream\t1\nspan\t1\t2\t3\t4\t'; head -c 1048576 /dev/zero | tr '\0' 'a'; printf '\t0\n'; } > "$T/big.lp"
	run -0 lp-cat "$T/big.lp"
	[ "$(awk -F'\t' '$1 == "span" { print length($6) }' <<<"$output")" -eq 1048576 ]
	printf 'lp-stream\t1\nspan\t1\t2\t3\t4\tf\xff\xfe\t0\n' > "$T/utf.lp"
	run -0 lp-cat "$T/utf.lp"
	[ "$output" = "$(cat "$T/utf.lp")" ]
}

@test "empty input gives empty output" {
	run -0 lp-cat /dev/null
	[ -z "$output" ]
}

@test "missing file: named, exit 1, nothing written" {
	run --separate-stderr -1 lp-cat "$T/none.lp"
	[ "$stderr" = "lp-cat: $T/none.lp: No such file or directory" ]
	[ -z "$output" ]
}

@test "perf script and folded inputs become streams with a header" {
	printf 'a;b;c 3\na;b 2\n' > "$T/f.folded"
	run -0 lp-cat "$T/f.folded"
	[ "${lines[0]}" = $'lp-stream\t1\tproducer=lp-cat' ]
	[ "$(grep -c '^sample' <<<"$output")" -eq 2 ]
	printf '%s\n' "$output" > "$T/f.lp"
	run -0 lp-collapse "$T/f.lp"
	[ "$output" = $'a;b 2\na;b;c 3' ]
}

@test "a closed pipe ends lp-cat quietly" {
	for i in $(seq 2000); do cat "$S/basic.lp"; done > "$T/many.lp"
	run -0 bash -c 'set -o pipefail; lp-cat "$1" 2>"$2" | head -1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$T/many.lp" "$T/err"
	[ "$output" = 141 ]
	[ ! -s "$T/err" ]
}

@test "a filter reads on to the end after the first SIGINT; a second stops it" {
	# The producer upstream gets the same ^C, drains and closes: the filter
	# must not lose what is still in the pipe.
	mkfifo "$T/pipe"
	( printf 'lp-stream\t1\n'; sleep 1; for i in $(seq 100); do printf 'span\t%d\t%d\t1\t1\tf\t0\n' $i $((i + 1)); done ) > "$T/pipe" &
	lp-cat "$T/pipe" > "$T/out" &
	cat_pid=$!
	sleep 0.3
	kill -INT "$cat_pid"
	rc=0; wait "$cat_pid" || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(grep -c '^span' "$T/out")" -eq 100 ]
	wait

	( printf 'lp-stream\t1\n'; sleep 5 ) > "$T/pipe" &
	producer=$!
	lp-cat "$T/pipe" > "$T/out" &
	cat_pid=$!
	sleep 0.3
	kill -INT "$cat_pid"; sleep 0.2; kill -INT "$cat_pid"
	rc=0; wait "$cat_pid" || rc=$?
	kill "$producer" 2>/dev/null || true
	[ "$rc" -eq 130 ]
}
