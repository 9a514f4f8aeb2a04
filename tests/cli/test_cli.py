"""The CLI skeleton, driven through its real entry points; failures are one line, never a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from fleet_rlm import __version__
from fleet_rlm.cli.main import build_fleet_app, build_fleet_rlm_app
from fleet_rlm.store import migrate

BIN = Path(sys.executable).parent
runner = CliRunner()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _env(data_dir: Path, database_url: str | None = None, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FLEET_", "DSPY_"))}
    env["FLEET_DATA_DIR"] = str(data_dir)
    if database_url:
        env["FLEET_DATABASE_URL"] = database_url
    env.update(extra)
    return env


def test_version() -> None:
    result = runner.invoke(build_fleet_rlm_app(), ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"fleet-rlm {__version__}"


def test_fleet_without_arguments_explains_what_to_do() -> None:
    """No arguments = the terminal chat; without a model it explains how to configure one and exits 2."""
    result = runner.invoke(build_fleet_app(), [])
    assert result.exit_code == 2
    assert "DSPY_LM_MODEL" in result.output and "DSPY_LLM_API_KEY" in result.output


def test_every_command_has_help() -> None:
    app = build_fleet_rlm_app()
    for args in (
        ["--help"],
        ["web", "--help"],
        ["serve-api", "--help"],
        ["db", "--help"],
        ["db", "upgrade", "--help"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
        assert "Usage" in result.output


def test_db_commands_on_sqlite(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLEET_DATA_DIR", str(data_dir))
    app = build_fleet_rlm_app()
    upgraded = runner.invoke(app, ["db", "upgrade"])
    assert upgraded.exit_code == 0, upgraded.output
    current = runner.invoke(app, ["db", "current"])
    assert f"current: {migrate.head()}" in current.stdout and "at head" in current.stdout
    down = runner.invoke(app, ["db", "downgrade", "base"])
    assert down.exit_code == 0 and "database at base" in down.stdout
    behind = runner.invoke(app, ["db", "current"])
    assert "behind head: run `fleet-rlm db upgrade`" in behind.stdout
    again = runner.invoke(app, ["db", "upgrade"])
    assert again.exit_code == 0 and migrate.head() in again.stdout


def _run_cli(args: list[str], env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "fleet-rlm"), *args], env=env, capture_output=True, text=True, timeout=timeout)


def _assert_one_line_error(result: subprocess.CompletedProcess[str], code: str) -> None:
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error[{code}]"), lines[0]


def test_port_in_use_is_one_line(data_dir: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = _run_cli(["web", "--port", str(port)], _env(data_dir))
    _assert_one_line_error(result, "port_in_use")


def test_unwritable_data_dir_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = _run_cli(["serve-api", "--port", str(_free_port())], _env(blocker / "data"))
    _assert_one_line_error(result, "data_dir_unwritable")


def test_unreachable_postgres_is_one_line(data_dir: Path) -> None:
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{_free_port()}/nothing"
    result = _run_cli(["serve-api", "--port", str(_free_port())], _env(data_dir, url))
    _assert_one_line_error(result, "database_unreachable")


def test_non_loopback_bind_without_auth_is_refused(data_dir: Path) -> None:
    result = _run_cli(["serve-api", "--host", "0.0.0.0", "--port", str(_free_port())], _env(data_dir))
    _assert_one_line_error(result, "insecure_bind")


def test_fleet_web_serves_health_and_ready(data_dir: Path, database_url: str) -> None:
    """The README's first command: health and readiness answer within 10 s, fleet.db exists (SQLite)."""
    port = _free_port()
    started = time.monotonic()
    server = subprocess.Popen(
        [str(BIN / "fleet"), "web", "--port", str(port)],
        env=_env(data_dir, database_url if "postgresql" in database_url else None),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        ready = None
        while time.monotonic() - started < 240:
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/ready", timeout=1)
                break
            except httpx.TransportError:
                assert server.poll() is None, server.stdout.read() if server.stdout else ""
                time.sleep(0.1)
        assert ready is not None and ready.status_code == 200, ready and ready.text
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200
        info = httpx.get(f"http://127.0.0.1:{port}/api/v1/info").json()
        assert info["sandbox_backend"] == "local"
        if "postgresql" not in database_url:
            assert (data_dir / "fleet.db").is_file()
            assert info["database"] == "sqlite"
    finally:
        server.terminate()
        server.wait(timeout=60)
