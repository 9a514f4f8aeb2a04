"""REPL state of the sandbox worker: the user-visible globals after each cell, bounded and hostile-safe.

Standard library only, shipped next to `worker.py` (bound, uploaded or baked with it) and loaded from there.
Builtin values (str, bytes, numbers, exact lists/tuples/dicts/sets) are previewed here without calling their
repr, so a 10M-element list costs its first items only. Guest code runs only in `repr()`/`len()` of other
objects, each under a SIGALRM deadline (re-fired until it lands) with every exception caught; the whole
snapshot has its own deadline. A repr stuck in C code cannot be interrupted: the host's cell timeout applies.
"""

import _signal as signal  # the C module: `signal` imports enum (see worker.py's imports)
import time
import types

MAX_NAMES = 50
PREVIEW_CHARS = 120
CALL_S = 0.05  # one repr()/len() of a guest object
TOTAL_S = 0.5  # the whole snapshot
_DEPTH = 3
_SKIP = (
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    type,
    classmethod,
    staticmethod,
)
_SIZED = (str, bytes, bytearray, list, tuple, dict, set, frozenset)
_PLAIN = (bool, int, float, complex, type(None))
_BRACKETS: dict = {list: ("[", "]"), tuple: ("(", ")"), dict: ("{", "}"), set: ("{", "}")}
_BRACKETS[frozenset] = ("frozenset({", "})")
_TYPE_NAME = type.__dict__["__name__"].__get__  # type(v).__name__ without a metaclass's own __name__


class _Deadline(BaseException):
    """Raised into guest code whose repr/len ran past its deadline (BaseException: harder to swallow)."""


class _Alarm:
    """Runs one guest call under a SIGALRM deadline; the guest's own SIGALRM handler and timer are restored."""

    def __init__(self):
        self.armed = False

    def __enter__(self):
        self.old_handler = signal.signal(signal.SIGALRM, self._fire)
        self.old_timer = signal.setitimer(signal.ITIMER_REAL, 0)
        self.started = time.monotonic()
        return self

    def __exit__(self, *exc):
        self.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.old_handler if self.old_handler is not None else signal.SIG_DFL)
        delay, interval = self.old_timer
        if delay > 0:
            left = max(delay - (time.monotonic() - self.started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, left, interval)
        return False

    def _fire(self, signum, frame):
        if self.armed:
            raise _Deadline

    def call(self, fn, value):
        """(True, result) or (False, reason); never raises."""
        try:
            self.armed = True
            signal.setitimer(signal.ITIMER_REAL, CALL_S, 0.01)  # fires again if the guest swallows it
            try:
                return True, fn(value)
            finally:
                self.armed = False
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _Deadline:
            return False, "timed out"
        except BaseException as exc:
            self.armed = False
            return False, _TYPE_NAME(type(exc))


def snapshot(namespace, hidden, inputs=()):
    """The user-visible globals of `namespace` (the last MAX_NAMES in definition order) and how many names
    were left out. `hidden` are the worker's own names; `inputs` are names the host injected."""
    try:
        items = list(namespace.items())  # one atomic copy: guest threads may still be mutating it
    except Exception:
        return [], 0
    shown = [(k, v) for k, v in items if _visible(k, v, hidden)]
    omitted, shown = max(len(shown) - MAX_NAMES, 0), shown[-MAX_NAMES:]
    variables: list = []
    deadline = time.monotonic() + TOTAL_S
    try:
        with _Alarm() as alarm:
            for name, value in shown:
                if time.monotonic() > deadline:
                    omitted += len(shown) - len(variables)
                    break
                entry = describe(value, alarm)
                entry["name"] = name
                if name in inputs:
                    entry["input"] = True
                variables.append(entry)
    except BaseException:
        omitted += len(shown) - len(variables)
    return variables, omitted


def _visible(name, value, hidden):
    if not isinstance(name, str) or name.startswith("_") or name in hidden:
        return False
    return not issubclass(type(value), _SKIP)


def describe(value, alarm):
    """{type, size, preview} of one value; `size` is len() (bytes for bytes-like), None when it has none."""
    kind = type(value)
    entry = {"type": _TYPE_NAME(kind), "size": None}
    if kind in _SIZED:
        entry["size"] = len(value)
    elif kind not in _PLAIN:
        ok, size = alarm.call(len, value)
        entry["size"] = size if ok and type(size) is int and size >= 0 else None
    entry["preview"] = _clip(_preview(value, alarm, _DEPTH))
    return entry


def _clip(text, limit=PREVIEW_CHARS):
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _preview(value, alarm, depth):
    """Builtins rendered here (bounded by PREVIEW_CHARS), anything else through its repr under the alarm."""
    kind, room = type(value), PREVIEW_CHARS + 2
    if kind is str or kind is bytes or kind is bytearray:
        return repr(value[:room]) + ("…" if len(value) > room else "")
    if kind in _PLAIN:
        return _guest_repr(value, alarm)  # huge ints may refuse (ValueError): caught there
    if kind in (list, tuple, set, frozenset, dict):
        if depth == 0:
            return "[…]" if kind is list else "{…}" if kind in (dict, set, frozenset) else "(…)"
        return _container(value, alarm, depth)
    return _guest_repr(value, alarm)


def _container(value, alarm, depth):
    kind = type(value)
    if kind in (set, frozenset) and not value:
        return f"{_TYPE_NAME(kind)}()"
    opening, closing = _BRACKETS[kind]
    parts, used = [], 0
    try:
        pairs = value.items() if kind is dict else ((None, v) for v in value)
        for key, item in pairs:
            if used > PREVIEW_CHARS:
                parts.append("…")
                break
            text = _preview(item, alarm, depth - 1)
            if kind is dict:
                text = f"{_preview(key, alarm, depth - 1)}: {text}"
            parts.append(text)
            used += len(text) + 2
    except Exception:
        parts.append("…")
    trailing = "," if kind is tuple and len(parts) == 1 and len(value) == 1 else ""
    return f"{opening}{', '.join(parts)}{trailing}{closing}"


def _guest_repr(value, alarm):
    ok, text = alarm.call(repr, value)
    if ok and type(text) is str:
        return text[: PREVIEW_CHARS + 1]
    return f"<{_TYPE_NAME(type(value))}: repr {text if not ok else 'not a str'}>"
