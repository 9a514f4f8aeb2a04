"""LLM profiles and role bindings. API keys and header values are write-only: responses say whether a key is set
(with a mask) and name the headers (`extra_header_names`), never their values."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, Field, SecretStr, field_validator

from fleet_rlm.llm.headers import HEADER_KWARGS, MAX_HEADERS, check_headers
from fleet_rlm.llm.profiles import RESERVED_KWARGS
from fleet_rlm.schemas.common import In

Engine = Literal["auto", "lm15", "litellm"]


def check_api_base(value: str | None) -> str | None:
    """An http(s) URL with a host, without a trailing slash; empty means none."""
    text = (value or "").strip().rstrip("/")
    if not text:
        return None
    parsed = urlparse(text)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ValueError("must be an http(s) URL such as https://api.openai.com/v1")
    return text


def check_name(value: str) -> str:
    text = value.strip()
    if not text:
        raise ValueError("must not be blank")
    return text


def check_extra(value: dict[str, Any]) -> dict[str, Any]:
    clash = sorted(RESERVED_KWARGS & set(value))
    if clash:
        raise ValueError(f"may not set {', '.join(clash)}; use the profile's own fields")
    headers = sorted(HEADER_KWARGS & set(value))
    if headers:
        raise ValueError(f"may not set {', '.join(headers)}; use extra_headers (stored encrypted)")
    return value


HEADERS_HELP = (
    "HTTP headers sent with every call to this endpoint (e.g. a gateway's X-Org or X-Api-Token). Values are "
    "stored encrypted and never returned (see extra_header_names); changing model or api_base removes them unless "
    "the same request sends them again."
)


class ProfileOptions(BaseModel):
    """Optional knobs of a profile (stored together in the profile's `extra` column)."""

    engine: Engine = Field(default="auto", description="DSPy engine: auto (native when possible), lm15, litellm.")
    temperature: float | None = Field(default=None, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int | None = Field(default=None, ge=1, description="Completion token limit.")
    timeout_s: float | None = Field(default=None, gt=0, le=3600, description="Per-request timeout, seconds.")
    num_retries: int | None = Field(default=None, ge=0, le=10, description="Retries on 429/5xx/timeouts.")
    pricing_model: str | None = Field(default=None, max_length=255, description="Price calls as this model.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Other dspy.LM keyword arguments.")

    _extra = field_validator("extra")(lambda value: check_extra(value))


class ProfileCreate(In, ProfileOptions):
    name: str = Field(min_length=1, max_length=255, description="Unique among your profiles.")
    model: str = Field(min_length=1, max_length=255, description="LiteLLM model string, e.g. openai/gpt-4o-mini.")
    api_base: str | None = Field(default=None, max_length=2000, description="OpenAI-compatible base URL.")
    api_key: SecretStr | None = Field(default=None, max_length=4000, description="Stored encrypted; never returned.")
    extra_headers: dict[str, SecretStr] = Field(default_factory=dict, max_length=MAX_HEADERS, description=HEADERS_HELP)

    _name = field_validator("name", "model")(check_name)
    _base = field_validator("api_base")(check_api_base)
    _headers = field_validator("extra_headers")(check_headers)


class ProfileUpdate(In):
    """Only the fields present change. `api_key: null` removes the stored key. Changing `model` or `api_base`
    removes the key too (and a reference to the server's key), unless the same request sends a new `api_key`:
    a key is only ever sent to the endpoint it was given for. The same holds for the header values.

    `extra_headers`, when present, is the whole set of headers: a value sets or replaces a header, `null` keeps
    its stored value (a form re-sent whole; not after a change of model or api_base), a stored header left out
    is removed; `extra_headers: null` removes them all."""

    name: str | None = Field(default=None, min_length=1, max_length=255)
    model: str | None = Field(default=None, min_length=1, max_length=255)
    api_base: str | None = Field(default=None, max_length=2000)
    api_key: SecretStr | None = Field(default=None, max_length=4000)
    engine: Engine | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    timeout_s: float | None = Field(default=None, gt=0, le=3600)
    num_retries: int | None = Field(default=None, ge=0, le=10)
    pricing_model: str | None = Field(default=None, max_length=255)
    extra: dict[str, Any] | None = None
    extra_headers: dict[str, SecretStr | None] | None = Field(
        default=None, max_length=MAX_HEADERS, description="The whole set of headers; null values keep stored ones."
    )

    _extra = field_validator("extra")(lambda value: None if value is None else check_extra(value))
    _base = field_validator("api_base")(check_api_base)
    _headers = field_validator("extra_headers")(check_headers)

    @field_validator("name", "model")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        return None if value is None else check_name(value)


class ProfileOut(ProfileOptions):
    id: str
    name: str
    model: str
    api_base: str | None
    api_key_set: bool = Field(description="Whether a key is stored (the key itself is never returned).")
    api_key_masked: str = Field(description='A display form such as "sk-…abcd"; empty when no key is set.')
    key_source: Literal["profile", "server_env"] | None = Field(
        default=None,
        description="profile: its own stored key; server_env: the server's DSPY_* key, used on the server only "
        "(never copied into the profile); null: no key.",
    )
    has_key: bool = Field(default=False, description="Whether calls send a key (stored or the server's).")
    extra_header_names: list[str] = Field(
        description="Names of the headers sent with every call; their values are stored encrypted, never returned."
    )
    action: str | None = Field(
        default=None, description="What to do next, e.g. after changing model/api_base removed the key."
    )
    roles: list[str] = Field(description="Roles bound to this profile.")
    created_at: datetime
    updated_at: datetime


class ProfileList(BaseModel):
    items: list[ProfileOut]


class ModelList(BaseModel):
    profile_id: str
    models: list[str] = Field(description="Model ids the endpoint serves (GET {api_base}/models), sorted.")


class ImportedProfile(BaseModel):
    name: str
    status: Literal["created", "updated", "unchanged"]
    profile: ProfileOut


class ImportEnvResult(BaseModel):
    """Profiles made from the server's DSPY_* settings; empty `items` when none is configured."""

    items: list[ImportedProfile]


class BindingIn(In):
    profile_id: str = Field(min_length=1, description="One of your profiles.")
    model: str | None = Field(default=None, max_length=255, description="Model override (same endpoint and key).")


class RolesUpdate(In):
    """Roles present change: a binding sets it, null removes it (the role falls back again)."""

    root: BindingIn | None = None
    sub: BindingIn | None = None
    delegate: BindingIn | None = None
    router: BindingIn | None = None
    reflection: BindingIn | None = None


class BindingOut(BaseModel):
    profile_id: str
    profile_name: str
    model: str | None


class Effective(BaseModel):
    """What the role will use on your next turn, and why."""

    source: Literal["binding", "env", "fallback"] = Field(description="binding, env (DSPY_* settings), fallback.")
    profile_name: str
    profile_id: str | None = Field(description="Your stored profile, or null for the server environment.")
    model: str
    api_base: str | None
    reason: str


class RoleProblem(BaseModel):
    code: str
    message: str
    action: str | None


class RoleOut(BaseModel):
    role: str
    binding: BindingOut | None
    effective: Effective | None
    problem: RoleProblem | None = Field(description="Why the role cannot be resolved (then effective is null).")


class RolesOut(BaseModel):
    items: list[RoleOut]
