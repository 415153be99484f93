# pynames.py - Python functions for lp-trace's python:[MODULE:]NAME
# (tests/lp-trace-python.bats), every call counted by construction: one
# name, work, defined in five modules; names of each kind of str CPython
# keeps (latin-1, UCS-2, UCS-4); qualified names of 150 and 604
# characters.  For i = 0..N-1, in order on one thread:
#
#   work (this file)               every i       N
#   pynames_other.work             i % 2 == 0    N/2
#   pynames_pkg.work (__init__.py) i % 5 == 0    N/5
#   pynames_pkg.sub.work           i % 10 == 0   N/10
#   work of code compiled as "pynames_rel.py" (a relative file name)
#                                  i % 20 == 0   N/20
#   posixpath.relpath (3.11 has it frozen: "<frozen posixpath>")
#                                  i % 4 == 0    N/4
#   café (latin-1)                 every i       N
#   ελέγχω (UCS-2)                 i % 2 == 0    N/2
#   𠮷 (U+20BB7, UCS-4)            i % 4 == 0    N/4
#   L150.run (150 characters)      i % 5 == 0    N/5
#   L604.run (604 characters)      i % 10 == 0   N/10
#
# (L150 and L604 stand for classes named "L" and "x"s.)  N a multiple of
# 20; it prints what it did.
#
# usage: python3.11 -B pynames.py N
import posixpath
import sys

import pynames_other
import pynames_pkg
import pynames_pkg.sub


def work(i):
    return i


rel = {}
exec(compile("def work(i):\n    return i - 1\n", "pynames_rel.py", "exec"), rel)


def café(i):
    return i + 1


def ελέγχω(i):
    return i + 2


def 𠮷(i):
    return i + 3


# Classes whose methods' qualified names are 150 and 604 characters long
# (compiled as this file's, from line 1).
for n, add in ((146, 4), (600, 5)):
    exec(compile("class L%s:\n    def run(self, i):\n        return i + %d\n" % ("x" * (n - 1), add),
                 __file__, "exec"))
L150, L604 = globals()["L" + "x" * 145], globals()["L" + "x" * 599]


def main():
    n = int(sys.argv[1])
    short, long = L150(), L604()
    for i in range(n):
        work(i)
        if i % 2 == 0:
            pynames_other.work(i)
            ελέγχω(i)
        if i % 5 == 0:
            pynames_pkg.work(i)
            short.run(i)
        if i % 10 == 0:
            pynames_pkg.sub.work(i)
            long.run(i)
        if i % 20 == 0:
            rel["work"](i)
        if i % 4 == 0:
            posixpath.relpath("/a/b", "/a")
            𠮷(i)
        café(i)
    print("calls=%d qualnames=%d,%d" % (n, len(L150.run.__qualname__), len(L604.run.__qualname__)))


main()
