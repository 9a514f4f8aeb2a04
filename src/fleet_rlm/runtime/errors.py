"""Runtime failures: the user-facing ones (FleetError with code/message/action) and the internal stop signals.

`TurnStop` derives from BaseException on purpose: DSPy's ReAct and adapters catch `Exception` around tool and
LM calls (and would feed a cancel back to the model as an observation); a BaseException unwinds through them.
"""

from __future__ import annotations

from fleet_rlm.errors import Conflict, FleetError
from fleet_rlm.llm import classify as classify_lm_failure


class TurnAlreadyRunning(Conflict):
    """A session has at most one active turn; `details.run_id` names the running one."""

    code = "turn_already_running"

    def __init__(self, session_id: str, run_id: str) -> None:
        super().__init__(
            f"session {session_id} already has a running turn ({run_id})",
            action="wait for it to finish or cancel it, then send the message again",
            details={"run_id": run_id, "session_id": session_id},
        )
        self.run_id = run_id


class TurnStop(BaseException):
    """Unwinds a turn (and every child) from wherever it is: cancel request or exhausted budget."""


class CancelledStop(TurnStop):
    def __init__(self, reason: str = "cancelled by request") -> None:
        super().__init__(reason)
        self.reason = reason


class BudgetStop(TurnStop):
    """A budget was hit: `budget` names it (max_llm_calls, turn_timeout_s, max_tokens, max_cost_usd...)."""

    def __init__(self, budget: str, limit: float, used: float) -> None:
        super().__init__(f"budget {budget} exhausted ({used:g} of {limit:g})")
        self.budget = budget
        self.limit = limit
        self.used = used


def model_not_configured(role: str) -> FleetError:
    return FleetError(
        f"no language model is configured for the {role} role",
        code="model_not_configured",
        status=503,
    )


def classify(exc: BaseException) -> FleetError:
    """Map an unexpected exception to a user-facing error (LM provider, sandbox, or internal)."""
    if isinstance(exc, FleetError):
        return exc
    name = type(exc).__name__
    module = type(exc).__module__
    text = str(exc).splitlines()[0][:300] if str(exc) else name
    if name in {"CodeInterpreterError"} or "sandbox" in text.lower():
        return FleetError(
            f"sandbox unavailable: {text}",
            code="sandbox_unavailable",
            action="retry the turn; if it keeps failing check the sandbox status on the health page",
            status=503,
        )
    if module.startswith(("litellm", "openai", "httpx", "dspy")) or "LM" in name or "APIError" in name:
        # the same stable codes (lm_rate_limited, lm_timeout, ...) the profile test button reports
        failure = classify_lm_failure(exc)
        if failure.code == "lm_error":
            failure.code = "lm_provider_error"
        failure.status = 502
        return failure
    return FleetError(f"internal error: {name}: {text}", code="internal_error")
