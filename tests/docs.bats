#!/usr/bin/env bats
# Every program: --help, --version, a man page that lists every option of
# --help, and README.md's examples marked "(runs here)" run as written.

load helpers/common

@test "every program has --help (stdout, exit 0), --version and a man page" {
	for p in $(programs); do
		run -0 "$p" --help
		[[ $output == *usage:* ]] || { echo "$p --help: no usage line"; false; }
		run -0 "$p" --version
		[ "$output" = "$p (lp) $(sed -n 's/^#define LP_VERSION "\(.*\)"/\1/p' "$LP_TOP/lib/base/util.h")" ] ||
			{ echo "$p --version: $output"; false; }
		[ -f "$LP_TOP/man/$p.1" ] || { echo "man/$p.1 missing"; false; }
		run -0 man -l -Tutf8 "$LP_TOP/man/$p.1"
	done
}

@test "every option in --help appears in the man page" {
	for p in $(programs); do
		"$p" --help > "$BATS_TEST_TMPDIR/help"
		# roff writes "-" as "\-"
		sed 's/\\-/-/g' "$LP_TOP/man/$p.1" > "$BATS_TEST_TMPDIR/man"
		for opt in $(grep -oE -- '--[a-z][a-z0-9-]+' "$BATS_TEST_TMPDIR/help" | sort -u); do
			grep -qF -- "$opt" "$BATS_TEST_TMPDIR/man" ||
				{ echo "$p: $opt is in --help but not in man/$p.1"; false; }
		done
	done
}

@test "bad usage exits 2 for every program" {
	for p in $(programs); do
		run -2 "$p" --no-such-option
	done
}

@test "README.md's runnable examples run" {
	# Lines after a comment that says "(runs here)", up to the next comment
	# or blank line, run from the source tree with the fresh build on PATH.
	awk '/^```/ { inblock = !inblock; run = 0; next }
	     inblock && /^#/ { run = /\(runs here\)/; next }
	     inblock && /^$/ { run = 0; next }
	     inblock && run { print }' "$LP_TOP/README.md" > "$BATS_TEST_TMPDIR/examples"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/examples")" -ge 5 ]
	cd "$LP_TOP"
	while IFS= read -r cmd; do
		run bash -c "export PATH='$LP_BUILD/bin:$PATH' C='$CORPUS'; set -o pipefail; $cmd > /dev/null"
		[ "$status" -eq 0 ] || { echo "README example failed ($status): $cmd"; echo "$output"; false; }
	done < "$BATS_TEST_TMPDIR/examples"
}
