#!/usr/bin/env bats
# speedscope JSON: the corpus's validator cases (validate-speedscope must say
# valid/invalid as cases.tsv expects), then lp-collapse --format speedscope
# on the input of every collapse case: speedscope's own importer must accept
# the file and read back exactly the folded stacks lp-collapse prints.
bats_require_minimum_version 1.5.0
load helpers/common

VALIDATE=$SHARED_TOOLS/validate-speedscope

setup_file() {
	# Without the corpus every test skips (setup), saying why.
	if [ ! -d "$SHARED_TOOLS" ] && [ "${CI:-}" != true ]; then return 0; fi
	require_cmd node
	# First use npm-installs speedscope + ajv into a cache under $HOME.
	"$SHARED_TOOLS/validate-speedscope" --setup 2>/dev/null
}

setup() {
	load_bats_libs
	T=$BATS_TEST_TMPDIR
	require_corpus
}

# The cases of one kind, as "case<TAB>input<TAB>options<TAB>expected".
cases() {
	awk -F'\t' -v k="$1" '!/^#/ && $2 == k { print $1 "\t" $3 "\t" $4 "\t" $5 }' \
		"$CORPUS/cases.tsv"
}

@test "validate-speedscope: the corpus's 23 validate cases give the expected verdict" {
	local files=() name input opts expected
	while IFS=$'\t' read -r name input opts expected; do
		files+=("$CORPUS/$input")
	done < <(cases validate)
	[ "${#files[@]}" -eq 23 ]
	run --separate-stderr "$VALIDATE" "${files[@]}"
	[ "$status" -eq 1 ]	# some are invalid
	local bad=0 n=0
	while IFS=$'\t' read -r name input opts expected; do
		n=$((n + 1))
		if [ "$expected" = valid ]; then
			grep -qF "OK $CORPUS/$input:" <<<"$output" &&
				! grep -qF "INVALID $CORPUS/$input:" <<<"$stderr" ||
				{ echo "$name: expected valid"; bad=1; }
		else
			grep -qF "INVALID $CORPUS/$input:" <<<"$stderr" &&
				! grep -qF "OK $CORPUS/$input:" <<<"$output" ||
				{ echo "$name: expected invalid"; bad=1; }
		fi
	done < <(cases validate)
	[ "$n" -eq 23 ]
	[ "$bad" -eq 0 ]
}

@test "validate-speedscope: an invalid file alone exits 1, a valid one alone 0" {
	run --separate-stderr "$VALIDATE" -q "$CORPUS/synthetic/speedscope-json/invalid-no-profiles.json"
	[ "$status" -eq 1 ]
	run --separate-stderr "$VALIDATE" -q "$CORPUS/synthetic/speedscope-json/valid-sampled-synthetic-misc-01.json"
	[ "$status" -eq 0 ]
}

# Every collapse case: lp-collapse's folded output and the folded view that
# speedscope's importer gives of lp-collapse --format speedscope must be
# byte-identical.  One validator run for all files (node loads speedscope
# once); their folded views come out one after the other, so the
# concatenation of lp-collapse's outputs in the same order must match.
@test "lp-collapse --format speedscope: speedscope reads back the folded output of all collapse cases" {
	local dir=$BATS_TEST_TMPDIR name input opts expected i=0 files=()
	gunzip -c "$CORPUS/flamegraph/example-perf-stacks.txt.gz" > "$dir/example-perf-stacks.txt"
	: > "$dir/want"
	while IFS=$'\t' read -r name input opts expected; do
		i=$((i + 1))
		local in=$CORPUS/$input
		case $in in *.gz) in=$dir/example-perf-stacks.txt ;; esac
		if [ "$opts" = "(none)" ]; then opts=; fi
		# shellcheck disable=SC2086
		lp-collapse $opts "$in" > "$dir/$i.folded" 2>/dev/null ||
			{ echo "$name: lp-collapse failed"; return 1; }
		# shellcheck disable=SC2086
		lp-collapse --format speedscope $opts "$in" > "$dir/$i.json" 2>/dev/null ||
			{ echo "$name: lp-collapse --format speedscope failed"; return 1; }
		cat "$dir/$i.folded" >> "$dir/want"
		files+=("$dir/$i.json")
		echo "$i	$name" >> "$dir/names"
	done < <(cases collapse)
	[ "$i" -eq 188 ]
	local st=0
	"$VALIDATE" --folded "${files[@]}" > "$dir/got" 2> "$dir/err" || st=$?
	if [ "$st" -ne 0 ]; then
		grep -A3 INVALID "$dir/err" | head -20
		return 1
	fi
	[ "$(grep -c '^OK ' "$dir/err")" -eq 188 ]
	if ! cmp -s "$dir/want" "$dir/got"; then
		# Find the cases that differ, one validator run each.
		local n shown=0
		while IFS=$'\t' read -r n name; do
			"$VALIDATE" -q --folded "$dir/$n.json" > "$dir/$n.back" 2>/dev/null
			if cmp -s "$dir/$n.folded" "$dir/$n.back"; then continue; fi
			echo "$name: speedscope's folded view differs"
			diff "$dir/$n.folded" "$dir/$n.back" | head -5
			shown=$((shown + 1))
			[ "$shown" -lt 5 ] || break
		done < "$dir/names"
		return 1
	fi
}
