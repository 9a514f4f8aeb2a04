"""LM profiles (a named model + endpoint + credentials) and how roles are bound to them.

Profiles come from two places: the environment (`Settings.lm_*` and `delegate_lm_*`, named "env" and
"env-delegate") and the caller's stored profiles (the API reads them from the database and decrypts their
keys; this layer never imports the store). `resolve_profiles` gives every role a profile:

1. an explicit binding (role -> profile name, optional model override);
2. the environment: root from DSPY_LM_MODEL; sub and delegate from DSPY_DELEGATE_LM_MODEL, whose missing key
   or base is inherited from the root settings;
3. the role's fallback (sub -> root, delegate -> sub, router -> sub, reflection -> root).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.llm.errors import ModelNotConfigured, ProfileNotFound
from fleet_rlm.llm.headers import HEADER_KWARGS
from fleet_rlm.llm.roles import FALLBACK, ROLES, Role

Engine = Literal["auto", "lm15", "litellm"]

ENV_PROFILE = "env"
ENV_DELEGATE_PROFILE = "env-delegate"

# dspy.LM arguments build_lm owns; a profile's `extra` may not set them.
RESERVED_KWARGS = frozenset(
    {"model", "api_key", "api_base", "base_url", "cache", "callbacks", "num_retries", "timeout", "engine"}
)


class LMProfile(BaseModel):
    """A model a role can use. `api_key` is the plain key (decrypted by the caller), kept as a SecretStr."""

    model_config = ConfigDict(frozen=True, from_attributes=True)

    name: str = Field(min_length=1, description="Profile name, unique per user.")
    model: str = Field(min_length=1, description="LiteLLM model string, e.g. openai/gpt-4o-mini.")
    api_base: str | None = Field(default=None, description="Base URL of an OpenAI-compatible API.")
    api_key: SecretStr | None = Field(default=None, description="API key; None uses the provider's env var.")
    engine: Engine = Field(default="auto", description="DSPy engine: auto (native when possible), lm15, litellm.")
    temperature: float | None = Field(default=None, ge=0, description="Sampling temperature.")
    max_tokens: int | None = Field(default=None, ge=1, description="Completion token limit.")
    timeout_s: float | None = Field(default=None, gt=0, description="Per-request timeout; default lm_timeout_s.")
    num_retries: int | None = Field(default=None, ge=0, description="Retries; default lm_num_retries.")
    pricing_model: str | None = Field(
        default=None, description="Price calls as this LiteLLM model (for proxies serving a known model)."
    )
    extra: dict[str, Any] = Field(default_factory=dict, description="Other dspy.LM keyword arguments.")
    extra_headers: dict[str, SecretStr] = Field(
        default_factory=dict, description="HTTP headers sent with every call (decrypted by the caller; secrets)."
    )
    provider_env_key: bool = Field(
        default=True,
        description="Without api_key, let the client use the provider's env var (OPENAI_API_KEY...). False for "
        "a user's own endpoint in multi-user modes: the server's variable must never go to it.",
    )
    public_base_only: bool = Field(
        default=False,
        description="Every connection to api_base must reach only public addresses (checked at connect time, "
        "llm.egress): a user's own endpoint in token and oidc modes unless private bases are allowed.",
    )

    @field_validator("api_base")
    @classmethod
    def _strip_base(cls, value: str | None) -> str | None:
        value = (value or "").strip().rstrip("/")
        return value or None

    @field_validator("extra")
    @classmethod
    def _no_reserved(cls, value: dict[str, Any]) -> dict[str, Any]:
        clash = sorted((RESERVED_KWARGS | HEADER_KWARGS) & set(value))
        if clash:
            raise ValueError(f"extra may not set {clash}; use the profile's own fields (extra_headers for headers)")
        return value

    @property
    def api_key_value(self) -> str | None:
        return self.api_key.get_secret_value() if self.api_key else None

    @property
    def extra_header_values(self) -> dict[str, str]:
        return {name: value.get_secret_value() for name, value in self.extra_headers.items()}

    def with_model(self, model: str | None) -> LMProfile:
        """This profile with another model (a binding's override); unchanged when `model` is empty."""
        return self.model_copy(update={"model": model}) if model else self


class RoleBinding(BaseModel):
    """Which profile a role uses; `model` overrides the profile's model (same endpoint and key)."""

    model_config = ConfigDict(frozen=True, from_attributes=True)

    profile: str | None = Field(default=None, description="Profile name; None keeps the role's default.")
    model: str | None = Field(default=None, description="Model override.")


RoleBindings = Mapping[Role, RoleBinding | str]
"""Role -> binding (a bare string is a profile name)."""


def env_profiles(settings: Settings) -> dict[str, LMProfile]:
    """The profiles the environment defines: "env" (root) and "env-delegate" (sub/delegate), when set."""
    found: dict[str, LMProfile] = {}
    if settings.lm_model:
        found[ENV_PROFILE] = LMProfile(
            name=ENV_PROFILE, model=settings.lm_model, api_base=settings.lm_api_base, api_key=settings.lm_api_key
        )
    if settings.delegate_lm_model:
        found[ENV_DELEGATE_PROFILE] = LMProfile(
            name=ENV_DELEGATE_PROFILE,
            model=settings.delegate_lm_model,
            api_base=settings.delegate_lm_api_base or settings.lm_api_base,
            api_key=settings.delegate_lm_api_key or settings.lm_api_key,
        )
    return found


def _coerce_profile(value: Any) -> LMProfile:
    if isinstance(value, LMProfile):
        return value
    if isinstance(value, Mapping):
        return LMProfile.model_validate(dict(value))
    return LMProfile.model_validate(value, from_attributes=True)


def _coerce_binding(value: RoleBinding | str | Any) -> RoleBinding:
    if isinstance(value, RoleBinding):
        return value
    if isinstance(value, str):
        return RoleBinding(profile=value)
    if isinstance(value, Mapping):
        return RoleBinding.model_validate(dict(value))
    return RoleBinding.model_validate(value, from_attributes=True)


ENV_DEFAULT: dict[Role, str] = {"root": ENV_PROFILE, "sub": ENV_DELEGATE_PROFILE, "delegate": ENV_DELEGATE_PROFILE}
"""Role -> the environment profile it uses when it has no binding."""

ENV_REASON = {
    ENV_PROFILE: "no binding; the server environment's DSPY_LM_MODEL",
    ENV_DELEGATE_PROFILE: "no binding; the server environment's DSPY_DELEGATE_LM_MODEL",
}

RoleSource = Literal["binding", "env", "fallback"]


@dataclass(frozen=True)
class RoleResolution:
    """How one role got its profile (or why it has none): the one answer both turns and the roles page use."""

    role: Role
    profile: LMProfile | None
    source: RoleSource | None = None
    reason: str = ""
    base: str | None = None
    """Name of the profile it uses before a binding's model override (bound, environment or the parent's)."""
    error: FleetError | None = None


def explain_profiles(
    settings: Settings,
    *,
    stored_profiles: Iterable[LMProfile | Mapping[str, Any] | Any] = (),
    bindings: Mapping[Role, RoleBinding | str | Any] | None = None,
) -> dict[Role, RoleResolution]:
    """Every role's resolution, in ROLES order; a problem is reported on its role instead of raised."""
    available = env_profiles(settings)
    for item in stored_profiles:
        profile = _coerce_profile(item)
        available[profile.name] = profile
    bound = {role: _coerce_binding(value) for role, value in (bindings or {}).items()}
    found: dict[Role, RoleResolution] = {}
    for role in ROLES:
        binding = bound.get(role, RoleBinding())
        source: RoleSource
        if binding.profile is not None and binding.profile not in available:
            error = ProfileNotFound(
                f"the {role} role is bound to profile '{binding.profile}', which does not exist",
                action="Bind the role to an existing profile (`fleet-rlm profiles list`) or add it.",
                details={"role": role, "profile": binding.profile},
            )
            found[role] = RoleResolution(role, None, error=error)
            continue
        if binding.profile is not None:
            name, source, reason = binding.profile, "binding", f"bound to profile '{binding.profile}'"
            base = available[name]
        elif role in ENV_DEFAULT and ENV_DEFAULT[role] in available:
            name, source, reason = ENV_DEFAULT[role], "env", ENV_REASON[ENV_DEFAULT[role]]
            base = available[name]
        elif role in FALLBACK and (parent := found[FALLBACK[role]]).profile is not None:
            name, source, reason = parent.base or "", "fallback", f"no binding; uses the {FALLBACK[role]} role's model"
            base = parent.profile
        else:
            found[role] = RoleResolution(role, None, error=ModelNotConfigured(role))
            continue
        if binding.model:
            reason += f", model overridden to {binding.model}"
        found[role] = RoleResolution(role, base.with_model(binding.model), source, reason, name)
    return found


def resolve_profiles(
    settings: Settings,
    *,
    stored_profiles: Iterable[LMProfile | Mapping[str, Any] | Any] = (),
    bindings: Mapping[Role, RoleBinding | str | Any] | None = None,
) -> dict[Role, LMProfile]:
    """A profile for every role. Raises ModelNotConfigured when root has none, ProfileNotFound for a
    binding to an unknown profile. Stored profiles may be LMProfile, dicts or objects with those attributes."""
    resolved: dict[Role, LMProfile] = {}
    for role, found in explain_profiles(settings, stored_profiles=stored_profiles, bindings=bindings).items():
        if found.profile is None:
            raise found.error or ModelNotConfigured(role)
        resolved[role] = found.profile
    return resolved


def resolve_profile(
    role: Role,
    settings: Settings,
    *,
    stored_profiles: Iterable[LMProfile | Mapping[str, Any] | Any] = (),
    bindings: Mapping[Role, RoleBinding | str | Any] | None = None,
) -> LMProfile:
    """The profile of one role (see resolve_profiles)."""
    return resolve_profiles(settings, stored_profiles=stored_profiles, bindings=bindings)[role]
