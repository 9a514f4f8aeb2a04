"""Language models for fleet-rlm: profiles, role bindings, dspy.LM construction, usage/cost, checks, secrets.

Imports only config, errors and events (never store/sandbox/runtime/api). Stored profiles and bindings are
passed in by the caller as plain objects. Importing this package sets LITELLM_LOCAL_MODEL_COST_MAP=True so
litellm never fetches its price table over the network.

    profiles = resolve_profiles(settings, stored_profiles=rows, bindings={"sub": "cheap"})
    meter = UsageMeter()
    root = build_lm(profiles["root"], settings=settings, callbacks=[meter.callback("root")])
    ...
    meter.snapshot()  # -> fleet_rlm.events.UsageTotals, the payload of a `usage` event
"""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fleet_rlm.llm.build import build_lm, engine_of, lm_kwargs
from fleet_rlm.llm.check import LMCheckResult, check_lm, list_models, models_url
from fleet_rlm.llm.errors import (
    CONFIGURE_ACTION,
    InvalidProfile,
    LMCallError,
    ModelNotConfigured,
    ProfileNotFound,
    SecretError,
)
from fleet_rlm.llm.failures import classify, failure_code
from fleet_rlm.llm.pricing import Price, is_priced, price
from fleet_rlm.llm.profiles import (
    ENV_DEFAULT,
    ENV_DELEGATE_PROFILE,
    ENV_PROFILE,
    ENV_REASON,
    LMProfile,
    RoleBinding,
    RoleBindings,
    RoleResolution,
    RoleSource,
    env_profiles,
    explain_profiles,
    resolve_profile,
    resolve_profiles,
)
from fleet_rlm.llm.provider import (
    LMProvider,
    ProfileResolver,
    profiles_provider,
    provider_from_mapping,
    settings_provider,
)
from fleet_rlm.llm.roles import FALLBACK, ROLES, Role, fallback_chain, parse_role
from fleet_rlm.llm.secrets import SecretBox, load_or_create_key, mask, secret_box
from fleet_rlm.llm.usage import LMCallRecord, UsageCallback, UsageMeter

__all__ = [
    "CONFIGURE_ACTION",
    "ENV_DEFAULT",
    "ENV_DELEGATE_PROFILE",
    "ENV_PROFILE",
    "ENV_REASON",
    "FALLBACK",
    "ROLES",
    "InvalidProfile",
    "LMCallError",
    "LMCallRecord",
    "LMCheckResult",
    "LMProfile",
    "LMProvider",
    "ModelNotConfigured",
    "Price",
    "ProfileNotFound",
    "ProfileResolver",
    "Role",
    "RoleBinding",
    "RoleBindings",
    "RoleResolution",
    "RoleSource",
    "SecretBox",
    "SecretError",
    "UsageCallback",
    "UsageMeter",
    "build_lm",
    "check_lm",
    "classify",
    "engine_of",
    "env_profiles",
    "explain_profiles",
    "failure_code",
    "fallback_chain",
    "is_priced",
    "list_models",
    "lm_kwargs",
    "load_or_create_key",
    "mask",
    "models_url",
    "parse_role",
    "price",
    "profiles_provider",
    "provider_from_mapping",
    "resolve_profile",
    "resolve_profiles",
    "secret_box",
    "settings_provider",
]
