"""Regenerate openapi.yaml from the app (`--check` fails on drift instead of writing)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from fleet_rlm.api import create_app
from fleet_rlm.config import Settings

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "openapi.yaml"


def render() -> str:
    settings = Settings(_env_file=None, data_dir=Path("/nonexistent"))  # type: ignore[call-arg]
    schema = create_app(settings).openapi()
    schema["info"]["version"] = "v1"  # the contract's version, not the package build
    return yaml.safe_dump(schema, sort_keys=False, allow_unicode=True, width=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if openapi.yaml is out of date")
    args = parser.parse_args()
    text = render()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print("openapi.yaml is out of date: run `make api-sync`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
