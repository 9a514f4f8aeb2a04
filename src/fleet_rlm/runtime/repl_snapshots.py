"""Per-iteration snapshots of the REPL, and the state a turn starts its REPL from.

After every RLM cell (root and children) the observed interpreter hands a `ReplSnapshot` to the turn's sink
(`RecordingSink.record_lm`, the path LM recordings take; the runtime never stores anything): the variables as
name -> sha256 of their encoded text (sandbox/worker_state.py), the texts not sent before, the variables that
could not be kept with why, and the cell's result as dspy received it (`cell`), which is what lets a resumed
run give dspy its earlier iterations without running them again.

A turn may start from a `ReplRestore` (a fork's origin after its last kept turn, or an interrupted run's last
completed iteration): the root REPL loads it before its first cell and a `repl_restored` event says what came
back and what did not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ReplSnapshot:
    """The REPL of one actor after one iteration."""

    actor: str
    depth: int
    iteration: int
    variables: dict[str, str]  # name -> sha256 of its text
    blobs: dict[str, str]  # sha256 -> text, for the texts this actor had not sent before
    skipped: dict[str, str]  # name -> why it is not kept
    cell: dict[str, Any] = field(default_factory=dict)  # `cell_record` of the cell's result


@dataclass(frozen=True)
class ReplRestore:
    """What a turn's root REPL starts from."""

    texts: dict[str, str]  # name -> encoded value
    not_kept: dict[str, str]  # name -> why it was not in the snapshot
    source: str  # "fork" | "resume"
    source_run_id: str
    iteration: int


@dataclass(frozen=True)
class ResumePoint:
    """An interrupted run continued: its root's first `len(cells)` iterations are answered from their recorded
    results (no cell runs, and their LM calls come from the recording), then the REPL is restored and the run
    goes on live."""

    cells: tuple[dict[str, Any], ...]
    restore: ReplRestore
    exchanges: tuple[Any, ...] = ()  # the run's recorded `LMExchange`s: answered from here, not asked again
    first_seq: int = 1  # where the run's new LM exchanges are numbered from


def cell_record(result: Any = None, error: BaseException | None = None) -> dict[str, Any]:
    """A cell's result as dspy received it, as data: its text, or the error it raised."""
    if error is None:
        return {"kind": "ok", "text": None if result is None else str(result)}
    if isinstance(error, SyntaxError):
        detail = [error.filename, error.lineno, error.offset, error.text]
        return {"kind": "syntax", "text": str(error.msg), "detail": detail}
    return {"kind": "error", "text": str(error)}


def replay_cell(record: dict[str, Any]) -> Any:
    """The recorded result again: returned, or raised as the same kind of error."""
    from dspy.primitives.code_interpreter import CodeExecutionError

    kind, text = record.get("kind"), record.get("text")
    if kind == "syntax":
        detail = record.get("detail") or [None, None, None, None]
        raise SyntaxError(str(text), tuple(detail))
    if kind == "error":
        raise CodeExecutionError(str(text))
    return text
