"""Connectivity checks behind the "test this profile" and "list models" buttons.

`check_lm` makes one tiny completion with no retries and a short timeout, and reports the outcome as data
(never raises for a provider failure). `list_models` reads `GET {api_base}/models` of OpenAI-compatible APIs.
Both are synchronous; the API calls them in a worker thread.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
from pydantic import BaseModel, Field

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.events import preview
from fleet_rlm.llm.build import build_lm, engine_of
from fleet_rlm.llm.errors import LMCallError
from fleet_rlm.llm.failures import ACTIONS, classify
from fleet_rlm.llm.profiles import LMProfile

CHECK_PROMPT = "Reply with the single word OK."
DEFAULT_CHECK_TIMEOUT_S = 20.0
OPENAI_API_BASE = "https://api.openai.com/v1"


class LMCheckResult(BaseModel):
    """Outcome of a connectivity check (also the API's response body)."""

    ok: bool = Field(description="True when the model answered.")
    profile: str = Field(description="Profile checked.")
    model: str = Field(description="Model called.")
    engine: str | None = Field(default=None, description="DSPy engine used: lm15 (native) or litellm.")
    latency_ms: int = Field(default=0, ge=0, description="Duration of the call.")
    response_preview: str | None = Field(default=None, description="Start of the model's answer.")
    error_code: str | None = Field(default=None, description="Stable failure code (lm_auth_failed, ...).")
    error_message: str | None = Field(default=None, description="One-line failure description.")
    action: str | None = Field(default=None, description="What to do about the failure.")


def _text(outputs: Any) -> str:
    first = outputs[0] if isinstance(outputs, list) and outputs else outputs
    if isinstance(first, dict):
        first = first.get("text", "")
    return str(first or "")


def check_lm(profile: LMProfile, settings: Settings, *, timeout_s: float | None = None) -> LMCheckResult:
    """Call the profile's model once. Provider failures come back as `ok=False` with a code and action."""
    timeout = timeout_s or min(settings.lm_timeout_s, DEFAULT_CHECK_TIMEOUT_S)
    engine: str | None = None
    started = time.perf_counter()
    try:
        lm = build_lm(profile, settings=settings, cache=False, num_retries=0, timeout=timeout)
        engine = engine_of(lm)
        outputs = lm(CHECK_PROMPT)
    except Exception as exc:
        error = classify(exc, model=profile.model)
        return LMCheckResult(
            ok=False,
            profile=profile.name,
            model=profile.model,
            engine=engine,
            latency_ms=int((time.perf_counter() - started) * 1000),
            error_code=error.code,
            error_message=error.message,
            action=error.action,
        )
    return LMCheckResult(
        ok=True,
        profile=profile.name,
        model=profile.model,
        engine=engine,
        latency_ms=int((time.perf_counter() - started) * 1000),
        response_preview=preview(_text(outputs), 200),
    )


def models_url(profile: LMProfile) -> str:
    """Where the profile's model list lives; raises FleetError when the provider has no listable base."""
    if profile.api_base:
        return f"{profile.api_base}/models"
    if profile.model.startswith("openai/") or "/" not in profile.model:
        return f"{OPENAI_API_BASE}/models"
    raise FleetError(
        f"cannot list models of profile '{profile.name}': it has no api_base and {profile.model.split('/')[0]} "
        "is not an OpenAI-compatible endpoint",
        code="models_not_listable",
        status=422,
        action="Listing needs an OpenAI-compatible api_base (GET {api_base}/models); type the model name instead.",
    )


def list_models(profile: LMProfile, *, timeout_s: float = 10.0) -> list[str]:
    """Model ids served at the profile's endpoint, sorted. Raises LMCallError / FleetError with a code."""
    url = models_url(profile)
    headers = {"Authorization": f"Bearer {profile.api_key_value}"} if profile.api_key_value else {}
    try:
        response = httpx.get(url, headers=headers, timeout=timeout_s, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise classify(exc, model=profile.model) from exc
    if response.status_code >= 400:
        code = {401: "lm_auth_failed", 403: "lm_auth_failed", 404: "models_not_listable", 429: "lm_rate_limited"}
        chosen = code.get(response.status_code, "lm_server_error" if response.status_code >= 500 else "lm_error")
        action = ACTIONS.get(chosen, "This endpoint does not list models; type the model name instead.")
        raise LMCallError(f"GET {url} answered {response.status_code}", code=chosen, action=action, status=502)
    try:
        data = response.json().get("data")
        ids = sorted({str(item["id"]) for item in data})
    except (ValueError, AttributeError, TypeError, KeyError) as exc:
        raise FleetError(
            f"GET {url} did not return an OpenAI model list",
            code="models_not_listable",
            status=502,
            action="Check that api_base is the OpenAI-compatible base URL (usually ending in /v1).",
        ) from exc
    return ids
