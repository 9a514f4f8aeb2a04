"""Turn budgets: one set of bounds for the server's settings and the per-turn layers, resolved in one place."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from fleet_rlm.budgets import TurnBudgets
from fleet_rlm.config import Settings

pytestmark = pytest.mark.db_independent


def test_settings_give_the_server_budgets_within_the_same_bounds(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, max_iters=7, sandbox_output_max_chars=500)
    budgets = settings.turn_budgets()
    assert (budgets.max_iters, budgets.max_output_chars, budgets.max_tokens) == (7, 500, None)
    for field, value in (("max_iters", 201), ("max_llm_calls", 10_001), ("max_depth", 6), ("batch_concurrency", 65)):
        with pytest.raises(ValidationError, match=field):
            Settings(data_dir=tmp_path, **{field: value})
        with pytest.raises(ValidationError, match=field):
            budgets.over({field: value})
    with pytest.raises(ValidationError, match="turn_timeout_s"):
        Settings(data_dir=tmp_path, turn_timeout_s=0.5)


def test_later_layers_win_and_none_keeps_the_lower_one(tmp_path: Path) -> None:
    server = Settings(data_dir=tmp_path).turn_budgets()
    user = {"max_iters": 9, "max_depth": 0, "default_mode": "direct"}  # unrelated keys are ignored
    turn = {"max_iters": 3, "max_depth": None, "max_llm_calls": 40}
    resolved = server.over(user, None, turn)
    assert (resolved.max_iters, resolved.max_depth, resolved.max_llm_calls) == (3, 0, 40)
    assert resolved.turn_timeout_s == server.turn_timeout_s
    assert TurnBudgets.model_validate(resolved.model_dump()) == resolved  # what a run stores, read back
