"""docs/events.md and schemas/events.schema.json stay generated from the models, and document every kind."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fleet_rlm.events import ENVELOPE_FIELDS, EVENT_TYPES

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gen_events_docs.py"
DOCS = ROOT / "docs" / "events.md"
SCHEMA = ROOT / "schemas" / "events.schema.json"


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^### `([a-z_]+)`$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_kind_and_field_is_documented() -> None:
    sections = _sections(DOCS.read_text(encoding="utf-8"))
    missing = [kind for kind in EVENT_TYPES if kind not in sections]
    assert not missing, f"undocumented event kinds (run scripts/gen_events_docs.py): {missing}"
    for kind, model in EVENT_TYPES.items():
        for name in model.model_fields:
            if name not in ENVELOPE_FIELDS:
                assert f"| `{name}` |" in sections[kind], f"{kind}.{name} is not documented"


def test_envelope_and_resume_rule_are_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name in ENVELOPE_FIELDS:
        assert f"| `{name}` |" in text
    assert "after seq N, then the live stream, gap-free" in text


def test_schema_file_lists_every_kind() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert set(schema["discriminator"]["mapping"]) == set(EVENT_TYPES)


def test_generated_files_are_current() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.fixture
def scratch_copy(tmp_path: Path) -> Path:
    """A copy of the script, docs and schema in tmp_path, so the drift test never touches the checkout."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "schemas").mkdir()
    shutil.copy(SCRIPT, tmp_path / "scripts" / SCRIPT.name)
    shutil.copy(SCRIPT.parent / "generated.py", tmp_path / "scripts" / "generated.py")
    shutil.copy(DOCS, tmp_path / "docs" / DOCS.name)
    shutil.copy(SCHEMA, tmp_path / "schemas" / SCHEMA.name)
    return tmp_path


def test_check_mode_fails_on_drift_and_regenerates(scratch_copy: Path) -> None:
    script = scratch_copy / "scripts" / SCRIPT.name
    docs = scratch_copy / "docs" / DOCS.name
    assert subprocess.run([sys.executable, str(script), "--check"], capture_output=True).returncode == 0
    docs.write_text(docs.read_text(encoding="utf-8").replace("### `sandbox_reset`", "### `gone`"), encoding="utf-8")
    (scratch_copy / "schemas" / SCHEMA.name).unlink()
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert result.returncode == 1
    assert "docs/events.md is out of date" in result.stderr
    assert "schemas/events.schema.json is out of date" in result.stderr
    assert subprocess.run([sys.executable, str(script)], capture_output=True).returncode == 0
    assert subprocess.run([sys.executable, str(script), "--check"], capture_output=True).returncode == 0
    assert docs.read_text(encoding="utf-8") == DOCS.read_text(encoding="utf-8")
