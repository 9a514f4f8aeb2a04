"""Regenerate openapi.yaml from the app (`--check` fails on drift instead of writing)."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from generated import write_or_check

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "openapi.yaml"


def render() -> str:
    settings = Settings(_env_file=None, data_dir=Path("/nonexistent"))  # type: ignore[call-arg]
    schema = create_app(settings).openapi()
    schema["info"]["version"] = "v1"  # the contract's version, not the package build
    return yaml.safe_dump(schema, sort_keys=False, allow_unicode=True, width=110)


def main(argv: list[str] | None = None) -> int:
    return write_or_check(__doc__.split("\n")[0], lambda: {TARGET: render()}, "make api-sync", argv)


if __name__ == "__main__":
    sys.exit(main())
