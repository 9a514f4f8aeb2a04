"""Turn orchestration (router, RLM/ReAct/direct programs, delegation, budgets, event bus).

Imports llm, sandbox, events and config — never store or api: persistence subscribes to runtime events.
Public API: `TurnRuntime` (runner), the contracts (`TurnRequest`, `TurnOptions`, `ContextSource`, `TurnResult`,
`EventSink`, `CancelToken`), `TurnGate`, `TurnAlreadyRunning`, `ProgramRegistry`/`ProgramSpec`. Submodules are
imported lazily so `fleet_rlm.runtime.contracts` stays light for the API layer.
"""

import os

# LiteLLM fetches its price map from the internet on first import unless told otherwise; fleet_rlm.llm sets
# this too, but dspy (imported by the sandbox) may import litellm first.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_LAZY = {
    "TurnRuntime": "fleet_rlm.runtime.runner",
    "TurnGate": "fleet_rlm.runtime.gate",
    "TurnAlreadyRunning": "fleet_rlm.runtime.errors",
    "ProgramRegistry": "fleet_rlm.runtime.programs",
    "ProgramSpec": "fleet_rlm.runtime.programs",
    "TurnRequest": "fleet_rlm.runtime.contracts",
    "TurnOptions": "fleet_rlm.runtime.contracts",
    "ContextSource": "fleet_rlm.runtime.contracts",
    "TurnResult": "fleet_rlm.runtime.contracts",
    "EventSink": "fleet_rlm.runtime.contracts",
    "CancelToken": "fleet_rlm.runtime.contracts",
}


def __getattr__(name: str) -> object:
    """Import public names on first use (the runner pulls in dspy; the contracts do not)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fleet_rlm.runtime' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
