"""Prices from LiteLLM's bundled cost map, never the network.

LITELLM_LOCAL_MODEL_COST_MAP must be set before litellm is first imported (otherwise litellm fetches the
map from the internet at import); fleet_rlm.llm sets it on import. A model absent from the map is priced at
0 with `known=False`, so totals say "cost unknown" rather than a wrong number.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@dataclass(frozen=True, slots=True)
class Price:
    cost_usd: float
    known: bool


@lru_cache(maxsize=256)
def _priced_name(model: str) -> str | None:
    """The cost-map key for a LiteLLM model string, or None (looked up without litellm's noisy errors)."""
    import litellm

    table = litellm.model_cost
    candidates = [model]
    if "/" in model:
        candidates.append(model.split("/", 1)[1])
    for name in candidates:
        entry = table.get(name)
        if isinstance(entry, dict) and ("input_cost_per_token" in entry or "output_cost_per_token" in entry):
            return name
    return None


def price(model: str, tokens_in: int, tokens_out: int) -> Price:
    """Cost of one call; `known` is False when the model has no price in the local map."""
    if tokens_in == 0 and tokens_out == 0:
        return Price(0.0, True)
    name = _priced_name(model)
    if name is None:
        return Price(0.0, False)
    import litellm

    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=name, prompt_tokens=tokens_in, completion_tokens=tokens_out
        )
    except Exception:  # litellm raises assorted types for odd entries; an unpriced call is not an error
        return Price(0.0, False)
    return Price(float(prompt_cost) + float(completion_cost), True)


def is_priced(model: str) -> bool:
    return _priced_name(model) is not None
