#!/usr/bin/env bats
# Every `diff` case of shared/corpus/cases.tsv: lp-diff's output, sorted
# bytewise, must equal difffolded.pl's (FlameGraph 41fee1f) sorted output.
# The one exception the corpus README allows: a line without a count, which
# difffolded.pl turns into " 0 0", is rejected by lp-diff as bad input.

bats_require_minimum_version 1.5.0
load helpers/common

setup() {
	load_bats_libs
	T=$BATS_TEST_TMPDIR
	require_corpus
}

# Cases whose "before" input has a count-less line: expected to be refused.
rejected='diff/inferno-bad-before'

@test "corpus: every diff case matches difffolded.pl (sorted)" {
	n=0 failed=
	while IFS=$'\t' read -r name kind inputs opts expected _; do
		case $name in '#'*|'') continue ;; esac
		[ "$kind" = diff ] || continue
		case " $rejected " in *" $name "*) continue ;; esac
		read -r before after <<<"$inputs"
		if [ "$opts" = '(none)' ]; then opts=; fi
		# shellcheck disable=SC2086
		if ! lp-diff $opts "$CORPUS/$before" "$CORPUS/$after" >"$T/out" 2>"$T/err"; then
			failed+=" $name(exit)"
			continue
		fi
		# lp-diff sorts its output itself: it must already be in C order.
		LC_ALL=C sort "$T/out" >"$T/sorted"
		cmp -s "$T/out" "$T/sorted" || failed+=" $name(unsorted)"
		cmp -s "$T/sorted" "$CORPUS/$expected" || failed+=" $name"
		n=$((n + 1))
	done <"$CORPUS/cases.tsv"
	echo "compared $n cases; failed:${failed:- none}"
	[ -z "$failed" ]
	# The corpus has 9 diff cases, one of them the rejected one.
	[ "$n" -ge 8 ]
}

@test "corpus: a count-less line (bad_before.txt line 3) is refused, with nothing on stdout" {
	run --separate-stderr lp-diff "$CORPUS/inferno/diff-folded/bad_before.txt" \
		"$CORPUS/inferno/diff-folded/after.txt"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == "lp-diff: $CORPUS/inferno/diff-folded/bad_before.txt:3: "* ]]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
}

@test "corpus: the rest of bad_before.txt agrees with difffolded.pl" {
	# Without its count-less line the input is good: then the output is
	# difffolded.pl's, less the " 0 0" line that line produced.
	grep -v '_\[k\]$' "$CORPUS/inferno/diff-folded/bad_before.txt" >"$T/before"
	run -0 lp-diff "$T/before" "$CORPUS/inferno/diff-folded/after.txt"
	grep -vx ' 0 0' "$CORPUS/inferno/diff-folded/results-pl/bad_before.txt" >"$T/expected"
	[ "$output" = "$(cat "$T/expected")" ]
}
