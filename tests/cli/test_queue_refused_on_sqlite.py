"""Queue execution needs PostgreSQL: on SQLite a server asked for it, and any worker, refuse to start with one
line (error code, message, action) and start nothing."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.cli.helpers import cli_env, run_cli

pytestmark = pytest.mark.db_independent


@pytest.mark.parametrize(
    ("args", "extra"),
    [(["serve-api"], {"FLEET_EXECUTION": "queue"}), (["worker", "--concurrency", "2"], {})],
)
def test_queue_execution_on_sqlite_is_refused_with_one_line(
    tmp_path: Path, args: list[str], extra: dict[str, str]
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        extra = {**extra, "FLEET_PORT": str(probe.getsockname()[1])}
    done = run_cli("fleet-rlm", args, cli_env(tmp_path / "data", **extra), timeout=60)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error[queue_needs_postgres]: "), done.stderr
    assert "PostgreSQL" in lines[0] and "FLEET_DATABASE_URL" in lines[0]
    assert "Traceback" not in done.stderr and not done.stdout.strip()
    assert not (tmp_path / "data" / "fleet.db").exists()  # nothing was started or created
