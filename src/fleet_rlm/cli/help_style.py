"""How `--help` shows options: flags take no value, so they show no `<bool>` type.

Typer's rich help prints every option's type (`<str>`, `<int>`); for boolean flags (`--json`, `--help`) that
reads as if the flag wanted a value. Typer has no setting for this, so the one method that renders the type
column is wrapped once, at import, to leave it empty for flags.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperOption

_display_type_rich = TyperOption.display_type_rich


def _flag_aware(self: TyperOption, ctx: Any) -> str | None:
    if self.is_flag and not self.count:
        return None
    return _display_type_rich(self, ctx)


def hide_flag_types() -> None:
    """Idempotent: flags render without a type in every Typer app of this process."""
    TyperOption.display_type_rich = _flag_aware  # type: ignore[method-assign]
