# pynames_other.py - another module's work, for pynames.py.
def work(i):
    return i * 2
