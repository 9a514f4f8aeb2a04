"""LLM profiles: the caller's named models (endpoint, encrypted key and headers, options), their checks and model
lists.

A key (and a header value) only ever goes to the endpoint it was given for: changing `model` or `api_base`
removes it. Header values are write-only like keys: responses name the headers. Endpoints
are checked against the SSRF rule (`llm.endpoints`) on save and before use. `import-env` (admins only) makes
profiles that refer to the server's DSPY_* settings instead of copying its key.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Response
from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.api.auth import CurrentUserDep, require_admin
from fleet_rlm.api.deps import DatabaseDep, SettingsDep, TxDep
from fleet_rlm.config import Settings
from fleet_rlm.errors import Conflict, FleetError, InvalidInput
from fleet_rlm.llm import LMCheckResult, check_lm, env_profiles, list_models, secret_box
from fleet_rlm.llm.endpoints import check_api_base
from fleet_rlm.llm.headers import merge, plain
from fleet_rlm.schemas.common import Responses
from fleet_rlm.schemas.profiles import (
    ImportedProfile,
    ImportEnvResult,
    ModelList,
    ProfileCreate,
    ProfileList,
    ProfileOut,
    ProfileUpdate,
)
from fleet_rlm.services.lms import (
    OPTION_FIELDS,
    headers_of,
    options_of,
    owned_profile,
    profile_not_found,
    profile_out,
    roles_by_profile,
    to_lm_profile,
)
from fleet_rlm.store.models import LlmProfile
from fleet_rlm.store.repos import profiles as profiles_repo

router = APIRouter(prefix="/api/v1/llm-profiles", tags=["llm-profiles"])
NOT_FOUND: Responses = {404: {"description": "No such profile for this user."}}
CONFLICT: Responses = {409: {"description": "Another of your profiles has this name."}}
BLOCKED: Responses = {403: {"description": "lm_base_blocked: api_base resolves to a private address."}}
KEY_DROPPED = "the key was removed because model or api_base changed: send api_key to set one for this endpoint"
HEADERS_DROPPED = (
    "the values of headers {names} were removed because model or api_base changed: send extra_headers with their "
    "values to set them for this endpoint"
)


def name_taken(name: str) -> Conflict:
    return Conflict(
        f"you already have a profile named '{name}'",
        code="profile_name_taken",
        action="choose another name, or edit the existing profile",
    )


async def _ensure_free(s: AsyncSession, *, user_id: str, name: str, keep: str | None = None) -> None:
    existing = await profiles_repo.get_profile_by_name(s, user_id=user_id, name=name)
    if existing is not None and existing.id != keep:
        raise name_taken(name)


async def _out(
    s: AsyncSession, settings: Settings, row: LlmProfile, user_id: str, action: str | None = None
) -> ProfileOut:
    roles = roles_by_profile(await profiles_repo.list_bindings(s, user_id=user_id))
    return profile_out(row, settings, roles.get(row.id, []), action=action)


def _encrypt(settings: Settings, key: str | None) -> str | None:
    return secret_box(settings).encrypt(key) if key else None


def _header_changes(
    settings: Settings, row: LlmProfile, body: ProfileUpdate, *, sent: bool, target_changed: bool
) -> tuple[dict[str, Any], list[str]]:
    """The row changes an update makes to the headers, and the names whose values it dropped. Values sent are
    set, names sent without one keep theirs (unless the endpoint changed: values only go where they were given
    for), names left out are removed; without `extra_headers` only a changed endpoint drops them."""
    if not sent:
        if target_changed and row.extra_headers_encrypted:
            try:
                dropped = sorted(headers_of(settings=settings, row=row), key=str.lower)
            except FleetError:
                dropped = []
            return {"extra_headers_encrypted": None}, dropped or ["(undecryptable)"]
        return {}, []
    wanted = body.extra_headers or {}
    stored: dict[str, str] = {}
    if not target_changed and any(value is None for value in wanted.values()):
        try:
            stored = headers_of(row, settings)
        except FleetError:
            stored = {}
    merged, missing = merge(stored, wanted)
    if missing and not target_changed:
        raise InvalidInput(
            f"no stored value to keep for header(s) {', '.join(missing)}",
            code="header_value_missing",
            action="send a value for each new header (null keeps only a value already stored)",
        )
    return {"extra_headers_encrypted": secret_box(settings).seal(merged)}, missing


@router.get("", operation_id="listLlmProfiles", response_model=ProfileList)
async def list_profiles(user: CurrentUserDep, s: TxDep, settings: SettingsDep) -> ProfileList:
    """Your profiles by name. Keys are never returned: see `api_key_set` and `api_key_masked`."""
    rows = await profiles_repo.list_profiles(s, user_id=user.user_id)
    roles = roles_by_profile(await profiles_repo.list_bindings(s, user_id=user.user_id))
    return ProfileList(items=[profile_out(row, settings, roles.get(row.id, [])) for row in rows])


@router.post(
    "",
    operation_id="createLlmProfile",
    response_model=ProfileOut,
    status_code=201,
    responses={**CONFLICT, **BLOCKED},
)
async def create_profile(
    user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep, body: ProfileCreate
) -> ProfileOut:
    """A new profile; its API key and header values are encrypted at rest (never returned)."""
    await asyncio.to_thread(check_api_base, body.api_base, settings)
    key = body.api_key.get_secret_value() if body.api_key else None
    options = body.model_dump(include=set(OPTION_FIELDS))
    async with database.transaction() as s:
        await _ensure_free(s, user_id=user.user_id, name=body.name)
        row = await profiles_repo.create_profile(
            s,
            user_id=user.user_id,
            name=body.name,
            model=body.model,
            api_base=body.api_base,
            api_key_encrypted=_encrypt(settings, key),
            extra=options,
            extra_headers_encrypted=secret_box(settings).seal(plain(body.extra_headers)),
        )
        return await _out(s, settings, row, user.user_id)


@router.patch(
    "/{profile_id}",
    operation_id="updateLlmProfile",
    response_model=ProfileOut,
    responses={**NOT_FOUND, **CONFLICT, **BLOCKED},
)
async def update_profile(
    profile_id: str, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep, body: ProfileUpdate
) -> ProfileOut:
    """Change the fields present; `api_key: null` removes the key, a string replaces it. A changed `model` or
    `api_base` removes the key (and any reference to the server's key) unless a new `api_key` is sent, and the
    header values unless they are sent again. `extra_headers` is the whole set: a value sets one, null keeps the
    stored value, a name left out is removed."""
    sent = body.model_dump(exclude_unset=True)
    async with database.transaction() as s:
        row = await owned_profile(s, user_id=user.user_id, profile_id=profile_id)
    changes: dict[str, Any] = {}
    for field in ("name", "model"):
        if sent.get(field) is not None and sent[field] != getattr(row, field):
            changes[field] = sent[field]
    if "api_base" in sent and sent["api_base"] != row.api_base:
        changes["api_base"] = sent["api_base"]
        await asyncio.to_thread(check_api_base, sent["api_base"], settings)
    actions = []
    target_changed = "model" in changes or "api_base" in changes
    if "api_key" in sent:
        changes["api_key_encrypted"] = _encrypt(settings, body.api_key.get_secret_value() if body.api_key else None)
        changes["key_source"] = None
    elif target_changed and (row.api_key_encrypted or row.key_source):
        changes["api_key_encrypted"], changes["key_source"] = None, None
        actions.append(KEY_DROPPED)
    header_changes, dropped = _header_changes(
        settings, row, body, sent="extra_headers" in sent, target_changed=target_changed
    )
    changes.update(header_changes)
    if dropped:
        actions.append(HEADERS_DROPPED.format(names=", ".join(dropped)))
    action = "; ".join(actions) or None
    async with database.transaction() as s:
        row = await owned_profile(s, user_id=user.user_id, profile_id=profile_id)
        if "name" in changes:
            await _ensure_free(s, user_id=user.user_id, name=changes["name"], keep=row.id)
        option_changes = {key: sent[key] for key in OPTION_FIELDS if key in sent}
        if option_changes:
            merged = options_of(row).model_dump() | option_changes
            if merged.get("engine") is None:
                merged["engine"] = "auto"
            if merged.get("extra") is None:
                merged["extra"] = {}
            changes["extra"] = merged
        updated = await profiles_repo.update_profile(s, user_id=user.user_id, profile_id=profile_id, **changes)
        assert updated is not None
        return await _out(s, settings, updated, user.user_id, action)


@router.delete("/{profile_id}", operation_id="deleteLlmProfile", status_code=204, responses=NOT_FOUND)
async def delete_profile(profile_id: str, user: CurrentUserDep, s: TxDep) -> Response:
    """Delete the profile; roles bound to it fall back to the environment or their fallback role."""
    deleted = await profiles_repo.delete_profile(s, user_id=user.user_id, profile_id=profile_id)
    if not deleted:
        raise profile_not_found(profile_id)
    return Response(status_code=204)


@router.post(
    "/{profile_id}/test",
    operation_id="testLlmProfile",
    response_model=LMCheckResult,
    responses={**NOT_FOUND, **BLOCKED},
)
async def test_profile(
    profile_id: str, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep
) -> LMCheckResult:
    """One tiny completion: ok and latency, or the failure's code and category (never a 5xx for a provider
    failure, and never the endpoint's answer: a test is not a way to read what a URL returns)."""
    async with database.transaction() as s:
        row = await owned_profile(s, user_id=user.user_id, profile_id=profile_id)
    profile = await asyncio.to_thread(to_lm_profile, row, settings)
    return await asyncio.to_thread(check_lm, profile, settings)


@router.get(
    "/{profile_id}/models",
    operation_id="listLlmProfileModels",
    response_model=ModelList,
    responses={
        **NOT_FOUND,
        **BLOCKED,
        422: {"description": "The endpoint cannot list models."},
        502: {"description": "The endpoint failed (code says how)."},
    },
)
async def list_profile_models(
    profile_id: str, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep
) -> ModelList:
    """The model ids the profile's OpenAI-compatible endpoint serves."""
    async with database.transaction() as s:
        row = await owned_profile(s, user_id=user.user_id, profile_id=profile_id)
    profile = await asyncio.to_thread(to_lm_profile, row, settings)
    models = await asyncio.to_thread(list_models, profile)
    return ModelList(profile_id=row.id, models=models)


@router.post(
    "/import-env",
    operation_id="importLlmProfilesFromEnv",
    response_model=ImportEnvResult,
    responses={403: {"description": "admin_required: only admins may use the server's key."}},
)
async def import_env(user: CurrentUserDep, s: TxDep, settings: SettingsDep) -> ImportEnvResult:
    """Admins: profiles "env" and "env-delegate" that use the server's DSPY_* model, endpoint and key (when
    set). The key stays on the server: the profile only refers to it, and changing its model or api_base drops
    the reference. Idempotent: a profile already referring to the environment is left alone, one that differs
    is brought back in line."""
    require_admin(user, "importing the server's LM settings (and so its API key)")
    items: list[ImportedProfile] = []
    for name, env in env_profiles(settings).items():
        row = await profiles_repo.get_profile_by_name(s, user_id=user.user_id, name=name)
        if row is None:
            row = await profiles_repo.create_profile(
                s, user_id=user.user_id, name=name, model=env.model, api_base=env.api_base, key_source=name
            )
            status = "created"
        elif (row.key_source, row.api_key_encrypted, row.model, row.api_base) == (
            name,
            None,
            env.model,
            env.api_base,
        ):
            status = "unchanged"
        else:
            await profiles_repo.update_profile(
                s,
                user_id=user.user_id,
                profile_id=row.id,
                model=env.model,
                api_base=env.api_base,
                api_key_encrypted=None,
                key_source=name,
                extra_headers_encrypted=None,
            )
            status = "updated"
        out = await _out(s, settings, row, user.user_id)
        items.append(ImportedProfile(name=name, status=status, profile=out))  # type: ignore[arg-type]
    return ImportEnvResult(items=items)
