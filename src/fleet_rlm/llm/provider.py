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


class ProfilesProvider:
    """Resolve the profiles once, on the first request; build each role's LM once. `profiles()` hands the
    resolved profiles out as data, so a turn can run in another process (the closure cannot cross)."""

    def __init__(self, resolve: ProfileResolver, settings: Settings) -> None:
        self._resolve = resolve
        self._settings = settings
        self._lock = threading.Lock()
        self._resolved: dict[Role, LMProfile] = {}
        self._built: dict[Role, dspy.BaseLM] = {}

    def profiles(self) -> dict[Role, LMProfile]:
        """Every role's profile (keys decrypted; keep them in memory only). Raises the resolution's errors."""
        with self._lock:
            if not self._resolved:
                self._resolved.update(self._resolve())
            return dict(self._resolved)

    def __call__(self, role: str) -> dspy.BaseLM:
        name = parse_role(role)
        profiles = self.profiles()
        with self._lock:
            if name not in self._built:
                self._built[name] = build_lm(profiles[name], settings=self._settings)
            return self._built[name]


def profiles_provider(resolve: ProfileResolver, settings: Settings) -> LMProvider:
    """Resolve the profiles once, on the first request; build each role's LM once."""
    return ProfilesProvider(resolve, settings)


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


__all__ = [
    "LMProvider",
    "ProfileResolver",
    "ProfilesProvider",
    "profiles_provider",
    "provider_from_mapping",
    "settings_provider",
]
