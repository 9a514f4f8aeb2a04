"""The one table of stable error codes (`codes.toml` beside this module): each code's HTTP status, message
template and action. `FleetError` takes its action from here, so the server, the CLI, the chat and the web UI
word the same refusal alike; docs/api.md's error list is generated from it (scripts/gen_error_docs.py) and
tests/test_error_catalog.py checks that every code the source raises has an entry.

Read lazily (on the first error), so importing `fleet_rlm.errors` costs nothing. Leaf module.
"""

from __future__ import annotations

import functools
import string
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("codes.toml")


@dataclass(frozen=True)
class ErrorSpec:
    code: str
    status: int | None
    """HTTP status; None for a code only the CLI or a WebSocket frame shows."""
    message: str
    """Message template: `{name}` is what the raiser fills in."""
    action: str
    """The one action; a `{name}` in it is filled from the error's details."""
    also: tuple[int, ...] = ()
    """Other statuses the code has in other situations (504 for a timeout where 502 is the rule)."""
    contextual: bool = False
    """A generic code (not_found, conflict...): the raiser's action, naming the resource, wins over this one."""


@functools.cache
def catalog() -> dict[str, ErrorSpec]:
    table = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    return {
        code: ErrorSpec(
            code,
            entry.get("status"),
            entry["message"],
            entry["action"],
            tuple(entry.get("also", ())),
            bool(entry.get("contextual", False)),
        )
        for code, entry in table.items()
    }


def spec_for(code: str) -> ErrorSpec | None:
    return catalog().get(code)


def fields_of(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value) or "none"
    return str(value)


def fill(template: str, values: dict[str, Any]) -> str | None:
    """`template` with its fields filled from `values`; None when one is missing."""
    try:
        return template.format_map({key: _text(value) for key, value in values.items()})
    except (KeyError, IndexError, ValueError):
        return None


def action_for(code: str, details: dict[str, Any], fallback: str | None) -> str | None:
    """The catalog's action for `code` (its fields from `details`); the raiser's own only for an unknown or a
    contextual code, or when a field the catalog's action names is missing from the details."""
    spec = spec_for(code)
    if spec is None or (spec.contextual and fallback):
        return fallback
    return fill(spec.action, details) or fallback
