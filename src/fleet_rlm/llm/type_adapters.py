"""DSPy's pydantic `TypeAdapter`s, built once per class.

DSPy 3.4's adapters build a fresh `TypeAdapter(type(value))` for every field value they format (every input of
every LM call, every REPL variable preview) and `TypeAdapter(annotation)` for every output they parse. Building
one generates a core schema: ~35 us for a `str`, against ~1 us to use one already built, and ~7% of a turn
worker's GIL time in a 5-iteration RLM turn (py-spy, docs/performance.md). An adapter for a class never changes,
so the ones for classes are kept (a bounded LRU); anything else (`list[str]`, `Literal[...]`, an annotation
that names a forward reference) is built as DSPy builds it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from dspy.adapters import utils
from pydantic import TypeAdapter

MAX_CLASSES = 512
"""Classes whose adapters are kept; a program that makes classes per call evicts the oldest, never grows."""


@lru_cache(maxsize=MAX_CLASSES)
def _for_class(cls: type) -> TypeAdapter[Any]:
    return TypeAdapter(cls)


def type_adapter(tp: Any, *args: Any, **kwargs: Any) -> TypeAdapter[Any]:
    """`TypeAdapter(tp)`, from the memo when `tp` is a class and no options are given."""
    if isinstance(tp, type) and not args and not kwargs:
        return _for_class(tp)
    return TypeAdapter(tp, *args, **kwargs)


def install() -> None:
    """Point DSPy's adapter utilities at the memo (idempotent; a DSPy that moved the name is left alone)."""
    if getattr(utils, "TypeAdapter", None) is TypeAdapter:
        utils.TypeAdapter = type_adapter  # type: ignore[attr-defined,assignment]
