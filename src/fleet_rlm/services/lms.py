"""A user's stored LLM profiles and role bindings, as the llm layer understands them.

Rows hold the API key and the extra HTTP headers encrypted (Fernet, `fleet_rlm.llm.secret_box`); they are
decrypted only to call a model (a check, a model listing, a turn) and never leave the server: responses show a
key's mask and the headers' names. A row imported from the server's environment
holds no key at all: `key_source` names the environment profile ("env", "env-delegate") whose model, endpoint
and key are looked up when the LM is built. `turn_lm_provider` gives a turn the caller's models: the runtime
asks it for a role's LM, and resolution (bindings, DSPY_* environment, fallbacks) happens then, so a
misconfiguration fails the turn with its code and action like any other turn failure. A user's own endpoint is
checked against the SSRF rule (`llm.endpoints`) right before use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr
from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.config import Settings
from fleet_rlm.errors import Conflict, FleetError, NotFound
from fleet_rlm.llm import (
    ROLES,
    LMProfile,
    LMProvider,
    ModelNotConfigured,
    ProfileNotFound,
    Role,
    RoleBinding,
    env_profiles,
    explain_profiles,
    mask,
    parse_role,
    profiles_provider,
    resolve_profiles,
    secret_box,
)
from fleet_rlm.llm.endpoints import check_api_base, private_bases_allowed
from fleet_rlm.schemas.profiles import BindingOut, Effective, ProfileOptions, ProfileOut, RoleOut, RoleProblem
from fleet_rlm.store.models import LlmProfile
from fleet_rlm.store.models import RoleBinding as BindingRow
from fleet_rlm.store.repos import profiles as profiles_repo

OPTION_FIELDS = tuple(ProfileOptions.model_fields)


def profile_not_found(profile_id: str) -> NotFound:
    return NotFound(
        f"LLM profile {profile_id} not found",
        code="profile_not_found",
    )


async def owned_profile(s: AsyncSession, *, user_id: str, profile_id: str) -> LlmProfile:
    row = await profiles_repo.get_profile(s, user_id=user_id, profile_id=profile_id)
    if row is None:
        raise profile_not_found(profile_id)
    return row


def options_of(row: LlmProfile) -> ProfileOptions:
    """The row's optional knobs; unknown or invalid stored keys are ignored rather than breaking reads."""
    stored = {key: value for key, value in (row.extra or {}).items() if key in OPTION_FIELDS}
    try:
        return ProfileOptions.model_validate(stored)
    except ValueError:
        return ProfileOptions()


def env_profile_of(row: LlmProfile, settings: Settings) -> LMProfile | None:
    """The server environment's profile a row refers to (None for a row with its own settings)."""
    if row.key_source is None:
        return None
    env = env_profiles(settings).get(row.key_source)
    if env is None:
        raise Conflict(
            f"profile '{row.name}' uses the server's '{row.key_source}' model, which the server no longer sets",
            code="env_profile_missing",
            action="set the profile's own model, api_base and api_key, or delete it",
        )
    return env


def target_of(row: LlmProfile, settings: Settings) -> tuple[str, str | None]:
    """(model, api_base) the row calls: the environment's for an env reference (when still set), else its own."""
    if row.key_source is not None:
        env = env_profiles(settings).get(row.key_source)
        if env is not None:
            return env.model, env.api_base
    return row.model, row.api_base


def headers_of(row: LlmProfile, settings: Settings) -> dict[str, str]:
    """The row's extra HTTP headers, decrypted (raises SecretError when they cannot be)."""
    return {str(k): str(v) for k, v in secret_box(settings).unseal(row.extra_headers_encrypted).items()}


def header_names_of(row: LlmProfile, settings: Settings) -> list[str] | None:
    """The names of the row's headers (None when they cannot be decrypted)."""
    try:
        return sorted(headers_of(row, settings), key=str.lower)
    except FleetError:
        return None


def to_lm_profile(row: LlmProfile, settings: Settings, *, check_base: bool = True) -> LMProfile:
    """The llm layer's profile with the key and headers decrypted (raises SecretError when they cannot be). The
    row's own api_base is checked against the SSRF rule first (`lm_base_blocked`), unless `check_base` is False."""
    options = options_of(row).model_dump()
    headers = {name: SecretStr(value) for name, value in headers_of(row, settings).items()}
    env = env_profile_of(row, settings)
    if env is not None:
        return LMProfile(
            name=row.name,
            model=env.model,
            api_base=env.api_base,
            api_key=env.api_key,
            extra_headers=headers,
            **options,
        )
    if check_base:
        check_api_base(row.api_base, settings)
    key = secret_box(settings).decrypt(row.api_key_encrypted) if row.api_key_encrypted else None
    return LMProfile(
        name=row.name,
        model=row.model,
        api_base=row.api_base,
        api_key=SecretStr(key) if key else None,
        extra_headers=headers,
        provider_env_key=settings.auth_mode == "none",
        public_base_only=not private_bases_allowed(settings),
        **options,
    )


HEADERS_UNDECRYPTABLE = "the stored headers cannot be decrypted: send extra_headers again with their values"


def profile_out(row: LlmProfile, settings: Settings, roles: list[str], *, action: str | None = None) -> ProfileOut:
    """The response form: no key, only whether one is set, its mask and where it comes from; header names only."""
    header_names = header_names_of(row, settings)
    if header_names is None:
        header_names, action = [], action or HEADERS_UNDECRYPTABLE
    masked = ""
    if row.api_key_encrypted:
        try:
            masked = mask(secret_box(settings).decrypt(row.api_key_encrypted))
        except FleetError:
            masked = "(undecryptable: re-enter the key)"
    model, api_base = target_of(row, settings)
    key_source = "profile" if row.api_key_encrypted else ("server_env" if row.key_source else None)
    return ProfileOut(
        id=row.id,
        name=row.name,
        model=model,
        api_base=api_base,
        api_key_set=bool(row.api_key_encrypted),
        api_key_masked=masked,
        key_source=key_source,
        has_key=key_source is not None,
        extra_header_names=header_names,
        action=action,
        roles=sorted(roles),
        created_at=row.created_at,
        updated_at=row.updated_at,
        **options_of(row).model_dump(),
    )


def roles_by_profile(bindings: list[BindingRow]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for binding in bindings:
        found.setdefault(binding.profile_id, []).append(binding.role)
    return found


@dataclass
class UserLMConfig:
    """The user's rows, loaded in one transaction."""

    profiles: list[LlmProfile]
    bindings: list[BindingRow]

    @property
    def empty(self) -> bool:
        return not self.profiles and not self.bindings

    def named_bindings(self) -> dict[Role, RoleBinding]:
        names = {row.id: row.name for row in self.profiles}
        return {
            parse_role(b.role): RoleBinding(profile=names.get(b.profile_id, b.profile_id), model=b.model_override)
            for b in self.bindings
        }


async def load_config(s: AsyncSession, *, user_id: str) -> UserLMConfig:
    return UserLMConfig(
        profiles=await profiles_repo.list_profiles(s, user_id=user_id),
        bindings=await profiles_repo.list_bindings(s, user_id=user_id),
    )


def session_profile_of(settings: dict[str, Any] | None) -> str | None:
    """The LM profile a session's settings name (`/profile NAME` in the chat), or None."""
    name = (settings or {}).get("profile")
    return name.strip() if isinstance(name, str) and name.strip() else None


def resolve_for_user(
    settings: Settings, config: UserLMConfig, session_profile: str | None = None
) -> dict[str, LMProfile]:
    """Every role's profile (keys decrypted). Precedence for root: the session's profile, then the user's binding,
    then the server environment. Raises ModelNotConfigured / ProfileNotFound / SecretError, and `lm_base_blocked`
    when a role would call a user's endpoint the SSRF rule refuses."""
    stored = [to_lm_profile(row, settings, check_base=False) for row in config.profiles]
    bindings = config.named_bindings()
    if session_profile is not None:
        if session_profile not in {p.name for p in stored} | set(env_profiles(settings)):
            raise ProfileNotFound(
                f"this session uses LM profile '{session_profile}', which does not exist",
                action="choose one of your profiles with /profile NAME (GET /api/v1/llm-profiles lists them)",
                details={"profile": session_profile},
            )
        bindings["root"] = RoleBinding(profile=session_profile)
    resolved = resolve_profiles(settings, stored_profiles=stored, bindings=bindings)
    own = {row.name for row in config.profiles if row.key_source is None}
    for profile in resolved.values():
        if profile.name in own:
            check_api_base(profile.api_base, settings)
    return {str(role): profile for role, profile in resolved.items()}


def turn_lm_provider(settings: Settings, config: UserLMConfig, session_profile: str | None = None) -> LMProvider | None:
    """The LMs of one turn from the user's profiles (and the session's, for root); None when neither applies
    (the server's defaults do). Resolution and key decryption happen on the runtime's first request."""
    if config.empty and session_profile is None:
        return None
    return profiles_provider(lambda: resolve_for_user(settings, config, session_profile), settings)  # type: ignore[arg-type, return-value]


def explain_roles(settings: Settings, config: UserLMConfig) -> list[RoleOut]:
    """Per role: its binding and what it resolves to, with the reason (the llm layer's own resolution)."""
    rows: dict[str, LlmProfile] = {row.id: row for row in config.profiles}
    ids = {row.name: row.id for row in config.profiles}
    stored = []
    for row in config.profiles:
        model, api_base = target_of(row, settings)
        stored.append(LMProfile(name=row.name, model=model, api_base=api_base))
    found = explain_profiles(settings, stored_profiles=stored, bindings=config.named_bindings())
    bindings = {b.role: b for b in config.bindings}
    items: list[RoleOut] = []
    for role in ROLES:
        bound = bindings.get(role)
        binding = None
        if bound is not None:
            target = rows.get(bound.profile_id)
            binding = BindingOut(
                profile_id=bound.profile_id, profile_name=target.name if target else "?", model=bound.model_override
            )
        resolution = found[role]
        if resolution.profile is None or resolution.source is None:
            error = resolution.error or ModelNotConfigured(role)
            problem = RoleProblem(code=error.code, message=error.message, action=error.action)
            items.append(RoleOut(role=role, binding=binding, effective=None, problem=problem))
            continue
        name = resolution.base or resolution.profile.name
        reason = resolution.reason
        if resolution.source == "env" and name in ids:
            reason = f"no binding; your profile '{name}' (imported from env)"
        effective = Effective(
            source=resolution.source,
            profile_name=name,
            profile_id=ids.get(name),
            model=resolution.profile.model,
            api_base=resolution.profile.api_base,
            reason=reason,
        )
        items.append(RoleOut(role=role, binding=binding, effective=effective, problem=None))
    return items
