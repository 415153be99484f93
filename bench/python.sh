#!/usr/bin/env bash
# What Python frames cost the program lp-record samples: the slowdown of a
# fixed-work CPython 3.11 program (Debian's /usr/bin/python3.11; a request
# loop of nested Python calls) at 99 and 999 Hz, lp-record with its Python
# frames, lp-record --no-python (the interpreter's C frames only) and
# `perf record -g`, on the same program in one run (best of REPS runs; the
# program's own CPU seconds, which sampling interrupts are charged to), and
# the sampling BPF program's time per sample with and without the Python
# walk, and how many samples show the request handler by name.
# Needs root, perf and a build (O=build-NAME).  ROUNDS and REPS scale it.
set -eu
. "$(dirname "$0")/common.bash"
ROUNDS=${ROUNDS:-300000}
REPS=${REPS:-5}
PY=${PY:-/usr/bin/python3.11}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(id -u)" -ne 0 ]; then echo "bench/python.sh: needs root" >&2; exit 1; fi
for c in perf "$PY"; do
	command -v "$c" >/dev/null || { echo "bench/python.sh: $c is missing" >&2; exit 1; }
done
command -v lp-record >/dev/null || { echo "bench/python.sh: build first (make O=...)" >&2; exit 1; }

# Fixed work: ROUNDS requests, each a few levels of Python calls (about
# 30 us a request here); prints its own wall and CPU seconds.
cat >"$tmp/fixed.py" <<'PYEOF'
import sys, time

class Shop:
    def price(self, i):
        return sum(k * k for k in range(i % 40 + 20))

    def checkout(self, i):
        return self.price(i) + self.price(i + 7)

def handle_request(shop, i):
    return shop.checkout(i) % 97

def main(rounds):
    shop = Shop()
    w0, c0 = time.perf_counter(), time.process_time()
    s = 0
    for i in range(rounds):
        s += handle_request(shop, i)
    print("wall_s=%.4f cpu_s=%.4f sum=%d" % (time.perf_counter() - w0, time.process_time() - c0, s),
          file=sys.stderr)

main(int(sys.argv[1]))
PYEOF

# One run of "$@" (a recorder around the program, or nothing): its wall
# and CPU seconds.
once() {
	"$@" "$PY" "$tmp/fixed.py" "$ROUNDS" 2>&1 >/dev/null | grep -o 'wall_s=[0-9.]* cpu_s=[0-9.]*' |
		sed 's/wall_s=//; s/cpu_s=//'
}

none() { "$@"; }
lp_python() { lp-record -F "$F" -o "$tmp/lp.lp" -- "$@"; }
lp_no_python() { lp-record -F "$F" --no-python -o "$tmp/lp.lp" -- "$@"; }
perf_fp() { perf record -q -F "$F" -g -o "$tmp/perf.data" -- "$@"; }

echo "# 1. target slowdown: $PY, $ROUNDS requests, best of $REPS rounds, the recorders in turn within"
echo "#    each round (wall s / cpu s; slowdown in CPU time; runs differ by 10-15% with the layout)"
configs="none"
for F in ${FREQS:-99 999}; do
	for r in lp_python lp_no_python perf_fp; do configs="$configs $F:$r"; done
done
for rep in $(seq "$REPS"); do
	for c in $configs; do
		F=${c%%:*} r=${c#*:}
		[ "$c" = none ] && F=- r=none
		echo "$F $r $(once "$r")"
	done
done >"$tmp/runs"
awk '{ k = $1 " " $2; if (!(k in c) || $4 < c[k]) { c[k] = $4; w[k] = $3 } if (!(k in o)) o[k] = ++n; key[o[k]] = k }
	END { b = c["- none"]; printf "%-8s %-22s %s\n", "Hz", "recorder", "wall_s cpu_s slowdown"
		for (i = 1; i <= n; i++) { k = key[i]; split(k, p, " ")
			printf "%-8s %-22s %s %s %+.1f%%\n", p[1], p[2], w[k], c[k], 100 * (c[k] - b) / b } }' "$tmp/runs"

echo "# 2. the sampling program's own time per sample on the Python target, with and without the"
echo "#    Python walk (kernel.bpf_stats_enabled; lp-record's cost record is calibrated on a C thread)"
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
for r in lp_python lp_no_python; do
	flag=; [ "$r" = lp_no_python ] && flag=--no-python
	lp-record -F 999 $flag -o /dev/null -- "$PY" "$tmp/fixed.py" "$ROUNDS" 2>/dev/null & rec=$!
	sleep 1
	bpftool prog show name lp_rec_sample | awk -v r="$r" '
		/^[0-9]+:/ { id = $1 + 0; for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t[id] = $(i + 1); if ($i == "run_cnt") c[id] = $(i + 1) } if (id > max) max = id }
		END { if (max && c[max]) printf "%-14s %d runs, %.2f us per run\n", r, c[max], t[max] / c[max] / 1000 }'
	wait $rec || true
done
sysctl -qw kernel.bpf_stats_enabled="$old_stats"
echo "# 3. how many samples of the program show Python frames (999 Hz)"
F=999 lp_python "$PY" "$tmp/fixed.py" "$ROUNDS" 2>/dev/null
lp-collapse "$tmp/lp.lp" | awk '{ n = $NF; t += n; if ($0 ~ /handle_request/) p += n; if ($0 ~ /_PyEval_EvalFrameDefault/) e += n }
	END { printf "%d samples: %.1f%% under handle_request, %.1f%% with an interpreter frame left\n", t, 100 * p / t, 100 * e / t }'
