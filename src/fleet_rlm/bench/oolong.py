"""OOLONG (Bertsch et al., 2025, "Oolong: Evaluating Long Context Reasoning and Aggregation Capabilities",
arXiv:2511.02817): load the official oolong-synth rows from a local file, score with the paper's rule, or
generate offline synthetic counting/classification/extraction tasks.

Nothing is fetched: download oolong-synth yourself (JSONL, a JSON list, or Parquet when pyarrow is
installed). Rows carry `context_window_text`, `question`, `answer` (a Python-literal list such as "['entity']"
or "[10]"), `answer_type` (e.g. ANSWER_TYPE.NUMERIC), `dataset` (the split, e.g. trec_coarse), `context_len`.
Scoring follows the paper: numeric answers score 0.75^|error|, others exact match after answer parsing (this
is our reimplementation of that parsing: the text after the last ':' or after "the answer is", without
quotes, brackets and final punctuation, compared case-insensitively).
"""

from __future__ import annotations

import ast
import json
import random
import re
from pathlib import Path
from typing import Any

from fleet_rlm.bench.types import BenchTask
from fleet_rlm.errors import InvalidInput, NotFound

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_PREFIX = re.compile(r"^(?:so,?\s+)?(?:the\s+)?(?:final\s+)?answer\s+is\s*", re.I)


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise NotFound(
            f"no OOLONG data at {path}",
            code="bench_data_not_found",
            action="download oolong-synth (JSONL/JSON/Parquet) and pass its path with --data",
        )
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise InvalidInput(
                "reading Parquet needs pyarrow",
                code="bench_parquet_unsupported",
                action="install pyarrow, or convert the file to JSONL",
            ) from exc
        return list(pq.read_table(path).to_pylist())
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_tasks(path: Path, *, split: str = "trec_coarse", context_len: int | None = 131072) -> list[BenchTask]:
    """Rows of `split` (the `dataset` field) at `context_len` (when rows carry it) as tasks."""
    tasks: list[BenchTask] = []
    for index, row in enumerate(read_rows(path)):
        if split and str(row.get("dataset", split)) != split:
            continue
        if context_len is not None and "context_len" in row and int(row["context_len"]) != context_len:
            continue
        tasks.append(
            BenchTask(
                id=f"oolong-{row.get('id', index)}",
                suite="oolong",
                prompt=str(row["question"]),
                context=str(row["context_window_text"]),
                expected=str(row["answer"]),
                meta={
                    "answer_type": str(row.get("answer_type", "")),
                    "task": str(row.get("task", "")),
                    "context_len": row.get("context_len"),
                    "split": split,
                },
            )
        )
    if not tasks:
        raise InvalidInput(
            f"no OOLONG rows for split {split!r} at context length {context_len}",
            code="bench_no_tasks",
            action="check --split and --context-len against the file (fields `dataset`, `context_len`)",
        )
    return tasks


def gold_value(answer: str) -> str:
    """The first element of the literal list the dataset stores ("['entity']" -> "entity", "[10]" -> "10")."""
    text = answer.strip()
    if text.startswith("["):
        try:
            value = ast.literal_eval(text)
            if isinstance(value, list) and value:
                return str(value[0])
        except (ValueError, SyntaxError):
            pass
    return text


def parse_answer(output: str) -> str:
    text = output.strip()
    if ":" in text:
        text = text.rsplit(":", 1)[1]
    text = _PREFIX.sub("", text.strip())
    return text.strip().strip("'\"`[]()*").rstrip(".!").strip().lower()


def score(expected: str, output: str, answer_type: str = "") -> float:
    gold = gold_value(expected)
    numeric = "NUMERIC" in answer_type.upper() or (not answer_type and _NUMBER.fullmatch(gold) is not None)
    if numeric:
        found = _NUMBER.findall(output)
        if not found:
            return 0.0
        return float(0.75 ** abs(float(gold) - float(found[-1])))
    return float(parse_answer(output) == gold.strip().lower())


CATEGORIES = ("location", "person", "number", "entity", "description", "abbreviation")
_WORDS = [
    "river",
    "city",
    "engine",
    "garden",
    "window",
    "signal",
    "market",
    "winter",
    "letter",
    "bridge",
    "planet",
    "story",
]


def synthetic(*, tasks: int, records: int = 400, seed: int = 0) -> list[BenchTask]:
    """Offline tasks over a generated log of labelled records: counting (numeric), most-common (label) and
    extraction (exact) questions, in rotation."""
    rng = random.Random(seed)
    out: list[BenchTask] = []
    for i in range(tasks):
        rows = [(1000 + n, rng.choice(CATEGORIES), " ".join(rng.choices(_WORDS, k=6))) for n in range(records)]
        context = "\n".join(f"record {rid} || category: {cat} || text: {words}" for rid, cat, words in rows)
        counts = {c: sum(1 for _, cat, _ in rows if cat == c) for c in CATEGORIES}
        kind = ("counting", "classification", "extraction")[i % 3]
        if kind == "counting":
            target = rng.choice(CATEGORIES)
            prompt = f"How many records have the category '{target}'? Answer with a number."
            expected, answer_type = f"[{counts[target]}]", "ANSWER_TYPE.NUMERIC"
        elif kind == "classification":
            best = max(CATEGORIES, key=lambda c: (counts[c], c))
            prompt = "Which category is the most common among the records? Answer with the category only."
            expected, answer_type = repr([best]), "ANSWER_TYPE.LABEL"
        else:
            rid, _, words = rng.choice(rows)
            marker = f"zq{rng.randint(10000, 99999)}"
            rows[rid - 1000] = (rid, rows[rid - 1000][1], f"{words} {marker}")
            context = "\n".join(f"record {r} || category: {cat} || text: {w}" for r, cat, w in rows)
            prompt = f"Which record number has the word '{marker}' in its text? Answer with the number."
            expected, answer_type = repr([str(rid)]), "ANSWER_TYPE.EXTRACTION"
        out.append(
            BenchTask(
                id=f"oolong-synthetic-{seed}-{i}",
                suite="oolong",
                prompt=prompt,
                context=context,
                expected=expected,
                meta={"answer_type": answer_type, "task": kind, "synthetic": True},
            )
        )
    return out
