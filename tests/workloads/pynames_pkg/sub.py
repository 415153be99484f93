# pynames_pkg.sub - a package's module's work, for pynames.py.
def work(i):
    return i * 4
