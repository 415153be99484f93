#!/usr/bin/env bats
# lp-symbolize: a stream lp-record wrote with --raw (addresses, each frame's
# file and build-id) named later, elsewhere, by an ordinary user, as
# lp-record would have named it; another build at the same path, a file
# that is no ELF object and one that cannot be read left as addresses, with
# what was said; its options and man page.

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/cpusplit

setup() {
	load_bats_libs
	# Not bats' own folder: uid 65534 runs lp-symbolize from this one, and
	# cannot enter bats' temporary folders.
	T=$(mktemp -d)
}

teardown() {
	kill_after
	rm -rf "$T"
}

@test "lp-symbolize: --help, and every option in its man page" {
	run -0 lp-symbolize --help
	[[ $output == usage:* ]]
	man=$(sed 's/\\-/-/g' "$LP_TOP/man/lp-symbolize.1")
	for o in $(grep -oE -- '--[a-z][a-z-]+' <<<"$output" | sort -u); do
		grep -qF -- "$o" <<<"$man" || { echo "man page lacks $o"; return 1; }
	done
	run -2 lp-symbolize --frob
}

@test "--raw: addresses with build-ids; lp-symbolize names them later, as an ordinary user" {
	require_root
	cp "$WORKLOADS/libhot" "$T/libhot.so"
	chmod 755 "$T" "$T/libhot.so"
	run -0 lp-record --raw -F 499 -d 1.5 -o "$T/raw.lp" -- "$WORKLOADS/dlhot" "$T/libhot.so" 30
	head -1 "$T/raw.lp" | grep -q 'raw=1'
	run -1 grep -q lp_hot_in_library "$T/raw.lp"
	id=$(readelf -n "$T/libhot.so" | awk '/Build ID/ { print $3 }')
	[ -n "$id" ]
	grep -qE $'^frame\t[0-9a-f]{16}\tu\t0x[0-9a-f]+\t'"$T/libhot.so"$'\t-\t-\tbuild_id='"$id"'$' "$T/raw.lp"
	chmod 644 "$T/raw.lp"
	# A copy beside the stream: the build tree may be where uid 65534
	# cannot enter (a checkout in a 0700 directory).
	cp "$LP_BUILD/bin/lp-symbolize" "$T/"
	chmod 755 "$T/lp-symbolize"
	run -0 --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$T/lp-symbolize" "$T/raw.lp"
	[ -z "$stderr" ] || fail "lp-symbolize said: $stderr"
	printf '%s\n' "$output" > "$T/sym.lp"
	run -0 lp-cat --check "$T/sym.lp"
	[ "$(nsamples "$T/sym.lp")" -eq "$(nsamples "$T/raw.lp")" ]
	lp-collapse "$T/sym.lp" > "$T/sym.folded"
	pct=$(awk '{ t += $NF; if ($0 ~ /;lp_hot_in_library/) h += $NF } END { printf "%.0f\n", 100 * h / t }' "$T/sym.folded")
	echo "lp_hot_in_library in $pct% of samples"
	[ "$pct" -ge 80 ]
	# Another build at the same path: named once, frames left raw.
	cp "$WORKLOADS/threads" "$T/libhot.so"
	run -0 --separate-stderr lp-symbolize "$T/raw.lp"
	[ "$stderr" = "lp-symbolize: $T/libhot.so: not the build that was recorded (build-id differs): its frames are left unsymbolized" ]
	[[ $output != *lp_hot_in_library* ]]
}

@test "lp-symbolize: a frame in a mapped file that is no ELF object (ld.so.cache, a JIT's memfd) stays an address, unremarked; an unreadable file is said" {
	printf 'not an ELF object\n' > "$T/data.cache"
	{
		printf 'lp-stream\t1\traw=1\n'
		printf 'frame\tf1\tu\t0x1a0\t%s\t-\t-\t-\n' "$T/data.cache"
		printf 'frame\tf2\tu\t0x2b0\t%s\t-\t-\t-\n' "$T/no-such-file"
		printf 'stack\ts1\tf2,f1\nsample\t1\t1\t1\t0\tp\tcpu-clock\t1\ts1\n'
	} >"$T/raw.lp"
	run -0 --separate-stderr lp-symbolize "$T/raw.lp"
	[ "$stderr" = "lp-symbolize: $T/no-such-file: cannot read it: its frames are left unsymbolized" ] ||
		fail "stderr: $stderr"
	grep -qE $'^frame\t[0-9a-f]{16}\tu\t0x1a0\t'"$T/data.cache"$'\t-\t-$' <<<"$output" || fail "$output"
	grep -qE $'^frame\t[0-9a-f]{16}\tu\t0x2b0\t'"$T/no-such-file"$'\t-\t-$' <<<"$output" || fail "$output"
}
