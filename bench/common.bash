# Sourced by bench/*.sh: where the build is, and a hermetic environment, so
# each benchmark runs alone as well as from bench/run.
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
top=$(dirname "$here")
O=${O:-build}
case $O in /*) ;; *) O=$top/$O ;; esac
export PATH=$O/bin:$PATH DEBUGINFOD_URLS= LC_ALL=C
W=$O/tests/workloads
