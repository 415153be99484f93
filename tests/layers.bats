#!/usr/bin/env bats
# lib/layers, run by make: the tree passes, and an include of libdw outside
# the one module that owns it (lib/debuginfo/dwarf.c) is refused, naming
# the file and line.  Run on a copy of lib/ and bin/.

load helpers/common

setup() {
	T=$BATS_TEST_TMPDIR/tree
	mkdir -p "$T"
	cp -r "$LP_TOP/lib" "$LP_TOP/bin" "$T/"
}

@test "layers: the tree as it is passes" {
	run -0 --separate-stderr "$T/lib/layers" "$T"
	[ "$output" = "" ]
	[ "$stderr" = "" ]
}

@test "layers: libdw's headers outside lib/debuginfo/dwarf.c are refused, each on its line" {
	# file, header: each refused (unwind.c may have libdwfl.h alone)
	while read -r file hdr; do
		cp "$LP_TOP/$file" "$T/$file"
		sed -i "3i #include <$hdr>" "$T/$file"
		run -1 --separate-stderr "$T/lib/layers" "$T"
		echo "$file <$hdr>: $output"
		[ "$output" = "$file:3: only lib/debuginfo/dwarf.c includes <$hdr> (lib/layers)" ]
		cp "$LP_TOP/$file" "$T/$file"
	done <<-'EOF2'
		lib/debuginfo/symbolize.c elfutils/libdwfl.h
		lib/debuginfo/addr2line.c dwarf.h
		lib/capture/probe.c elfutils/libdw.h
		lib/debuginfo/unwind.c elfutils/libdw.h
		lib/stream/perfscript.c elfutils/libdwelf.h
		bin/lp-record.c elfutils/libdwfl.h
	EOF2
	run -0 "$T/lib/layers" "$T"
}
