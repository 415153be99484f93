#!/usr/bin/env bats
# Names as perf shows them (issue 11, items 5 and 6): C++ demangled (and kept
# raw with --no-demangle), no symbol versions, stripped binaries symbolized
# from their debug files (.gnu_debuglink, /usr/lib/debug/.build-id) and,
# without any, each function named MODULE+0xSTART from its FDE, the same in
# every run of a PIE; lp-trace taking the demangled names a profile shows.
# Truth: nm, nm -C and readelf on the unstripped builds of the workloads
# (tests/workloads/names.cc, names-c.c: -O2, no frame pointers).
# Privileged: they load BPF programs (root, under CI=true too).

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/producers

setup() {
	load_bats_libs
	T=$BATS_TEST_TMPDIR
	CXX=$WORKLOADS/names
	C=$WORKLOADS/names-c
	U=$WORKLOADS/unsized
	NH=$WORKLOADS/names-nohdr
}

teardown() {
	if [ -n "${BUILDID_DEBUG:-}" ]; then
		rm -f "$BUILDID_DEBUG"
		rmdir "${BUILDID_DEBUG%/*}" 2>/dev/null || true	# when the test made it
	fi
	if [ -n "${SERVER:-}" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
}

# The names of the frames a stream gives module $2 (its path), sorted, one a line.
module_frames() {
	awk -F'\t' -v m="$2" '$1 == "frame" && $5 == m { print $6 }' "$1" | sort -u
}

# Samples whose leaf frame is $2, out of lp-collapse's folded output $1.
leaf_count() {
	awk -v f="$2" '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, a, ";"); if (a[k] == f) c += n } END { print c + 0 }' "$1"
}

# The symbol's address in the unstripped workload, as perf and addr2line show it.
sym_addr() {
	nm "$1" | awk -v s="$2" '$3 == s { print "0x" substr($1, match($1, /[1-9a-f]/)) }'
}

@test "names: C++ frames are demangled as nm -C names them; --no-demangle keeps them mangled" {
	require_root
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/cxx.lp" -- "$CXX" 1.5
	module_frames "$T/cxx.lp" "$CXX" >"$T/names"
	nm -C --defined-only "$CXX" | cut -d' ' -f3- | sort -u >"$T/truth"
	# Every name lp gives the workload's frames is one nm -C gives a symbol,
	# or a PLT stub's (printf@plt, when a tick lands in one: objdump's
	# name, which nm does not list).
	run -0 bash -c "comm -23 '$T/names' '$T/truth' | grep -v '@plt\$' || [ \$? -eq 1 ]"
	[ -z "$output" ] || fail "names nm -C does not have: $output"
	grep -qxF 'store::Shop::checkout(long)' "$T/names" || fail "$(cat "$T/names")"
	grep -qxF 'traced(int)' "$T/names" || fail "$(cat "$T/names")"
	grep -qxF 'traced(double)' "$T/names" || fail "$(cat "$T/names")"
	grep -qxF 'main' "$T/names" || fail "$(cat "$T/names")"
	# Nothing mangled anywhere, libstdc++'s frames (the exceptions) included.
	run -1 grep -P '^frame\t.*\t_Z[A-Za-z0-9_]+\t' "$T/cxx.lp"
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf --no-demangle -o "$T/raw.lp" -- "$CXX" 1
	module_frames "$T/raw.lp" "$CXX" >"$T/rawnames"
	nm --defined-only "$CXX" | cut -d' ' -f3- | sort -u >"$T/rawtruth"
	run -0 bash -c "comm -23 '$T/rawnames' '$T/rawtruth' | grep -v '@plt\$' || [ \$? -eq 1 ]"
	[ -z "$output" ] || fail "names nm does not have: $output"
	grep -qxF '_ZN5store4Shop8checkoutEl' "$T/rawnames" || fail "$(cat "$T/rawnames")"
}

@test "names: Rust names, v0 and legacy, demangled as c++filt reads them (without crate hashes, as perf)" {
	require_root
	R=$WORKLOADS/rustnames
	# The truth: binutils' demangler, less what perf leaves out (v0's crate
	# disambiguators "[hex]", legacy's "::h<16 hex>" hash).
	nm --defined-only "$R" | awk '$3 ~ /^_R|^_ZN/ { print $3 }' | c++filt |
		sed -E 's/\[[0-9a-f]+\]//g; s/::h[0-9a-f]{16}$//' | sort -u >"$T/truth"
	[ "$(wc -l <"$T/truth")" -eq 3 ] || fail "$(cat "$T/truth")"
	grep -qxF 'mycrate::main' "$T/truth" || fail "$(cat "$T/truth")"
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/r.lp" -- "$R" 1.5
	module_frames "$T/r.lp" "$R" >"$T/names"
	run -0 comm -13 "$T/names" "$T/truth"
	[ -z "$output" ] || fail "not named as c++filt names them: $output; lp: $(cat "$T/names")"
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf --no-demangle -o "$T/raw.lp" -- "$R" 1
	run -0 module_frames "$T/raw.lp" "$R"
	grep -qxF '_RNvCs15kBYyAo9fc_7mycrate4main' <<<"$output" || fail "$output"
}

@test "names: no symbol versions: libc's start is __libc_start_main_impl, as its debug file's aliases say" {
	require_root
	libc=$(ldd "$C" | awk '$1 ~ /^libc\.so/ { print $3 }')
	libc=$(readlink -f "$libc")
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/c.lp" -- "$C" 1
	module_frames "$T/c.lp" "$libc" >"$T/libc"
	grep -qxF '__libc_start_main_impl' "$T/libc" || fail "$(cat "$T/libc")"
	run -1 grep -F '@' "$T/libc"
	run -0 lp-collapse "$T/c.lp"
	[ "$(grep -c ';__libc_start_main_impl;__libc_start_call_main;main;' <<<"$output")" -ge 3 ] || fail "$output"
}

# hot_a 60%, hot_b 30%, cold_c 10% of the loop's work (names-c.c), each a
# leaf named $2 for hot_a... in folded file $1: within 8 points.
check_split() {
	local a b c n
	a=$(leaf_count "$1" "$2")
	b=$(leaf_count "$1" "$3")
	c=$(leaf_count "$1" "$4")
	n=$((a + b + c))
	[ "$n" -ge 150 ] || { echo "only $n samples in the three ($a $b $c)"; return 1; }
	awk -v a="$a" -v b="$b" -v c="$c" -v n="$n" 'BEGIN {
		ea = 100 * a / n - 60; eb = 100 * b / n - 30; ec = 100 * c / n - 10
		if (ea < -8 || ea > 8 || eb < -8 || eb > 8 || ec < -8 || ec > 8) {
			printf "split %d %d %d of %d\n", a, b, c, n; exit 1 } }'
}

@test "names: a stripped binary's functions from its debug file, by .gnu_debuglink and by build-id" {
	require_root
	mkdir "$T/link" "$T/bid"
	objcopy --only-keep-debug "$C" "$T/link/names-c.debug"
	objcopy --strip-all --add-gnu-debuglink="$T/link/names-c.debug" "$C" "$T/link/names-c"
	run -0 nm "$T/link/names-c"
	[[ $output != *hot_a* ]] || fail "not stripped: $output"
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/link.lp" -- "$T/link/names-c" 2
	lp-collapse "$T/link.lp" >"$T/link.folded"
	check_split "$T/link.folded" hot_a hot_b cold_c
	# By build-id alone: no debuglink, the debug file where Debian's
	# -dbgsym packages put theirs.
	objcopy --strip-all "$C" "$T/bid/names-c"
	id=$(readelf -n "$C" | awk '/Build ID/ { print $3 }')
	[ "${#id}" -eq 40 ]
	mkdir -p "/usr/lib/debug/.build-id/${id:0:2}"
	BUILDID_DEBUG=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	cp "$T/link/names-c.debug" "$BUILDID_DEBUG"
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/bid.lp" -- "$T/bid/names-c" 2
	lp-collapse "$T/bid.lp" >"$T/bid.folded"
	check_split "$T/bid.folded" hot_a hot_b cold_c
	# lp-symbolize finds it the same way.
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf --raw -o "$T/raw.lp" -- "$T/bid/names-c" 2
	lp-symbolize -o "$T/sym.lp" "$T/raw.lp"
	lp-collapse "$T/sym.lp" >"$T/sym.folded"
	check_split "$T/sym.folded" hot_a hot_b cold_c
}

@test "names: a MiniDebugInfo's functions (.gnu_debugdata): lp-record names them, lp-trace probes them" {
	require_root
	require_cmd xz
	# As Fedora builds it (gdb's manual, "MiniDebugInfo"): the static
	# functions .dynsym lacks, in an xz-compressed symbol table of their
	# own; no debug file anywhere.
	mkdir "$T/mini"
	nm -D --format=posix --defined-only "$C" | awk '{ print $1 }' | sort >"$T/mini/dynsyms"
	nm --format=posix --defined-only "$C" | awk '$2 == "T" || $2 == "t" { print $1 }' | sort >"$T/mini/funcsyms"
	comm -13 "$T/mini/dynsyms" "$T/mini/funcsyms" >"$T/mini/keep"
	objcopy --only-keep-debug "$C" "$T/mini/full.debug"
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols="$T/mini/keep" "$T/mini/full.debug" "$T/mini/mini.debug"
	xz "$T/mini/mini.debug"
	objcopy --strip-all --remove-section .comment "$C" "$T/mini/names-c"
	objcopy --add-section .gnu_debugdata="$T/mini/mini.debug.xz" "$T/mini/names-c"
	run -0 nm "$T/mini/names-c"
	[[ $output != *hot_a* ]] || fail "not stripped: $output"
	id=$(readelf -n "$C" | awk '/Build ID/ { print $3 }')
	[ ! -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] || fail "a debug file by build-id is there"
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/mini.lp" -- "$T/mini/names-c" 2
	lp-collapse "$T/mini.lp" >"$T/mini.folded"
	check_split "$T/mini.folded" hot_a hot_b cold_c
	# lp-trace reads the functions where the symbolizer does: a static
	# function only the MiniDebugInfo names is a probe, each call a span.
	run -0 --separate-stderr lp-trace -v -o "$T/t.lp" hot_a cold_c -- "$T/mini/names-c" 1
	[[ $stderr == *"is stripped: using its dynamic symbols (.dynsym) and its MiniDebugInfo (.gnu_debugdata)"* ]] ||
		fail "$stderr"
	run -0 awk -F'\t' '$1 == "span" { n[$6]++ } END { print (n["hot_a"] > 0), n["hot_a"] == n["cold_c"] }' "$T/t.lp"
	assert_output "1 1"
}

@test "names: a stripped binary's functions from a debuginfod server when DEBUGINFOD_URLS is set" {
	require_root
	id=$(readelf -n "$C" | awk '/Build ID/ { print $3 }')
	mkdir -p "$T/srv/buildid/$id"
	objcopy --only-keep-debug "$C" "$T/srv/buildid/$id/debuginfo"
	objcopy --strip-all "$C" "$T/names-c"
	# debuginfod's protocol is a GET of /buildid/ID/debuginfo: a static
	# file server speaks it.
	python3 -c 'import http.server, os, sys
os.chdir(sys.argv[1])
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
print(s.server_address[1], flush=True)
s.serve_forever()' "$T/srv" >"$T/port" 2>"$T/server.log" &
	SERVER=$!
	for _ in $(seq 50); do if [ -s "$T/port" ]; then break; fi; sleep 0.1; done
	port=$(cat "$T/port")
	[ -n "$port" ] || fail "the server did not start: $(cat "$T/server.log")"
	run -0 --separate-stderr env DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$T/cache" \
		lp-record -F 499 --call-graph dwarf -o "$T/d.lp" -- "$T/names-c" 2
	lp-collapse "$T/d.lp" >"$T/d.folded"
	check_split "$T/d.folded" hot_a hot_b cold_c
	grep -qF "GET /buildid/$id/debuginfo HTTP/1.1\" 200" "$T/server.log" || fail "$(cat "$T/server.log")"
	# Without it, the same binary's functions are named after their FDEs.
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/n.lp" -- "$T/names-c" 1
	run -0 module_frames "$T/n.lp" "$T/names-c"
	[[ $output != *hot_a* ]] || fail "$output"
}

@test "names: without symbols each function keeps its own name, MODULE+0xSTART from its FDE, the same in two runs of a PIE" {
	require_root
	objcopy --strip-all "$C" "$T/names-c"
	readelf -h "$T/names-c" | grep -q 'DYN (Position-Independent Executable file)'
	a=names-c+$(sym_addr "$C" hot_a)
	b=names-c+$(sym_addr "$C" hot_b)
	c=names-c+$(sym_addr "$C" cold_c)
	m=names-c+$(sym_addr "$C" main)
	[ "$a" != names-c+ ] || fail "no hot_a in $C"
	[ "$a" != "$b" ] || fail "$a"
	[ "$b" != "$c" ] || fail "$b"
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/s1.lp" -- "$T/names-c" 2
	lp-collapse "$T/s1.lp" >"$T/s1.folded"
	check_split "$T/s1.folded" "$a" "$b" "$c"
	[ "$(grep -c ";$m;" "$T/s1.folded")" -ge 3 ] || fail "$(cat "$T/s1.folded")"
	# addr2line on the unstripped build reads the name's address as the function.
	run -0 addr2line -f -e "$C" "${a#names-c+}"
	[ "${lines[0]}" = hot_a ] || fail "$output"
	# Address-space randomization moves the load address, not the names.
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/s2.lp" -- "$T/names-c" 1
	lp-collapse "$T/s2.lp" >"$T/s2.folded"
	# Every name either run gives is a function's FDE's start, as binutils
	# reads the FDEs, or a PLT stub's (FUNC@plt).
	readelf --debug-dump=frames "$T/names-c" |
		awk '$4 == "FDE" { split($6, r, /[=.]+/); print "names-c+0x" substr(r[2], match(r[2], /[1-9a-f]/)) }' |
		sort -u >"$T/starts"
	grep -qxF "$a" "$T/starts" || fail "$a is no FDE's start: $(cat "$T/starts")"
	module_frames "$T/s1.lp" "$T/names-c" >"$T/n1"
	module_frames "$T/s2.lp" "$T/names-c" >"$T/n2"
	for f in "$a" "$b" "$m"; do grep -qxF "$f" "$T/n2" || fail "run 2 lacks $f: $(cat "$T/n2")"; done
	run -0 bash -c "comm -23 '$T/n1' '$T/starts' | grep -v '@plt\$' || [ \$? -eq 1 ]"
	[ -z "$output" ] || fail "run 1 names no function's start: $output"
	run -0 bash -c "comm -23 '$T/n2' '$T/starts' | grep -v '@plt\$' || [ \$? -eq 1 ]"
	[ -z "$output" ] || fail "run 2 names no function's start: $output"
}

@test "names: lp-symbolize names a stripped binary's functions as lp-record does" {
	require_root
	objcopy --strip-all "$C" "$T/names-c"
	a=names-c+$(sym_addr "$C" hot_a)
	b=names-c+$(sym_addr "$C" hot_b)
	c=names-c+$(sym_addr "$C" cold_c)
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf --raw -o "$T/raw.lp" -- "$T/names-c" 2
	lp-symbolize -o "$T/sym.lp" "$T/raw.lp"
	lp-collapse "$T/sym.lp" >"$T/sym.folded"
	check_split "$T/sym.folded" "$a" "$b" "$c"
}

# plt_names BINARY: each PLT stub objdump names (FUNC@plt, demangled),
# against what lp-symbolize names an address inside it (a raw frame 4
# bytes in), one "objdump's<TAB>lp's" line each.
plt_names() {
	local bid i=0 a n
	bid=$(readelf -n "$1" | awk '/Build ID/ { print $3 }') || return 1
	objdump -d -C "$1" | sed -n 's/^0*\([0-9a-f]*\) <\(.*@plt\)>:$/\1\t\2/p' >"$T/plt.want" || return 1
	[ -s "$T/plt.want" ] || { echo "objdump names no PLT stub in $1"; return 1; }
	{
		printf 'lp-stream\t1\traw=1\n'
		while IFS=$'\t' read -r a n; do
			i=$((i + 1))
			printf 'frame\t%016x\tu\t0x%x\t%s\t-\t-\tbuild_id=%s\n' "$i" $((0x$a + 4)) "$1" "$bid"
			printf 'stack\t%016x\t%016x\nsample\t%d\t1\t1\t0\tp\tcpu-clock\t1\t%016x\n' "$i" "$i" "$i" "$i"
		done <"$T/plt.want"
	} >"$T/plt.lp" || return 1
	lp-symbolize -o "$T/plt.sym" "$T/plt.lp" || return 1
	# Sample i (its time) holds stub i's frame: objdump's name against lp's.
	awk -F'\t' 'FNR == NR { want[FNR] = $2; next }
		$1 == "frame" { name[$2] = $6 } $1 == "stack" { leaf[$2] = $3 }
		$1 == "sample" { print want[$2 + 0] "\t" name[leaf[$9]] }' "$T/plt.want" "$T/plt.sym"
}

@test "names: PLT stubs are FUNC@plt as objdump names them: gcc, clang, IBT's .plt.sec, -z now, C++, stripped" {
	require_cmd clang
	local src=$LP_TOP/tests/workloads
	gcc -O2 -o "$T/c-gcc" "$src/names-c.c"
	clang -O2 -o "$T/c-clang" "$src/names-c.c"
	gcc -O2 -fcf-protection=full -Wl,-z,ibtplt -o "$T/c-ibt" "$src/names-c.c"
	gcc -O2 -Wl,-z,now -o "$T/c-now" "$src/names-c.c"
	clang++ -O2 -o "$T/cc-clang" "$src/names.cc"
	objcopy --strip-all "$CXX" "$T/cc-stripped"
	readelf -SW "$T/c-ibt" | grep -q ' \.plt\.sec '
	for b in "$T/c-gcc" "$T/c-clang" "$T/c-ibt" "$T/c-now" "$CXX" "$T/cc-clang" "$T/cc-stripped"; do
		run -0 plt_names "$b"
		echo "$b: $output"
		[ "${#lines[@]}" -ge 5 ]
		run -0 awk -F'\t' '$1 != $2' <<<"$output"
		assert_output ""
	done
	# A C++ stub: its function demangled, then @plt.
	run -0 plt_names "$CXX"
	assert_line "std::runtime_error::runtime_error(char const*)@plt"$'\t'"std::runtime_error::runtime_error(char const*)@plt"
}

@test "names: frames that stay unresolved keep their address in the file, which addr2line reads, in every run" {
	require_root
	# Linked without .eh_frame_hdr and stripped: nothing names its functions.
	objcopy --strip-all "$NH" "$T/names-nohdr"
	for run in 1 2; do
		run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/u$run.lp" -- "$T/names-nohdr" 1
		lp-collapse --addrs "$T/u$run.lp" >"$T/u$run.folded"
		# The leaves in the binary, by the function addr2line puts them in.
		awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, a, ";")
		       if (a[k] ~ /^\[names-nohdr <[0-9a-f]+>\]$/) { sub(/^\[names-nohdr </, "", a[k]); sub(/>\]$/, "", a[k]); print a[k], n } }' \
			"$T/u$run.folded" >"$T/leaves$run"
		[ "$(wc -l <"$T/leaves$run")" -ge 3 ] || fail "$(cat "$T/u$run.folded")"
		cut -d' ' -f1 "$T/leaves$run" | addr2line -f -e "$NH" | awk 'NR % 2' >"$T/funcs$run"
		paste -d' ' "$T/funcs$run" "$T/leaves$run" >"$T/by$run"
		run -0 awk '{ s[$1] += $3; t += $3 } END { printf "%d %d %d\n", s["hot_a"], s["hot_b"], t }' "$T/by$run"
		read -r a b n <<<"$output"
		# (A tick in a PLT stub is no unresolved leaf: FUNC@plt.)
		run -0 awk '$1 == "??"' "$T/by$run"
		[ -z "$output" ] || fail "leaves addr2line puts in no function: $output"
		[ $((100 * a / n)) -ge 45 ] || fail "hot_a $a of $n"
		[ $((100 * b / n)) -ge 18 ] || fail "hot_b $b of $n"
	done
}

@test "names: a symbol without a size does not swallow the function after it" {
	require_root
	ha=$(nm "$U" | awk '$3 == "hot_a" { print substr($1, match($1, /[1-9a-f]/)) }')
	hb=$(nm "$U" | awk '$3 == "hot_b" { print substr($1, match($1, /[1-9a-f]/)) }')
	[ -n "$ha" ] || fail "no hot_a in $U"
	[ -n "$hb" ] || fail "no hot_b in $U"
	# The truth: the leaves' addresses in the file (--raw), hot_b's from
	# its label to its FDE's end (16 bytes: unsized.c), hot_a's before.
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf --raw -o "$T/raw.lp" -- "$U" 2
	lp-collapse --addrs "$T/raw.lp" >"$T/raw.folded"
	run -0 awk -v ha=$((16#$ha)) -v hb=$((16#$hb)) '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
		if (f[k] !~ /^\[unsized <[0-9a-f]+>\]$/) next
		gsub(/^\[unsized <|>\]$/, "", f[k]); x = strtonum("0x" f[k])
		if (x >= ha && x < hb) a += n; else if (x >= hb && x < hb + 16) b += n }
		END { print a + 0, b + 0 }' "$T/raw.folded"
	read -r a b <<<"$output"
	[ "$b" -ge 20 ] || fail "hot_b: $b samples"
	[ "$a" -ge 20 ] || fail "hot_a: $a samples"
	lp-symbolize -o "$T/sym.lp" "$T/raw.lp"
	lp-collapse "$T/sym.lp" >"$T/sym.folded"
	run -0 leaf_count "$T/sym.folded" "unsized+0x$hb"
	[ "$output" -eq "$b" ] || fail "unsized+0x$hb: $output samples, $b in hot_b"
	run -0 leaf_count "$T/sym.folded" hot_a
	[ "$output" -eq "$a" ] || fail "hot_a: $output samples, $a in hot_a"
	# Recorded live, named the same way.
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/u.lp" -- "$U" 1
	lp-collapse "$T/u.lp" >"$T/u.folded"
	run -0 leaf_count "$T/u.folded" "unsized+0x$hb"
	[ "$output" -ge 10 ] || fail "$(cat "$T/u.folded")"
}

@test "names: an address past the end of a sized symbol is not given to it" {
	require_root
	# hot_b loses its symbol; hot_a, sized, sits just before it.
	objcopy --strip-debug --strip-symbol=hot_b "$C" "$T/names-c"
	run -1 bash -c "nm '$T/names-c' | grep -w hot_b"
	b=names-c+$(sym_addr "$C" hot_b)
	run -0 --separate-stderr lp-record -F 499 --call-graph dwarf -o "$T/g.lp" -- "$T/names-c" 2
	lp-collapse "$T/g.lp" >"$T/g.folded"
	check_split "$T/g.folded" hot_a "$b" cold_c
}

@test "names: lp-trace takes the names a profile shows, Shop::checkout and traced(int), and refuses overloads naming each" {
	require_root
	run -0 --separate-stderr lp-trace --calibrate 0 -o "$T/t.lp" 'Shop::checkout' 'traced(int)' -- "$CXX" 1
	[[ $output == *" exceptions caught, "* ]] || fail "$output"
	# "(items)" names no parameter list: the value to capture.
	run -0 --separate-stderr lp-trace --calibrate 0 -o "$T/i.lp" 'Shop::checkout(items)' -- "$CXX" 0.5
	run -0 awk -F'\t' '$1 == "span" { print $6, $8 }' "$T/i.lp"
	[ "$(sort -u <<<"$output")" = 'store::Shop::checkout(long) items=80000' ] || fail "$output"
	run -0 awk -F'\t' '$1 == "span" { n[$6]++ } END { for (k in n) print k, (n[k] > 20) }' "$T/t.lp"
	[ "$(sort <<<"$output")" = "$(printf '%s\n' 'store::Shop::checkout(long) 1' 'traced(int) 1')" ] || fail "$output"
	# The mangled name and the full one are the same function.
	run -0 --separate-stderr lp-trace --calibrate 0 -o "$T/m.lp" '_Z6tracedi' 'store::Shop::checkout(long)' -- "$CXX" 0.5
	run -0 awk -F'\t' '$1 == "span" { print $6 }' "$T/m.lp"
	[ "$(sort -u <<<"$output")" = "$(printf '%s\n' 'store::Shop::checkout(long)' 'traced(int)')" ] || fail "$output"
	run -0 --separate-stderr lp-trace --calibrate 0 --no-demangle -o "$T/r.lp" 'traced(double)' -- "$CXX" 0.5
	run -0 awk -F'\t' '$1 == "span" { print $6 }' "$T/r.lp"
	[ "$(sort -u <<<"$output")" = _Z6tracedd ] || fail "$output"
	run -1 --separate-stderr lp-trace --calibrate 0 'traced' -- "$CXX" 0.5
	[ "$stderr" = "lp-trace: probe 'traced': 2 functions 'traced' in $CXX: traced(double), traced(int); name one with its parameters" ] || fail "$stderr"
	run -1 --separate-stderr lp-trace --calibrate 0 'scale' -- "$CXX" 0.5
	[ "$stderr" = "lp-trace: probe 'scale': 2 functions 'scale' in $CXX: scale<int>(int), scale<long>(long); name one with its parameters" ] || fail "$stderr"
	run -1 --separate-stderr lp-trace --calibrate 0 'Shop::chekout' -- "$CXX" 0.5
	[ "$stderr" = "lp-trace: probe 'Shop::chekout': no function 'Shop::chekout' in $CXX; did you mean: store::Shop::checkout(long)" ] || fail "$stderr"
	run -1 --separate-stderr lp-trace --calibrate 0 'traced(char**)' -- "$CXX" 0.5
	[ "$stderr" = "lp-trace: probe 'traced(char**)': no function 'traced(char**)' in $CXX, only traced(double), traced(int)" ] || fail "$stderr"
	# A parameter list, then the values to capture (names.cc: n = 40000).
	run -0 --separate-stderr lp-trace --calibrate 0 -o "$T/v.lp" 'traced(int)(n)' -- "$CXX" 0.5
	run -0 awk -F'\t' '$1 == "span" { print $6, $8 }' "$T/v.lp"
	[ "$(sort -u <<<"$output")" = 'traced(int) n=40000' ] || fail "$output"
	run -0 --separate-stderr lp-trace --calibrate 0 -o "$T/s.lp" 'scale<long>' -- "$CXX" 0.5
	run -0 awk -F'\t' '$1 == "span" { print $6 }' "$T/s.lp"
	[ "$(sort -u <<<"$output")" = 'long scale<long>(long)' ] || fail "$output"
}

# clone_spans STREAM: its spans by name and copy= ("-" for none), counted.
clone_spans() {
	awk -F'\t' '$1 == "span" { c = "-"; for (i = 7; i <= NF; i++) if ($i ~ /^copy=/) c = substr($i, 6)
		n[$6 "|" c]++ } END { for (k in n) print k "|" n[k] }' "$1" | sort
}

@test "names: a Rust program as rustc -O builds it, legacy and v0 names: a span per call of Cart::checkout, stacks that reach shop::main" {
	require_root
	require_cmd rustc
	local src=$LP_TOP/tests/workloads/rustshop.rs
	rustc -O --crate-name shop -o "$T/shop" "$src"
	rustc -O --crate-name shop -C symbol-mangling-version=v0 -o "$T/shop-v0" "$src"
	# perf's names (v0 names an inherent method by its impl).
	for b in shop:shop::Cart::checkout shop-v0:'<shop::Cart>::checkout'; do
		run -0 --separate-stderr lp-trace --calibrate 0 -o "$T/t.lp" 'Cart::checkout' -- "$T/${b%%:*}" 200
		run -0 awk -F'\t' '$1 == "span" { n[$6]++ } END { for (k in n) print n[k], k }' "$T/t.lp"
		assert_output "200 ${b#*:}"
		run -0 --separate-stderr lp-trace --calibrate 0 -o "$T/t.lp" 'shop::Cart::checkout' -- "$T/${b%%:*}" 20
		run -0 grep -c '^span' "$T/t.lp"
		assert_output 20
		# A trait's method by the path a user writes, and by its name.
		for spec in 'Cart::fmt' '<shop::Cart as core::fmt::Display>::fmt'; do
			run -0 --separate-stderr lp-trace --calibrate 0 -o "$T/t.lp" "$spec" -- "$T/${b%%:*}" 200
			run -0 awk -F'\t' '$1 == "span" { n[$6]++ } END { for (k in n) print n[k], k }' "$T/t.lp"
			assert_output "20 <shop::Cart as core::fmt::Display>::fmt"
		done
	done
	# No frame pointers: lp-record's default unwinds by CFI to main.
	run -0 --separate-stderr lp-record -F 999 -o "$T/r.lp" -- "$T/shop" 200000
	lp-collapse "$T/r.lp" >"$T/r.folded"
	run -0 awk '{ n = $NF; t += n; if ($0 ~ /;main;.*;shop::main;shop::Cart::checkout [0-9]+$/) c += n } END { print c + 0, t + 0 }' "$T/r.folded"
	read -r whole all <<<"$output"
	echo "$whole of $all samples main;...;shop::main;shop::Cart::checkout"
	[ "$all" -ge 500 ]
	[ $((100 * whole / all)) -ge 95 ]
}

@test "names: lp-trace traces a function in every copy the compiler left, its clones named as it: gcc -O2 and -O3, clang -O2" {
	require_root
	require_cmd clang++
	# clones.cc: 100 rounds, 2 checkouts and 4 prices each.
	local src=$LP_TOP/tests/workloads/clones.cc co='shop::Shop::checkout(int, shop::Shop const&)'
	local pr='shop::price(int, int, shop::Shop const*)'
	g++ -O3 -fomit-frame-pointer -o "$T/clones-o3" "$src"
	clang++ -O2 -fomit-frame-pointer -o "$T/clones-clang" "$src"
	# What each build left, as nm names it.
	nm -C "$WORKLOADS/clones" | cut -d' ' -f3- >"$T/o2.nm"
	nm -C "$T/clones-o3" | cut -d' ' -f3- >"$T/o3.nm"
	run -0 grep -cxF -e "$co [clone .isra.0]" -e "$pr" "$T/o2.nm"
	assert_output 2
	run -1 grep -xF "$co" "$T/o2.nm"
	run -0 grep -cxF -e "$pr [clone .constprop.0]" -e "$pr" "$T/o3.nm"
	assert_output 2
	for b in "$WORKLOADS/clones" "$T/clones-o3" "$T/clones-clang"; do
		run -0 --separate-stderr lp-trace --calibrate 0 -o "$T/c.lp" 'Shop::checkout' 'shop::price' -- "$b" 100
		run -0 clone_spans "$T/c.lp"
		echo "$b: $output"
		case $b in
		*/clones) assert_output "$co|isra.0|200"$'\n'"$pr|-|400" ;;
		*-o3) assert_output "$co|isra.0|200"$'\n'"$pr|-|100"$'\n'"$pr|constprop.0|300" ;;
		*) assert_output "$co|-|200"$'\n'"$pr|-|400" ;;
		esac
	done
	# --list: a clone under its function, by the name that traces both.
	run -0 bash -c "lp-trace --list '*price*' '$T/clones-o3' | cut -f2,8"
	assert_output "_ZN4shopL5priceEiiPKNS_4ShopE"$'\t'"-"$'\n'"_ZN4shopL5priceEiiPKNS_4ShopE"$'\t'"constprop.0"
	# An offset is into the function's own body: none is left of checkout.
	run -1 --separate-stderr lp-trace --calibrate 0 'Shop::checkout+4' -- "$WORKLOADS/clones" 1
	[[ $stderr == "lp-trace: probe 'Shop::checkout+4': Shop::checkout has no body of its own in $WORKLOADS/clones, only copies ("* ]] || fail "$stderr"
}
