"""Import the heavy model libraries off the request path, so the first turn does not pay for them.

LiteLLM alone is seconds of CPU to import (the cost table behind `llm/pricing.py`); a server process and each
turn worker process start this in a background thread once they are up. A turn that needs the modules sooner
waits on Python's import lock for the same import instead of doing it twice.
"""

from __future__ import annotations

import threading


def warm_imports() -> None:
    try:
        import litellm  # noqa: F401

        from fleet_rlm.llm import pricing  # noqa: F401
        from fleet_rlm.runtime import turn  # noqa: F401  # the RLM, adapters and sandbox client a turn builds
    except Exception:  # warming is an optimisation; the first turn will import (and report) for real
        return


def warm_in_background() -> threading.Thread:
    thread = threading.Thread(target=warm_imports, name="warm-imports", daemon=True)
    thread.start()
    return thread
