"""Durable REPL state: the user's variables as data, and back. Standard library only (shipped with worker.py).

A value is kept when it is built only of exact builtin types (`type(v) is list`, never a subclass, so no guest
method runs while it is encoded): None, bool, int, float, complex, str, bytes, bytearray, list, tuple, dict,
set, frozenset, and modules (kept by name, imported again on restore). It is encoded as one JSON text in which
arrays are lists and every object is a one-key tag: {"o": {str: v}} a dict with str keys, {"d": [[k, v], ...]}
any other dict, {"t": [...]} tuple, {"s": [...]} set, {"fs": [...]} frozenset, {"b": "<base64>"} bytes,
{"ba": "<base64>"} bytearray, {"f": "nan"|"inf"|"-inf"} a float JSON cannot hold, {"c": [re, im]} complex,
{"m": "name"} a module. Decoding builds only those types: nothing is imported, called or evaluated (a module
tag becomes an import in the guest's own restore, never on the host).

Bounds (the same on both sides): a value nests at most MAX_DEPTH deep (a cycle is reported as too deep),
holds at most MAX_ITEMS values and encodes to at most MAX_VALUE_CHARS; anything past them is named with its
reason instead of kept. The host re-checks every text it receives (sandbox/repl_state.py): the guest writes it.
"""

import binascii as _b64

try:
    import worker_json as _codec  # in the sandbox: the sibling module (worker.py loads this one next to it)
except ImportError:
    from fleet_rlm.sandbox import worker_json as _codec

MAX_DEPTH = 32
MAX_ITEMS = 200_000
MAX_VALUE_CHARS = 4 * 1024 * 1024
MAX_NAMES = 200

_TYPE_NAME = type.__dict__["__name__"].__get__
_FLOATS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}
_MODULE = type(_b64)
_DUMPS, _LOADS = _codec.dumps, _codec.loads  # bound now: a cell rebinding the module's names changes nothing


class Unsupported(Exception):
    """A value that cannot be kept; the message says why (shown to the user)."""


class _Budget:
    def __init__(self):
        self.items = 0
        self.chars = 0

    def spend(self, items, chars=0):
        self.items += items
        self.chars += chars
        if self.items > MAX_ITEMS:
            raise Unsupported(f"holds more than {MAX_ITEMS} values")
        if self.chars > MAX_VALUE_CHARS:
            raise Unsupported(f"larger than {MAX_VALUE_CHARS // (1024 * 1024)} MiB")


def encode(value):
    """The JSON text of `value`; raises Unsupported (with the reason) for anything that cannot be kept."""
    tree = _tree(value, _Budget(), 0)
    try:
        text = _DUMPS(tree, compact=True, allow_nan=False)
    except ValueError as exc:  # an int past the digit limit of int -> str
        raise Unsupported(f"cannot be written as data ({exc})") from None
    if len(text) > MAX_VALUE_CHARS:
        raise Unsupported(f"larger than {MAX_VALUE_CHARS // (1024 * 1024)} MiB")
    return text


def _tree(value, budget, depth):
    kind = type(value)
    if depth > MAX_DEPTH:
        raise Unsupported(f"nests deeper than {MAX_DEPTH} (or refers to itself)")
    if value is None or kind is bool or kind is int:
        budget.spend(1, 8)
        return value
    if kind is float:
        budget.spend(1, 8)
        if value != value:
            return {"f": "nan"}
        if value in (float("inf"), float("-inf")):
            return {"f": "inf" if value > 0 else "-inf"}
        return value
    if kind is str:
        budget.spend(1, len(value))
        return value
    if kind is bytes or kind is bytearray:
        budget.spend(1, (len(value) * 4 + 2) // 3)
        return {"b" if kind is bytes else "ba": _b64.b2a_base64(value, newline=False).decode("ascii")}
    if kind is complex:
        budget.spend(1, 16)
        return {"c": [_tree(value.real, budget, depth + 1), _tree(value.imag, budget, depth + 1)]}
    if kind is list or kind is tuple or kind is set or kind is frozenset:
        budget.spend(1 + len(value))
        items = [_tree(item, budget, depth + 1) for item in value]
        return items if kind is list else {"t" if kind is tuple else "s" if kind is set else "fs": items}
    if kind is dict:
        budget.spend(1 + 2 * len(value))
        if all(type(key) is str for key in value):
            return {"o": {key: _tree(item, budget, depth + 1) for key, item in value.items()}}
        return {"d": [[_tree(k, budget, depth + 1), _tree(v, budget, depth + 1)] for k, v in value.items()]}
    if kind is _MODULE:
        name = value.__dict__.get("__name__")
        if type(name) is str and name:
            return {"m": name}
    raise Unsupported(f"type {_TYPE_NAME(kind)} is not plain data")


def decode(text, import_module=None):
    """The value of an encoded text. Only the types listed above are built; `import_module(name)` resolves a
    module tag (the guest passes one; without it a module is refused). Raises ValueError for anything else."""
    if type(text) is not str or len(text) > MAX_VALUE_CHARS:
        raise ValueError("not a snapshot value of an allowed size")
    try:
        raw = _LOADS(text)
    except RecursionError:
        raise ValueError("nests too deep") from None
    return _value(raw, _Budget(), 0, import_module)


def _value(raw, budget, depth, import_module):
    if depth > MAX_DEPTH:
        raise ValueError(f"nests deeper than {MAX_DEPTH}")
    kind = type(raw)
    if raw is None or kind is bool or kind is int or kind is float or kind is str:
        budget.spend(1)
        return raw
    if kind is list:
        budget.spend(1 + len(raw))
        return [_value(item, budget, depth + 1, import_module) for item in raw]
    if kind is not dict or len(raw) != 1:
        raise ValueError("an object must be one tag")
    ((tag, inner),) = raw.items()
    budget.spend(1)
    if tag == "o" and type(inner) is dict:
        budget.spend(2 * len(inner))
        return {key: _value(item, budget, depth + 1, import_module) for key, item in inner.items()}
    if tag == "d" and type(inner) is list:
        out = {}
        for pair in inner:
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("a dict entry must be [key, value]")
            key = _value(pair[0], budget, depth + 1, import_module)
            try:
                out[key] = _value(pair[1], budget, depth + 1, import_module)
            except TypeError:
                raise ValueError("a dict key is not hashable") from None
        return out
    if tag in ("t", "s", "fs") and type(inner) is list:
        items = [_value(item, budget, depth + 1, import_module) for item in inner]
        try:
            return tuple(items) if tag == "t" else set(items) if tag == "s" else frozenset(items)
        except TypeError:
            raise ValueError("a set member is not hashable") from None
    if tag in ("b", "ba") and type(inner) is str:
        budget.spend(0, len(inner))
        try:
            data = _b64.a2b_base64(inner, strict_mode=True)
        except (ValueError, TypeError):
            raise ValueError("bad base64") from None
        return data if tag == "b" else bytearray(data)
    if tag == "f" and inner in _FLOATS:
        return _FLOATS[inner]
    if tag == "c" and type(inner) is list and len(inner) == 2 and all(type(x) in (int, float) for x in inner):
        return complex(inner[0], inner[1])
    if tag == "m" and type(inner) is str and import_module is not None:
        return import_module(inner)
    raise ValueError(f"unknown tag {str(tag)[:20]!r}")


def capture(namespace, hidden, previous):
    """This cell's snapshot against `previous` (name -> text sent before, updated in place): the texts of the
    names that changed, the names kept as they were, and the names not kept with why. Never raises."""
    changed, kept, skipped = {}, [], {}
    try:
        items = list(namespace.items())
    except Exception:
        return {"changed": {}, "kept": [], "skipped": {"*": "the namespace could not be read"}}
    seen: set = set()
    for name, value in items:
        if type(name) is not str or name.startswith("_") or name in hidden:
            continue
        if len(seen) >= MAX_NAMES:
            skipped["*"] = f"more than {MAX_NAMES} variables: the rest are not kept"
            break
        seen.add(name)
        try:
            text = encode(value)
        except Unsupported as exc:
            skipped[name] = str(exc)
            continue
        except BaseException as exc:  # a MemoryError, a guest thread resizing a container mid-walk
            skipped[name] = f"could not be read ({_TYPE_NAME(type(exc))})"
            continue
        if previous.get(name) == text:
            kept.append(name)
        else:
            changed[name] = previous[name] = text
    for name in [n for n in previous if n not in seen or n in skipped]:
        del previous[name]
    return {"changed": changed, "kept": kept, "skipped": skipped}


def restore(namespace, texts):
    """Load `texts` (name -> encoded value) into `namespace`; returns (restored names, {name: why not})."""
    done, failed = [], {}

    def import_module(name):
        __import__(name)
        import sys

        return sys.modules[name]

    for name, text in texts.items():
        if type(name) is not str or not name.isidentifier():
            continue
        try:
            namespace[name] = decode(text, import_module)
            done.append(name)
        except BaseException as exc:  # a module that no longer imports, a bad text
            failed[name] = f"{_TYPE_NAME(type(exc))}: {str(exc)[:200]}"
    return done, failed
