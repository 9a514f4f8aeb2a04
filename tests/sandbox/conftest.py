"""Backends under test. The conformance and hostile suites take `make_interpreter` and run on every backend:
local with bubblewrap, local reduced (forced), and Daytona (against the fake Daytona server; conformance only)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fleet_rlm.sandbox import SandboxOptions, isolation_level
from fleet_rlm.sandbox.factory import interpreter_factory
from fleet_rlm.sandbox.interpreter import SandboxInterpreter
from tests.sandbox.daytona.fixtures import (  # noqa: F401 - fixtures for the "daytona" param
    daytona_backend,
    fake_daytona,
    shared_daytona_backend,
)

BACKENDS = ["bubblewrap", "reduced", "daytona"]
DAYTONA_MODULES = {
    "tests.sandbox.test_conformance",
    "tests.sandbox.test_cell_processes",
    "tests.sandbox.test_values",
    "tests.sandbox.test_flex",
    "tests.sandbox.test_worker_guard",
    "tests.sandbox.test_repl_state",
}
needs_bwrap = pytest.mark.skipif(
    isolation_level() != "bubblewrap", reason="bubblewrap is not usable on this host (isolation: reduced)"
)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "bubblewrap" and isolation_level() != "bubblewrap":
        pytest.skip("bubblewrap is not usable on this host")
    if request.param == "daytona" and request.module.__name__ not in DAYTONA_MODULES:
        pytest.skip(
            "local-only suite: hostile-code checks need a real isolation boundary (the fake Daytona server is "
            "not one); Daytona's RLM, session-reuse and pool cases live in tests/sandbox/daytona"
        )
    return str(request.param)


MakeInterpreter = Callable[..., SandboxInterpreter]
MakeFactory = Callable[..., Any]


@pytest.fixture
def make_factory(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> MakeFactory:
    """The `interpreter_factory` of this test's backend (what dspy.RLM / dspy.Flex take)."""

    def make(**options: Any) -> Any:
        options.setdefault("cell_timeout_s", 10.0)
        if backend == "daytona":  # one fake server per module; the workspace (volume subpath) is per test
            daytona = request.getfixturevalue("shared_daytona_backend")
            workspace = f"t-{tmp_path.name}"[:100]
            return interpreter_factory(daytona, data_dir=tmp_path / "data", workspace_id=workspace, **options)
        return interpreter_factory("local", data_dir=tmp_path / "data", isolation=backend, **options)

    return make


@pytest.fixture
def make_interpreter(make_factory: MakeFactory) -> Iterator[MakeInterpreter]:
    created: list[SandboxInterpreter] = []

    def make(tools: dict[str, Any] | None = None, output_fields: Any = None, **options: Any) -> SandboxInterpreter:
        interp: SandboxInterpreter = make_factory(**options)()
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
