"""Cell tracebacks for the model: each cell's source kept for `linecache`, frames of the worker dropped.

Stdlib only; shipped beside worker.py. `traceback` and `linecache` load only when a first error happens.
"""

import sys

CELL_PREFIX = "<cell "
"""Every cell's code object is compiled with the file name `<cell N>`."""


def safe_repr(value):
    try:
        text = repr(value)
    except Exception as exc:
        text = f"<unrepresentable {type(value).__name__}: {exc}>"
    return text if len(text) <= 100_000 else text[:100_000] + "..."


def _filter_tb(tbe):
    """Keep only frames of cells (`<cell N>`), so errors point at the model's code, not the worker."""
    from traceback import StackSummary  # loaded by format_exception, its only caller

    seen = set()
    while tbe is not None and id(tbe) not in seen:
        seen.add(id(tbe))
        kept = [f for f in tbe.stack if f.filename.startswith(CELL_PREFIX)]
        tbe.stack = StackSummary.from_list(kept)
        _filter_tb(tbe.__cause__)
        tbe = tbe.__context__


def format_exception(exc):
    import traceback  # a sandbox's first error pays for it (CellSources hands it the cells' sources)

    try:
        tbe = traceback.TracebackException.from_exception(exc)
        _filter_tb(tbe)
        return "".join(tbe.format()).rstrip("\n")
    except Exception:  # a cell broke the `traceback` module (it is shared with the guest): the one-line form
        return f"{type(exc).__name__}: {safe_repr(exc)}"


class CellSources:
    """Each cell's source, for tracebacks, kept until `linecache` exists and then kept there.

    Importing `linecache` costs ~1 ms (it imports `tokenize` and `re`), so the worker does not; the cells wait
    here and a finder copies them in at the moment anything (a traceback, the guest) imports it."""

    def __init__(self):
        self.cells = {}
        sys.meta_path.insert(0, self)

    def add(self, filename, code):
        entry = (len(code), None, code.splitlines(True), filename)  # mtime None: checkcache keeps it
        cache = getattr(sys.modules.get("linecache"), "cache", None)
        (cache if isinstance(cache, dict) else self.cells)[filename] = entry

    def find_spec(self, name, path=None, target=None):
        if name != "linecache" or self not in sys.meta_path:
            return None
        sys.meta_path.remove(self)
        spec = _PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            exec_module, cells = spec.loader.exec_module, self.cells

            def exec_then_add(module):
                exec_module(module)
                module.cache.update(cells)
                cells.clear()

            spec.loader.exec_module = exec_then_add  # type: ignore[method-assign]
        return spec


_PathFinder = next(f for f in sys.meta_path if getattr(f, "__name__", "") == "PathFinder")
