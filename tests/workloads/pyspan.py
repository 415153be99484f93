# pyspan.py - a Python request loop for lp-trace's python: probes
# (tests/lp-trace-python.bats), every call known by construction:
# handle_request(i) for i = 0..N-1, in order on one thread; request i takes
# the slow path when i % EVERY == 3 (EVERY 10 unless given; slow_part: 20 ms
# asleep in "sleep" mode, ten times fast_part's CPU work in "spin" mode).  Each request also calls
# Shop.checkout and Cart.checkout (methods) and the function checkout,
# and every fifth request calls fails, which calls nested (which returns)
# and then raises: the exception is caught in handle_request.  A generator
# runs too, then (sleep mode, after fails) a 10 ms sleep.  It prints what it did; the definitions' lines are the test's
# to grep.  With PYSPAN_TIMES=FILE it writes there how long each request
# took by its own clock, in ns, one a line in order (a sleep the machine
# made longer is longer there too), and how many times the thread was
# preempted meanwhile (ru_nivcsw: a preemption just outside the call is in
# that time, not in the call's).  With PYSPAN_FAILS=FILE it writes there,
# for each call of fails, the monotonic clock (lp's) just before the call
# and once the exception was caught and the generator that follows has
# returned, in ns, a pair a line.
#
# usage: python3.11 pyspan.py N sleep|spin [EVERY]
import os
import resource
import sys
import time

MODE = sys.argv[2]
EVERY = int(sys.argv[3]) if len(sys.argv) > 3 else 10
FAILS = []


def spin(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def fast_part():
    return spin(2000)


def slow_part():
    if MODE == "sleep":
        time.sleep(0.02)
    else:
        spin(20000)


def nested(i):
    return i + 1


def fails(i):
    nested(i)
    raise ValueError(i)


class Shop:
    def checkout(self, i):
        return i * 2


class Cart:
    def checkout(self, i):
        return i * 3


def checkout(i):
    return i * 4


def numbers(n):
    for i in range(n):
        yield i


def handle_request(i, shop, cart):
    fast_part()
    if i % EVERY == 3:
        slow_part()
    shop.checkout(i)
    cart.checkout(i)
    checkout(i)
    if i % 5 == 0:
        t = time.monotonic_ns()
        try:
            fails(i)
        except ValueError:
            pass
    n = sum(numbers(3))
    if i % 5 == 0:
        FAILS.append((t, time.monotonic_ns()))
    if i % 5 == 0 and MODE == "sleep":
        time.sleep(0.01)  # after the generator's return: fails has ended
    return n


def main():
    n = int(sys.argv[1])
    shop, cart = Shop(), Cart()
    times = []
    for i in range(n):
        r = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw
        t = time.monotonic_ns()
        handle_request(i, shop, cart)
        t = time.monotonic_ns() - t
        times.append((t, resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw - r))
    if "PYSPAN_TIMES" in os.environ:
        with open(os.environ["PYSPAN_TIMES"], "w") as f:
            f.write("".join("%d %d\n" % t for t in times))
    if "PYSPAN_FAILS" in os.environ:
        with open(os.environ["PYSPAN_FAILS"], "w") as f:
            f.write("".join("%d %d\n" % t for t in FAILS))
    print("requests=%d slow=%d fails=%d" % (n, sum(1 for i in range(n) if i % EVERY == 3),
                                            sum(1 for i in range(n) if i % 5 == 0)))


main()
