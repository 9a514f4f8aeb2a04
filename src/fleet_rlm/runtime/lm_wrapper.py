"""`WrappedLM`: the base of the runtime's LM decorators (`GuardedLM`, `RecordingLM`).

A decorator is itself a `dspy.BaseLM` that defines `__call__` (and `copy`) and forwards everything else —
capabilities, params, state, unknown attributes — to the LM it wraps, so DSPy's adapters see the real model.
It registers no callbacks of its own: the wrapped LM's fire, exactly once.
"""

from __future__ import annotations

import asyncio
from typing import Any

import dspy


class WrappedLM(dspy.BaseLM):
    def __init__(self, inner: dspy.BaseLM) -> None:
        super().__init__(
            model=inner.model,
            model_type=getattr(inner, "model_type", "chat"),
            cache=getattr(inner, "cache", False),
            num_retries=getattr(inner, "num_retries", 0),
        )
        self.kwargs = inner.kwargs
        self.callbacks: list[Any] = []
        self.inner = inner

    async def acall(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        return await asyncio.to_thread(self.__call__, prompt, messages=messages, **kwargs)

    @property
    def supports_function_calling(self) -> bool:
        return bool(self.inner.supports_function_calling)

    @property
    def supports_reasoning(self) -> bool:
        return bool(self.inner.supports_reasoning)

    @property
    def supports_response_schema(self) -> bool:
        return bool(self.inner.supports_response_schema)

    @property
    def supported_params(self) -> set[str]:
        return set(self.inner.supported_params)

    def dump_state(self) -> dict[str, Any]:
        return self.inner.dump_state()

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("inner")
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)
