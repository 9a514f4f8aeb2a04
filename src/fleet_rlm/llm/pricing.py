"""Prices from LiteLLM's bundled cost map, never the network, and mostly without importing LiteLLM.

The map is data: `model_prices_and_context_window_backup.json` in LiteLLM's package, the very table LiteLLM
serves as `litellm.model_cost` under LITELLM_LOCAL_MODEL_COST_MAP. Importing LiteLLM itself is seconds of CPU
(dspy's native engine never does), so a call is priced here, from the map, whenever its model's entry uses
only LiteLLM's generic rule for a prompt and a completion: a rate per token, the standard
`*_above_<N>k_tokens` tiers chosen by the prompt's size, and an image-token output rate standing in for a
missing output rate. Entries with anything else (a `tiered_pricing` table, off-peak hours, cache-hit rates,
per-character or per-second rates, providers with tier rules of their own) are priced by
`litellm.cost_per_token`, imported then. tests/llm/test_pricing.py checks both agree over the whole map.

A model absent from the map is priced at 0 with `known=False`, so totals say "cost unknown" rather than a
wrong number. LITELLM_LOCAL_MODEL_COST_MAP is set here, before LiteLLM can be imported by anyone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

COST_MAP_FILE = "model_prices_and_context_window_backup.json"
_TIER = re.compile(
    r"^(?:input_cost_per_token|output_cost_per_token|cache_read_input_token_cost|cache_creation_input_token_cost)"
    r"_above_(\d+)(k?)_tokens(.*)$"
)
_GENERIC_COST_KEYS = re.compile(
    r"^(?:input_cost_per_token|output_cost_per_token|cache_read_input_token_cost|cache_creation_input_token_cost"
    r"|cache_creation_input_token_cost_above_1hr|output_cost_per_reasoning_token|output_cost_per_image_token"
    r"|input_cost_per_audio_token|output_cost_per_audio_token|input_cost_per_image_token"
    r"|cache_read_input_audio_token_cost|cache_read_input_image_token_cost|search_context_cost_per_query"
    r"|input_cost_per_query|output_cost_per_image|input_cost_per_image)"
    r"(?:_batches|_priority|_flex)?$"
)
"""Rates a prompt-and-completion call never bills, or bills by the generic rule (tiers are matched apart)."""
_OWN_RULE_PROVIDERS = frozenset({"xai", "perplexity"})
"""Providers whose tiers LiteLLM bills by a rule of their own (from the threshold on; not at all)."""


@dataclass(frozen=True, slots=True)
class Price:
    cost_usd: float
    known: bool


@cache
def cost_map() -> dict[str, Any]:
    """LiteLLM's bundled map, read once ({} when LiteLLM is not installed or the file is unreadable)."""
    spec = importlib.util.find_spec("litellm")  # locates the package without running it
    if spec is None or not spec.submodule_search_locations:
        return {}
    try:
        raw = (Path(next(iter(spec.submodule_search_locations))) / COST_MAP_FILE).read_bytes()
        table = _loads(raw)
    except (OSError, ValueError):
        return {}
    return _resolve_aliases(table) if isinstance(table, dict) else {}


def _resolve_aliases(table: dict[str, Any]) -> dict[str, Any]:
    """An entry `{"alias_of": key}` stands for that key's entry, as LiteLLM resolves it when it loads the map."""
    for name, entry in table.items():
        target, hops = entry, 0
        while isinstance(target, dict) and "alias_of" in target and hops < 8:
            target, hops = table.get(target["alias_of"]), hops + 1
        if hops and isinstance(target, dict) and "alias_of" not in target:
            table[name] = target
    return table


def _loads(raw: bytes) -> Any:
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency; the stdlib parser is only slower
        return json.loads(raw)
    return orjson.loads(raw)


@lru_cache(maxsize=256)
def _priced_name(model: str) -> str | None:
    """The cost-map key for a LiteLLM model string ("provider/model" or a bare key), or None."""
    table = cost_map()
    candidates = [model]
    if "/" in model:
        candidates.append(model.split("/", 1)[1])
    for name in candidates:
        entry = table.get(name)
        if isinstance(entry, dict) and ("input_cost_per_token" in entry or "output_cost_per_token" in entry):
            return name
    return None


def _rate(entry: dict[str, Any], key: str, default: float) -> float:
    value = entry.get(key)
    if value is None:
        return default
    return float(value)


@lru_cache(maxsize=256)
def _generic_tiers(name: str) -> tuple[tuple[int, str], ...] | None:
    """The entry's standard tiers (threshold in tokens, its key suffix), ascending; None when the entry needs
    more than the generic rule (then LiteLLM prices it)."""
    entry = cost_map()[name]
    if entry.get("litellm_provider") in _OWN_RULE_PROVIDERS or entry.get("tiered_pricing"):
        return None
    tiers: dict[int, str] = {}
    for key in entry:
        if "cost" not in key:
            continue
        tier = _TIER.match(key)
        if tier is not None:
            digits, kilo, rest = tier.groups()
            if rest:  # a tier of the batch or priority rate (or some other variant): not the generic rule
                return None
            tiers[int(digits) * (1000 if kilo else 1)] = f"_above_{digits}{kilo}_tokens"
        elif not _GENERIC_COST_KEYS.match(key):
            return None
    return tuple(sorted(tiers.items()))


def _generic_price(name: str, tokens_in: int, tokens_out: int) -> float | None:
    tiers = _generic_tiers(name)
    if tiers is None:
        return None
    entry = cost_map()[name]
    input_rate = _rate(entry, "input_cost_per_token", 0.0)
    output_rate = _rate(entry, "output_cost_per_token", 0.0)
    if output_rate == 0.0:  # an image model bills its output tokens as image tokens
        output_rate = _rate(entry, "output_cost_per_image_token", 0.0)
    for threshold, suffix in tiers:
        if tokens_in > threshold:
            input_rate = _rate(entry, f"input_cost_per_token{suffix}", input_rate)
            output_rate = _rate(entry, f"output_cost_per_token{suffix}", output_rate)
    return tokens_in * input_rate + tokens_out * output_rate


def _litellm_price(name: str, tokens_in: int, tokens_out: int) -> float | None:
    import litellm

    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=name, prompt_tokens=tokens_in, completion_tokens=tokens_out
        )
    except Exception:  # litellm raises assorted types for odd entries; an unpriced call is not an error
        return None
    return float(prompt_cost) + float(completion_cost)


def price(model: str, tokens_in: int, tokens_out: int) -> Price:
    """Cost of one call; `known` is False when the model has no price in the local map."""
    if tokens_in == 0 and tokens_out == 0:
        return Price(0.0, True)
    name = _priced_name(model)
    if name is None:
        return Price(0.0, False)
    cost = _generic_price(name, tokens_in, tokens_out)
    if cost is None:
        cost = _litellm_price(name, tokens_in, tokens_out)
    return Price(0.0, False) if cost is None else Price(cost, True)


def is_priced(model: str) -> bool:
    return _priced_name(model) is not None
