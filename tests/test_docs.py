"""Docs that stay true: generated references match the code, and every setting is documented."""

from __future__ import annotations

import re
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


_TEST_REFERENCE = re.compile(r"(tests/[\w/]+\.py)(?:::(\w+))?")


def test_every_test_the_docs_name_exists() -> None:
    """A claim table that names a moved or renamed test proves nothing: every `tests/...py::name` must resolve."""
    stale = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]:
        for match in _TEST_REFERENCE.finditer(doc.read_text(encoding="utf-8")):
            path, name = ROOT / match.group(1), match.group(2)
            if not path.is_file():
                stale.append(f"{doc.name}: {match.group(0)} (no such file)")
            elif name and not re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{name}\b", path.read_text(), re.M):
                stale.append(f"{doc.name}: {match.group(0)} (no such test)")
    assert not stale, "docs name tests that do not exist:\n" + "\n".join(stale)
