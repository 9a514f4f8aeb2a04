"""Scorers on known answers, generators, and the harness (resume, concurrency, failures) with scripted models."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest

from fleet_rlm.bench import BenchTask, TaskOutcome, oolong, run_bench, sniah
from fleet_rlm.bench.summary import REFERENCES, summarize
from fleet_rlm.errors import InvalidInput

NEEDLE = re.compile(r"special magic numbers for (\S+) is: (\d{7})")


def sniah_oracle(prompt: str, context: str) -> TaskOutcome:
    key = re.search(r"number for (\S+) mentioned", prompt)
    assert key is not None
    found = dict(NEEDLE.findall(context))
    return TaskOutcome(answer=found[key.group(1)], seconds=0.01, lm_calls=1, tokens_in=10)


def test_sniah_generator_places_one_needle_at_spread_depths() -> None:
    tasks = sniah.generate(lengths=[sniah.parse_length("8k")], tasks=5, seed=3)
    assert [t.meta["depth"] for t in tasks] == [0.0, 0.25, 0.5, 0.75, 1.0]
    for task in tasks:
        assert abs(len(task.context) - 8192 * 4) < 200
        matches = NEEDLE.findall(task.context)
        assert matches == [(task.meta["key"], task.expected)] and len(task.expected) == 7
        position = task.context.index("One of the special")
        assert abs(position / len(task.context) - task.meta["depth"]) < 0.02
    again = sniah.generate(lengths=[8192], tasks=5, seed=3)
    assert [t.context for t in again] == [t.context for t in tasks]
    noise = sniah.generate(lengths=[1024], tasks=1, seed=0, haystack="noise")[0]
    assert noise.context.startswith("The grass is green.")


def test_sniah_lengths_parse() -> None:
    assert sniah.parse_lengths("8k,32k,128k,1m") == [8192, 32768, 131072, 1048576]
    assert sniah.length_label(1048576) == "1m"
    with pytest.raises(InvalidInput) as bad:
        sniah.parse_length("8q")
    assert bad.value.code == "bench_length_invalid"


def test_sniah_oracle_scores_100_and_wrong_model_0(tmp_path: Path) -> None:
    tasks = sniah.generate(lengths=[4096], tasks=4, seed=1)

    def scorer(task: BenchTask, answer: str) -> float:
        return sniah.score(task.expected, answer)

    good = run_bench(tasks, sniah_oracle, scorer, results_path=tmp_path / "good.jsonl")
    assert [r.score for r in good] == [1.0] * 4
    wrong = run_bench(tasks, lambda p, c: TaskOutcome("1234567", 0.0), scorer, results_path=tmp_path / "bad.jsonl")
    assert [r.score for r in wrong] == [0.0] * 4
    assert sniah.score("7654321", " 7654321.\n") == 1.0


def test_oolong_rule_numeric_partial_and_label_parsing() -> None:
    assert oolong.score("[10]", "10", "ANSWER_TYPE.NUMERIC") == 1.0
    assert oolong.score("[10]", "The count is 12", "ANSWER_TYPE.NUMERIC") == 0.75**2
    assert oolong.score("[10]", "Answer: 7", "ANSWER_TYPE.NUMERIC") == 0.75**3
    assert oolong.score("[10]", "no idea", "ANSWER_TYPE.NUMERIC") == 0.0
    assert oolong.score("['abbreviation']", "The answer is abbreviation.", "ANSWER_TYPE.LABEL") == 1.0
    assert oolong.score("['entity']", "Label: Entity", "ANSWER_TYPE.LABEL") == 1.0
    assert oolong.score("['entity']", "", "ANSWER_TYPE.LABEL") == 0.0
    assert oolong.score("['location']", "entity", "ANSWER_TYPE.LABEL") == 0.0


def synthetic_oracle(prompt: str, context: str) -> TaskOutcome:
    rows = [line.split(" || ") for line in context.splitlines()]
    if prompt.startswith("How many"):
        target = re.search(r"'(\w+)'", prompt).group(1)  # type: ignore[union-attr]
        return TaskOutcome(str(sum(1 for r in rows if r[1] == f"category: {target}")), 0.0)
    if prompt.startswith("Which category"):
        counts: dict[str, int] = {}
        for r in rows:
            counts[r[1][10:]] = counts.get(r[1][10:], 0) + 1
        return TaskOutcome(max(counts, key=lambda c: (counts[c], c)), 0.0)
    marker = re.search(r"'(zq\d+)'", prompt).group(1)  # type: ignore[union-attr]
    return TaskOutcome(next(r[0].split()[1] for r in rows if marker in r[2]), 0.0)


def test_oolong_synthetic_oracle_100_and_off_by_k(tmp_path: Path) -> None:
    tasks = oolong.synthetic(tasks=6, records=60, seed=2)
    assert {t.meta["task"] for t in tasks} == {"counting", "classification", "extraction"}

    def scorer(task: BenchTask, answer: str) -> float:
        return oolong.score(task.expected, answer, task.meta["answer_type"])

    results = run_bench(tasks, synthetic_oracle, scorer, results_path=tmp_path / "o.jsonl")
    assert [r.score for r in results] == [1.0] * 6
    counting = [t for t in tasks if t.meta["task"] == "counting"]

    def off_by_two(prompt: str, context: str) -> TaskOutcome:
        return TaskOutcome(str(int(synthetic_oracle(prompt, context).answer) + 2), 0.0)

    partial = run_bench(counting, off_by_two, scorer, results_path=tmp_path / "p.jsonl")
    assert [r.score for r in partial] == [0.75**2] * len(counting)


def test_oolong_loader_filters_split_and_length(tmp_path: Path) -> None:
    rows = [
        {
            "id": 1,
            "dataset": "trec_coarse",
            "context_len": 131072,
            "context_window_text": "c1",
            "question": "q1",
            "answer": "[3]",
            "answer_type": "ANSWER_TYPE.NUMERIC",
            "task": "counting",
        },
        {
            "id": 2,
            "dataset": "trec_coarse",
            "context_len": 1024,
            "context_window_text": "c2",
            "question": "q2",
            "answer": "['entity']",
            "answer_type": "ANSWER_TYPE.LABEL",
        },
        {
            "id": 3,
            "dataset": "spam",
            "context_len": 131072,
            "context_window_text": "c3",
            "question": "q3",
            "answer": "['spam']",
            "answer_type": "ANSWER_TYPE.LABEL",
        },
    ]
    path = tmp_path / "oolong.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tasks = oolong.load_tasks(path, split="trec_coarse", context_len=131072)
    assert [(t.id, t.context, t.expected) for t in tasks] == [("oolong-1", "c1", "[3]")]
    assert len(oolong.load_tasks(path, split="trec_coarse", context_len=None)) == 2
    with pytest.raises(InvalidInput):
        oolong.load_tasks(path, split="nope")


def test_harness_resumes_runs_concurrently_and_records_failures(tmp_path: Path) -> None:
    tasks = sniah.generate(lengths=[1024], tasks=6, seed=0)
    path = tmp_path / "r.jsonl"
    calls: list[str] = []
    lock = threading.Lock()

    def flaky(prompt: str, context: str) -> TaskOutcome:
        with lock:
            calls.append(prompt)
        if len(calls) == 2:
            raise RuntimeError("model down")
        return sniah_oracle(prompt, context)

    def scorer(task: BenchTask, answer: str) -> float:
        return sniah.score(task.expected, answer)

    first = run_bench(tasks[:3], flaky, scorer, results_path=path)
    assert sorted(r.score for r in first) == [0.0, 1.0, 1.0]
    assert [r.outcome.error for r in first if r.score == 0.0] == ["RuntimeError: model down"]
    seen: list[int] = []
    results = run_bench(
        tasks, sniah_oracle, scorer, results_path=path, concurrency=3, on_progress=lambda p, r: seen.append(p.done)
    )
    assert [r.task_id for r in results] == [t.id for t in tasks] and len(calls) == 3
    assert seen[0] == 3 and seen[-1] == 6
    assert len(path.read_text().splitlines()) == 6
    summary = {g.group: g for g in summarize(results)}
    assert summary["sniah 1k"].tasks == 6 and summary["sniah 1k"].failed == 1
    assert summary["sniah 1k"].reference == REFERENCES["sniah"]
