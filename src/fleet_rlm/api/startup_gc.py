"""A server start without the cyclic garbage collector, and a frozen heap afterwards.

Starting the app builds ~300k long-lived objects (modules, classes, pydantic and SQLAlchemy schemas, dspy) and
almost no cyclic garbage (~2.6k objects). CPython's collector still re-scans the growing heap every few thousand
allocations: ~560 young and 4 full collections, about 1.2 s CPU of a 6 s local-server start on the 2-core VM.
`pause()` turns it off at a process's entry point, before the heavy imports; `resume()`, called by the app's
lifespan once startup is done, moves everything alive into the permanent generation (`gc.freeze()`, so later
full collections never scan the startup heap again) and turns the collector back on. Only entry points that
own the process (the local server, `serve-api`, `fleet web`) pause; importing or building the app in another
process (tests, `FLEET_CLI_SERVER=inprocess`) never touches the collector. A paused process also owns its heap
after the start: the model libraries' warm-up freezes what it imported and makes full collections rare
(runtime/warm.py).
"""

from __future__ import annotations

import gc

from fleet_rlm.runtime.warm import own_heap

_paused = False


def pause() -> None:
    """Stop cyclic collection until `resume()` (no-op if the collector is already off)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Freeze the startup heap and collect again, if `pause()` stopped the collector (idempotent)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
        own_heap()
