"""``FakeLMServer``: the fake OpenAI-compatible LM on loopback, in a background thread with its own loop.

Usable from sync and async tests alike (the server never shares the caller's event loop)::

    with FakeLMServer(["Hello!"]) as lm:
        dspy_lm = dspy.LM(lm.model, api_base=lm.base_url, api_key="fake", cache=False)

Everything about what to answer lives in its ``FakeLMScript`` (``lm.script``); the common operations are
mirrored here (``push``, ``add_rule``, ``requests``, ``last_request``, ``clear``...).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any

from fleet_rlm.testing.fake_lm_http import FakeLMHttpServer
from fleet_rlm.testing.fake_lm_script import DEFAULT_TEXT, FakeLMScript
from fleet_rlm.testing.fake_lm_types import FakeResponse, RecordedRequest, ResponseLike, Rule

DEFAULT_MODEL = "openai/fake-model"


class FakeLMServer:
    """A real HTTP server speaking the OpenAI Chat Completions API, answering from a script."""

    def __init__(
        self,
        responses: Iterable[ResponseLike] = (),
        *,
        rule: Rule | None = None,
        rules: Sequence[Rule] = (),
        default: ResponseLike = DEFAULT_TEXT,
        latency_s: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = DEFAULT_MODEL,
        stream_chunk_chars: int = 24,
        script: FakeLMScript | None = None,
        max_recorded: int | None = None,
    ) -> None:
        all_rules = [rule, *rules] if rule is not None else list(rules)
        self.script = script or FakeLMScript(
            responses, rules=all_rules, default=default, latency_s=latency_s, max_recorded=max_recorded
        )
        self.host = host
        self.model = model
        self._requested_port = port
        wire_model = model.split("/", 1)[1] if "/" in model else model
        self._http = FakeLMHttpServer(self.script, model=wire_model, stream_chunk_chars=stream_chunk_chars)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> FakeLMServer:
        """Bind and serve; returns once the port accepts connections."""
        if self._thread is not None:
            return self
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._http.start(self.host, self._requested_port))
            except BaseException as exc:  # bind failure: report to the starting thread
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._http.close())
            loop.close()

        thread = threading.Thread(target=run, name=f"fake-lm:{self._requested_port}", daemon=True)
        thread.start()
        ready.wait()
        if failure:
            thread.join()
            raise failure[0]
        self._loop, self._thread = loop, thread
        return self

    def stop(self) -> None:
        """Close every connection (hanging ones included) and stop the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._loop = self._thread = None

    def __enter__(self) -> FakeLMServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> FakeLMServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

    # -- addresses -------------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._http.port

    @property
    def url(self) -> str:
        """Server root, e.g. ``http://127.0.0.1:PORT``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """OpenAI base URL (ends in ``/v1``): pass as ``api_base``/``base_url``."""
        return f"{self.url}/v1"

    def lm_kwargs(self, **overrides: Any) -> dict[str, Any]:
        """Keyword arguments for ``dspy.LM`` pointing at this server (no caching, no retries)."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "api_base": self.base_url,
            "api_key": "fake",
            "cache": False,
            "num_retries": 0,
        }
        kwargs.update(overrides)
        return kwargs

    def dspy_lm(self, **overrides: Any) -> Any:
        """A ``dspy.LM`` pointing at this server (imports dspy lazily)."""
        import dspy

        return dspy.LM(**self.lm_kwargs(**overrides))

    # -- script mirror ---------------------------------------------------------------------------------
    def push(self, *responses: ResponseLike) -> None:
        self.script.push(*responses)

    def add_rule(self, rule: Rule) -> None:
        self.script.add_rule(rule)

    @property
    def default(self) -> FakeResponse:
        return self.script.default

    @default.setter
    def default(self, value: ResponseLike) -> None:
        self.script.default = value

    @property
    def latency_s(self) -> float:
        return self.script.latency_s

    @latency_s.setter
    def latency_s(self, value: float) -> None:
        self.script.latency_s = value

    @property
    def pending(self) -> int:
        return self.script.pending

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.script.requests

    @property
    def last_request(self) -> RecordedRequest | None:
        return self.script.last_request

    def clear(self) -> None:
        self.script.clear()

    def reset(self) -> None:
        self.script.reset()

    def wait_for_requests(self, count: int, timeout_s: float = 10.0) -> list[RecordedRequest]:
        return self.script.wait_for_requests(count, timeout_s)


FakeLM = FakeLMServer
