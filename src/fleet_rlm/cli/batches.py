"""Progress of `llm_query_batched` calls: k/N done per batch, as a live bar on terminals.

On a terminal a rich progress bar per batch updates in place; elsewhere (pipes, logs, tests) one line when a
batch starts and one when it completes, so scripted output stays short and stable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text


@dataclass
class _Batch:
    size: int
    depth: int
    done: int = 0
    failed: int = 0
    task: TaskID | None = None


class BatchTracker:
    def __init__(self, console: Console, *, enabled: bool = True) -> None:
        self.console = console
        self.enabled = enabled
        self.batches: dict[str, _Batch] = {}
        self.calls: dict[str, str] = {}  # sub-LM call_id -> batch_id
        self.progress: Progress | None = None

    def started(self, event: Any) -> None:
        batch = self.batches.get(event.batch_id)
        if batch is None:
            batch = _Batch(size=event.batch_size or 1, depth=event.depth)
            self.batches[event.batch_id] = batch
            self._open(event.batch_id, batch)
        self.calls[event.call_id] = event.batch_id

    def ended(self, event: Any) -> bool:
        """Count a finished call; False when the call was not part of a batch."""
        batch_id = self.calls.pop(event.call_id, None)
        if batch_id is None:
            return False
        batch = self.batches[batch_id]
        batch.done += 1
        batch.failed += 0 if event.ok else 1
        if self.progress is not None and batch.task is not None:
            self.progress.update(batch.task, completed=batch.done)
        if batch.done >= batch.size:
            self._complete(batch_id, batch)
        return True

    def _label(self, batch: _Batch) -> str:
        return f"{'│ ' * batch.depth}sub-LM batch"

    def _open(self, batch_id: str, batch: _Batch) -> None:
        if not self.enabled:
            return
        if self.console.is_terminal:
            if self.progress is None:
                self.progress = Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn("done"),
                    TimeElapsedColumn(),
                    console=self.console,
                    transient=False,
                )
                self.progress.start()
            batch.task = self.progress.add_task(self._label(batch), total=batch.size)
        else:
            self.console.print(Text(f"{self._label(batch)}: {batch.size} prompts", style="cyan"))

    def _complete(self, batch_id: str, batch: _Batch) -> None:
        del self.batches[batch_id]
        if not self.enabled:
            return
        failed = f", {batch.failed} failed" if batch.failed else ""
        if self.progress is None:
            self.console.print(Text(f"{self._label(batch)}: {batch.done}/{batch.size} done{failed}", style="cyan"))
        elif not self.batches:
            self.close()

    def close(self) -> None:
        """Stop the live bar (at the end of a turn, or when every batch finished)."""
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
