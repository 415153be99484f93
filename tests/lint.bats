#!/usr/bin/env bats
# The suite's own honesty: no check in tests/*.bats or tests/helpers/*.bash
# that cannot fail its test (helpers/lint-bats says which and why), and the
# lint itself flags every kind it knows and passes what is fine.

load helpers/common

LINT=$LP_TOP/tests/helpers/lint-bats

@test "lint: every .bats file and helper of the suite passes" {
	cd "$LP_TOP/tests"
	run -0 --separate-stderr "$LINT" ./*.bats helpers/*.bash
	[ "$output" = "" ]
	[ "$stderr" = "" ]
}

@test "lint: each check that cannot fail is flagged, on its line, with its kind" {
	cd "$LP_TOP/tests/fixtures/lint"
	run -1 --separate-stderr "$LINT" bad.bats
	echo "$output"
	[ "$stderr" = "" ]
	# the fixture marks each line it expects flagged: "# flagged: KIND"
	grep -n '# flagged: ' bad.bats | sed 's/^\([0-9]*\):.*# flagged: \(.*\)$/\1 \2/' > "$BATS_TEST_TMPDIR/want"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/want")" -eq 28 ]
	# no other line flagged (a line may be flagged for two reasons)
	[ "$(cut -d: -f2 <<<"$output" | sort -u | wc -l)" -eq 28 ]
	while read -r line kind; do
		grep -qF "bad.bats:$line: " <<<"$output" || fail "line $line ($kind) not flagged"
		grep -F "bad.bats:$line: " <<<"$output" | grep -qF -- "$kind" ||
			fail "line $line flagged, but not as $kind"
	done < "$BATS_TEST_TMPDIR/want"
}

@test "lint: conditions, fallbacks, cleanup, strings, here-documents and awk pass" {
	cd "$LP_TOP/tests/fixtures/lint"
	run -0 --separate-stderr "$LINT" good.bats
	[ "$output" = "" ]
	[ "$stderr" = "" ]
}

@test "lint: a check reintroduced into a copy of a real suite file is caught" {
	# three bad lines right after lp-split.bats' first @test line
	at=$(grep -n -m1 '^@test' "$LP_TOP/tests/lp-split.bats" | cut -d: -f1)
	awk -v at="$at" '{ print } NR == at {
		print "\t! grep -q span= \"$T/a.lp\""
		print "\t[ -s \"$T/a.lp\" ] && [ -s \"$T/b.lp\" ]"
		print "\tlp-join \"$T/a.lp\" || true"
	}' "$LP_TOP/tests/lp-split.bats" > "$BATS_TEST_TMPDIR/copy.bats"
	run -1 --separate-stderr "$LINT" "$BATS_TEST_TMPDIR/copy.bats"
	echo "$output"
	[ "${#lines[@]}" -eq 3 ]
	[[ ${lines[0]} == "$BATS_TEST_TMPDIR/copy.bats:$((at + 1)): \`! cmd\` cannot fail the test: "* ]]
	[[ ${lines[1]} == "$BATS_TEST_TMPDIR/copy.bats:$((at + 2)): a failure before the last \`&&\` "* ]]
	[[ ${lines[2]} == "$BATS_TEST_TMPDIR/copy.bats:$((at + 3)): \`|| true\` hides the status of lp-join: "* ]]
}

@test "lint: what it cannot parse is an error naming the file and line, exit 2" {
	printf '@test "x" {\n\techo "unterminated\n}\n' > "$BATS_TEST_TMPDIR/broken.bats"
	run -2 --separate-stderr "$LINT" "$BATS_TEST_TMPDIR/broken.bats"
	[ "$stderr" = "lint-bats: $BATS_TEST_TMPDIR/broken.bats:4: unterminated \"" ]
	run -2 --separate-stderr "$LINT" "$BATS_TEST_TMPDIR/missing.bats"
	[ "$stderr" = "lint-bats: $BATS_TEST_TMPDIR/missing.bats: No such file or directory" ]
}
