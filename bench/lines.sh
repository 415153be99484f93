#!/usr/bin/env bash
# bench/lines.sh - what one hit of a line probe costs the traced thread,
# beside a function probe's (entry + return, a span) and beside bpftrace's
# uprobe on the same line, in one run (tests/workloads/cheapline.c: each
# line runs once an iteration).  lp-trace puts a line probe on the line's
# cheapest statement (lp-trace(1), WHAT THE PROBES COST); bpftrace 0.17 has
# no FILE:LINE probes and refuses an address inside a function when built
# without its disassembler (Debian's: "compiled without (k|u)probe offset
# support"), so it is given a copy of the binary with a symbol at the
# line's address: the same instruction, probed by bpftrace's own program.
# Needs root.  Figures vary with the machine's load: the runs alternate,
# and the median of ROUNDS is printed.  With CC, the workload is built by
# that compiler at -O2 -g (-fno-inline: tick stays a function), as
# distributions build: gcc's and clang's code for the same lines.
#
#   ITERS=100000 ROUNDS=5 [CC=clang] bench/lines.sh
set -u
O=${O:-build}
W=$O/tests/workloads
ITERS=${ITERS:-100000}
ROUNDS=${ROUNDS:-5}
SRC=$(dirname "$0")/../tests/workloads/cheapline.c
if [ "$(id -u)" -ne 0 ]; then
	echo "bench/lines.sh: needs root (uprobes)" >&2
	exit 1
fi
for f in "$O/bin/lp-trace" "$W/cheapline"; do
	[ -x "$f" ] || { echo "bench/lines.sh: $f missing: make test-build O=$O" >&2; exit 1; }
done
have_bpftrace=0
command -v bpftrace >/dev/null && have_bpftrace=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
BIN=$W/cheapline
if [ -n "${CC:-}" ]; then
	BIN=$tmp/bin/cheapline
	mkdir -p "$tmp/bin"
	"$CC" -O2 -g -fno-inline "$SRC" -o "$BIN" || exit 1
	echo "# cheapline built by $("$CC" --version | head -1)"
fi
CHEAP=$(grep -n 'CHEAP \*/' "$SRC" | cut -d: -f1)
STEPPED=$(grep -n 'STEPPED \*/' "$SRC" | cut -d: -f1)

# The line's first is_stmt address (where a probe on the line's address
# goes), and the one lp-trace chose (its -v line).
first_addr() {
	objdump --dwarf=decodedline "$BIN" |
		awk -v l="$1" '$1 ~ /(^|\/)cheapline\.c$/ && $2 == l && $NF == "x" { print $3; exit }'
}
chosen_addr() {
	"$O/bin/lp-trace" -v --calibrate 0 -o /dev/null "cheapline.c:$1" -- "$BIN" 1 2>&1 >/dev/null |
		sed -n 's/.* at \(0x[0-9a-f]*\) (file offset.*/\1/p' | head -1
}
cheap_first=$(first_addr "$CHEAP")
cheap_chosen=$(chosen_addr "$CHEAP")
stepped_first=$(first_addr "$STEPPED")
# bpftrace's copy: symbols at those addresses (.text-relative for objcopy),
# one byte long (bpftrace refuses a symbol of size 0; objcopy cannot set a
# size: patched in .symtab, 64-bit little-endian ELF).
text=$(objdump -h "$BIN" | awk '$2 == ".text" { print "0x" $4 }')
sym() { printf '%s=.text:0x%x,function,global' "$1" $(($2 - text)); }
objcopy --add-symbol "$(sym line_first "$cheap_first")" --add-symbol "$(sym line_chosen "$cheap_chosen")" \
	--add-symbol "$(sym stepped_first "$stepped_first")" "$BIN" "$tmp/cheapline"
python3 - "$tmp/cheapline" <<'PY'
import struct, sys
f = open(sys.argv[1], 'r+b')
b = bytearray(f.read())
shoff, = struct.unpack_from('<Q', b, 0x28)
shentsize, shnum = struct.unpack_from('<HH', b, 0x3a)
for i in range(shnum):
    sh = shoff + i * shentsize
    typ, = struct.unpack_from('<I', b, sh + 4)
    if typ != 2:		# SHT_SYMTAB
        continue
    off, size, link, _, _, ent = struct.unpack_from('<QQIIQQ', b, sh + 0x18)
    stroff, = struct.unpack_from('<Q', b, shoff + link * shentsize + 0x18)
    for s in range(off, off + size, ent):
        name, = struct.unpack_from('<I', b, s)
        nm = b[stroff + name:b.index(0, stroff + name)]
        if nm in (b'line_first', b'line_chosen', b'stepped_first'):
            struct.pack_into('<Q', b, s + 16, 1)
f.seek(0)
f.write(b)
PY

nspi() { sed -n 's/.* iterations, \([0-9.]*\) ns per iteration/\1/p' "$1" | tail -1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
run_plain() { "$BIN" "$ITERS" t >/dev/null 2>"$tmp/e"; nspi "$tmp/e"; }
run_lp() { "$O/bin/lp-trace" -o "$tmp/lp.out" "$1" -- "$BIN" "$ITERS" t >/dev/null 2>"$tmp/e"; nspi "$tmp/e"; }
run_bt() {
	bpftrace -e "uprobe:$tmp/cheapline:$1 { @n = count(); }" -c "$tmp/cheapline $ITERS t" >/dev/null 2>"$tmp/e"
	nspi "$tmp/e"
}

kinds="plain lpline lpstep lpfunc"
[ $have_bpftrace = 1 ] && kinds="$kinds btfirst btchosen btstep"
for k in $kinds; do : >"$tmp/$k"; done
for _ in $(seq "$ROUNDS"); do
	run_plain >>"$tmp/plain"
	run_lp "cheapline.c:$CHEAP" >>"$tmp/lpline"
	run_lp "cheapline.c:$STEPPED" >>"$tmp/lpstep"
	run_lp tick >>"$tmp/lpfunc"
	if [ $have_bpftrace = 1 ]; then
		run_bt line_first >>"$tmp/btfirst"
		run_bt line_chosen >>"$tmp/btchosen"
		run_bt stepped_first >>"$tmp/btstep"
	fi
done
plain=$(median <"$tmp/plain")
row() { local m; m=$(median <"$tmp/$1"); printf '%-66s %10.1f %10.1f\n' "$2" "$m" "$(echo "$m - $plain" | bc)"; }
echo "# one hit per iteration ($ITERS iterations, median of $ROUNDS); added = the hit's cost"
printf '%-66s %10s %10s\n' "probe" "ns/iter" "added"
printf '%-66s %10.1f %10s\n' "no tracing" "$plain" "-"
row lpfunc "lp-trace tick (function probe: entry + return, a span)"
row lpline "lp-trace cheapline.c:$CHEAP (line probe at its call, $cheap_chosen)"
row lpstep "lp-trace cheapline.c:$STEPPED (no cheap statement: stepped)"
if [ $have_bpftrace = 1 ]; then
	row btfirst "bpftrace uprobe at line $CHEAP's address ($cheap_first, stepped)"
	row btchosen "bpftrace uprobe at lp-trace's choice ($cheap_chosen)"
	row btstep "bpftrace uprobe at line $STEPPED's address ($stepped_first)"
else
	echo "bpftrace not installed: no comparison (make bench-deps)"
fi
m() { median <"$tmp/$1"; }
printf 'line probe / function probe added cost: %.2f (goal: at most 2)\n' \
	"$(echo "($(m lpline) - $plain) / ($(m lpfunc) - $plain)" | bc -l)"
