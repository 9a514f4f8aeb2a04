"""Pricing from LiteLLM's bundled map without LiteLLM agrees with LiteLLM itself, over the whole map."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from fleet_rlm.llm import pricing
from fleet_rlm.llm.pricing import cost_map, is_priced, price
from fleet_rlm.testing import FakeLMServer, FakeResponse


@pytest.fixture(scope="module")
def litellm_quiet():  # type: ignore[no-untyped-def]
    import litellm

    litellm.suppress_debug_info = True
    logging.disable(logging.CRITICAL)  # litellm logs every model it cannot price
    try:
        yield litellm
    finally:
        logging.disable(logging.NOTSET)


def _token_counts(name: str) -> list[tuple[int, int]]:
    counts = [(1000, 200), (7, 0), (0, 5)]
    for threshold, _ in pricing._generic_tiers(name) or ():
        counts += [(threshold, 100), (threshold + 1, 100)]  # the tier starts above its threshold
    return counts


def test_the_map_is_litellms_own(litellm_quiet) -> None:  # type: ignore[no-untyped-def]
    table = cost_map()
    assert len(table) > 1000
    shared = set(table) & set(litellm_quiet.model_cost)
    assert len(shared) == len(litellm_quiet.model_cost)
    assert all(table[name] == litellm_quiet.model_cost[name] for name in shared)  # aliases resolved alike


def test_every_entry_priced_without_litellm_costs_what_litellm_says(litellm_quiet) -> None:  # type: ignore[no-untyped-def]
    checked, disagreements = 0, []
    for name, entry in cost_map().items():
        if not isinstance(entry, dict) or pricing._priced_name(name) != name or pricing._generic_tiers(name) is None:
            continue
        if entry.get("litellm_provider") == "github_copilot":  # litellm wants a device login to price these
            continue
        for tokens_in, tokens_out in _token_counts(name):
            try:
                theirs = sum(
                    litellm_quiet.cost_per_token(model=name, prompt_tokens=tokens_in, completion_tokens=tokens_out)
                )
            except Exception:  # litellm cannot place this model's provider; it would have called it unpriced
                break
            ours = price(name, tokens_in, tokens_out)
            if not (ours.known and ours.cost_usd == pytest.approx(theirs, rel=1e-9, abs=1e-15)):
                disagreements.append((name, tokens_in, tokens_out, ours.cost_usd, theirs))
        else:
            checked += 1
    assert checked > 2000  # most of the map takes the generic rule
    assert disagreements == []


def test_tiers_and_image_outputs_are_priced_by_the_generic_rule() -> None:
    tiered = next(
        name
        for name, entry in cost_map().items()
        if isinstance(entry, dict)
        and "input_cost_per_token_above_200k_tokens" in entry
        and pricing._generic_tiers(name)
        and pricing._priced_name(name) == name
    )
    entry = cost_map()[tiered]
    below, above = price(tiered, 200_000, 10), price(tiered, 200_001, 10)
    assert below.cost_usd == pytest.approx(
        200_000 * entry["input_cost_per_token"] + 10 * entry["output_cost_per_token"]
    )
    assert above.cost_usd == pytest.approx(
        200_001 * entry["input_cost_per_token_above_200k_tokens"]
        + 10 * entry.get("output_cost_per_token_above_200k_tokens", entry["output_cost_per_token"])
    )


def test_entries_beyond_the_generic_rule_are_priced_by_litellm(litellm_quiet) -> None:  # type: ignore[no-untyped-def]
    special = [
        name
        for name, entry in cost_map().items()
        if isinstance(entry, dict) and pricing._priced_name(name) == name and pricing._generic_tiers(name) is None
    ]
    assert special  # tiered tables, off-peak hours, inclusive tiers: LiteLLM's own logic
    for name in special[:25]:
        try:
            theirs = sum(litellm_quiet.cost_per_token(model=name, prompt_tokens=1000, completion_tokens=200))
        except Exception:
            assert price(name, 1000, 200).known is False
            continue
        assert price(name, 1000, 200).cost_usd == pytest.approx(theirs)


def test_unknown_models_are_unpriced_and_provider_prefixes_are_looked_through() -> None:
    assert price("openai/no-such-model-anywhere", 10, 10) == pricing.Price(0.0, False)
    assert price("openai/no-such-model-anywhere", 0, 0) == pricing.Price(0.0, True)
    assert is_priced("openai/gpt-4o-mini") and is_priced("gpt-4o-mini")
    assert price("openai/gpt-4o-mini", 100, 100) == price("gpt-4o-mini", 100, 100)


def test_a_priced_call_on_dspys_native_engine_imports_no_litellm(lm_server: FakeLMServer, tmp_path: Path) -> None:
    """LiteLLM is seconds of imports; a call through dspy's native engine, metered and priced, needs none of it."""
    code = (
        "import sys\n"
        "from fleet_rlm.config import Settings\n"
        "from fleet_rlm.llm import LMProfile, UsageMeter, build_lm, engine_of\n"
        f"settings = Settings(_env_file=None, data_dir={str(tmp_path)!r}, lm_num_retries=0)\n"
        f"profile = LMProfile(name='mini', model='openai/gpt-4o-mini', api_base={lm_server.base_url!r}, api_key='k')\n"
        "meter = UsageMeter()\n"
        "lm = build_lm(profile, settings=settings, callbacks=[meter.callback('root')])\n"
        "assert engine_of(lm) == 'lm15'\n"
        "lm('price me')\n"
        "snap = meter.snapshot()\n"
        "assert snap.cost_known and snap.cost_usd > 0, snap\n"
        "print('litellm' in sys.modules)\n"
    )
    lm_server.push(FakeResponse("ok", usage={"prompt_tokens": 1000, "completion_tokens": 500}))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"
