"""Backends under test. The conformance and hostile suites take `make_interpreter` and run on every backend:
local with bubblewrap, local reduced (forced), and later Daytona (add a param that builds its factory)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fleet_rlm.sandbox import SandboxInterpreter, SandboxOptions, interpreter_factory, isolation_level

BACKENDS = ["bubblewrap", "reduced"]
needs_bwrap = pytest.mark.skipif(
    isolation_level() != "bubblewrap", reason="bubblewrap is not usable on this host (isolation: reduced)"
)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "bubblewrap" and isolation_level() != "bubblewrap":
        pytest.skip("bubblewrap is not usable on this host")
    return str(request.param)


MakeInterpreter = Callable[..., SandboxInterpreter]


@pytest.fixture
def make_interpreter(backend: str, tmp_path: Path) -> Iterator[MakeInterpreter]:
    created: list[SandboxInterpreter] = []

    def make(tools: dict[str, Any] | None = None, output_fields: Any = None, **options: Any) -> SandboxInterpreter:
        options.setdefault("cell_timeout_s", 10.0)
        factory = interpreter_factory("local", data_dir=tmp_path / "data", isolation=backend, **options)
        interp = factory()
        interp.tools.update(tools or {})
        interp.output_fields = output_fields
        created.append(interp)
        return interp

    yield make
    for interp in created:
        interp.shutdown()


@pytest.fixture
def options(tmp_path: Path, backend: str) -> SandboxOptions:
    return SandboxOptions(data_dir=tmp_path / "data", isolation=backend, cell_timeout_s=10.0)  # type: ignore[arg-type]
