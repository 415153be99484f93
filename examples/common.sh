# examples/common.sh - what examples/demo.sh and examples/dig.sh share,
# sourced after they set NAME (for their messages): the build's programs
# ($O, default build, as $bin), messages, and the checks before a run.
set -u
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
O=${O:-build}
case $O in /*) ;; *) O=$top/$O ;; esac
bin=$O/bin

say() { printf 'lp %s: %s\n' "$NAME" "$*" >&2; }
die() { say "$*"; exit 1; }

# need PROGRAM...: root, the programs built and the demo, else why not.
need() {
	[ "$(id -u)" -eq 0 ] ||
		die "needs root: lp-record and lp-trace load BPF programs and uprobes (run: sudo make $NAME)"
	for p in "$@"; do
		[ -x "$bin/$p" ] || die "$bin/$p is missing: run 'make $NAME', which builds first"
	done
	[ -x "$O/examples/demo" ] || die "$O/examples/demo is missing: run 'make $NAME', which builds first"
}
