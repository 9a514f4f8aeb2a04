"""Connectivity checks behind the "test this profile" and "list models" buttons.

`check_lm` makes one tiny completion with no retries and a short timeout, and reports the outcome as data
(never raises for a provider failure). It reports only a category: the endpoint's answer and error text are
never echoed, so a check cannot be used to read what some URL returns. `list_models` reads
`GET {api_base}/models` of OpenAI-compatible APIs without following redirects. Both are synchronous; the API
calls them in a worker thread.
"""

from __future__ import annotations

import time

import httpx
from pydantic import BaseModel, Field

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.llm import egress
from fleet_rlm.llm.build import build_lm, engine_of
from fleet_rlm.llm.errors import LMCallError
from fleet_rlm.llm.failures import ACTIONS, classify, failure_code
from fleet_rlm.llm.profiles import ENV_DELEGATE_PROFILE, ENV_PROFILE, LMProfile

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
    error_code: str | None = Field(default=None, description="Stable failure code (lm_auth_failed, ...).")
    error_message: str | None = Field(
        default=None, description="The failure's category and HTTP status (never the endpoint's own text)."
    )
    action: str | None = Field(default=None, description="What to do about the failure.")


CATEGORIES = {
    "lm_auth_failed": "the endpoint refused the credentials",
    "lm_billing": "the provider account cannot pay for the call",
    "lm_rate_limited": "the endpoint is rate limiting",
    "lm_model_not_found": "the endpoint does not serve this model",
    "lm_context_too_long": "the prompt is too long for the model",
    "lm_bad_request": "the endpoint rejected the request",
    "lm_timeout": "the endpoint did not answer in time",
    "lm_unreachable": "the endpoint cannot be reached",
    "lm_server_error": "the endpoint failed",
    "lm_error": "the call failed",
}


def profile_action(code: str, profile: LMProfile) -> str | None:
    """The action for `code`, pointing at what this profile configures (its own api_base and key, or the
    DSPY_* variables only for the profiles the environment defines)."""
    from_env = profile.name in (ENV_PROFILE, ENV_DELEGATE_PROFILE)
    if code == "lm_unreachable" and profile.api_base:
        variable = "DSPY_DELEGATE_LM_API_BASE" if profile.name == ENV_DELEGATE_PROFILE else "DSPY_LM_API_BASE"
        where = variable if from_env else f"the api_base of profile '{profile.name}'"
        return f"Cannot connect to {profile.api_base}: check {where}, the network and that the server runs."
    if code == "lm_auth_failed" and not from_env:
        return f"Check the API key of profile '{profile.name}' (`fleet-rlm profiles add` or the Settings page)."
    return ACTIONS.get(code)


def _failure(exc: Exception, profile: LMProfile) -> tuple[str, str, str | None]:
    """(code, message, action) naming only the category and HTTP status; our own errors keep their text."""
    if isinstance(exc, FleetError) and not isinstance(exc, LMCallError):
        return exc.code, exc.message, exc.action
    code = exc.code if isinstance(exc, LMCallError) else failure_code(exc)
    status = getattr(exc, "status", None) or getattr(exc, "status_code", None)
    suffix = f" (HTTP {status})" if isinstance(status, int) and not isinstance(status, bool) else ""
    message = f"{profile.model}: {CATEGORIES.get(code, CATEGORIES['lm_error'])}{suffix}"
    return code, message, profile_action(code, profile)


def check_lm(profile: LMProfile, settings: Settings, *, timeout_s: float | None = None) -> LMCheckResult:
    """Call the profile's model once. Provider failures come back as `ok=False` with a code and action."""
    timeout = timeout_s or min(settings.lm_timeout_s, DEFAULT_CHECK_TIMEOUT_S)
    engine: str | None = None
    started = time.perf_counter()
    try:
        lm = build_lm(profile, settings=settings, cache=False, num_retries=0, timeout=timeout)
        engine = engine_of(lm)
        lm(CHECK_PROMPT)
    except Exception as exc:
        code, message, action = _failure(exc, profile)
        return LMCheckResult(
            ok=False,
            profile=profile.name,
            model=profile.model,
            engine=engine,
            latency_ms=int((time.perf_counter() - started) * 1000),
            error_code=code,
            error_message=message,
            action=action,
        )
    return LMCheckResult(
        ok=True,
        profile=profile.name,
        model=profile.model,
        engine=engine,
        latency_ms=int((time.perf_counter() - started) * 1000),
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
    )


def list_models(profile: LMProfile, *, timeout_s: float = 10.0) -> list[str]:
    """Model ids served at the profile's endpoint, sorted. Raises LMCallError / FleetError with a code."""
    url = models_url(profile)
    headers = dict(profile.extra_header_values)
    if profile.api_key_value:
        headers["Authorization"] = f"Bearer {profile.api_key_value}"
    try:
        if profile.public_base_only:
            egress.guard_base(url)
        response = egress.client().get(url, headers=headers, timeout=timeout_s)  # pinned, no redirects
    except httpx.HTTPError as exc:
        raise classify(exc, model=profile.model) from exc
    if response.is_redirect:
        raise FleetError(
            f"GET {url} answered a redirect ({response.status_code}), which is not followed",
            code="models_not_listable",
            status=502,
        )
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
        ) from exc
    return ids
