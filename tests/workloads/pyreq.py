# pyreq.py - a Python request loop whose CPU split is known by construction,
# for lp-record's Python frames (tests/lp-record-python.bats).  One request in
# four also calls slow_part, which does three times the work of fast_part.
# Which ones is spread by a multiplicative hash of the request's number, not
# every fourth: a loop of fixed period sampled at a fixed period aliases (a
# clean-clone run's 4-request cycle took 2.04 ms against 499 Hz's 2.004 ms,
# and sampled slow_part 5.5 points off).  The program times slow_part itself
# with time.thread_time (the thread's CPU clock, which lp-record's samples
# also tick on) and prints its share of the loop's CPU time, and the lines
# the test checks frames against.
#
# The requests are run through map() inside list(): C code calling Python,
# so the stack has two of CPython's interpreter frames, one running
# <module> and main, the other Shop.checkout and below (is_entry).
#
# usage: python3.11 pyreq.py CPU_SECONDS
#
# The loop runs until its thread has had CPU_SECONDS of CPU time, not of
# wall time: on a busy machine it runs longer and is sampled as often (a
# 3 s run beside a CPU-bound job once had 0.7 s of CPU, 341 samples at
# 499 Hz, against the 700 its test needs).
import sys
import time

UNITS = 2000


def spin(n):
    s = 0
    for i in range(n):  # spin-body
        s += i * i % 7  # spin-body
    return s


def fast_part():
    return spin(UNITS)  # fast-call


def slow_part():
    return spin(3 * UNITS)  # slow-call


def is_slow(i):
    # The top two bits of Knuth's 32-bit golden-ratio hash: a quarter of
    # any long run of requests, with no short period.
    return (i * 2654435761) % 4294967296 < 1073741824


class Shop:
    def __init__(self):
        self.slow_ns = 0

    def checkout(self, i):
        fast_part()
        if is_slow(i):
            t = time.thread_time_ns()
            slow_part()
            self.slow_ns += time.thread_time_ns() - t
        return i


def main():
    seconds = float(sys.argv[1])
    shop = Shop()
    start = time.thread_time_ns()
    end = start + seconds * 1e9
    n = 0
    while time.thread_time_ns() < end:
        n += len(list(map(shop.checkout, range(n, n + 20))))
    total = time.thread_time_ns() - start
    lines = {}
    for no, text in enumerate(open(__file__), 1):
        if "# " in text and text.rstrip().endswith(("-body", "-call")):
            lines.setdefault(text.rsplit("# ", 1)[1].strip(), []).append(no)
    print("requests=%d slow_share=%.4f" % (n, shop.slow_ns / total))
    for k in sorted(lines):
        print("%s=%s" % (k, ",".join(map(str, lines[k]))))


main()
