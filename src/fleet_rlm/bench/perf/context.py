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
        """One instance per suite run (e.g. the fake LM and API server processes), closed when the suite ends
        or by `release_shared` (the next scenario that asks starts a fresh one)."""
        if name not in self._shared:
            own = ExitStack()
            value = own.enter_context(make())
            self._shared[name] = (value, self.stack.enter_context(own))
        return self._shared[name][0]

    def release_shared(self) -> None:
        """Stop every shared process now, for a scenario that must have the machine to itself."""
        while self._shared:
            _, (_, own) = self._shared.popitem()
            own.close()

    def close(self) -> None:
        self._shared.clear()
        self.stack.close()

    def log(self, message: str) -> None:
        if self.verbose:
            print(f"[perf] {message}", file=sys.stderr, flush=True)
