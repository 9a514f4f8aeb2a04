"""Compiled cells, shared by the worker and the host that builds its code directory. Standard library only.

A cell compiles to its body and, when it ends in an expression, that expression on its own (its value is the
cell's result). Compiling is most of what a small cell costs, and dspy.RLM installs the same ~6 KB facade in
every sandbox at every turn (~2 ms to compile on our VMs). So the host compiles the cells it knows every sandbox
runs once, into a seed file of the code directory (worker_code.py), and a worker keeps the large cells it
compiles, bounded, for the next time the same source comes. A compiled cell is reused under the filename of the
cell that runs it, so tracebacks name the right cell. A seed written by another Python build is ignored.
"""

import _ast
import marshal
import os
import sys

SEED_FILE = "cells.marshal"
KEEP_MIN_CHARS = 1024
"""A worker keeps compiled cells at least this long (shorter ones compile in tens of microseconds)."""
KEEP_MAX = 32


def compile_cell(source, filename):
    """(body code, last-expression code or None); raises SyntaxError. Never inherits the caller's __future__
    flags, so the host's compile is the worker's."""
    tree = compile(source, filename, "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
    body = tree.body  # type: ignore[attr-defined]
    last = body.pop() if body and isinstance(body[-1], _ast.Expr) else None
    code = compile(tree, filename, "exec", dont_inherit=True)  # type: ignore[call-overload]
    if last is None:
        return code, None
    return code, compile(_ast.Expression(last.value), filename, "eval", dont_inherit=True)


_CODE = type(compile_cell.__code__)


def retarget(code, filename):
    """`code` as if compiled under `filename`, nested functions and classes included."""
    if code is None or code.co_filename == filename:
        return code
    consts = tuple(retarget(c, filename) if isinstance(c, _CODE) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


class CompiledCells:
    """Source -> compiled cell, seeded from the code directory; large cells join it as they compile."""

    def __init__(self, seed=None):
        self.cells = dict(seed or {})
        self.kept = 0

    def get(self, source, filename):
        """The cell's (body, expression) codes under `filename`; raises SyntaxError."""
        compiled = self.cells.get(source)
        if compiled is None:
            compiled = compile_cell(source, filename)
            if len(source) >= KEEP_MIN_CHARS and self.kept < KEEP_MAX:
                self.cells[source] = compiled
                self.kept += 1
            return compiled
        return retarget(compiled[0], filename), retarget(compiled[1], filename)


def write_seed(path, sources):
    """Compile `sources` into a seed file at `path` for this interpreter (its `sys.version` comes first)."""
    cells = [(source, *compile_cell(source, "<seed>")) for source in sources]
    with open(path, "wb") as out:
        marshal.dump(sys.version, out)
        marshal.dump(cells, out)


def read_seed(directory):
    """The seed in `directory` as {source: (body, expression)}: empty when absent, unreadable or from another
    Python build (its version is read before anything else)."""
    try:
        with open(os.path.join(directory, SEED_FILE), "rb") as seed:
            if marshal.load(seed) != sys.version:
                return {}
            return {source: (code, expr) for source, code, expr in marshal.load(seed)}
    except (OSError, EOFError, ValueError, TypeError):
        return {}
