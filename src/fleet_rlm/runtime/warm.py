"""Import the turn path and read the price map off the request path, so the first turn does not pay for them.

dspy, the RLM and the sandbox client are most of a second of CPU to import; a server process and each turn
worker process start this in a background thread once they are up. A turn that needs the modules sooner waits
on Python's import lock for the same import instead of doing it twice. LiteLLM is not imported: dspy's native
engine does not need it and `llm/pricing.py` reads its price map as data (a profile on LiteLLM's engine
imports it at its first call).

In a process whose entry point owns its collector (a turn worker, a server: `own_heap()`), the heap is then
settled: frozen (`gc.freeze()`, as api/startup_gc.py does after startup) and full collections made rare. Under a
50-turn burst, full collections re-scanned dspy's modules plus the running turns' objects and
paused a turn worker (every turn in it, and their live events) for 100-700 ms each, several per second; young
collections still run as often as before, so short-lived cycles are collected as they were.
"""

from __future__ import annotations

import gc
import threading

FULL_COLLECTION_EVERY = 1000  # young-generation collections per full one (CPython's default: 10)
_owned = False
_settled = False


def own_heap() -> None:
    """This process's entry point owns its collector: settle the heap once the warm-up has imported."""
    global _owned
    _owned = True


def settle_heap() -> None:
    """Once, in a process that owns its heap, after the model libraries are imported: by the warm-up, or by the
    first turn to finish, whichever comes first (the warm-up is seconds of CPU and a burst may not wait)."""
    global _settled
    if not _owned or _settled:
        return
    _settled = True
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)


def warm_imports() -> None:
    try:
        from fleet_rlm.llm import pricing
        from fleet_rlm.runtime import turn  # noqa: F401  # the RLM, adapters and sandbox client a turn builds

        pricing.cost_map()
    except Exception:  # warming is an optimisation; the first turn will import (and report) for real
        return
    settle_heap()


def warm_in_background() -> threading.Thread:
    thread = threading.Thread(target=warm_imports, name="warm-imports", daemon=True)
    thread.start()
    return thread
