#!/usr/bin/env bats
# The fuzz targets (tests/fuzz/*.c) as regression tests: each run, without
# libFuzzer, over its corpus, the seeds and every input a fuzzer found (make
# fuzz).  The reader's oracle: what it accepts, the writer writes as a
# stream that reads back the same, byte for byte; nothing crashes.

load helpers/common
load_bats_libs

# replay TARGET: runs the target over every input of its corpus.
replay() {
	local corpus=$LP_TOP/tests/fuzz/corpus/$1 n
	n=$(find "$corpus" -type f | wc -l)
	[ "$n" -ge 3 ]
	run -0 bash -c "find '$corpus' -type f -print0 | sort -z | xargs -0 '$LP_BUILD/tests/fuzz/$1' 2>&1 >/dev/null"
	# each input named as it is run, none failed
	[ "$(grep -c "^$corpus/" <<<"$output")" -eq "$n" ]
	refute_output --partial 'lp-fuzz:'
}

@test "fuzz corpus: the reader accepts or refuses each input cleanly, and round-trips what it accepts" {
	replay reader
}

@test "fuzz corpus: lp-join writes every sample it reads, as a stream that reads back" {
	replay join
}

@test "fuzz corpus: any code's basic blocks tile it and its loops hold their heads (lp-trace --blocks)" {
	replay cfg
}

@test "fuzz target: input the reader refuses is reported with its line, and is no failure" {
	printf '\001lp-stream\t1\nsample\tx\n' >"$BATS_TEST_TMPDIR/bad"
	run -0 "$LP_BUILD/tests/fuzz/reader" "$BATS_TEST_TMPDIR/bad"
	assert_output --regexp '/proc/self/fd/[0-9]+:2: '
}
