"""Errors of the llm layer a user can hit, each with a stable code and the action that fixes it."""

from __future__ import annotations

from fleet_rlm.errors import FleetError

CONFIGURE_ACTION = (
    "Add a model profile in the web UI's Settings page or with `fleet-rlm profiles add`; or, where the server "
    "runs, set DSPY_LM_MODEL (a LiteLLM model string such as openai/gpt-4o-mini), DSPY_LLM_API_KEY and, for "
    "OpenAI-compatible servers, DSPY_LM_API_BASE."
)


class ModelNotConfigured(FleetError):
    """No model is configured for a role (and none of its fallbacks has one)."""

    code = "model_not_configured"
    status = 409

    def __init__(self, role: str = "root", message: str | None = None) -> None:
        super().__init__(
            message or f"no language model is configured for the {role} role",
            action=CONFIGURE_ACTION,
            details={"role": role},
        )


class ProfileNotFound(FleetError):
    """A role binding names a profile that does not exist."""

    code = "profile_not_found"
    status = 404


class InvalidProfile(FleetError):
    """A profile's settings are rejected by DSPy (bad model string, incompatible parameters...)."""

    code = "invalid_profile"
    status = 422


class LMCallError(FleetError):
    """A call to a model failed; `code` says how (see fleet_rlm.llm.failures.classify)."""

    code = "lm_error"
    status = 502


class SecretError(FleetError):
    """The secret key is malformed, or a stored secret cannot be decrypted with it."""

    code = "secret_error"
    status = 500
