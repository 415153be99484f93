# pynames_pkg - a package's own work (its __init__.py), for pynames.py.
def work(i):
    return i * 3
