"""Signatures of the task modules GEPA can optimize besides the runtime's own programs.

They are useful standalone programs (the CLI and API can run them through `optimize.modules`) and small
enough for a dataset of a few dozen rows to teach something.
"""

from __future__ import annotations

import dspy


class SummarizeDocument(dspy.Signature):
    """Summarize a long document faithfully: keep every key fact, decision and number; no speculation."""

    document: str = dspy.InputField(desc="The document to summarize (may be long)")
    summary: str = dspy.OutputField(desc="A concise summary covering the key points")


class ExtractFromLogs(dspy.Signature):
    """Extract exactly the items the question asks for from the log lines, one per line, nothing else."""

    logs: str = dspy.InputField(desc="Raw log lines")
    question: str = dspy.InputField(desc="What to extract, e.g. 'the request ids of failed requests'")
    answer: str = dspy.OutputField(desc="The extracted items, one per line")


class CitedAnswer(dspy.Signature):
    """Answer the question using only the numbered sources, and cite the ids of the sources you used."""

    question: str = dspy.InputField()
    sources: str = dspy.InputField(desc="Numbered passages such as '[1] ...'")
    answer: str = dspy.OutputField(desc="A short answer grounded in the sources")
    citations: list[str] = dspy.OutputField(desc="The ids of the sources supporting the answer, e.g. ['1', '3']")


class SkillTask(dspy.Signature):
    """Complete the task following the skill's instructions."""

    task: str = dspy.InputField()
    context: str = dspy.InputField(desc="Material the task refers to (may be empty)")
    answer: str = dspy.OutputField()
