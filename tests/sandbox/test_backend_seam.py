"""The sandbox backend seam: one `SandboxBackend` chosen once from settings and owned by the pool, one
`InterpreterFactory` for both backends, backend names read only by the backend modules, and a light package."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

import fleet_rlm
from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.sandbox import LocalBackend, SandboxOptions, SandboxPool, backend_status, build_pool
from fleet_rlm.sandbox.daytona import DaytonaBackend, shutdown_backends
from fleet_rlm.sandbox.factory import interpreter_factory
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from tests.sandbox.daytona.fixtures import SNAPSHOT

PACKAGE = Path(fleet_rlm.__file__).parent
BACKEND_MODULES = ("sandbox/backends.py", "sandbox/local.py", "sandbox/daytona/", "config.py", "testing/")
NAME_TEST = re.compile(r"""sandbox_backend\s*[!=]=|[!=]=\s*["'](daytona|local)["']|["'](daytona|local)["']\s*[!=]=""")
ALLOWED = {
    "cli/doctor.py": "the operator's checks are named after the backends (`fleet-rlm doctor daytona`)",
    "cli/connect.py": "cli_server == 'local' is the CLI's server mode, not a sandbox backend",
    "bench/perf/context_case.py": "compares dspy's own interpreters, named 'local' and 'deno'",
}


@pytest.fixture
def daytona_settings(tmp_path: Path) -> Iterator[Settings]:
    with FakeDaytonaServer(root=tmp_path / "fake-daytona", snapshots=(SNAPSHOT,)) as fake:
        yield Settings(
            data_dir=tmp_path / "data",
            sandbox_backend="daytona",
            daytona_api_key=SecretStr(fake.api_key),
            daytona_api_url=fake.api_url,
            daytona_target="us",
            daytona_snapshot=SNAPSHOT,
        )
        shutdown_backends()


def test_backend_names_are_read_only_by_the_backend_modules() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith(BACKEND_MODULES) or module in ALLOWED:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if NAME_TEST.search(line):
                offenders.append(f"{module}:{number}: {line.strip()}")
    assert offenders == []


def test_sandbox_packages_have_no_lazy_reexports() -> None:
    for init in sorted((PACKAGE / "sandbox").rglob("__init__.py")):
        names = [node.name for node in ast.parse(init.read_text()).body if isinstance(node, ast.FunctionDef)]
        assert "__getattr__" not in names, init


def test_the_package_loads_no_model_or_cloud_library() -> None:
    code = "import sys, fleet_rlm.sandbox; print(sorted({'dspy', 'daytona'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_pool_owns_the_configured_backend(daytona_settings: Settings) -> None:
    pool = build_pool(daytona_settings.model_copy(update={"sandbox_pool_size": 3}))
    try:
        assert isinstance(pool.backend, DaytonaBackend) and pool.size == 0
        factory = interpreter_factory("local", pool=pool, session_id="s1")  # the pool's backend wins
        assert factory.backend is pool.backend and factory.isolation == "daytona"
        assert "Daytona cloud sandbox" in factory.execution_instructions
        assert factory.child().parent_id == "s1"
    finally:
        pool.shutdown()
    local = build_pool(Settings(data_dir=daytona_settings.data_dir, sandbox_pool_size=0))
    try:
        assert isinstance(local.backend, LocalBackend)
        assert "CPython in" in interpreter_factory(pool=local).execution_instructions
    finally:
        local.shutdown()


def test_factory_without_a_pool_takes_the_configured_backend(daytona_settings: Settings) -> None:
    factory = interpreter_factory(settings=daytona_settings, workspace_id="w1")
    assert factory.backend.name == "daytona" and factory.status()["backend"] == "daytona"
    with pytest.raises(FleetError) as info:
        interpreter_factory("nimbus", settings=daytona_settings)
    assert info.value.code == "sandbox_backend_unknown" and "daytona, local" in (info.value.action or "")


def test_daytona_isolation_never_asks_the_host(tmp_path: Path) -> None:
    from fleet_rlm.sandbox.daytona import DaytonaOptions

    strict = SandboxOptions(data_dir=tmp_path, require_isolation=True, isolation="bubblewrap")
    backend = DaytonaBackend(DaytonaOptions(api_key="k", api_url="http://127.0.0.1:9/api"))
    try:
        assert backend.isolation(strict) == "daytona"
        assert backend.status(strict)["usable"] is True
    finally:
        backend.shutdown()


def test_readiness_comes_from_the_backend(tmp_path: Path) -> None:
    local = backend_status(Settings(data_dir=tmp_path))
    assert local["backend"] == "local" and local["usable"] is True
    assert backend_status(Settings(data_dir=tmp_path, sandbox_backend="daytona"))["usable"] is False
    pool = SandboxPool(SandboxOptions(data_dir=tmp_path), size=0)
    try:
        assert pool.backend.status(pool.options)["isolation"] in ("bubblewrap", "reduced")
    finally:
        pool.shutdown()
