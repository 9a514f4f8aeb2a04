"""The dspy interpreters we compare against, started the same way dspy.RLM starts them.

- `LocalInterpreter` (dspy/primitives/local_interpreter.py): a persistent local subprocess speaking JSON lines;
  no isolation. Variables are serialized into every `execute`.
- `PythonInterpreter`: Pyodide on Deno. It needs a Deno 2.x binary and Pyodide from npm; when either is missing
  (an offline machine, no `dspy[deno]`), `deno_unavailable()` says why and its figures are reported as n/a.
"""

from __future__ import annotations

import contextvars
import shutil
import threading
from collections.abc import Callable
from typing import Any

from dspy.primitives.local_interpreter import LocalInterpreter

LOCAL = "dspy LocalInterpreter"
DENO = "dspy PythonInterpreter (Deno/Pyodide)"
DENO_START_TIMEOUT_S = 60.0
_deno_reason: list[str | None] = []


def local_interpreter(tools: dict[str, Callable[..., Any]] | None = None) -> LocalInterpreter:
    return LocalInterpreter(tools=dict(tools or {}))


def deno_interpreter(tools: dict[str, Callable[..., Any]] | None = None) -> Any:
    from dspy.primitives.python_interpreter import PythonInterpreter

    return PythonInterpreter(tools=dict(tools or {}))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def deno_unavailable() -> str | None:
    """Why dspy's Deno/Pyodide interpreter cannot run here (None when it can); probed once per process."""
    if _deno_reason:
        return _deno_reason[0]
    reason: str | None = None
    if shutil.which("deno") is None:
        try:
            from deno import find_deno_bin  # type: ignore[import-not-found]  # the `dspy[deno]` extra

            find_deno_bin()
        except Exception:
            reason = "Deno is not installed (`which deno` finds nothing and the dspy[deno] extra is absent)"
    if reason is None:
        outcome: list[BaseException | None] = []

        def probe() -> None:
            interp = deno_interpreter()
            try:
                interp.execute("1 + 1")
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)
            finally:
                interp.shutdown()

        thread = threading.Thread(target=contextvars.copy_context().run, args=(probe,), daemon=True)
        thread.start()
        thread.join(DENO_START_TIMEOUT_S)
        if not outcome:
            reason = f"Deno/Pyodide did not start within {DENO_START_TIMEOUT_S:g} s (Pyodide is fetched from npm)"
        elif outcome[0] is not None:
            reason = f"Deno/Pyodide failed to start: {_first_line(outcome[0])}"
    _deno_reason.append(reason)
    return reason
