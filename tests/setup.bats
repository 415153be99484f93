#!/usr/bin/env bats
# What each set-up command installs and builds, read from make's dry runs
# (make -n: nothing is installed, built or fetched): make demo takes only
# the build's packages and plain make builds no test workload (issue 28:
# set-up takes only what it needs); make test, make sanitize and make fuzz
# still take and build what they run.

load helpers/common

setup() {
	B=$BATS_TEST_TMPDIR/build
}

# dry TARGET...: make -n's commands from the source tree into an empty build
# directory, so that every build command shows; outside the make that may
# be running the suite (its MAKEFLAGS, a jobserver among them, would reach it).
dry() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -n -C "$LP_TOP" --no-print-directory \
		O="$B" "$@"
}

# packages: the list of the first package check in $output (the Makefile's
# apt-install), space-separated with a space either side.
packages() {
	printf ' %s \n' "$(sed -n 's/^missing=$(for p in \([^;]*\); do .*/\1/p; T; q' <<<"$output")"
}

# The suite's servers, browser, runtimes and toolchains, and its tools.
HEAVY="chromium nodejs golang-go g++ systemtap-sdt-dev redis-server memcached
	postgresql-15 nginx-light wrk tmux gdb bats libc6-dbg"

@test "setup: make demo installs the build's packages and none of the suite's" {
	run -0 dry demo
	pkgs=$(packages)
	[[ $pkgs == *" clang "* && $pkgs == *" linux-source-6.12 "* ]] ||
		{ echo "make demo's packages: $pkgs"; false; }
	for p in $HEAVY; do
		[[ $pkgs != *" $p "* ]] || { echo "make demo installs $p: $pkgs"; false; }
	done
	grep -qE -- "-o $B/examples/demo( |\$)" <<<"$output"
	[[ $output == *"examples/demo.sh"* ]]
	[[ $output != *"/build/tests/"* ]] || { echo "make demo builds test programs"; false; }
}

@test "setup: make builds the programs and the demo service, no test workload, and needs no sys/sdt.h" {
	run -0 dry all
	for p in "$LP_TOP"/bin/lp-*.c; do
		grep -qE -- "-o $B/bin/$(basename "$p" .c)( |\$)" <<<"$output" || { echo "make does not build $p"; false; }
	done
	grep -qE -- "-o $B/examples/demo( |\$)" <<<"$output"
	[[ $output != *"/build/tests/"* ]] || { echo "make builds test programs"; false; }
	[[ $output != *"sys/sdt.h"* ]] || { echo "make checks for sys/sdt.h"; false; }
	[[ $output != *"go build"* && $output != *"g++ "* ]] || { echo "make runs go or g++"; false; }
}

@test "setup: make test installs the suite's packages and builds its workloads and fuzz targets" {
	run -0 dry test
	pkgs=$(packages)
	for p in $HEAVY clang libclang-rt-14-dev; do
		[[ $pkgs == *" $p "* ]] || { echo "make test does not install $p: $pkgs"; false; }
	done
	for w in workloads/usdtreq workloads/throws workloads/gogrow workloads/cpusplit fuzz/reader fuzz/join; do
		grep -qE -- "-o $B/tests/$w( |\$)" <<<"$output" || { echo "make test does not build $w"; false; }
	done
	[[ $output == *"sys/sdt.h"* ]]
	[[ $output == *"tests/run"* ]]
}

@test "setup: make sanitize builds the workloads into its builds; it and make fuzz install clang's runtimes" {
	run -0 dry sanitize
	[[ $(packages) == *" libclang-rt-14-dev "* ]]
	for b in build-asan build-tsan; do
		for w in workloads/cpusplit fuzz/reader; do
			grep -qE -- "-o $B-${b#build-}/tests/$w( |\$)" <<<"$output" ||
				{ echo "make sanitize does not build $w into $b"; false; }
		done
	done
	run -0 dry fuzz
	pkgs=$(packages)
	[[ $pkgs == *" libclang-rt-14-dev "* && $pkgs != *" chromium "* ]] || { echo "make fuzz's packages: $pkgs"; false; }
}
