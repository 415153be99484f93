# Shared setup for every .bats file: hermetic environment, the fresh build
# first on PATH, and the guards for privileged tests.
bats_require_minimum_version 1.5.0
export LC_ALL=C TZ=UTC DEBUGINFOD_URLS=
LP_TOP=${LP_TOP:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)}
LP_BUILD=${LP_BUILD:-$LP_TOP/build}
CORPUS=${CORPUS:-$LP_TOP/../shared/corpus}
SHARED_TOOLS=${SHARED_TOOLS:-$LP_TOP/../shared/tools}
WORKLOADS=$LP_BUILD/tests/workloads
FIXTURES=$LP_TOP/tests/fixtures
PATH=$LP_BUILD/bin:$PATH

load_bats_libs() {
	load /usr/lib/bats/bats-support/load
	load /usr/lib/bats/bats-assert/load
}

# Every test file's setup and teardown unless it has its own: bats'
# assertion libraries; $T, the test's temporary folder (bats removes it);
# and what a test left running, its pids in $KILL_AFTER, killed.  A file's
# own setup sets T the same way, or says why it cannot.
setup() {
	load_bats_libs
	T=$BATS_TEST_TMPDIR
}

teardown() {
	kill_after
}

kill_after() {
	for p in ${KILL_AFTER:-}; do kill -KILL "$p" 2>/dev/null || true; done
}

# within V LO HI WHAT: between, failing the test with what V was (WHAT);
# "none", a figure that could not be taken, is never within.
within() {
	if [ "$1" = none ] || ! between "$1" "$2" "$3" >/dev/null; then
		fail "$4: $1, not within [$2, $3]"
	fi
}

# A TCP port free on 127.0.0.1 now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The programs, by their sources.
programs() {
	for f in "$LP_TOP"/bin/lp-*.c; do basename "$f" .c; done
}

# between V LO HI: V is a number within [LO, HI]; else says so and fails.
between() {
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v + 0 >= lo && v + 0 <= hi) }' ||
		{ echo "${1:-(none)} not in [$2, $3]"; return 1; }
}

# Privileged tests: under CI=true they must run (and fail if they cannot);
# elsewhere they skip, saying why.
require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		if [ "${CI:-}" = true ]; then
			echo "privileged test cannot run: not root under CI=true" >&2
			return 1
		fi
		skip "needs root (or CAP_BPF and CAP_PERFMON)"
	fi
}

# make sanitize runs the suite against ASan, UBSan and TSan builds
# (LP_SANITIZER is asan or tsan): figures of memory and speed there are the
# sanitizer's, not the program's.
under_sanitizer() {
	[ -n "${LP_SAN_LOGS:-}" ]
}

require_cmd() {
	if ! command -v "$1" >/dev/null 2>&1; then
		if [ "${CI:-}" = true ]; then
			echo "required command '$1' missing under CI=true" >&2
			return 1
		fi
		skip "$1 is not installed"
	fi
}

# require_corpus: the peers' corpus and tools (FlameGraph's, inferno's and
# speedscope's cases, in ../shared beside the checkout), or a skip saying
# they are not there (a clone of lp alone); under CI=true, which has them,
# their absence fails.
require_corpus() {
	if [ -e "$CORPUS/cases.tsv" ] && [ -d "$SHARED_TOOLS" ]; then return 0; fi
	if [ "${CI:-}" = true ]; then
		echo "no corpus at $CORPUS (or tools at $SHARED_TOOLS) under CI=true" >&2
		return 1
	fi
	skip "the peers' corpus is not here ($CORPUS): a clone of lp alone has no ../shared"
}

# reap PID STATUS [SECONDS]: waits for a background child and checks how it
# ended (143: a SIGTERM it does not catch, 137: SIGKILL, 130: SIGINT).
# `wait PID || true` would pass a child that crashed or exited early.  With
# SECONDS, a child still running then is killed and the check fails: a hang
# is a failure, not a stuck suite.
reap() {
	local rc=0 i
	if [ -n "${3:-}" ]; then
		for ((i = 0; i < $3 * 20; i++)); do
			kill -0 "$1" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$1" 2>/dev/null; then
			kill -KILL "$1" 2>/dev/null || true
			wait "$1" 2>/dev/null || rc=$?
			echo "process $1 still running after $3 s"
			return 1
		fi
	fi
	wait "$1" || rc=$?
	[ "$rc" -eq "$2" ] || { echo "process $1 exited $rc, not $2"; return 1; }
}

# An lp stream of N samples, one every STEP ns (default 100 ms) from 1 s,
# of comm COMM (default x), in main;a or main;b: the first half in a and the
# second in b, or with SPLIT "quarters" every fourth sample in b.
ab_stream() {
	awk -v N="$1" -v STEP="${2:-100000000}" -v COMM="${3:-x}" -v SPLIT="${4:-half}" '
	BEGIN { OFS = "\t"
		print "lp-stream", 1, "clock=monotonic"
		print "frame", "0000000000000001", "u", "-", "-", "main", "-"
		print "frame", "0000000000000002", "u", "-", "-", "a", "-"
		print "frame", "0000000000000003", "u", "-", "-", "b", "-"
		print "stack", "000000000000000a", "0000000000000001,0000000000000002"
		print "stack", "000000000000000b", "0000000000000001,0000000000000003"
		for (i = 0; i < N; i++) {
			b = SPLIT == "quarters" ? i % 4 == 0 : i >= N / 2
			printf "sample\t%.0f\t7\t7\t0\t%s\tcpu-clock\t1\t%s\n",
				1000000000 + i * STEP, COMM, b ? "000000000000000b" : "000000000000000a"
		} }'
}

# stripped_with_debuglink DIR: tests/workloads/lines copied to DIR/lines,
# stripped, its DWARF in DIR/.debug/lines.debug named by .gnu_debuglink
# (where gdb and lp look for it).
stripped_with_debuglink() {
	require_cmd objcopy
	mkdir "$1" "$1/.debug"
	cp "$WORKLOADS/lines" "$1/lines"
	objcopy --only-keep-debug "$1/lines" "$1/.debug/lines.debug"
	strip "$1/lines"
	objcopy --add-gnu-debuglink="$1/.debug/lines.debug" "$1/lines"
}

# Tests as an ordinary user (lp-record's perf-event backend): a uid and gid
# of their own that no account needs (setpriv takes numbers), so that a
# fresh machine runs these tests as root without creating anyone; nothing
# else on the machine runs as it.  LP_TEST_UID overrides it.
LP_TEST_UID=${LP_TEST_UID:-64923}
require_user() {
	require_root
	require_cmd setpriv
}

# as_user CMD [ARG...]: CMD as LP_TEST_UID, no capability, no group of
# root's.  What it runs must be readable by that user (user_copy).
as_user() {
	setpriv --reuid="$LP_TEST_UID" --regid="$LP_TEST_UID" --clear-groups \
		--inh-caps=-all --bounding-set=-all "$@"
}

# user_copy DIR FILE...: FILEs (programs of the build) copied into DIR,
# which the ordinary user may read and run, and write in.
user_copy() {
	local dir=$1
	shift
	mkdir -p "$dir"
	cp "$@" "$dir/"
	chmod 755 "$(dirname "$dir")"
	chmod 777 "$dir"
}

# A process started with & runs bash until it has exec'd: wait (up to 5 s)
# until pid $1 runs program $2 (any path to it).
wait_exec() {
	local want
	want=$(readlink -f "$2")
	for _ in $(seq 100); do
		if [ "$(readlink "/proc/$1/exe")" = "$want" ]; then return 0; fi
		sleep 0.05
	done
	return 1
}
