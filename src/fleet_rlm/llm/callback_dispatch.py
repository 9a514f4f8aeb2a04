"""DSPy's callback handler choice, made once per class and method.

With any callback active, DSPy 3.4 wraps every module, adapter, LM, tool and interpreter call, and for every
callback it picks the handler to run (`on_module_start`, `on_lm_end`, ...) by walking an `isinstance` chain
twice a call, once to start and once to end. One link is the runtime-checkable `CodeInterpreter` Protocol,
whose check looks up each of its members on the instance: ~10-14 us a choice, ~5% of a turn worker's GIL time
in a 5-iteration RLM turn (py-spy, docs/performance.md), since our event callback is active for every call of
a turn (runtime/callbacks.py).

The choice depends on the instance's class and the method's name, so it is made once per (class, method, phase)
by DSPy's own function, asked with a probe callback that answers each handler's name. Two things are never
kept: an instance that says `supports_decision_requests` itself (DSPy treats it as an LM whatever its class),
and a choice DSPy refuses (an adapter method it has no handler for: DSPy raises, as before). The memo assumes
that all instances of a class agree on the `CodeInterpreter` Protocol, as they do when its members are defined
on the class or set by its `__init__`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from dspy.utils import callback as dspy_callback

MAX_ENTRIES = 1024
"""(class, method, phase) choices kept; a program that makes classes per call stops adding, never grows."""

_start_handler = dspy_callback._get_on_start_handler
_end_handler = dspy_callback._get_on_end_handler


class _Probe:
    """A callback whose every attribute is its own name: DSPy's chooser then returns the handler's name."""

    def __getattr__(self, name: str) -> str:
        return name


_PROBE = _Probe()
_names: dict[tuple[type, str, bool], str] = {}
_lock = threading.Lock()


def _handler_name(instance: Any, fn: Callable[..., Any], start: bool) -> str | None:
    if getattr(instance, "supports_decision_requests", False) is True:
        return None  # DSPy decides this one per instance
    key = (type(instance), fn.__name__, start)
    name = _names.get(key)
    if name is None:
        name = (_start_handler if start else _end_handler)(_PROBE, instance, fn)  # raises as DSPy does
        if not isinstance(name, str):  # pragma: no cover - a DSPy that chooses differently: do not keep
            return None
        with _lock:
            if len(_names) < MAX_ENTRIES:
                _names[key] = name
    return name


def on_start_handler(callback: Any, instance: Any, fn: Callable[..., Any]) -> Callable[..., Any]:
    """DSPy's `_get_on_start_handler`, answered from the memo."""
    name = _handler_name(instance, fn, True)
    if name is None:
        return _start_handler(callback, instance, fn)
    handler: Callable[..., Any] = getattr(callback, name)
    return handler


def on_end_handler(callback: Any, instance: Any, fn: Callable[..., Any]) -> Callable[..., Any]:
    """DSPy's `_get_on_end_handler`, answered from the memo."""
    name = _handler_name(instance, fn, False)
    if name is None:
        return _end_handler(callback, instance, fn)
    handler: Callable[..., Any] = getattr(callback, name)
    return handler


def install() -> None:
    """Point DSPy's callback wrappers at the memo (idempotent; a DSPy that moved the names is left alone)."""
    if getattr(dspy_callback, "_get_on_start_handler", None) is _start_handler:
        dspy_callback._get_on_start_handler = on_start_handler
    if getattr(dspy_callback, "_get_on_end_handler", None) is _end_handler:
        dspy_callback._get_on_end_handler = on_end_handler
