"""Turn budgets: the bounds of every per-turn limit, written once, and `TurnBudgets`, the limits one turn runs under.

The server's Settings (defaults), a user's runtime settings and a turn's own fields all take their bounds from
the types here. A run's budgets are resolved once, when the run is created (the turn's fields over the user's
settings over the server's), stored on the run and handed to the runtime as they are. Leaf module: imports
nothing internal (config imports it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

MaxIters = Annotated[int, Field(ge=1, le=200)]
MaxLLMCalls = Annotated[int, Field(ge=1, le=10_000)]
MaxDepth = Annotated[int, Field(ge=0, le=5)]
BatchConcurrency = Annotated[int, Field(ge=1, le=64)]
TurnTimeoutS = Annotated[float, Field(ge=1, le=86_400)]
MaxOutputChars = Annotated[int, Field(ge=100)]
MaxTokens = Annotated[int, Field(ge=1)]
MaxCostUSD = Annotated[float, Field(gt=0)]


class TurnBudgets(BaseModel):
    """The resolved limits of one turn; the root and all its children share them (runtime.control).

    `Settings.turn_budgets()` gives the server's; `over(...)` puts a user's settings and a turn's fields on top."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    max_iters: MaxIters = Field(description="RLM iterations (ReAct steps in tools mode).")
    max_llm_calls: MaxLLMCalls = Field(description="LM calls, children and sub-LM calls included.")
    max_depth: MaxDepth = Field(description="Deepest rlm_query child level.")
    turn_timeout_s: TurnTimeoutS = Field(description="Wall-clock limit of the turn, seconds.")
    batch_concurrency: BatchConcurrency = Field(description="Parallel sub-LM calls in llm_query_batched.")
    max_output_chars: MaxOutputChars = Field(description="Cell output kept per REPL step.")
    max_tokens: MaxTokens | None = Field(default=None, description="Tokens in + out; None: no ceiling.")
    max_cost_usd: MaxCostUSD | None = Field(default=None, description="Cost in USD; None: no ceiling.")

    def over(self, *layers: Mapping[str, Any] | None) -> TurnBudgets:
        """These budgets with each layer's non-None values on top (later layers win), validated again."""
        merged = self.model_dump()
        for layer in layers:
            merged.update({k: v for k, v in (layer or {}).items() if k in merged and v is not None})
        return TurnBudgets.model_validate(merged)


__all__ = [
    "BatchConcurrency",
    "MaxCostUSD",
    "MaxDepth",
    "MaxIters",
    "MaxLLMCalls",
    "MaxOutputChars",
    "MaxTokens",
    "TurnBudgets",
    "TurnTimeoutS",
]
