#!/usr/bin/env bats
# The architecture as the build enforces it (issue 13): the filters link no
# DWARF, ELF or BPF library, and lib/layers refuses an include across a
# forbidden boundary and any cycle among modules.

load helpers/common

FILTERS="lp-cat lp-collapse lp-diff lp-join lp-split lp-top lp-serve"
# What only producers and lp-symbolize may need.
HEAVY='libdw|libelf|libbpf|libtraceevent|libcapstone'

setup() {
	T=$BATS_TEST_TMPDIR
}

# The shared libraries a binary needs, by name: its own (readelf -d) and,
# through them, every one ldd loads.
needed() {
	readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
	ldd "$1" | awk '{ print $1 }'
}

@test "no filter needs libdw, libelf, libbpf, libtraceevent or Capstone; a producer does, seen the same way" {
	require_cmd readelf
	require_cmd ldd
	# the check sees them where they are
	needed "$LP_BUILD/bin/lp-record" >"$T/record"
	grep -qE "^($HEAVY)\." "$T/record"
	grep -q '^libdw\.' "$T/record"
	grep -q '^libbpf\.' "$T/record"
	for p in $FILTERS; do
		needed "$LP_BUILD/bin/$p" >"$T/$p"
		[ -s "$T/$p" ]
		if grep -E "^($HEAVY)\." "$T/$p"; then
			echo "$p needs the above" >&2
			return 1
		fi
	done
	# nor is any of their code linked in statically: no libdw or BPF symbol
	for p in $FILTERS; do
		if nm "$LP_BUILD/bin/$p" | grep -E ' [TU] (dwfl_|dwarf_|elf_|bpf_)'; then
			echo "$p holds the above" >&2
			return 1
		fi
	done
}

# A copy of the tree lib/layers reads (lib/ and bin/), in $T/tree.
copy_tree() {
	mkdir "$T/tree"
	cp -r "$LP_TOP/lib" "$LP_TOP/bin" "$T/tree/"
}

@test "lib/layers: the tree passes, silently" {
	copy_tree
	run -0 --separate-stderr "$LP_TOP/lib/layers" "$T/tree"
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "lib/layers refuses an include across a boundary, naming the file and line" {
	copy_tree
	f=$T/tree/lib/stream/folded.c
	n=$(grep -n '^#include' "$f" | tail -1 | cut -d: -f1)
	sed -i "${n}a #include \"debuginfo/addr2line.h\"" "$f"
	run -1 --separate-stderr "$LP_TOP/lib/layers" "$T/tree"
	[ "$output" = "lib/stream/folded.c:$((n + 1)): stream may not include debuginfo/addr2line.h (lib/layers)" ]
	# the model may include only base
	copy=$T/tree/lib/model/dict.c
	sed -i '$a #include "stream/attrs.h"' "$copy"
	run -1 --separate-stderr "$LP_TOP/lib/layers" "$T/tree"
	[ "$output" = "lib/model/dict.c:$(wc -l <"$copy"): model may not include stream/attrs.h (lib/layers)
lib/stream/folded.c:$((n + 1)): stream may not include debuginfo/addr2line.h (lib/layers)" ]
}

@test "lib/layers refuses a cycle among modules of one layer, naming it" {
	copy_tree
	# the lp text codec including the input layer, which includes it
	sed -i '1a #include "stream/stream.h"' "$T/tree/lib/stream/lptext.c"
	run -1 --separate-stderr "$LP_TOP/lib/layers" "$T/tree"
	[ -z "$output" ]
	[[ "$stderr" == "lib/layers: a cycle among modules:"* ]]
	grep -qx 'stream/lptext' <<<"$stderr"
	grep -qx 'stream/stream' <<<"$stderr"
}

@test "lib/layers: libdw's headers outside lib/debuginfo/dwarf.c, dwarf-*.c and dwarf-internal.h are refused, each on its line" {
	copy_tree
	# file, header: each refused (unwind.c may have libdwfl.h alone; the
	# public dwarf.h none, though its module's files may)
	while read -r file hdr; do
		cp "$LP_TOP/$file" "$T/tree/$file"
		sed -i "3i #include <$hdr>" "$T/tree/$file"
		run -1 --separate-stderr "$LP_TOP/lib/layers" "$T/tree"
		echo "$file <$hdr>: $output"
		[ "$output" = "$file:3: only lib/debuginfo/dwarf.c, dwarf-*.c and dwarf-internal.h include <$hdr> (lib/layers)" ]
		cp "$LP_TOP/$file" "$T/tree/$file"
	done <<-'EOF2'
		lib/debuginfo/symbolize.c elfutils/libdwfl.h
		lib/debuginfo/addr2line.c dwarf.h
		lib/debuginfo/dwarf.h elfutils/libdw.h
		lib/capture/trace/probe.c elfutils/libdw.h
		lib/debuginfo/unwind.c elfutils/libdw.h
		lib/stream/perfscript.c elfutils/libdwelf.h
		bin/lp-record.c elfutils/libdwfl.h
	EOF2
	# a new file of the dwarf module may include them
	printf '#include <elfutils/libdwelf.h>\n#include <dwarf.h>\n' >"$T/tree/lib/debuginfo/dwarf-new.c"
	run -0 "$LP_TOP/lib/layers" "$T/tree"
}
