"""Docs that stay true: generated references match the code, and every setting is documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fleet_rlm.config import Settings, env_names

pytestmark = pytest.mark.db_independent

ROOT = Path(__file__).resolve().parent.parent


def test_every_setting_is_documented() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = [name for name in Settings.model_fields if f"`{name}`" not in text]
    missing += [env for name in Settings.model_fields for env in env_names(name) if f"`{env}`" not in text]
    assert not missing, f"undocumented settings (run `make docs`): {missing}"


def test_configuration_reference_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_openapi_contract_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_openapi.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_readme_names_the_two_commands_and_ci_uses_the_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "uv run fleet web" in readme
    assert "make test" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
