# pyswallow.py - exceptions C code swallows, for lp-trace's python: probes
# (tests/lp-trace-python.bats): N calls of hasattr on a property whose
# getter, Thing.missing, raises AttributeError, which hasattr (C) clears;
# 1 ms apart.  Each call's frame is at the same address (the same caller,
# the same depth): a span per call is a span per frame that started there,
# though none returned.
#
# usage: python3 pyswallow.py N
import sys
import time


class Thing:
    @property
    def missing(self):
        raise AttributeError("missing")


def probe(t):
    return hasattr(t, "missing")


def main():
    n = int(sys.argv[1])
    t = Thing()
    for _ in range(n):
        probe(t)
        time.sleep(0.001)
    print("calls=%d" % n)


main()
