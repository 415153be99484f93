# pyenv.bash - CPythons other than Debian's, for the python tests.
#
# pyenv's builds (a libpython each, no USDT probes): 3.11 as a build
# unlike Debian's; 3.12 has no is_entry
# but frames of the C stack and the GIL per interpreter; 3.13 tells its
# offsets itself (_Py_DebugOffsets).  $PYTHON3X, else pyenv's.  The
# project installs neither (Debian 12 packages 3.11 alone): machines of
# this kind carry pyenv's builds of each, and there a missing one fails
# under CI=true, as a missing command does; without pyenv at all the test
# is skipped, saying so.
require_pyenv() {
	local var=PYTHON${1/./}
	PYX=${!var:-$(ls -d /root/.pyenv/versions/"$1".*/bin/python"$1" 2>/dev/null | tail -1)}
	if [ ! -x "$PYX" ]; then
		if [ "${CI:-}" = true ] && [ -d /root/.pyenv/versions ]; then
			echo "no CPython $1 ($var, or pyenv's) under CI=true" >&2
			return 1
		fi
		skip "no CPython $1 ($var, or pyenv's)"
	fi
}
