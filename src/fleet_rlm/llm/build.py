"""Turn a profile into a configured `dspy.LM`: timeout, retries with backoff, engine, usage metering.

DSPy 3.4.1 picks its engine per LM: "auto" uses the native lm15 client when the model's provider is one it
knows (openai/*, anthropic/*...) and the client settings are ones it honours (api_key, api_base, timeout),
otherwise LiteLLM. Both speak to any OpenAI-compatible `api_base`. DSPy owns retries (exponential backoff,
honouring Retry-After) for 429, 5xx, timeouts and transport errors, so we only pass `num_retries`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

from fleet_rlm.config import Settings
from fleet_rlm.llm import callback_dispatch, egress, model_metadata, type_adapters
from fleet_rlm.llm.errors import InvalidProfile
from fleet_rlm.llm.profiles import LMProfile

NO_KEY = "EMPTY"
"""Key sent to a custom api_base when neither the profile nor the provider's env var has one (vLLM style)."""


def _key_env(model: str) -> str:
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    return f"{provider.upper()}_API_KEY"


def lm_kwargs(profile: LMProfile, *, settings: Settings, cache: bool = False) -> dict[str, Any]:
    """The dspy.LM keyword arguments for a profile (secrets included; never log this)."""
    kwargs: dict[str, Any] = {
        "model": profile.model,
        "cache": cache,
        "num_retries": profile.num_retries if profile.num_retries is not None else settings.lm_num_retries,
        "timeout": profile.timeout_s or settings.lm_timeout_s,
        "engine": profile.engine,
        **profile.extra,
    }
    if profile.api_base:
        kwargs["api_base"] = profile.api_base
    if profile.api_key_value:
        kwargs["api_key"] = profile.api_key_value
    elif profile.api_base and (not profile.provider_env_key or not os.environ.get(_key_env(profile.model))):
        kwargs["api_key"] = NO_KEY  # local OpenAI-compatible servers need no key, but clients insist on one
    if profile.extra_headers:  # as dspy's `extra_headers`: the recorder scrubs them as secrets by this position
        kwargs["extra_headers"] = profile.extra_header_values
    if profile.temperature is not None:
        kwargs["temperature"] = profile.temperature
    if profile.max_tokens is not None:
        kwargs["max_tokens"] = profile.max_tokens
    return kwargs


def build_lm(
    profile: LMProfile,
    *,
    settings: Settings,
    cache: bool = False,
    callbacks: Sequence[BaseCallback] | None = None,
    **overrides: Any,
) -> dspy.LM:
    """A dspy.LM for `profile`. Raises InvalidProfile when DSPy rejects the settings (message says why).

    `overrides` replace computed kwargs (e.g. `timeout=5, num_retries=0` for a connectivity check)."""
    kwargs = {**lm_kwargs(profile, settings=settings, cache=cache), **overrides}
    if profile.public_base_only and profile.api_base:
        egress.guard_base(profile.api_base)
        kwargs["engine"] = "litellm"  # the native engine opens its own sockets: only LiteLLM takes our client
    model_metadata.install()
    type_adapters.install()
    callback_dispatch.install()
    try:
        lm = dspy.LM(callbacks=list(callbacks or []), **kwargs)
    except (ValueError, TypeError, dspy.LMError) as exc:
        message = getattr(exc, "message", None) or str(exc)
        raise InvalidProfile(
            f"profile '{profile.name}' ({profile.model}) is not usable: {message.splitlines()[0]}",
            action="Fix the profile's model string or parameters (`fleet-rlm profiles edit`).",
            details={"profile": profile.name},
        ) from exc
    if engine_of(lm) == "litellm":
        # LiteLLM's own OpenAI client follows redirects (an endpoint could bounce the request and its key
        # anywhere) and resolves names again at connect time: ours does neither (llm.egress).
        egress.install_for_litellm()
    return lm


def engine_of(lm: dspy.LM) -> str:
    """Which engine DSPy will use for plain chat calls of `lm`: "lm15" (native) or "litellm"."""
    from dspy.clients.backend_selection import select_backend

    try:
        return "lm15" if select_backend(lm).native else "litellm"
    except Exception:
        return "litellm"
