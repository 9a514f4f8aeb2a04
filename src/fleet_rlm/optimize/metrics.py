"""Scores with feedback for optimizable modules: GEPA learns from the feedback text, not only the number.

Each metric takes the expected row values and the program's prediction fields and returns `Scored(score,
feedback)`; `gepa_metric` adapts one to DSPy GEPA's five-argument metric protocol.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import dspy


@dataclass(frozen=True)
class Scored:
    score: float
    feedback: str


Metric = Callable[[Mapping[str, Any], Mapping[str, Any]], Scored]

_PUNCT = str.maketrans("", "", string.punctuation)


def normalize(text: Any) -> str:
    """Lower case, no punctuation or articles, single spaces (SQuAD-style answer normalization)."""
    words = str(text or "").lower().translate(_PUNCT).split()
    return " ".join(w for w in words if w not in ("a", "an", "the"))


def token_f1(predicted: Any, expected: Any) -> float:
    pred, gold = normalize(predicted).split(), normalize(expected).split()
    if not pred or not gold:
        return float(pred == gold)
    common: dict[str, int] = {}
    for word in gold:
        common[word] = common.get(word, 0) + 1
    overlap = 0
    for word in pred:
        if common.get(word, 0) > 0:
            overlap += 1
            common[word] -= 1
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred), overlap / len(gold)
    return 2 * precision * recall / (precision + recall)


def split_items(value: Any) -> list[str]:
    """A list field from a dataset cell: a JSON list, or text separated by newlines, ';' or ','."""
    if isinstance(value, (list, tuple)):
        items = [str(v) for v in value]
    else:
        text = str(value or "")
        sep = "\n" if "\n" in text else ";" if ";" in text else ","
        items = text.split(sep)
    return [item.strip() for item in items if item.strip()]


def answer_match(expected: Mapping[str, Any], predicted: Mapping[str, Any], key: str = "answer") -> Scored:
    """1 for a normalized exact match, 0.8 when the expected answer is contained, else token F1 (scaled)."""
    gold, got = expected.get(key, ""), predicted.get(key, "")
    if normalize(gold) == normalize(got):
        return Scored(1.0, "Correct: the answer matches the expected answer.")
    if normalize(gold) and normalize(gold) in normalize(got):
        return Scored(0.8, f"Contains the expected answer {gold!r} but adds other text; answer more precisely.")
    f1 = token_f1(got, gold)
    return Scored(round(0.6 * f1, 4), f"Wrong: expected {gold!r}, got {str(got)[:300]!r} (token F1 {f1:.2f}).")


def label_match(expected: Mapping[str, Any], predicted: Mapping[str, Any], key: str = "mode") -> Scored:
    gold, got = normalize(expected.get(key)), normalize(predicted.get(key))
    if gold == got:
        return Scored(1.0, f"Correct {key}: {gold}.")
    return Scored(0.0, f"Wrong {key}: chose {got or '(nothing)'}, the right choice was {gold}.")


def items_f1(expected: Mapping[str, Any], predicted: Mapping[str, Any], key: str = "answer") -> Scored:
    """F1 over the set of extracted items (order and case do not matter)."""
    gold = {normalize(i) for i in split_items(expected.get(key))}
    got = {normalize(i) for i in split_items(predicted.get(key))}
    if not gold and not got:
        return Scored(1.0, "Correct: nothing to extract.")
    hit = gold & got
    precision = len(hit) / len(got) if got else 0.0
    recall = len(hit) / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if hit else 0.0
    missing, extra = sorted(gold - got), sorted(got - gold)
    notes = [f"F1 {f1:.2f}."]
    if missing:
        notes.append(f"Missed: {', '.join(missing[:10])}.")
    if extra:
        notes.append(f"Should not include: {', '.join(extra[:10])}.")
    return Scored(round(f1, 4), " ".join(notes))


def key_points(expected: Mapping[str, Any], predicted: Mapping[str, Any]) -> Scored:
    """Share of the expected key points the summary mentions (each point by token recall >= 0.6)."""
    points = split_items(expected.get("key_points"))
    summary = normalize(predicted.get("summary"))
    words = set(summary.split())
    covered, missed = 0, []
    for point in points:
        tokens = normalize(point).split()
        recall = sum(1 for t in tokens if t in words) / len(tokens) if tokens else 1.0
        if recall >= 0.6:
            covered += 1
        else:
            missed.append(point)
    score = covered / len(points) if points else 1.0
    feedback = f"Covered {covered} of {len(points)} key points."
    if missed:
        feedback += " Missing: " + "; ".join(missed[:8]) + "."
    return Scored(round(score, 4), feedback)


def cited_answer(expected: Mapping[str, Any], predicted: Mapping[str, Any]) -> Scored:
    """Half the answer's correctness, half the F1 of the cited source ids."""
    answer = answer_match(expected, predicted)
    citations = items_f1({"answer": expected.get("citations")}, {"answer": predicted.get("citations")}, key="answer")
    score = round(0.5 * answer.score + 0.5 * citations.score, 4)
    return Scored(score, f"Answer: {answer.feedback} Citations: {citations.feedback}")


METRICS: dict[str, Metric] = {
    "answer_match": answer_match,
    "label_match": label_match,
    "items_f1": items_f1,
    "key_points": key_points,
    "cited_answer": cited_answer,
}

METRIC_DESCRIPTIONS = {
    "answer_match": "1 for a normalized exact match, 0.8 when the answer contains the expected one, else 0.6 x F1",
    "label_match": "1 when the chosen label equals the expected one, else 0",
    "items_f1": "F1 over the set of extracted items",
    "key_points": "share of the expected key points the summary mentions",
    "cited_answer": "0.5 x answer match + 0.5 x citation F1",
}


def prediction_fields(prediction: Any) -> dict[str, Any]:
    if prediction is None:
        return {}
    if isinstance(prediction, Mapping):
        return dict(prediction)
    try:
        return dict(prediction.items())
    except Exception:
        return {}


def gepa_metric(metric: Metric) -> Callable[..., dspy.Prediction]:
    """DSPy GEPA's metric protocol: (gold, pred, trace, pred_name, pred_trace) -> Prediction(score, feedback)."""

    def run(gold: Any, pred: Any, trace: Any = None, pred_name: Any = None, pred_trace: Any = None) -> dspy.Prediction:
        scored = metric(dict(gold.items()) if hasattr(gold, "items") else {}, prediction_fields(pred))
        return dspy.Prediction(score=scored.score, feedback=scored.feedback)

    return run
