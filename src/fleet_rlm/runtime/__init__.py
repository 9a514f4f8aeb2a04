"""Turn orchestration: the turn runner (`turn`), its execution modes (`modes/`), the RLM machinery (`rlm/`),
context loading, budgets and events.

Imports llm, sandbox, events and config — never store or api: persistence subscribes to runtime events. Import
what you need from its module (`fleet_rlm.runtime.turn.TurnRuntime`, `fleet_rlm.runtime.contracts.TurnRequest`):
this package re-exports nothing, so the light contracts never pull in dspy.
"""

import os

# LiteLLM fetches its price map from the internet on first import unless told otherwise; fleet_rlm.llm sets
# this too, but dspy (imported by the sandbox) may import litellm first.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
