"""Compare two optimization runs, and render one run as a Markdown report (baseline vs optimized)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any


def _examples(results: Mapping[str, Any] | None) -> dict[int, Mapping[str, Any]]:
    return {int(e["index"]): e for e in (results or {}).get("examples", [])}


def _score(example: Mapping[str, Any] | None, side: str = "optimized") -> float | None:
    if not example or not example.get(side):
        return None
    return float(example[side]["score"])


def compare_runs(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """a and b are run summaries: {id, module, scores, results}. Per example: the optimized score of each."""
    ea, eb = _examples(a.get("results")), _examples(b.get("results"))
    rows = []
    for index in sorted(set(ea) | set(eb)):
        sa, sb = _score(ea.get(index)), _score(eb.get(index))
        delta = None if sa is None or sb is None else round(sb - sa, 4)
        rows.append({"index": index, "a": sa, "b": sb, "delta": delta})
    score_a = (a.get("scores") or {}).get("optimized")
    score_b = (b.get("scores") or {}).get("optimized")
    return {
        "a": {"id": a["id"], "module": a["module"], "scores": a.get("scores") or {}},
        "b": {"id": b["id"], "module": b["module"], "scores": b.get("scores") or {}},
        "same_module": a["module"] == b["module"],
        "delta": None if score_a is None or score_b is None else round(score_b - score_a, 4),
        "examples": rows,
        "better": sum(1 for r in rows if (r["delta"] or 0) > 0),
        "worse": sum(1 for r in rows if (r["delta"] or 0) < 0),
    }


def _cell(value: Any, limit: int = 80) -> str:
    text = str(value if value is not None else "").replace("\n", " ").replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def markdown_report(run: Mapping[str, Any]) -> str:
    """Baseline vs optimized on validation, per-example diff, and the instruction changes."""
    scores = run.get("scores") or {}
    results = run.get("results") or {}
    lines = [
        f"# Optimization report: {run['module']}",
        "",
        f"- Run: `{run['id']}` ({run.get('status', '?')})",
        f"- Dataset: {run.get('dataset_name') or run.get('dataset_id') or '-'}",
        f"- Version: {run.get('program_version') or '(none saved)'}",
        f"- Budget: {_cell((run.get('config') or {}).get('budget'))}",
        "",
        "## Validation scores",
        "",
        "| | score |",
        "|---|---|",
        f"| baseline | {scores.get('baseline', '-')} |",
        f"| optimized | {scores.get('optimized', '-')} |",
        "",
        "## Per example",
        "",
        "| # | expected | baseline | score | optimized | score | change |",
        "|---|---|---|---|---|---|---|",
    ]
    for ex in results.get("examples", []):
        base, after = ex.get("baseline") or {}, ex.get("optimized") or {}
        b, o = base.get("score"), after.get("score")
        change = "" if b is None or o is None else ("better" if o > b else "worse" if o < b else "same")
        lines.append(
            f"| {ex['index']} | {_cell(ex.get('expected'))} | {_cell(base.get('output'))} | {b} "
            f"| {_cell(after.get('output'))} | {o if o is not None else '-'} | {change} |"
        )
    lines += ["", "## Prompt changes", ""]
    before, after_text = results.get("instructions_before", {}), results.get("instructions_after", {})
    for name in sorted(set(before) | set(after_text)):
        old, new = before.get(name, ""), after_text.get(name, "")
        lines.append(f"### `{name}`")
        lines.append("")
        if old == new:
            lines += ["(unchanged)", ""]
            continue
        diff = difflib.unified_diff(old.splitlines(), new.splitlines(), "baseline", "optimized", lineterm="")
        lines += ["```diff", *diff, "```", ""]
    return "\n".join(lines) + "\n"
