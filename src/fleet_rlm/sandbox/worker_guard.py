"""What keeps guest code away from the worker's own machinery (stdlib only; shipped beside worker.py).

Guest code shares the worker's interpreter. It gets its own copy of the `builtins` module (`guest_builtins`),
and the worker's modules call snapshots of the stdlib modules they use (`own_modules`), so a cell that sets
`builtins.len = None` or `os.write = None` changes its own view, not the worker's.
"""

import builtins
import sys


def own(module):
    """A snapshot of `module`'s namespace as it is now (the same functions and values, in a module of its own)."""
    copy = type(module)(module.__name__)
    vars(copy).update(vars(module))
    return copy


_SHARED_MODULES = ("sys", "builtins", "__main__", "worker")


def own_modules(namespace):
    """Rebind the stdlib modules a worker module refers to (os, select, _thread, ...) to snapshots: a cell that
    rebinds an attribute of the shared module (`os.write = None`) leaves the worker's calls alone. `sys` stays
    shared (the worker sets its streams for the guest), and so do the worker's own modules."""
    for name, value in list(namespace.items()):
        if type(value) is type(sys) and not value.__name__.startswith(_SHARED_MODULES):
            namespace[name] = own(value)


def guest_builtins():
    """The guest's `builtins`: a copy of the module, imported as `builtins` from now on and used as the cells'
    `__builtins__`. A cell that sets `builtins.len = None` or deletes `builtins.open` changes its own view only:
    the worker's functions, and every module imported before or after, keep the real one."""
    copy = own(builtins)
    sys.modules["builtins"] = copy
    return copy
