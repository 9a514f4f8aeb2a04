"""Offline haystacks: RULER's repeated "noise" sentences, or essay-like prose from a small Markov chain over an
embedded seed text (nothing is downloaded). Deterministic for a seed."""

from __future__ import annotations

import random
from typing import Literal

Haystack = Literal["noise", "essay"]

NOISE = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "

SEED_TEXT = """
The most important thing about a startup is that it grows quickly, and everything else follows from that.
When people start companies they often think the hard part is the idea, but the hard part is the execution.
A good essay is a walk through an idea, and the writer does not always know where the walk will end.
Most of what we learn in school is how to pass tests, which is a different skill from learning to think.
The best way to get ideas is to work on hard problems and notice what seems strange or missing.
Cities tell you what they value, and the message of a city is something you absorb without noticing.
Writing is thinking made visible, and a sentence that is hard to write is often a thought not yet finished.
Ambitious projects look like toys at first, because the people who build them are exploring the edges.
A programmer who understands the problem well can write a small program that does a great deal.
The curious thing about wealth is that it can be created, not merely moved from one place to another.
People who do great work are usually more interested in the work than in the recognition it brings.
Design is a matter of taste, and taste can be learned by looking closely at what others have made.
It is easier to make something people want if you are one of the people who want it.
Good questions are often more valuable than good answers, because they point at what we do not know.
The world changes slowly and then suddenly, and the sudden part is built on the slow part.
"""


def _chain(text: str) -> dict[tuple[str, str], list[str]]:
    words = text.split()
    chain: dict[tuple[str, str], list[str]] = {}
    for a, b, c in zip(words, words[1:], words[2:], strict=False):
        chain.setdefault((a, b), []).append(c)
    return chain


_CHAIN = _chain(SEED_TEXT)
_STARTS = [key for key in _CHAIN if key[0][:1].isupper()]


def essay_text(chars: int, rng: random.Random) -> str:
    """About `chars` characters of essay-like prose, in paragraphs."""
    parts: list[str] = []
    size = 0
    key = rng.choice(_STARTS)
    paragraph = 0
    while size < chars:
        word = rng.choice(_CHAIN.get(key, ["The"]))
        parts.append(word)
        size += len(word) + 1
        key = (key[1], word)
        if word.endswith(".") and rng.random() < 0.3:
            paragraph += 1
            if paragraph % 5 == 0:
                parts.append("\n\n")
            key = rng.choice(_STARTS)
            parts.extend(key)
            size += len(key[0]) + len(key[1]) + 2
        if key not in _CHAIN:
            key = rng.choice(_STARTS)
    return " ".join(parts)[:chars]


def noise_text(chars: int) -> str:
    return (NOISE * (chars // len(NOISE) + 1))[:chars]


def haystack_text(kind: Haystack, chars: int, rng: random.Random) -> str:
    return noise_text(chars) if kind == "noise" else essay_text(chars, rng)


def sentence_boundary(text: str, position: int) -> int:
    """The start of the sentence at or after `position` (so a needle never splits a sentence)."""
    if position <= 0:
        return 0
    found = text.find(". ", position)
    return len(text) if found < 0 else found + 2
