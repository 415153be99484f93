#!/usr/bin/env bats
# make static's programs (issue 28: one binary to copy): each one ELF file
# needing nothing else; copied alone into an empty directory and run
# chrooted there (/proc, /sys, /dev, tracefs and a tmpfs /tmp mounted,
# nothing else), they answer --help and --version as the dynamic build
# does, and record and trace processes running outside the chroot with
# the truth of their workloads (cpusplit: a() 25%, b() 75%; sleeper: 200
# calls of nap(i, usec), ret = 2 * i), reading the targets' files, and
# their debug files, through /proc/PID/root as for a container's.
# Privileged: chroot, mounts and BPF (root, under CI=true too).

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/bpf
load helpers/producers
load helpers/cpusplit

STATIC=$LP_BUILD/static/bin
IN_CHROOT=$LP_TOP/tests/helpers/in-chroot

setup() {
	load_bats_libs
	T=$BATS_TEST_TMPDIR
	ROOT=$T/root
}

teardown() {
	# What a failed test may have left running (a tracer, a workload).
	kill_after
	# in-chroot mounts in a namespace of its own, which goes with its
	# processes: nothing of ROOT may be mounted here.  Were anything, it
	# is unmounted (innermost first) and the test fails.
	local left
	left=$(awk -v r="$ROOT/" 'index($5 "/", r) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
	for m in $left; do umount -l "$m"; done
	[ -z "$left" ] || fail "left mounted: $left"
}

# The static programs, built by make test (make static): missing, the tests
# fail under CI=true and skip elsewhere.
require_static() {
	if [ ! -x "$STATIC/lp-record" ]; then
		if [ "${CI:-}" = true ]; then
			echo "no static build in $STATIC under CI=true (make static)" >&2
			return 1
		fi
		skip "no static build in $STATIC: make static"
	fi
}

# The dynamic build's programs, by name, but lp-serve and lp-push (make
# static leaves them out: libmicrohttpd needs GnuTLS, libcurl GSSAPI, which
# have no static library here).
programs() {
	local p
	for p in "$LP_BUILD"/bin/lp-*; do
		case $p in *.d | */lp-serve | */lp-push) ;; *) basename "$p" ;; esac
	done
}

# ROOT: the static programs and the four mount points, nothing else.
make_root() {
	require_root
	require_static
	require_cmd unshare
	mkdir -p "$ROOT/proc" "$ROOT/sys" "$ROOT/dev" "$ROOT/tmp"
	for p in $(programs); do cp "$STATIC/$p" "$ROOT/"; done
	run -0 find "$ROOT" -mindepth 1
	[ "${#lines[@]}" -eq $(($(programs | wc -l) + 4)) ]
}

@test "make static: every program, each one ELF file with no interpreter and no shared library" {
	require_static
	require_cmd readelf
	for p in $(programs); do
		[ -x "$STATIC/$p" ] || fail "no $STATIC/$p"
		run -0 readelf -lW "$STATIC/$p"
		refute_output --partial "INTERP"
		run -0 readelf -d "$STATIC/$p"
		assert_line "There is no dynamic section in this file."
	done
}

@test "in an empty chroot: every program's --help and --version, byte for byte the dynamic build's" {
	make_root
	for p in $(programs); do
		"$LP_BUILD/bin/$p" --help >"$T/help.want"
		"$IN_CHROOT" "$ROOT" "/$p" --help >"$T/help.got"
		cmp "$T/help.want" "$T/help.got"
		run -0 "$IN_CHROOT" "$ROOT" "/$p" --version
		assert_output "$("$LP_BUILD/bin/$p" --version)"
	done
	# The chroot sees none of our files: the workloads are not there.
	run -1 --separate-stderr "$IN_CHROOT" "$ROOT" /lp-cat "$WORKLOADS/cpusplit"
	[ "$stderr" = "lp-cat: $WORKLOADS/cpusplit: No such file or directory" ]
}

@test "in an empty chroot: lp-record samples a process outside it, a() 25% / b() 75%, its frames named as from outside" {
	make_root
	# The same workload recorded from outside by the dynamic build: the
	# stacks' frames, libc's included, to compare names with.
	lp-record -F 999 --call-graph fp -o "$T/host.lp" -- "$WORKLOADS/cpusplit" 30 0.5 2>/dev/null
	"$WORKLOADS/cpusplit" 30 2 &
	local target=$!
	KILL_AFTER=$target
	wait_exec "$target" "$WORKLOADS/cpusplit"
	"$IN_CHROOT" "$ROOT" /lp-record -F 999 --call-graph fp -p "$target" >"$T/r.lp" 2>"$T/r.err"
	reap "$target" 0 30
	run -0 cat "$T/r.err"
	assert_line --index 0 --regexp "^lp-record: [0-9]+ samples \(cpu-clock at 999 Hz, fp\), 0 lost \(ring full\), .*; 1 processes, [0-9]+ modules symbolized \(target exited\)$"
	run -0 lp-cat --check "$T/r.lp"
	n=$(nsamples "$T/r.lp")
	[ "$n" -ge 800 ]
	lp-collapse "$T/r.lp" >"$T/r.folded"
	s=$(share_a "$T/r.folded")
	echo "share of a: $s% of $n samples"
	near_25 "$s"
	# Named by the target's own paths, not the /proc/PID/root ones lp
	# opened them by; kernel frames from /proc/kallsyms.
	grep -q $'\tu\t-\t'"$WORKLOADS/cpusplit"$'\tb\t' "$T/r.lp"
	run -1 grep -c '/proc/[0-9]*/root' "$T/r.lp"
	grep -qE $'^frame\t[0-9a-f]{16}\tk\t-\t\\[kernel.kallsyms\\]\t[a-z_]' "$T/r.lp"
	# Below main, the frames a recording from outside names: one caller
	# (frame pointers end in libc, which keeps none), which libc's debug
	# file names when the host has one (libc6-dbg: __libc_start_call_main,
	# found in the target's tree), else libc.so.6+OFFSET.
	lp-collapse "$T/host.lp" >"$T/host.folded"
	for f in host r; do
		awk '{ sub(/ [0-9]+$/, "") } /;main;[ab];spin$/ { sub(/;[ab];spin$/, ""); print }' \
			"$T/$f.folded" | sort -u >"$T/$f.below"
	done
	run -0 cat "$T/r.below"
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp '^cpusplit;(.*;)?main$'
	assert_output "$(cat "$T/host.below")"
}

@test "in an empty chroot: lp-trace traces a process outside it: 200 spans of nap, exact arguments, returns and nesting" {
	make_root
	# sleeper waits for $T/go before its calls: the tracer attaches first.
	"$WORKLOADS/sleeper" 200 "$T/go" >"$T/sleeper.out" &
	local target=$!
	wait_exec "$target" "$WORKLOADS/sleeper"
	"$IN_CHROOT" "$ROOT" /lp-trace 'nap(i,usec)' -p "$target" >"$T/s.lp" 2>"$T/s.err" &
	local tracer=$!
	KILL_AFTER="$target $tracer"
	wait_recording "$T/s.lp" || { cat "$T/s.err"; false; }
	# the uprobe and uretprobe of nap, and the fork and exit tracepoints
	links=$(wait_links "$tracer" 4)
	[ "$(wc -w <<<"$links")" -eq 4 ]
	touch "$T/go"
	reap "$target" 0 30
	reap "$tracer" 0 30
	run -0 cat "$T/sleeper.out"
	assert_output "39800"
	run -0 cat "$T/s.err"
	assert_output ""
	run -0 lp-cat --check "$T/s.lp"
	[ "$(grep -c '^span' "$T/s.lp")" -eq 200 ]
	# every i once, depth 0, usec 1000 / 3000 by parity, ret = 2 * i,
	# none shorter than its sleep
	run -0 awk -F'\t' '$1 == "span" {
		split($8, a, "="); split($9, b, "="); split($10, r, "=")
		i = a[2] + 0; seen[i]++
		if ($6 != "nap" || $4 != P || b[2] != (i % 2 ? 3000 : 1000) || r[2] != 2 * i || $7 != 0) bad++
		if ($3 - $2 < b[2] * 1000) short++
	} END { for (i = 0; i < 200; i++) if (seen[i] != 1) bad++; print bad + 0, short + 0 }' P="$target" "$T/s.lp"
	assert_output "0 0"
}

@test "in an empty chroot: lp-trace finds a libc function only its debug file names, in the target's tree" {
	make_root
	# __GI___clock_nanosleep, glibc's internal name of the call nanosleep
	# makes, is in the .symtab of libc's debug file alone (libc6-dbg),
	# under /usr/lib/debug/.build-id of the host: the target's tree, not
	# the chroot's.
	libc=$(awk '$NF ~ /\/libc\.so\.6$/ { print $NF; exit }' "/proc/$$/maps")
	id=$(readelf -n "$libc" | awk '/Build ID:/ { print $3 }')
	if [ ! -r "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]; then
		if [ "${CI:-}" = true ]; then fail "no debug file of $libc under CI=true (libc6-dbg)"; fi
		skip "no debug file of $libc: install libc6-dbg"
	fi
	"$WORKLOADS/sleeper" 200 "$T/go" >/dev/null &
	local target=$!
	wait_exec "$target" "$WORKLOADS/sleeper"
	"$IN_CHROOT" "$ROOT" /lp-trace nap 'libc:__GI___clock_nanosleep' -p "$target" >"$T/c.lp" 2>"$T/c.err" &
	local tracer=$!
	KILL_AFTER="$target $tracer"
	wait_recording "$T/c.lp" || { cat "$T/c.err"; false; }
	touch "$T/go"
	reap "$target" 0 30
	reap "$tracer" 0 30
	run -0 cat "$T/c.err"
	assert_output ""
	# one call inside each of the 200 naps (those of the wait for
	# $T/go are outside them)
	run -0 awk -F'\t' '$1 == "span" && $6 == "nap" { s[++n] = $2; e[n] = $3 }
		$1 == "span" && $6 == "libc:__GI___clock_nanosleep" { c[++m] = $2; d[m] = $3 }
		END { for (i = 1; i <= n; i++) { k = 0
			for (j = 1; j <= m; j++) if (s[i] <= c[j] && d[j] <= e[i]) k++
			if (k != 1) bad++ }
		print n + 0, bad + 0 }' "$T/c.lp"
	assert_output "200 0"
}
