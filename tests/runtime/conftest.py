"""Runtime tests: every LM call goes over HTTP to one FakeLMServer per module; events collect in a list sink."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fleet_rlm.config import Settings
from fleet_rlm.events import EventBase
from fleet_rlm.runtime.contracts import CancelToken, ContextSource, TurnOptions, TurnRequest, TurnResult
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.testing.fake_lm_server import FakeLMServer


class ListSink:
    """Thread-safe list of every event, in emission order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[EventBase] = []

    def emit(self, event: Any) -> None:
        with self._lock:
            self.events.append(event)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


@pytest.fixture(scope="session")
def warm_pricing() -> None:
    """The usage meter prices calls from LiteLLM's cost map; read it once here rather than inside the first turn
    (where it would eat into a short turn_timeout_s)."""
    from fleet_rlm.llm.pricing import price

    price("openai/fake-model", 1, 1)


@pytest.fixture(scope="module")
def fake_lm(warm_pricing: None) -> Iterator[FakeLMServer]:
    with FakeLMServer() as server:
        yield server


@pytest.fixture
def lm(fake_lm: FakeLMServer) -> FakeLMServer:
    fake_lm.reset()
    fake_lm.latency_s = 0.0
    return fake_lm


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        lm_model="openai/fake-model",
        sandbox_pool_size=0,
        sandbox_cell_timeout_s=30.0,
        rlm_context_threshold_chars=100_000,
        max_iters=6,
        turn_timeout_s=60.0,
    )


@pytest.fixture
def runtime(settings: Settings, lm: FakeLMServer) -> Iterator[TurnRuntime]:
    rt = TurnRuntime(settings, lm_provider={"root": lm.dspy_lm()})
    yield rt
    rt.shutdown()


def make_request(
    settings: Settings,
    task: str,
    *,
    session_id: str = "s1",
    workspace_id: str = "w1",
    mode: str = "rlm",
    sources: tuple[ContextSource, ...] = (),
    **options: Any,
) -> TurnRequest:
    return TurnRequest(
        run_id=uuid.uuid4().hex,
        session_id=session_id,
        user_id="u1",
        workspace_id=workspace_id,
        workspace_dir=settings.workspaces_dir / workspace_id,
        task=task,
        options=TurnOptions(execution_mode=mode, **options),  # type: ignore[arg-type]
        sources=sources,
    )


def run(runtime: TurnRuntime, request: TurnRequest, cancel: CancelToken | None = None) -> tuple[TurnResult, ListSink]:
    sink = ListSink()
    result = runtime.run_turn(request, sink, cancel or CancelToken())
    return result, sink


def assert_lifecycle(sink: ListSink, terminal: str) -> None:
    """turn_started first, exactly one terminal event last, usage and summary just before it."""
    types = sink.types()
    assert types[0] == "turn_started"
    assert types[-1] == terminal
    assert sum(t in {"turn_finished", "turn_failed", "turn_cancelled"} for t in types) == 1
    assert types[-3:-1] == ["usage", "summary"]
    run_ids = {e.run_id for e in sink.events}
    assert len(run_ids) == 1
