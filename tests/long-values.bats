#!/usr/bin/env bats
# Values of any length: every string a stream carries (host=, group=,
# captured values, symbols, modules, comms, probes, build ids) works at 300
# bytes (past the 255 of a char[256]) and at 100 KiB, in every program.  Each
# pair of values below differs only in its last byte, so a program that
# truncates them merges what it must keep apart.

load helpers/common

setup() {
	load_bats_libs
	J=$FIXTURES/join
	T=$BATS_TEST_TMPDIR
}

# long N C: N-1 bytes of 'x' then C.
long() {
	printf '%*s%s' $(($1 - 1)) '' "$2" | tr ' ' x
}

# Samples of two groups: 3 labelled group=$1, 2 labelled group=$2.
grouped() {
	printf 'lp-stream\t1\tproducer=lp-split\n'
	printf 'frame\tf1\tu\t-\t/bin/a\tmain\t-\nframe\tf2\tu\t-\t/bin/a\tone\t-\nframe\tf3\tu\t-\t/bin/a\ttwo\t-\n'
	printf 'stack\ts1\tf1,f2\nstack\ts2\tf1,f3\n'
	printf 'sample\t%d\t1\t1\t0\ta\tcpu-clock\t1\ts1\tgroup=%s\n' 1 "$1" 2 "$1" 3 "$1"
	printf 'sample\t%d\t1\t1\t0\ta\tcpu-clock\t1\ts2\tgroup=%s\n' 4 "$2" 5 "$2"
}

@test "long values: lp-join matches host= of 300 bytes and 100 KiB exactly (ASan: no overflow)" {
	for n in 300 102400; do
		a=$(long $n A) b=$(long $n B)
		sed "s/host=h1/host=$a/" "$J/samples.lp" >"$T/s.lp"
		sed "s/host=h1/host=$a/" "$J/spans.lp" >"$T/a.lp"
		sed "s/host=h1/host=$b/" "$J/spans.lp" >"$T/b.lp"
		run -0 lp-join "$T/s.lp" "$T/a.lp"
		[ "$(grep -c 'span=' <<<"$output")" -eq 14 ] || fail "$n: same host: $(grep -c 'span=' <<<"$output") joins"
		run -0 lp-join "$T/s.lp" "$T/b.lp"
		[ "$(grep -c '^sample' <<<"$output")" -eq 20 ]
		[ "$(grep -c 'span=' <<<"$output")" -eq 0 ] || fail "$n: hosts differ in the last byte, yet joined"
	done
}

@test "long values: lp-collapse --group and lp-diff --groups tell apart group names of 300 bytes and 60 KiB" {
	# 60 KiB: lp-diff's A,B is one argument, and Linux takes 128 KiB at most.
	for n in 300 61440; do
		a=$(long $n A) b=$(long $n B)
		grouped "$a" "$b" >"$T/g.lp"
		run -0 lp-collapse --group "$a" "$T/g.lp"
		[ "$output" = "a;main;one 3" ] || fail "$n: --group A: $output"
		run -0 lp-collapse --group "$b" "$T/g.lp"
		[ "$output" = "a;main;two 2" ] || fail "$n: --group B: $output"
		run -0 lp-diff --groups "$a,$b" "$T/g.lp" "$T/g.lp"
		[ "$output" = "$(printf '%s\n' 'a;main;one 3 0' 'a;main;two 0 2')" ] || fail "$n: lp-diff: $output"
	done
}

@test "long values: lp-split --where compares captured values of 300 bytes and 100 KiB" {
	for n in 300 102400; do
		a=$(long $n A) b=$(long $n B)
		{
			printf 'lp-stream\t1\n'
			printf 'span\t1000\t2000\t1\t1\tf\t0\targ0=%s\n' "$a"
			printf 'span\t3000\t5000\t1\t1\tf\t0\targ0=%s\n' "$b"
		} >"$T/spans.lp"
		{
			printf 'lp-stream\t1\nframe\tf1\tu\t-\t/bin/a\tmain\t-\nstack\ts1\tf1\n'
			printf 'sample\t%d\t1\t1\t0\ta\tcpu-clock\t1\ts1\n' 1500 3500 4500
		} >"$T/samples.lp"
		lp-join "$T/samples.lp" "$T/spans.lp" >"$T/joined.lp"
		run -0 lp-split --quiet --threshold 1ms --where "arg0=$b" --label "$T/joined.lp"
		# Samples at 3500 and 4500 are in B's span, 1500 in A's (excluded).
		groups=$(awk -F'\t' '$1 == "sample" { print $2, $NF }' <<<"$output")
		[ "$groups" = "$(printf '%s\n' '1500 group=excluded' '3500 group=below' '4500 group=below')" ] ||
			fail "$n: $groups"
	done
}

@test "long values: lp-top names modules of 300 bytes and 100 KiB in full, apart" {
	for n in 300 102400; do
		a=$(long $n A) b=$(long $n B)
		{
			printf 'lp-stream\t1\n'
			printf 'frame\tf1\tu\t0x10\t/lib/%s\t-\t-\nframe\tf2\tu\t0x10\t/lib/%s\t-\t-\n' "$a" "$b"
			printf 'stack\ts1\tf1\nstack\ts2\tf2\n'
			printf 'sample\t1\t1\t1\t0\ta\tcpu-clock\t1\ts1\n'
			printf 'sample\t%d\t1\t1\t0\ta\tcpu-clock\t1\ts2\n' 2 3 4
		} >"$T/m.lp"
		run -0 lp-top --once --all "$T/m.lp"
		grep -qxF "  75.00   75.00  [$b]" <<<"$output" || fail "$n: B's row"
		grep -qxF "  25.00   25.00  [$a]" <<<"$output" || fail "$n: A's row"
	done
}

@test "long values: lp-cat keeps every field of 300 bytes and 100 KiB byte for byte; folded counts of any length" {
	for n in 300 102400; do
		a=$(long $n A)
		id=$(printf '%*s' $((n / 2 * 2)) '' | tr ' ' a)
		{
			printf 'lp-stream\t1\thost=%s\n' "$a"
			printf 'frame\t%s\tu\t-\t/bin/%s\t%s\t%s:1\n' "$(printf '%016x' 1)" "$a" "$a" "$a"
			printf 'frame\t%s\tu\t0x10\t/bin/%s\t-\t-\tbuild_id=%s\n' "$(printf '%016x' 2)" "$a" "$id"
			printf 'stack\t%s\t%s,%s\n' "$(printf '%016x' 3)" "$(printf '%016x' 1)" "$(printf '%016x' 2)"
			printf 'sample\t1\t1\t1\t0\t%s\t%s\t1\t%s\tk=%s\n' "$a" "$a" "$(printf '%016x' 3)" "$a"
			printf 'span\t1\t2\t1\t1\t%s\t0\tk=%s\n' "$a" "$a"
			printf 'event\t1\t1\t1\t%s\tk=%s\n' "$a" "$a"
			printf 'lost\t1\t%s\t1\n' "$a"
		} >"$T/in.lp"
		run -0 lp-cat "$T/in.lp"
		# Ids are rewritten as content hashes; everything else as it was.
		sed -E 's/\<[0-9a-f]{16}\>/ID/g' <<<"$output" >"$T/got"
		sed -E 's/\<[0-9a-f]{16}\>/ID/g' "$T/in.lp" >"$T/want"
		cmp -s "$T/want" "$T/got" || fail "$n: lp-cat changed a field"
		printf 'main;%s %s7\n' "$a" "$(printf '%*s' $n '' | tr ' ' 0)" >"$T/in.folded"
		run -0 lp-collapse "$T/in.folded"
		[ "$output" = "main;$a 7" ] || fail "$n: folded count"
	done
}

@test "long values: lp-symbolize matches a build-id of 100 bytes (--build-id=0xHEX), not cut at 64" {
	require_cmd cc
	id=$(printf '%0200x' 7)	# 100 bytes: 200 hex digits
	printf 'int lp_long_id_fn(int x) { return x * 3; }\nint main(void) { return lp_long_id_fn(1) - 3; }\n' >"$T/p.c"
	cc -g -O0 -o "$T/p" "$T/p.c" -Wl,--build-id=0x"$id"
	[ "$(readelf -n "$T/p" | awk '/Build ID/ { print $3 }')" = "$id" ]
	addr=$(nm "$T/p" | awk '$3 == "lp_long_id_fn" { print $1 }' | sed 's/^0*//')
	{
		printf 'lp-stream\t1\traw=1\n'
		printf 'frame\tf1\tu\t0x%s\t%s\t-\t-\tbuild_id=%s\n' "$addr" "$T/p" "$id"
		printf 'stack\ts1\tf1\nsample\t1\t1\t1\t0\tp\tcpu-clock\t1\ts1\n'
	} >"$T/raw.lp"
	run -0 --separate-stderr lp-symbolize "$T/raw.lp"
	[ -z "$stderr" ] || fail "$stderr"
	grep -qE $'^frame\t[0-9a-f]{16}\tu\t-\t'"$T/p"$'\tlp_long_id_fn\t-$' <<<"$output" || fail "$output"
}

