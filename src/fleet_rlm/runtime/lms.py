"""Which dspy.LM serves each role, and the per-turn copies that meter usage and obey the turn's budgets.

The API resolves LLM profiles from the database and passes an `LMProvider` (`fleet_rlm.llm.provider`: a
role -> LM callable, or a mapping); by default the roles come from Settings through fleet_rlm.llm. Each turn
works on copies of the provider's LMs (DSPy's `copy()` isolates callbacks) carrying the turn's UsageMeter
callback, wrapped in a GuardedLM so every call counts against the shared budget and stops with the turn.
When the turn records (its sink persists recordings), a RecordingLM sits between the two and records every
exchange.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import dspy

from fleet_rlm.config import Settings
from fleet_rlm.llm.provider import LMProvider, provider_from_mapping, settings_provider
from fleet_rlm.llm.roles import FALLBACK
from fleet_rlm.llm.usage import UsageMeter
from fleet_rlm.runtime.control import TurnControl
from fleet_rlm.runtime.guarded_lm import GuardedLM
from fleet_rlm.runtime.recording import LMRecorder


def as_provider(value: LMProvider | Mapping[str, dspy.BaseLM] | None, settings: Settings) -> LMProvider:
    if value is None:
        return settings_provider(settings)
    if isinstance(value, Mapping):
        return provider_from_mapping(value)
    return value


class TurnLMs:
    """The turn's guarded, metered LM per role (created on first use, so an unused router costs nothing)."""

    def __init__(
        self, provider: LMProvider, control: TurnControl, meter: UsageMeter, recorder: LMRecorder | None = None
    ) -> None:
        self._provider = provider
        self._control = control
        self.meter = meter
        self.recorder = recorder
        self._lock = threading.Lock()
        self._lms: dict[str, GuardedLM] = {}

    def get(self, role: str) -> GuardedLM:
        with self._lock:
            if role not in self._lms:
                base = self._provider(role)
                lm = base.copy()
                lm.callbacks = [*getattr(lm, "callbacks", []), self.meter.callback(role)]
                if self.recorder is not None:  # below the guard: sub-LM calls skip GuardedLM but not this
                    lm = self.recorder.wrap(lm, role)
                self._lms[role] = GuardedLM(lm, self._control, role)
            return self._lms[role]

    def require_root(self) -> GuardedLM:
        """Resolve the root LM up front so a missing model fails the turn before anything runs."""
        return self.get("root")


__all__ = ["FALLBACK", "LMProvider", "TurnLMs", "as_provider", "provider_from_mapping", "settings_provider"]
