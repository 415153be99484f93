#!/usr/bin/env bats
# lp-record's default unwinding (--call-graph auto) on a build without frame
# pointers (tests/workloads/nofp.c: stacks known by construction): whole
# stacks with no flag, on and off the CPU; a stack deeper than the first
# copy whole once its thread's copy has grown; stacks through a function
# with a return probe (lp-trace's) still whole; a frame-pointer chain that
# goes astray cut, not symbolized; the summary of whole stacks.  Each check
# is run against what fails it (--call-graph fp, or a fixed-size copy), so
# it measures the unwinder, not a lucky binary.  Privileged (root, BPF).

bats_require_minimum_version 1.5.0
load helpers/common

teardown() {
	if [ -n "${BG:-}" ]; then kill "$BG" 2>/dev/null || true; wait "$BG" 2>/dev/null || true; fi
}

# Percent (one decimal) of the weight in folded input $1 whose stack (the
# line less its count) matches the awk regex $2 (among those matching $3).
share() {
	awk -v re="$2" -v among="${3:-}" '
		{ s = $0; sub(/ [0-9.]+$/, "", s) }
		among != "" && s !~ among { next }
		{ t += $NF; if (s ~ re) m += $NF }
		END { if (!t) { print "none"; exit } printf "%.1f\n", 100 * m / t }' "$1"
}

# Truncated samples in the second half of recording $1 (samples come in
# time order): a copy grows in steps, each lagging by the samples already
# in the ring, so only the first ones may be short.
late_truncated() {
	awk -F'\t' '$1 == "sample" { tr[++n] = /truncated=1/ }
		END { for (i = int(n / 2) + 1; i <= n; i++) c += tr[i]; print c + 0 }' "$1"
}

at_least() {
	awk -v v="$1" -v min="$2" 'BEGIN { exit !(v != "none" && v >= min) }' ||
		fail "$3: $1% < $2%"
}

below() {
	awk -v v="$1" -v max="$2" 'BEGIN { exit !(v != "none" && v < max) }' ||
		fail "$3: $1% >= $2%"
}

# Percent (one decimal) of the samples of stream $1 taken from $2 to $3 ns
# whose stack, its frames' symbols joined by ';' root first, matches the
# awk regex $4; then how many samples that is.
share_between() {
	awk -F'\t' -v from="$2" -v to="$3" -v re="$4" '
		$1 == "frame" { name[$2] = $6 }
		$1 == "stack" { n = split($3, f, ","); s = ""
			for (i = 1; i <= n; i++) s = s (i > 1 ? ";" : "") name[f[i]]
			stack[$2] = s }
		$1 == "sample" && $2 >= from && $2 <= to { t++; if (stack[$9] ~ re) m++ }
		END { if (!t) { print "none", 0; exit } printf "%.1f %d\n", 100 * m / t, t }' "$1"
}

@test "no flag: a build without frame pointers gives whole stacks (>= 99% reach main), unwind=auto" {
	require_root
	run -0 --separate-stderr lp-record --freq 499 --no-kernel --output "$T/auto.lp" -- "$WORKLOADS/nofp" 2 calls "$T/main.ns"
	run -0 lp-cat --check "$T/auto.lp"
	grep -q $'^lp-stream\t.*\tunwind=auto' "$T/auto.lp" || fail "header says no unwind=auto"
	n=$(grep -c '^sample' "$T/auto.lp")
	[ "$(grep '^sample' "$T/auto.lp" | grep -c 'unwind=auto')" -eq "$n" ]
	# The samples taken while main ran (nofp's own clock, the samples'):
	# before it, lp-record's child in execve, ld.so and libc's start have
	# no stack through main, however well unwound (a machine whose page
	# faults are dear spends longer there).  In main, every stack is
	# main;serve and what serve calls: handle;work, or now and the clock.
	read -r from to < "$T/main.ns"
	read -r whole inmain <<< "$(share_between "$T/auto.lp" "$from" "$to" \
		'^_start;__libc_start_main[^;]*;__libc_start_call_main;main;serve(;handle(;work)?|;now(;[^;]+)*)?$')"
	echo "$whole% of the $inmain samples taken in main (of $n) are whole: $stderr"
	# ~1000 at 499 Hz for 2 s on an idle machine; a loaded one gives fewer.
	[ "$inmain" -ge 200 ] || fail "$inmain samples in main"
	at_least "$whole" 99 "whole stacks by default"
	# The summary says so, of every sample: ld.so's entry, which has no
	# CFI, is a thread's first frame too.
	[[ $stderr =~ ([0-9.]+)"% of "([0-9]+)" user stacks whole" ]] || fail "no summary: $stderr"
	at_least "${BASH_REMATCH[1]}" 99 "the summary's whole stacks"
	# The same build, frame pointers only: the chain goes astray at once.
	run -0 --separate-stderr lp-record --freq 499 --no-kernel --call-graph fp --output "$T/fp.lp" -- "$WORKLOADS/nofp" 1 calls
	lp-collapse "$T/fp.lp" > "$T/fp.folded"
	fp=$(share "$T/fp.folded" ';main;serve;handle;work$')
	echo "frame pointers: $fp%"
	below "$fp" 50 "frame pointers on a build without them"
}

@test "a started command's stacks are whole from its start: in ld.so before main (its entry has no CFI), and its first in main" {
	require_root
	# ld.so runs ~0.5 ms here before main: a few ticks at 4999 Hz, none
	# in some runs.  The samples judged are the command's (a frame in
	# ld.so or nofp) whose copy held a stack: lp-record's child in execve
	# (its old stack gone with its memory, the new one not made yet), or
	# a thread faulting in the page its sp is in, have a lone frame.
	for _ in 1 2 3 4 5; do
		run -0 --separate-stderr lp-record --freq 4999 --no-kernel --calibrate 0 \
			--output "$T/start.lp" -- "$WORKLOADS/nofp" 0.2 calls
		read -r n ldso inmain cut <<< "$(awk -F'\t' '
			$1 == "frame" { ldso[$2] = $5 ~ /\/ld-linux[^\/]*$/
				nofp[$2] = $5 ~ /\/nofp$/; main[$2] = nofp[$2] && $6 == "main" }
			$1 == "stack" { k = split($3, f, ","); root[$2] = ldso[f[1]]
				for (i = 1; i <= k; i++) { own[$2] = own[$2] || ldso[f[i]] || nofp[f[i]]
					inmain[$2] = inmain[$2] || main[f[i]] }
				own[$2] = own[$2] && k > 1 }
			$1 == "sample" && own[$9] { n++; l += root[$9]; m += inmain[$9]
				if (/\ttruncated=1/) { c++; print "cut:", $0 > "/dev/stderr" } }
			END { print n + 0, l + 0, m + 0, c + 0 }' "$T/start.lp")"
		echo "$n samples of the command: $ldso in ld.so, $inmain in main, $cut cut"
		[ "$cut" -eq 0 ] || fail "$cut of $n stacks cut: $(grep -c truncated=1 "$T/start.lp") truncated in all; $stderr"
		[ "$ldso" -eq 0 ] || break
	done
	[ "$ldso" -gt 0 ] || fail "no sample in ld.so in 5 runs"
	[ "$inmain" -ge 100 ] || fail "$inmain samples in main"
}

@test "--call-graph fp: a chain that leaves mapped code is cut and marked, and the summary names the module and the remedy" {
	require_root
	run -0 --separate-stderr lp-record --freq 499 --no-kernel --call-graph fp --output "$T/fp.lp" -- "$WORKLOADS/nofp" 1 calls
	n=$(grep -c '^sample' "$T/fp.lp")
	broken=$(grep '^sample' "$T/fp.lp" | grep -c 'why=broken-chain')
	echo "$broken of $n samples cut at a broken chain; $stderr"
	[ "$broken" -gt $((n / 2)) ] || fail "$broken of $n"
	# No frame names an address outside every mapping: the garbage a chain
	# reads past a function without frame pointers comes out as no frame.
	run -1 grep -E $'^frame\t[0-9a-f]+\tu\t0x[0-9a-f]{13,}\t' "$T/fp.lp"
	[[ $stderr =~ "user stacks whole" ]] || fail "no summary"
	[[ $stderr == *"in $WORKLOADS/nofp: built without frame pointers"* ]] ||
		fail "the workload's module and the remedy not named: $stderr"
}

@test "a stack deeper than the first copy is whole once its thread's copy has grown; a fixed copy truncates it" {
	require_root
	run -0 --separate-stderr lp-record --freq 499 --no-kernel --output "$T/deep.lp" -- "$WORKLOADS/nofp" 2 deep
	n=$(grep -c '^sample' "$T/deep.lp")
	lp-collapse "$T/deep.lp" > "$T/deep.folded"
	# main, then dive 41 times (40 down to 0), then work.
	re=';main(;dive){41};work$'
	whole=$(share "$T/deep.folded" "$re")
	# The samples taken before a copy grew (those in the ring when the
	# first truncated one is read, two steps) are truncated: none in the
	# second half of the recording.
	late=$(late_truncated "$T/deep.lp")
	echo "$whole% of $n samples whole, $late truncated in the second half; $stderr"
	at_least "$whole" 90 "whole deep stacks"
	[ "$late" -eq 0 ] || fail "$late truncated samples in the second half"
	run -0 --separate-stderr lp-record --freq 499 --no-kernel --call-graph dwarf --output "$T/fixed.lp" -- "$WORKLOADS/nofp" 1 deep
	lp-collapse "$T/fixed.lp" > "$T/fixed.folded"
	fixed=$(share "$T/fixed.folded" "$re")
	echo "a fixed 8 KiB copy: $fixed% whole"
	below "$fixed" 10 "whole deep stacks with an 8 KiB copy"
}

@test "a stack deeper than the largest copy: its DWARF frames joined to the frame-pointer chain past it" {
	require_root
	# deepfp keeps frame pointers: 101 frames of over 1 KiB, past 64 KiB.
	run -0 --separate-stderr lp-record --freq 499 --no-kernel --output "$T/deep.lp" -- "$WORKLOADS/deepfp" 2
	n=$(grep -c '^sample' "$T/deep.lp")
	lp-collapse "$T/deep.lp" > "$T/deep.folded"
	re=';main(;dive){101};work$'
	joined=$(share "$T/deep.folded" "$re")
	# Three steps first (8 and 32 KiB copies, then 64 KiB and the chain),
	# each lagging by the samples in the ring: none in the second half.
	late=$(late_truncated "$T/deep.lp")
	echo "$joined% of $n samples are main;dive x 101;work, $late truncated in the second half; $stderr"
	at_least "$joined" 85 "deep stacks joined to the chain"
	[ "$late" -eq 0 ] || fail "$late truncated samples in the second half"
	# The copy alone, as big as it gets, ends in the middle.
	run -0 lp-record --freq 499 --no-kernel --call-graph dwarf,65536 --output "$T/copy.lp" -- "$WORKLOADS/deepfp" 1
	lp-collapse "$T/copy.lp" > "$T/copy.folded"
	copy=$(share "$T/copy.folded" "$re")
	echo "the copy alone: $copy%"
	below "$copy" 10 "deep stacks from a 64 KiB copy alone"
}

@test "off the CPU, no flag: blocked stacks of a build without frame pointers reach main" {
	require_root
	run -0 --separate-stderr lp-record --mode off --output "$T/off.lp" -- "$WORKLOADS/nofp" 1 sleep
	lp-collapse "$T/off.lp" > "$T/off.folded"
	whole=$(share "$T/off.folded" ';main;nap;' 'nanosleep')
	echo "$whole% of the blocked time in nanosleep is under main;nap; $stderr"
	at_least "$whole" 95 "whole off-CPU stacks"
	run -0 lp-record --mode off --call-graph fp --output "$T/offfp.lp" -- "$WORKLOADS/nofp" 1 sleep
	lp-collapse "$T/offfp.lp" > "$T/offfp.folded"
	fp=$(share "$T/offfp.folded" ';main;nap;' 'nanosleep')
	echo "frame pointers: $fp%"
	below "$fp" 50 "off-CPU stacks with frame pointers on a build without them"
}

@test "a return probe on a hot function: the samples under it still reach main" {
	require_root
	"$WORKLOADS/nofp" 8 calls &
	BG=$!
	lp-trace --pid "$BG" --duration 6 handle > "$T/spans.lp" 2> "$T/trace.err" &
	tracer=$!
	# Recording once the probes are in: the first span is out.
	for _ in $(seq 100); do
		if grep -q '^span' "$T/spans.lp"; then break; fi
		sleep 0.05
	done
	run -0 --separate-stderr lp-record --freq 499 --no-kernel --pid "$BG" --duration 4 --output "$T/rec.lp"
	wait "$tracer"
	[ "$(grep -c '^span' "$T/spans.lp")" -ge 1000 ] || fail "lp-trace: $(cat "$T/trace.err")"
	lp-collapse "$T/rec.lp" > "$T/rec.folded"
	under=$(awk '/;handle(;|$)/ { t += $NF } END { print t + 0 }' "$T/rec.folded")
	# ~2000 at 499 Hz for 4 s on an idle machine; a loaded one gives fewer.
	[ "$under" -ge 200 ] || fail "$under samples under handle"
	whole=$(share "$T/rec.folded" ';_start;[^;]*;__libc_start_call_main;main;serve;handle(;|$)' ';handle(;|$)')
	echo "$whole% of $under samples under handle reach main; $stderr"
	at_least "$whole" 97 "whole stacks under a function with a return probe"
	# The trampoline appears in no stack as a return address: the page's
	# frame is only ever a leaf, a tick in lp's code there (the thread
	# unwound from where it is in its own).
	tramp=$(share "$T/rec.folded" '[[]uprobes[]];')
	leaf=$(share "$T/rec.folded" '[[]uprobes[]]$')
	echo "$leaf% of the samples in the uprobes page, $tramp% with it below another frame"
	below "$tramp" 1 "samples with a [uprobes] frame below another"
}

# A PLT stub's CFI computes the CFA from the pc (DW_OP_breg16, register 16:
# rip), which the unwinder must be given as a register too: without it
# libdw fell back to a frame-pointer step and ended every stack in a stub
# at the stub, counted whole (Redis: 0.8% of its samples; here 7 of 7 at 999 Hz).
@test "a stack whose leaf is in a PLT stub is whole" {
	require_root
	run -0 --separate-stderr lp-record --freq 4999 --no-kernel --output "$T/plt.lp" -- "$WORKLOADS/nofp" 2 plt
	lp-collapse "$T/plt.lp" > "$T/plt.folded"
	# The stubs are the workload's calls to libc, named after the
	# functions they jump to (ld.so has stubs of its own).
	stub=$(awk '$0 ~ /;(pthread_getspecific|clock_gettime)@plt [0-9]+$/ { n += $NF } END { print n + 0 }' "$T/plt.folded")
	whole=$(awk '$0 ~ /;main;through_plt;(now;)?(pthread_getspecific|clock_gettime)@plt [0-9]+$/ { n += $NF } END { print n + 0 }' "$T/plt.folded")
	echo "$whole of $stub samples in the PLT stub whole"
	[ "$stub" -ge 3 ] || fail "only $stub samples in the stub"
	[ "$whole" -eq "$stub" ] || fail "$((stub - whole)) of $stub stacks in the PLT stub not whole: $(grep '@plt' "$T/plt.folded")"
}
