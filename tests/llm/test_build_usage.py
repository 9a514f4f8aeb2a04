"""build_lm against a real fake LM over HTTP (native and LiteLLM engines) and usage metered per role."""

from __future__ import annotations

import threading

import dspy
import pytest

from fleet_rlm.config import Settings
from fleet_rlm.llm import (
    InvalidProfile,
    LMCallRecord,
    LMProfile,
    UsageMeter,
    build_lm,
    engine_of,
    is_priced,
    price,
    resolve_profiles,
)
from fleet_rlm.testing import FakeLMServer, FakeResponse, dspy_fields


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion}


@pytest.mark.parametrize(("engine", "expected"), [("auto", "lm15"), ("litellm", "litellm")])
def test_build_lm_for_root_and_sub(lm_server: FakeLMServer, llm_settings: Settings, engine: str, expected: str) -> None:
    settings = llm_settings.model_copy(
        update={
            "lm_model": lm_server.model,
            "lm_api_base": lm_server.base_url,
            "lm_api_key": "fake-key",
            "delegate_lm_model": "openai/fake-sub",
            "lm_timeout_s": 7.0,
            "lm_num_retries": 2,
        }
    )
    profiles = resolve_profiles(settings)
    meter = UsageMeter()
    root = build_lm(
        profiles["root"].model_copy(update={"engine": engine}), settings=settings, callbacks=[meter.callback("root")]
    )
    sub = build_lm(
        profiles["sub"].model_copy(update={"engine": engine}), settings=settings, callbacks=[meter.callback("sub")]
    )
    assert engine_of(root) == expected
    assert root.num_retries == 2 and root.kwargs["timeout"] == 7.0 and root.cache is False

    lm_server.push(FakeResponse("root says hi", usage=usage(11, 3)), FakeResponse("sub says hi", usage=usage(5, 2)))
    assert root("hello") == ["root says hi"]
    assert sub("hello sub") == ["sub says hi"]
    first, second = lm_server.requests[-2:]
    assert (first.model, second.model) == ("fake-model", "fake-sub")  # sub inherited root's endpoint
    assert first.headers.get("authorization") == "Bearer fake-key"

    snap = meter.snapshot()
    assert snap.by_role["root"].tokens_in == 11 and snap.by_role["root"].tokens_out == 3
    assert snap.by_role["sub"].tokens_in == 5 and snap.by_role["sub"].tokens_out == 2
    assert (snap.tokens_in, snap.tokens_out, snap.lm_calls) == (16, 5, 2)
    assert snap.cost_usd == 0.0 and snap.cost_known is False  # fake models have no price


def test_predict_through_metered_lm(lm_server: FakeLMServer, fake_profile: LMProfile, llm_settings: Settings) -> None:
    meter = UsageMeter()
    lm = build_lm(fake_profile, settings=llm_settings, callbacks=[meter.callback("root")])
    lm_server.push(FakeResponse(dspy_fields(answer="4"), usage=usage(40, 6)))
    with dspy.context(lm=lm):
        assert dspy.Predict("question -> answer")(question="2+2?").answer == "4"
    role = meter.snapshot().by_role["root"]
    assert (role.tokens_in, role.tokens_out, role.lm_calls, role.failed_calls) == (40, 6, 1, 0)


def test_cost_known_for_a_priced_model_served_by_the_fake(lm_server: FakeLMServer, llm_settings: Settings) -> None:
    profile = LMProfile(name="mini", model="openai/gpt-4o-mini", api_base=lm_server.base_url, api_key="k")
    meter = UsageMeter()
    lm = build_lm(profile, settings=llm_settings, callbacks=[meter.callback("root")])
    lm_server.push(FakeResponse("ok", usage=usage(1000, 500)))
    lm("price me")
    assert lm_server.last_request is not None and lm_server.last_request.model == "gpt-4o-mini"
    snap = meter.snapshot()
    expected = price("openai/gpt-4o-mini", 1000, 500)
    assert expected.known and expected.cost_usd > 0
    assert snap.cost_known is True
    assert snap.cost_usd == pytest.approx(expected.cost_usd)
    assert snap.by_role["root"].cost_usd == pytest.approx(expected.cost_usd)


def test_pricing_model_prices_a_proxy_alias(lm_server: FakeLMServer, llm_settings: Settings) -> None:
    meter = UsageMeter()
    lm = build_lm(
        LMProfile(name="fake", model=lm_server.model, api_base=lm_server.base_url),
        settings=llm_settings,
        callbacks=[meter.callback("sub", pricing_model="gpt-4o-mini")],
    )
    lm_server.push(FakeResponse("ok", usage=usage(100, 100)))
    lm("hi")
    snap = meter.snapshot()
    assert snap.cost_known and snap.cost_usd == pytest.approx(price("gpt-4o-mini", 100, 100).cost_usd)
    assert not is_priced(lm_server.model) and is_priced("openai/gpt-4o-mini")


def test_cache_hits_and_failures_are_counted(
    lm_server: FakeLMServer, fake_profile: LMProfile, llm_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dspy.clients.cache import Cache

    memory_only = Cache(enable_disk_cache=False, enable_memory_cache=True, disk_cache_dir="", memory_max_entries=100)
    monkeypatch.setattr(dspy, "cache", memory_only)  # never touch the user's on-disk DSPy cache
    records: list[LMCallRecord] = []
    meter = UsageMeter(on_call=records.append)
    lm = build_lm(fake_profile, settings=llm_settings, cache=True, callbacks=[meter.callback("router")])
    prompt = "cache me"
    lm_server.push(FakeResponse("cached answer", usage=usage(9, 1)))
    assert lm(prompt) == lm(prompt) == ["cached answer"]
    lm_server.push(FakeResponse.server_error(500))
    with pytest.raises(dspy.LMError):
        lm(prompt + " fail")
    role = meter.snapshot().by_role["router"]
    assert (role.lm_calls, role.cached_calls, role.failed_calls) == (3, 1, 1)
    assert (role.tokens_in, role.tokens_out) == (9, 1)
    assert [(r.ok, r.cached, r.tokens_in) for r in records] == [(True, False, 9), (True, True, 0), (False, False, 0)]
    assert records[2].error is not None and records[0].call_id


def test_concurrent_calls_on_one_lm_keep_their_own_usage(
    lm_server: FakeLMServer, fake_profile: LMProfile, llm_settings: Settings
) -> None:
    def rule(request):  # type: ignore[no-untyped-def]
        n = int(request.last_user_text.split()[-1])
        return FakeResponse(f"answer {n}", usage=usage(n, 1), delay_s=0.01 * (n % 3))

    lm_server.add_rule(rule)
    records: list[LMCallRecord] = []
    meter = UsageMeter(on_call=records.append)
    lm = build_lm(fake_profile, settings=llm_settings, callbacks=[meter.callback("sub")])
    numbers = list(range(1, 25))

    def call(n: int) -> None:
        assert lm(f"prompt {n}") == [f"answer {n}"]

    threads = [threading.Thread(target=call, args=(n,)) for n in numbers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.tokens_in for r in records) == numbers
    snap = meter.snapshot()
    assert snap.tokens_in == sum(numbers) and snap.tokens_out == len(numbers) and snap.lm_calls == len(numbers)


def test_user_track_usage_still_works(lm_server: FakeLMServer, fake_profile: LMProfile, llm_settings: Settings) -> None:
    meter = UsageMeter()
    lm = build_lm(fake_profile, settings=llm_settings, callbacks=[meter.callback("root")])
    lm_server.push(FakeResponse("x", usage=usage(7, 2)))
    with dspy.track_usage() as tracker:
        lm("tracked")
    totals = tracker.get_total_tokens()[lm_server.model]
    assert (totals["prompt_tokens"], totals["completion_tokens"]) == (7, 2)
    assert meter.snapshot().tokens_in == 7


def test_iterations_and_manual_records() -> None:
    meter = UsageMeter()
    meter.add_iterations(3)
    meter.record("delegate", model="openai/gpt-4o-mini", tokens_in=10, tokens_out=10, latency_ms=5)
    snap = meter.snapshot()
    assert snap.iterations == 3 and snap.lm_calls == 1 == meter.lm_calls
    assert snap.by_role["delegate"].latency_ms == 5 and snap.cost_known and snap.cost_usd > 0
    assert UsageMeter().snapshot().cost_known is True  # nothing spent: a known zero


async def test_async_calls_are_metered(
    lm_server: FakeLMServer, fake_profile: LMProfile, llm_settings: Settings
) -> None:
    meter = UsageMeter()
    lm = build_lm(fake_profile, settings=llm_settings, callbacks=[meter.callback("root")])
    lm_server.push(FakeResponse("async", usage=usage(3, 4)))
    assert await lm.acall("hi") == ["async"]
    snap = meter.snapshot()
    assert (snap.tokens_in, snap.tokens_out) == (3, 4)


def test_invalid_profile_is_reported(llm_settings: Settings) -> None:
    with pytest.raises(InvalidProfile) as info:
        build_lm(LMProfile(name="broken", model="openai/"), settings=llm_settings)
    assert info.value.code == "invalid_profile" and "broken" in info.value.message
    with pytest.raises(InvalidProfile, match="reasoning"):
        build_lm(LMProfile(name="o", model="openai/o3-mini", temperature=0.2), settings=llm_settings)


def test_keyless_local_server_gets_a_placeholder_key(
    lm_server: FakeLMServer, llm_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lm = build_lm(LMProfile(name="local", model=lm_server.model, api_base=lm_server.base_url), settings=llm_settings)
    lm_server.push("no key needed")
    assert lm("hi") == ["no key needed"]
    assert lm_server.last_request is not None
    assert lm_server.last_request.headers.get("authorization") == "Bearer EMPTY"
