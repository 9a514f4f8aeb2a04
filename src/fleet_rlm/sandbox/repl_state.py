"""The REPL's durable state as the worker reports it after a cell (worker_state.py), checked on the host.

Guest code shares the worker's process, so every text of a `state` report is guest-written: it is measured over
its bytes first (`frame_limits.measure` with `SNAPSHOT_LIMITS`: size, JSON values, nesting, decoded bound),
then decoded by `worker_state.decode`, which builds only plain builtin values and imports nothing (a module tag
is checked as a name, never imported on the host). A text that fails is not kept, with the reason. A report may
name at most `MAX_NAMES` variables and carry at most `MAX_SNAPSHOT_CHARS` of new texts; past that, the rest is
named as not kept.

`ReplStateTracker` follows one worker: the worker sends only the variables whose text changed since its last
report, the tracker keeps the texts of the others, and every report becomes a complete `ReplState`
(name -> sha256 of its text, plus the new texts by hash), which is what a snapshot stores: an unchanged value is
the same hash, and the same blob.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from fleet_rlm.sandbox import worker_state
from fleet_rlm.sandbox.frame_limits import FrameLimits, measure
from fleet_rlm.sandbox.protocol import FrameError

MAX_NAMES = worker_state.MAX_NAMES
NAME_CHARS = 100
REASON_CHARS = 300
MAX_VALUE_CHARS = worker_state.MAX_VALUE_CHARS
MAX_SNAPSHOT_CHARS = 16 * 1024 * 1024
"""New texts one report may carry; the values past it are not kept in that snapshot."""
SNAPSHOT_LIMITS = FrameLimits(
    max_header=MAX_VALUE_CHARS * 4,  # bytes of UTF-8: a text of MAX_VALUE_CHARS characters
    max_depth=worker_state.MAX_DEPTH + 2,  # a tag object and its array around each level
    max_values=worker_state.MAX_ITEMS * 2,
    max_decoded=64 * 1024 * 1024,
)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_text(text: Any) -> str | None:
    """None when `text` is a snapshot value the host accepts, else why not (never raises)."""
    if not isinstance(text, str):
        return "not a text"
    if len(text) > MAX_VALUE_CHARS:
        return f"larger than {MAX_VALUE_CHARS // (1024 * 1024)} MiB"
    try:
        measure(text.encode("utf-8", "surrogatepass"), SNAPSHOT_LIMITS)
        worker_state.decode(text, import_module=_module_name)
    except FrameError as exc:
        return f"refused: {exc}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"refused: {str(exc)[:200] or type(exc).__name__}"
    return None


def _module_name(name: str) -> str:
    """A module tag is checked as a name only: the host imports nothing (the guest imports it on restore)."""
    if len(name) > NAME_CHARS or not all(part.isidentifier() for part in name.split(".")):
        raise ValueError("a module tag must name a module")
    return name


@dataclass(frozen=True)
class ReplState:
    """The REPL after one cell: name -> sha256 of its text, the texts not seen before (by hash), and the
    variables not kept with why."""

    variables: dict[str, str]
    blobs: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


class ReplStateTracker:
    """The texts one worker has reported, completed into a `ReplState` at each report."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}  # name -> text (as reported, checked)

    def reset(self) -> None:
        """The worker was replaced (or is new to this tracker): ask it for everything next time."""
        self.texts = {}

    @property
    def mode(self) -> str:
        return "delta" if self.texts else "full"

    def update(self, header: dict[str, Any]) -> ReplState | None:
        """The state after this `done` frame, or None when the worker sent none (or garbage)."""
        report = header.get("state")
        if not isinstance(report, dict):
            return None
        changed, kept, skipped = report.get("changed"), report.get("kept"), report.get("skipped")
        changed = changed if isinstance(changed, dict) else {}
        kept = kept if isinstance(kept, list) else []
        not_kept = {
            _cut(name, NAME_CHARS): _cut(why, REASON_CHARS)
            for name, why in list((skipped if isinstance(skipped, dict) else {}).items())[:MAX_NAMES]
            if isinstance(name, str) and isinstance(why, str)
        }
        texts: dict[str, str] = {}
        for name in kept[: MAX_NAMES * 2]:
            if isinstance(name, str) and name in self.texts:
                texts[name] = self.texts[name]
            elif isinstance(name, str) and _name_ok(name):
                not_kept[name] = "its earlier value was not received"
        spent = 0
        for name, text in list(changed.items())[: MAX_NAMES * 2]:
            if not _name_ok(name):
                continue
            why = check_text(text)
            if why is None and spent + len(text) > MAX_SNAPSHOT_CHARS:
                why = f"the snapshot's new values passed {MAX_SNAPSHOT_CHARS // (1024 * 1024)} MiB"
            if why is not None:
                not_kept[name] = why
                continue
            spent += len(text)
            texts[name] = text
        names = list(texts)[:MAX_NAMES]
        self.texts = {name: texts[name] for name in names}
        variables = {name: text_hash(text) for name, text in self.texts.items()}
        blobs = {variables[name]: texts[name] for name in names if name in changed}
        return ReplState(variables, blobs, dict(list(not_kept.items())[:MAX_NAMES]))


def parse_restored(header: dict[str, Any], asked: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """(restored, {name: why not}) of a cell that was asked to restore `asked`, bounded to those names."""
    done = header.get("restored")
    failed = header.get("not_restored")
    restored = [n for n in done if isinstance(n, str) and n in asked] if isinstance(done, list) else []
    reasons = failed if isinstance(failed, dict) else {}
    not_restored = {
        name: _cut(str(reasons.get(name) or "the sandbox did not load it"), REASON_CHARS)
        for name in asked
        if name not in restored
    }
    return restored, not_restored


def _name_ok(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier() and len(name) <= NAME_CHARS


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
