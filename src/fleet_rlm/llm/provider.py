"""`LMProvider`: role -> the dspy LM that serves it. One lazy provider for every source of profiles.

The server's environment, a user's stored profiles and bindings, or a session's profile only change which
profiles `resolve()` returns; the provider calls it on the first request (inside the turn, so a misconfiguration
fails the turn with its code and action like any other failure) and builds each role's LM once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

import dspy

from fleet_rlm.config import Settings
from fleet_rlm.llm.build import build_lm
from fleet_rlm.llm.errors import ModelNotConfigured
from fleet_rlm.llm.profiles import LMProfile, resolve_profiles
from fleet_rlm.llm.roles import Role, fallback_chain, parse_role

LMProvider = Callable[[str], dspy.BaseLM]
"""role (root, sub, delegate, router, reflection) -> the LM to use; raises ModelNotConfigured when there is none."""

ProfileResolver = Callable[[], Mapping[Role, LMProfile]]
"""Every role's profile (keys decrypted); may raise the resolution's FleetErrors."""


def profiles_provider(resolve: ProfileResolver, settings: Settings) -> LMProvider:
    """Resolve the profiles once, on the first request; build each role's LM once."""
    lock = threading.Lock()
    resolved: dict[Role, LMProfile] = {}
    built: dict[Role, dspy.BaseLM] = {}

    def provide(role: str) -> dspy.BaseLM:
        name = parse_role(role)
        with lock:
            if name not in built:
                if not resolved:
                    resolved.update(resolve())
                built[name] = build_lm(resolved[name], settings=settings)
            return built[name]

    return provide


def settings_provider(settings: Settings) -> LMProvider:
    """LMs from the server's environment (FLEET_LM_MODEL / DSPY_LM_MODEL ...)."""
    return profiles_provider(lambda: resolve_profiles(settings), settings)


def provider_from_mapping(lms: Mapping[str, dspy.BaseLM]) -> LMProvider:
    """A provider over ready LMs (tests, embedding); missing roles fall back (sub -> root, delegate -> sub...)."""

    def provide(role: str) -> dspy.BaseLM:
        for candidate in fallback_chain(parse_role(role)):
            if candidate in lms:
                return lms[candidate]
        raise ModelNotConfigured(role)

    return provide


__all__ = ["LMProvider", "ProfileResolver", "profiles_provider", "provider_from_mapping", "settings_provider"]
