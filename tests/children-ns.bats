#!/usr/bin/env bats
# lp-record and lp-trace on processes the host cannot read as it reads its
# own: forked children gone before their maps are read (symbolized with
# their parent's modules), and processes in their own mount and pid
# namespaces (binaries, libraries and JIT maps read through
# /proc/PID/root).  Privileged: they load BPF programs (root, under CI=true
# too).

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/producers

setup() {
	TMP=$(mktemp -d)
}

teardown() {
	if [ -n "${BG:-}" ]; then kill "$BG" 2>/dev/null || true; wait "$BG" 2>/dev/null || true; fi
	for p in ${KILL_AFTER:-}; do kill -KILL "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}

# Of the samples of forkspin's children (every forkspin pid but $2, the
# parent's) in recording $1: "PIDS SAMPLES SPIN UNKNOWN", the number of
# children sampled, their samples, and the percent in child_spin and with
# an [unknown] frame.
children_figures() {
	lp-collapse --pid "$1" > "$TMP/pid.folded" || return 1
	awk -v parent="forkspin-$2" '{
		w = $NF; split($1, f, ";")
		if (f[1] !~ /^forkspin-/ || f[1] == parent) next
		pids[f[1]] = 1; t += w
		if ($0 ~ /;child_spin(;| [0-9]+$)/) spin += w
		if ($0 ~ /\[unknown\]/) unk += w
	} END {
		for (p in pids) n++
		if (!t) { print n + 0, 0, 0, 100; exit }
		printf "%d %d %.1f %.1f\n", n, t, 100 * spin / t, 100 * unk / t
	}' "$TMP/pid.folded"
}

# Checks the figures of children_figures: the 200 children of 5 ms mostly
# sampled, >= 90% of their samples in child_spin, <= 5% [unknown].
check_children() {
	local n t spin unk
	read -r n t spin unk <<< "$1"
	echo "children sampled: $n, samples: $t, in child_spin: $spin%, [unknown]: $unk%"
	[ "$n" -ge 150 ]
	[ "$t" -ge 500 ]
	awk -v s="$spin" 'BEGIN { exit !(s >= 90) }'
	awk -v u="$unk" 'BEGIN { exit !(u <= 5) }'
}

@test "200 children forked without exec, gone before their maps are read, are symbolized (frame pointers)" {
	require_root
	run -0 --separate-stderr lp-record --freq 999 --output "$TMP/fp.lp" -- "$WORKLOADS/forkspin" 200 5
	echo "$stderr"
	parent=$output
	run -0 lp-cat --check "$TMP/fp.lp"
	check_children "$(children_figures "$TMP/fp.lp" "$parent")"
}

@test "200 children forked without exec are symbolized and unwound with DWARF" {
	require_root
	run -0 --separate-stderr lp-record --freq 999 --call-graph dwarf --output "$TMP/dw.lp" \
		-- "$WORKLOADS/forkspin" 200 5
	echo "$stderr"
	parent=$output
	run -0 lp-cat --check "$TMP/dw.lp"
	check_children "$(children_figures "$TMP/dw.lp" "$parent")"
	# Unwound through child_spin to main (DWARF needs the modules too).
	whole=$(awk -v parent="forkspin-$parent" '$1 !~ "^" parent ";" && /;child_spin/ {
		t += $NF; if ($0 ~ /;main;child_spin/) m += $NF } END { printf "%.0f\n", 100 * m / t }' \
		"$TMP/pid.folded")
	echo "child_spin samples reaching main: $whole%"
	[ "$whole" -ge 90 ]
}

@test "--all: children forked without exec anywhere on the system are symbolized" {
	require_root
	lp-record --all --freq 999 --output "$TMP/all.lp" 2>"$TMP/err" &
	rec=$!
	KILL_AFTER=$rec
	sleep 1
	"$WORKLOADS/forkspin" 200 5 > "$TMP/parent"
	kill -INT "$rec"
	reap "$rec" 0 10
	cat "$TMP/err"
	run -0 lp-cat --check "$TMP/all.lp"
	check_children "$(children_figures "$TMP/all.lp" "$(cat "$TMP/parent")")"
}
