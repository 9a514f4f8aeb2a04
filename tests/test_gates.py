"""Code-size gate: one concept per module; no source file over 500 lines."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.db_independent

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 500


def _sources() -> list[Path]:
    roots = [ROOT / "src" / "fleet_rlm", ROOT / "migrations", ROOT / "scripts", ROOT / "tests"]
    files = [path for root in roots for path in root.rglob("*.py")]
    return [path for path in files if "ui/dist" not in path.as_posix()]


def test_no_source_file_over_500_lines() -> None:
    too_long = {}
    for path in _sources():
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > LIMIT:
            too_long[str(path.relative_to(ROOT))] = count
    assert not too_long, f"split these modules (limit {LIMIT} lines): {too_long}"


def test_gate_sees_the_package() -> None:
    assert any(path.name == "config.py" for path in _sources())


def test_no_import_cycles() -> None:
    """No module of the package imports itself back through others (lazy and type-only imports included)."""
    import grimp

    graph = grimp.build_graph("fleet_rlm", cache_dir=None)
    edges = {m: graph.find_modules_directly_imported_by(m) & graph.modules for m in graph.modules}
    cycles = []
    for start in sorted(edges):
        for nxt in edges[start]:
            if graph.find_shortest_chain(importer=nxt, imported=start) is not None:
                cycles.append(f"{start} -> {nxt}")
    assert not cycles, f"import cycles: {cycles[:10]}"
