"""Map whatever an LM call raised (DSPy's LM errors, LiteLLM or lm15 transport errors, httpx) to one of a
few stable codes with an action, so the UI's "test profile" button and a failed turn say the same thing.

Codes: lm_auth_failed, lm_billing, lm_rate_limited, lm_model_not_found, lm_context_too_long, lm_bad_request,
lm_timeout, lm_unreachable, lm_server_error, lm_error.
"""

from __future__ import annotations

from collections.abc import Iterator

import dspy

from fleet_rlm.errors import FleetError
from fleet_rlm.llm.errors import LMCallError

ACTIONS = {
    "lm_auth_failed": "Check the API key (profile key, DSPY_LLM_API_KEY or the provider's own variable).",
    "lm_billing": "Check the provider account's billing or quota.",
    "lm_rate_limited": "Wait and retry, lower batch_concurrency, or raise the provider's rate limit.",
    "lm_model_not_found": "Check the model name; `fleet-rlm profiles models` lists what the server offers.",
    "lm_context_too_long": "Use RLM mode (context stays in the sandbox) or a model with a larger context window.",
    "lm_bad_request": "The provider rejected the request; check the profile's parameters for this model.",
    "lm_timeout": "The model did not answer in time: raise lm_timeout_s or check the server's load.",
    "lm_unreachable": "Cannot connect: check api_base (DSPY_LM_API_BASE), the network and that the server runs.",
    "lm_server_error": "The provider failed; retry later or check the server's logs.",
    "lm_error": "See the message; test the profile with `fleet-rlm profiles test`.",
}

_TIMEOUT_WORDS = ("timed out", "timeout")
_CONNECT_WORDS = ("failed to connect", "connection error", "connection refused", "connecterror", "name resolution")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 10:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _mentions(exc: BaseException, words: tuple[str, ...]) -> bool:
    for item in _chain(exc):
        text = f"{type(item).__name__} {item}".lower()
        if any(word in text for word in words):
            return True
    return False


def _is_timeout(exc: BaseException) -> bool:
    return any(isinstance(item, TimeoutError) for item in _chain(exc)) or _mentions(exc, _TIMEOUT_WORDS)


def _is_connect(exc: BaseException) -> bool:
    return any(isinstance(item, ConnectionError) for item in _chain(exc)) or _mentions(exc, _CONNECT_WORDS)


def failure_code(exc: BaseException) -> str:
    """The stable code for an exception raised by an LM call."""
    status = getattr(exc, "status", None) or getattr(exc, "status_code", None)
    if isinstance(exc, dspy.LMAuthError) or status in (401, 403):
        return "lm_auth_failed"
    if isinstance(exc, dspy.LMBillingError) or status == 402:
        return "lm_billing"
    if isinstance(exc, dspy.LMRateLimitError) or status == 429:
        return "lm_rate_limited"
    if isinstance(exc, dspy.LMUnsupportedModelError) or status == 404:
        return "lm_model_not_found"
    if isinstance(exc, dspy.ContextWindowExceededError):
        return "lm_context_too_long"
    if isinstance(exc, dspy.LMTimeoutError):
        return "lm_timeout"
    if isinstance(exc, dspy.LMInvalidRequestError) or (isinstance(status, int) and 400 <= status < 500):
        return "lm_bad_request"
    if _is_timeout(exc):
        return "lm_timeout"
    if isinstance(exc, dspy.LMTransportError) or _is_connect(exc):  # LiteLLM reports these as a 500
        return "lm_unreachable"
    if isinstance(status, int) and status >= 500:
        return "lm_server_error"
    if isinstance(exc, dspy.LMServerError):
        return "lm_server_error"
    return "lm_error"


def _first_line(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return str(text).strip().splitlines()[0][:300]


def classify(exc: BaseException, *, model: str | None = None) -> FleetError:
    """A FleetError for an LM failure (FleetErrors, e.g. InvalidProfile, pass through unchanged)."""
    if isinstance(exc, FleetError):
        return exc
    code = failure_code(exc)
    prefix = f"{model}: " if model else ""
    status = getattr(exc, "status", None)
    details = {"status": status} if isinstance(status, int) else {}
    return LMCallError(f"{prefix}{_first_line(exc)}", code=code, action=ACTIONS[code], details=details)
