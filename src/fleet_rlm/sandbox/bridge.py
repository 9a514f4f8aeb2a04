"""Host side of guest calls: `llm_query`, `llm_query_batched` and every registered tool.

The worker sends a `call` frame and blocks that guest thread; several calls may be in flight (guest threads),
so each runs on a thread pool and answers with a `reply` carrying the same id. Calls run in a copy of the
`contextvars` context of the `execute()` caller, so `dspy.context(lm=...)` and callbacks reach the tools.
Exceptions come back to the guest as `ToolError` (a RuntimeError) naming the host exception.
Positional guest arguments are bound to parameter names here when the tool only takes keywords (dspy.RLM wraps
user tools as `invoke(**kwargs)` carrying the tool's signature), so `search("x")` works like `search(query="x")`.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic_core import to_jsonable_python

from fleet_rlm.sandbox.protocol import Frame

logger = logging.getLogger(__name__)

Invoke = Callable[[str, list[Any], dict[str, Any]], Any]
SendReply = Callable[[dict[str, Any]], None]


class HostBridge:
    def __init__(
        self,
        tools: dict[str, Callable[..., Any]],
        invoke: Invoke,
        *,
        call_concurrency: int = 16,
        batch_concurrency: int = 8,
    ) -> None:
        self._tools = tools  # the interpreter's live dict: RLM updates it after construction
        self._invoke = invoke
        self._calls = ThreadPoolExecutor(max_workers=call_concurrency, thread_name_prefix="sandbox-call")
        self._batch = ThreadPoolExecutor(max_workers=batch_concurrency, thread_name_prefix="sandbox-batch")
        self._context = contextvars.copy_context()
        self._lock = threading.Lock()
        self.fatal: BaseException | None = None

    def bind_context(self, context: contextvars.Context) -> None:
        """Called at each execute() so calls see the caller's dspy settings."""
        self._context = context

    def guest_tool_names(self) -> list[str]:
        names = list(self._tools)
        if "llm_query" in self._tools and "llm_query_batched" not in self._tools:
            names.append("llm_query_batched")
        return names

    def dispatch(self, frame: Frame, send: SendReply) -> None:
        """Run a guest `call` frame on the pool; `frame.done()` once its reply is sent (the transport holds
        at most `FrameLimits.held_frames` unanswered, so a flood of calls waits in the guest, not here)."""
        context = self._context.copy()
        try:
            future = self._calls.submit(context.run, self._run, frame.header, send)
        except RuntimeError:  # the pool is shut down: the interpreter is ending
            frame.done()
            return
        future.add_done_callback(lambda _: frame.done())  # also when `close` cancels it

    def _run(self, header: dict[str, Any], send: SendReply) -> None:
        call_id = header.get("id")
        try:
            value = self.call(str(header.get("name")), header.get("args") or [], header.get("kwargs") or {})
            reply: dict[str, Any] = {
                "t": "reply",
                "id": call_id,
                "ok": True,
                "value": to_jsonable_python(value),
            }
        except Exception as exc:
            reply = {"t": "reply", "id": call_id, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        except BaseException as exc:  # cancellation: tell the guest, and let execute() re-raise it
            with self._lock:
                self.fatal = self.fatal or exc
            reply = {"t": "reply", "id": call_id, "ok": False, "error": f"{type(exc).__name__}: cancelled"}
        try:
            send(reply)
        except Exception as exc:  # the worker is gone; execute() reports that
            logger.debug("reply to a dead sandbox dropped: %s", exc)

    def call(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if name not in self._tools:
            if name == "llm_query_batched" and "llm_query" in self._tools:
                return self._fan_out(*args, **kwargs)
            raise NameError(f"no host tool named {name!r}")
        args, kwargs = bind_positional(self._tools[name], args, kwargs)
        result = self._invoke(name, args, kwargs)
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
        return result

    def _fan_out(self, prompts: list[str]) -> list[str]:
        """llm_query_batched when only llm_query is registered: `batch_concurrency` prompts at a time."""
        if not isinstance(prompts, list):
            raise TypeError("llm_query_batched expects a list of prompts")
        futures = [self._batch.submit(contextvars.copy_context().run, self.call, "llm_query", [p], {}) for p in prompts]
        return [f.result() for f in futures]

    def close(self) -> None:
        self._calls.shutdown(wait=False, cancel_futures=True)
        self._batch.shutdown(wait=False, cancel_futures=True)


_SPREAD = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)


def bind_positional(
    fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    """Guest `args` as keywords by `fn`'s (advertised) signature; unchanged if it has positional-only or *args.

    A call that does not fit the signature raises TypeError, which the guest sees as a ToolError.
    """
    if not args:
        return args, kwargs
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return args, kwargs
    if any(p.kind in _SPREAD for p in signature.parameters.values()):
        return args, kwargs
    bound = signature.bind(*args, **kwargs)
    named: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        if signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        else:
            named[name] = value
    return [], named


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
