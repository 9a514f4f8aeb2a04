"""What a CLI call imports: the commands users run often load no model, web or settings-model stack.

Each probe runs a console script's entry point in a fresh interpreter and reports the top-level packages it
imported. Behaviour only (which modules), never timing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import cli_env

pytestmark = pytest.mark.db_independent

PROBE = """
import sys
from fleet_rlm.cli.main import fleet_rlm_entry
sys.argv = ["fleet-rlm", *sys.argv[1:]]
try:
    fleet_rlm_entry()
finally:
    loaded = sorted({name.split(".")[0] for name in sys.modules} - set(sys.stdlib_module_names))
    ours = sorted(name for name in sys.modules if name.startswith("fleet_rlm."))
    print("LOADED=" + ",".join(loaded), file=sys.stderr)
    print("OURS=" + ",".join(ours), file=sys.stderr)
"""
MODEL_AND_WEB = {"dspy", "litellm", "fastapi", "sqlalchemy", "uvicorn", "starlette"}


def _probe(args: list[str], env: dict[str, str]) -> tuple[set[str], set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done
    lines = dict(line.split("=", 1) for line in done.stderr.splitlines() if line.startswith(("LOADED=", "OURS=")))
    return set(filter(None, lines["LOADED"].split(","))), set(filter(None, lines["OURS"].split(",")))


def test_loading_the_cli_imports_only_typer_and_the_command_table(tmp_path: Path) -> None:
    loaded, ours = _probe(["--version"], cli_env(tmp_path / "data"))
    assert loaded - {"__main__", "_distutils_hack"} <= {"typer", "fleet_rlm", "annotated_doc", "shellingham"}, loaded
    assert ours <= {
        "fleet_rlm.cli",
        "fleet_rlm.cli.main",
        "fleet_rlm.cli.errors",
        "fleet_rlm.cli.help_style",
        "fleet_rlm.cli.lazy",
        "fleet_rlm.errors",
    }, ours


def test_sessions_list_imports_no_model_or_web_stack(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data")
    for _ in range(2):  # the first call starts the server, the second finds it: neither loads the stacks
        loaded, ours = _probe(["sessions", "list"], env)
        assert not loaded & MODEL_AND_WEB, loaded
        assert not {"fleet_rlm.cli.optimize", "fleet_rlm.bench", "fleet_rlm.events", "fleet_rlm.cli.render"} & ours


def test_run_imports_no_model_or_web_stack(tmp_path: Path) -> None:
    from fleet_rlm.testing import FakeLMServer, adapter_fields_rule

    with FakeLMServer(rule=adapter_fields_rule(answer="four")) as lm:
        env = cli_env(
            tmp_path / "data",
            DSPY_LM_MODEL="openai/fake-model",
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="fake",
            FLEET_SANDBOX_POOL_SIZE="0",
        )
        loaded, ours = _probe(["run", "What is 2+2?", "--mode", "direct"], env)
    assert not loaded & MODEL_AND_WEB, loaded  # the turn ran in the local server; the client only streamed it
    assert "fleet_rlm.cli.render" in ours  # (it did render the turn)


def test_the_embedded_default_never_imports_the_job_queue(tmp_path: Path) -> None:
    from fleet_rlm.testing import FakeLMServer, adapter_fields_rule

    with FakeLMServer(rule=adapter_fields_rule(answer="four")) as lm:
        env = cli_env(
            tmp_path / "data",
            DSPY_LM_MODEL="openai/fake-model",
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="fake",
            FLEET_SANDBOX_POOL_SIZE="0",
            FLEET_CLI_SERVER="inprocess",  # the server, its turn and its database in this very process
        )
        loaded, ours = _probe(["run", "What is 2+2?", "--mode", "direct"], env)
    assert {"fastapi", "sqlalchemy", "dspy"} <= loaded  # the turn ran here, on SQLite
    assert not {"procrastinate", "psycopg", "psycopg_pool"} & loaded, loaded
    assert not {"fleet_rlm.services.queue.app", "fleet_rlm.services.queue.worker"} & ours
