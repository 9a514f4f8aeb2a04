"""The worker's byte-compiled code directory: built once per version, safely under concurrency, and what a
sandbox really runs (its bytecode, not its source)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from fleet_rlm.sandbox import SandboxOptions
from fleet_rlm.sandbox.interpreter import SandboxInterpreter
from fleet_rlm.sandbox.worker_code import WORKER_MODULES, compiled_worker
from tests.sandbox.conftest import needs_bwrap


def test_built_once_with_bytecode_for_every_module(tmp_path: Path) -> None:
    code = compiled_worker(tmp_path)
    assert code.parent == tmp_path / "sandbox-code"
    assert sorted(p.name for p in code.glob("*.py")) == sorted(WORKER_MODULES)
    cached = sorted(p.name.split(".")[0] + ".py" for p in (code / "__pycache__").glob("*.pyc"))
    assert cached == sorted(WORKER_MODULES)
    assert all(p.stat().st_mode & 0o777 == 0o644 for p in code.rglob("*") if p.is_file())
    assert code.stat().st_mode & 0o777 == 0o755
    mtime = (code / "worker.py").stat().st_mtime_ns
    assert compiled_worker(tmp_path) == code and (code / "worker.py").stat().st_mtime_ns == mtime


def test_concurrent_builds_leave_one_directory(tmp_path: Path) -> None:
    results: list[Path] = []
    errors: list[BaseException] = []

    def build() -> None:
        try:
            results.append(compiled_worker(tmp_path))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(set(results)) == 1
    assert [p.name for p in (tmp_path / "sandbox-code").iterdir()] == [results[0].name]  # no .build-* left


def test_rebuilt_when_removed(tmp_path: Path) -> None:
    code = compiled_worker(tmp_path)
    shutil.rmtree(tmp_path / "sandbox-code")
    assert compiled_worker(tmp_path) == code and (code / "__pycache__").is_dir()


@pytest.mark.parametrize("isolation", [pytest.param("bubblewrap", marks=needs_bwrap), "reduced"])
def test_sandbox_runs_the_bytecode(tmp_path: Path, isolation: str) -> None:
    """The .py copies can be anything: a sandbox loads the unchecked-hash bytecode beside them."""
    code = compiled_worker(tmp_path)
    for name in WORKER_MODULES:
        (code / name).chmod(0o644)
        (code / name).write_text("raise SystemExit('source was executed')\n")
    interp = SandboxInterpreter(tools={}, options=SandboxOptions(data_dir=tmp_path, isolation=isolation))
    try:
        assert interp.execute("print(6 * 7)") == "42"
    finally:
        interp.shutdown()
