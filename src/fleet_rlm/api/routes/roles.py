"""LLM role bindings: which of the caller's profiles serves root, sub, delegate, router and reflection, and
what each role resolves to right now (bindings, then the server's DSPY_* environment, then fallbacks)."""

from __future__ import annotations

from fastapi import APIRouter

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import SettingsDep, TxDep
from fleet_rlm.llm import ROLES
from fleet_rlm.schemas.profiles import RolesOut, RolesUpdate
from fleet_rlm.services.lms import explain_roles, load_config, owned_profile
from fleet_rlm.store.repos import profiles as profiles_repo

router = APIRouter(prefix="/api/v1/llm-roles", tags=["llm-profiles"])


@router.get("", operation_id="listLlmRoles", response_model=RolesOut)
async def list_roles(user: CurrentUserDep, s: TxDep, settings: SettingsDep) -> RolesOut:
    """Every role with its binding and its effective profile and model (or the problem that stops it)."""
    config = await load_config(s, user_id=user.user_id)
    return RolesOut(items=explain_roles(settings, config))


@router.patch(
    "",
    operation_id="updateLlmRoles",
    response_model=RolesOut,
    responses={404: {"description": "A named profile is not one of yours."}},
)
async def update_roles(user: CurrentUserDep, s: TxDep, settings: SettingsDep, body: RolesUpdate) -> RolesOut:
    """Bind the roles present to profiles (optionally overriding the model); null removes a binding."""
    sent = body.model_dump(exclude_unset=True)
    for role in ROLES:
        if role not in sent:
            continue
        binding = getattr(body, role)
        if binding is None:
            await profiles_repo.clear_binding(s, user_id=user.user_id, role=role)
            continue
        await owned_profile(s, user_id=user.user_id, profile_id=binding.profile_id)
        model = (binding.model or "").strip() or None
        await profiles_repo.set_binding(
            s, user_id=user.user_id, role=role, profile_id=binding.profile_id, model_override=model
        )
    config = await load_config(s, user_id=user.user_id)
    return RolesOut(items=explain_roles(settings, config))
