# pysleep.py - a Python request loop whose slow requests sleep longer, for
# lp-record's Python frames off the CPU (tests/lp-record-python.bats): every
# fourth request sleeps 4 ms in slow_wait, the others 1 ms in fast_wait.
# The program times both with the monotonic clock and prints slow_wait's
# share of their wall time, which --mode off and wall weigh in ns.
#
# usage: python3.11 pysleep.py SECONDS
import sys
import time


def slow_wait():
    time.sleep(0.004)


def fast_wait():
    time.sleep(0.001)


class Server:
    def __init__(self):
        self.slow_ns = self.fast_ns = 0

    def handle(self, i):
        t = time.monotonic_ns()
        if i % 4 == 0:
            slow_wait()
            self.slow_ns += time.monotonic_ns() - t
        else:
            fast_wait()
            self.fast_ns += time.monotonic_ns() - t


def main():
    s = Server()
    end = time.monotonic() + float(sys.argv[1])
    i = 0
    while time.monotonic() < end:
        s.handle(i)
        i += 1
    print("requests=%d slow_share=%.4f" % (i, s.slow_ns / (s.slow_ns + s.fast_ns)))


main()
