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
