"""S-NIAH: single needle in a haystack, RULER-style (Hsieh et al., 2024, "RULER: What's the real context size of
your long-context language models?").

Needle: "One of the special magic numbers for {key} is: {value}." with an adjective-noun key and a 7-digit
value, inserted at depths spread evenly over the document; the answer is scored by exact match. Lengths are in
tokens, approximated as 4 characters per token (RULER sizes its haystacks in tokens).
"""

from __future__ import annotations

import random
import re

from fleet_rlm.bench.haystack import Haystack, haystack_text, sentence_boundary
from fleet_rlm.bench.types import BenchTask
from fleet_rlm.errors import InvalidInput

CHARS_PER_TOKEN = 4
ADJECTIVES = [
    "ancient",
    "brave",
    "calm",
    "daring",
    "eager",
    "fancy",
    "gentle",
    "hollow",
    "icy",
    "jolly",
    "keen",
    "lively",
    "misty",
    "noble",
    "odd",
    "proud",
    "quiet",
    "rapid",
    "silent",
    "tidy",
    "upbeat",
    "vivid",
    "witty",
    "young",
    "zealous",
    "amber",
    "bitter",
    "crimson",
    "dusty",
    "elegant",
    "frozen",
    "golden",
]
NOUNS = [
    "anchor",
    "badger",
    "canyon",
    "dolphin",
    "ember",
    "falcon",
    "glacier",
    "harbor",
    "island",
    "jaguar",
    "kettle",
    "lantern",
    "meadow",
    "nectar",
    "orchard",
    "pepper",
    "quarry",
    "river",
    "saddle",
    "tiger",
    "umbrella",
    "valley",
    "walrus",
    "yacht",
    "zebra",
    "beacon",
    "compass",
    "desert",
    "forest",
]
NEEDLE = "One of the special magic numbers for {key} is: {value}."
QUESTION = "What is the special magic number for {key} mentioned in the provided text? Answer with the number only."
_SIZES = {"k": 1024, "m": 1024 * 1024}


def parse_length(text: str) -> int:
    """'8k' -> 8192 tokens, '1m' -> 1048576, '5000' -> 5000."""
    value = text.strip().lower()
    match = re.fullmatch(r"(\d+)([km]?)", value)
    if not match or int(match.group(1)) <= 0:
        raise InvalidInput(
            f"bad length {text!r}",
            code="bench_length_invalid",
            action="give lengths like 8k,32k,128k,1m (tokens)",
        )
    return int(match.group(1)) * _SIZES.get(match.group(2), 1)


def parse_lengths(text: str) -> list[int]:
    return [parse_length(part) for part in text.split(",") if part.strip()]


def length_label(tokens: int) -> str:
    for suffix, size in (("m", _SIZES["m"]), ("k", _SIZES["k"])):
        if tokens % size == 0:
            return f"{tokens // size}{suffix}"
    return str(tokens)


def generate(*, lengths: list[int], tasks: int, seed: int = 0, haystack: Haystack = "essay") -> list[BenchTask]:
    """`tasks` tasks per length, needle depths spread evenly from 0% to 100% of each document."""
    rng = random.Random(seed)
    out: list[BenchTask] = []
    for tokens in lengths:
        chars = tokens * CHARS_PER_TOKEN
        for i in range(tasks):
            depth = i / (tasks - 1) if tasks > 1 else 0.5
            key = f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}"
            value = str(rng.randint(1_000_000, 9_999_999))
            needle = NEEDLE.format(key=key, value=value)
            hay = haystack_text(haystack, max(0, chars - len(needle) - 1), rng)
            at = sentence_boundary(hay, int(len(hay) * depth))
            context = f"{hay[:at]}{needle} {hay[at:]}"
            out.append(
                BenchTask(
                    id=f"sniah-{length_label(tokens)}-{seed}-{i}",
                    suite="sniah",
                    prompt=QUESTION.format(key=key),
                    context=context,
                    expected=value,
                    meta={"length": length_label(tokens), "depth": round(depth, 3), "haystack": haystack, "key": key},
                )
            )
    return out


def score(expected: str, answer: str) -> float:
    """Exact match after trimming whitespace, quotes and a final period."""
    return float(answer.strip().strip("'\"`").rstrip(".").strip() == expected)
