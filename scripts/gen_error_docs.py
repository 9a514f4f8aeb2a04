"""Regenerate the error list in docs/api.md from the error table (`--check`: fail when it has drifted).

The table is `src/fleet_rlm/errors/codes.toml`: one entry per stable code (status, message, action). The list is
written between the `<!-- errors:start -->` and `<!-- errors:end -->` markers.
"""

from __future__ import annotations

import sys
from pathlib import Path

from generated import write_or_check

from fleet_rlm.errors.catalog import catalog

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "api.md"
START, END = "<!-- errors:start -->", "<!-- errors:end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_table() -> str:
    lines = [
        START,
        "",
        "| Code | Status | Message | Action |",
        "|---|---|---|---|",
    ]
    for code, spec in sorted(catalog().items()):
        status = " / ".join(str(s) for s in (spec.status, *spec.also)) if spec.status else "CLI / frame"
        action = spec.action.replace("{{", "{").replace("}}", "}")
        lines.append(f"| `{code}` | {status} | {_cell(spec.message)} | {_cell(action)} |")
    return "\n".join([*lines, "", END])


def render() -> dict[Path, str]:
    text = TARGET.read_text(encoding="utf-8")
    before, _, rest = text.partition(START)
    _, _, after = rest.partition(END)
    return {TARGET: before + render_table() + after}


if __name__ == "__main__":
    sys.exit(write_or_check(__doc__ or "", render, "uv run --frozen python scripts/gen_error_docs.py"))
