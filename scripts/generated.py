"""Shared by the generators: write generated files, or with `--check` fail when a committed copy is stale."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_or_check(
    description: str, render: Callable[[], Mapping[Path, str]], fix: str, argv: list[str] | None = None
) -> int:
    """`render()` maps each target to its text. Returns the process exit code."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="fail if a generated file is out of date")
    args = parser.parse_args(argv)
    outputs = render()
    if args.check:
        stale = [path for path, text in outputs.items() if not path.exists() or path.read_text("utf-8") != text]
        for path in stale:
            print(f"{path.relative_to(ROOT)} is out of date: run `{fix}`", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0
