"""Postgres never migrates at startup: `db upgrade|downgrade|current` move it, and a stale schema stops the server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import POSTGRES_ADMIN_URL, drop_postgres_database, make_postgres_database

pytestmark = pytest.mark.skipif(
    POSTGRES_ADMIN_URL is None, reason="needs FLEET_TEST_POSTGRES_URL or FLEET_DATABASE_URL (PostgreSQL)"
)
BIN = Path(sys.executable).parent


@pytest.fixture
def empty_postgres() -> Iterator[str]:
    url = make_postgres_database()
    try:
        yield url
    finally:
        drop_postgres_database(url)


def _cli(args: list[str], data_dir: Path, url: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FLEET_", "DSPY_"))}
    env.update(FLEET_DATA_DIR=str(data_dir), FLEET_DATABASE_URL=url)
    return subprocess.run([str(BIN / "fleet-rlm"), *args], env=env, capture_output=True, text=True, timeout=240)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_upgrade_downgrade_upgrade_on_postgres(empty_postgres: str, data_dir: Path) -> None:
    from fleet_rlm.store import migrate

    up = _cli(["db", "upgrade"], data_dir, empty_postgres)
    assert up.returncode == 0, up.stderr
    assert migrate.current(empty_postgres) == migrate.head()
    down = _cli(["db", "downgrade", "base"], data_dir, empty_postgres)
    assert down.returncode == 0, down.stderr
    assert migrate.current(empty_postgres) is None
    again = _cli(["db", "upgrade"], data_dir, empty_postgres)
    assert again.returncode == 0, again.stderr
    assert "at head" in _cli(["db", "current"], data_dir, empty_postgres).stdout


def test_server_refuses_a_schema_behind_head(empty_postgres: str, data_dir: Path) -> None:
    result = _cli(["serve-api", "--port", str(_free_port())], data_dir, empty_postgres)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error[schema_behind]")
    assert "fleet-rlm db upgrade" in lines[0]
