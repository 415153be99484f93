# pycalls.py - N calls of an empty Python function after the interpreter's
# start-up, for lp-trace's count of its python: traps
# (tests/lp-trace-python.bats): each call starts and returns once, so N
# more calls are 2N more traps.  It prints the CPU time the process used,
# in ns, start-up included.
#
# usage: python3.11 -B pycalls.py N
import sys
import time


def f():
    pass


def main(n):
    for _ in range(n):
        f()


main(int(sys.argv[1]))
print(time.process_time_ns())
