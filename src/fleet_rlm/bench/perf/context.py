"""What every scenario gets from the suite: mode, a private work directory, options, and a progress logger."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class SuiteContext:
    quick: bool
    work_dir: Path
    postgres_url: str | None = None
    verbose: bool = True
    stack: ExitStack = field(default_factory=ExitStack)
    _shared: dict[str, Any] = field(default_factory=dict)

    def shared(self, name: str, make: Callable[[], AbstractContextManager[Any]]) -> Any:
        """One instance per suite run (e.g. the fake LM and API server processes), closed when the suite ends."""
        if name not in self._shared:
            self._shared[name] = self.stack.enter_context(make())
        return self._shared[name]

    def close(self) -> None:
        self.stack.close()

    def log(self, message: str) -> None:
        if self.verbose:
            print(f"[perf] {message}", file=sys.stderr, flush=True)
