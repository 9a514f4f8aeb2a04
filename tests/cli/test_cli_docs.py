"""docs/cli.md is generated from the commands' help and must not drift; every command has --help."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleet_rlm.cli.main import build_fleet_app, build_fleet_rlm_app

pytestmark = pytest.mark.db_independent

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = [
    ["chat"],
    ["run"],
    ["doctor"],
    ["mcp"],
    ["replay"],
    ["sessions"],
    ["sessions", "list"],
    ["sessions", "show"],
    ["sessions", "export"],
    ["sessions", "delete"],
    ["auth", "token"],
    ["daytona-smoke"],
    ["daytona-snapshot"],
]


def test_cli_reference_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_cli_docs.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_every_command_has_help_and_is_documented(args: list[str]) -> None:
    result = CliRunner().invoke(build_fleet_rlm_app(), [*args, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output, result.output
    assert f"### `fleet-rlm {' '.join(args)}`" in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") or (
        f"#### `fleet-rlm {' '.join(args)}`" in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    )


def test_fleet_has_the_chat_and_web() -> None:
    result = CliRunner().invoke(build_fleet_app(), ["--help"])
    assert result.exit_code == 0
    for name in ("chat", "run", "web", "doctor"):
        assert name in result.output


@pytest.mark.parametrize("args", [["run"], ["chat"], ["sessions", "list"], ["web"], []], ids=" ".join)
def test_flags_show_no_bool_metavar(args: list[str]) -> None:
    result = CliRunner().invoke(build_fleet_rlm_app(), [*args, "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert "--help" in result.output and "<bool>" not in result.output
