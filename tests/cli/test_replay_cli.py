"""`fleet-rlm replay` end to end (embedded server): record an rlm run with the fake LM, stop the LM, replay the
run and a saved regression set (exit 0), then the set with another program version (exit 3, the diff shown)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from fleet_rlm.store import Database
from fleet_rlm.store.repos import programs as programs_repo
from fleet_rlm.testing import FakeLMServer, rlm_step, rlm_submit, sub_lm_rule
from tests.cli.helpers import cli_env, run_cli

pytestmark = pytest.mark.db_independent


def add_version(data_dir: Path) -> None:
    async def add() -> None:
        database = Database(f"sqlite+aiosqlite:///{data_dir / 'fleet.db'}")
        try:
            async with database.transaction() as session:
                await programs_repo.add_version(
                    session,
                    user_id=None,
                    module="rlm.task",
                    version="rlm.task-v7",
                    program={"runtime": {"rlm.task": "Answer in one word."}},
                    manifest={},
                )
                await programs_repo.promote(
                    session, module="rlm.task", version="rlm.task-v7", scope=None, promoted_by=None
                )  # promoted for everyone: visible, and what new turns run — yet the recorded run replays as it ran
        finally:
            await database.dispose()

    asyncio.run(add())


def test_replay_run_and_set_offline(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with FakeLMServer(rules=[sub_lm_rule("sub answer")]) as lm:
        lm.push(
            rlm_step("Ask.", "print(llm_query_batched(['a', 'b']))"),
            rlm_submit(answer="forty-two"),
        )
        env = cli_env(
            data_dir,
            DSPY_LM_MODEL="openai/fake-model",
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="sk-cli-SECRET-0123456789",
            FLEET_SANDBOX_POOL_SIZE="0",
            FLEET_LM_NUM_RETRIES="0",
        )
        ran = run_cli("fleet-rlm", ["run", "answer it", "--mode", "rlm", "--json"], env, timeout=180)
        assert ran.returncode == 0, ran
        outcome = json.loads(ran.stdout)
        assert outcome["answer"] == "forty-two"
    run_id = outcome["run_id"]  # the fake LM server is stopped from here on

    replayed = run_cli("fleet-rlm", ["replay", run_id], env, timeout=180)
    assert replayed.returncode == 0, replayed
    assert f"{run_id}  identical (4/4 LM calls" in replayed.stdout
    named = json.loads(run_cli("fleet-rlm", ["replay", run_id, "--json"], env, timeout=180).stdout)[0]
    assert set(named["program_versions"].values()) == {"builtin-1"}, named
    builtin = run_cli("fleet-rlm", ["replay", run_id, "--program-version", "builtin-1", "--json"], env, timeout=180)
    assert builtin.returncode == 0, builtin  # every version the report names is accepted back
    assert json.loads(builtin.stdout)[0]["result"] == "identical"
    unknown = run_cli("fleet-rlm", ["replay", run_id, "--program-version", "nope-v1"], env, timeout=180)
    assert unknown.returncode == 1 and "error[program_version_not_found]" in unknown.stderr, unknown
    saved = run_cli("fleet-rlm", ["replay", "--save-set", "smoke", run_id], env)
    assert saved.returncode == 0 and "saved set smoke (1 runs)" in saved.stdout, saved
    listed = run_cli("fleet-rlm", ["replay", "--list-sets"], env)
    assert listed.returncode == 0 and listed.stdout.startswith("smoke  1 run(s)"), listed
    ci = run_cli("fleet-rlm", ["replay", "--set", "smoke", "--json"], env, timeout=180)
    assert ci.returncode == 0, ci
    assert json.loads(ci.stdout)["reports"][0]["result"] == "identical"
    assert "SECRET" not in ci.stdout + replayed.stdout

    add_version(data_dir)
    changed = run_cli("fleet-rlm", ["replay", "--set", "smoke", "--program-version", "rlm.task-v7"], env, timeout=180)
    assert changed.returncode == 3, changed
    assert "diverged at LM call 1 (root #1): unrecorded_request" in changed.stdout
    assert "Answer in one word." in changed.stdout and "+++ replayed" in changed.stdout
    usage = run_cli("fleet-rlm", ["replay"], env)
    assert usage.returncode == 2 and "give RUN_ID" in usage.stderr
