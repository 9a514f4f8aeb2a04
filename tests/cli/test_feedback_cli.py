"""`fleet-rlm feedback set|list|clear` through the console script: a rating set from the CLI is read back,
filtered, replaced and cleared."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import cli_env, run_cli
from tests.cli.scripted import scripted_server


def test_rate_list_and_clear(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = cli_env(tmp_path / "cli")
    with scripted_server(settings) as (url, _):
        server = ["--url-server", url]
        run_id = json.loads(run_cli("fleet-rlm", ["run", "what is 6 x 7?", "--json", *server], env).stdout)["run_id"]
        rated = run_cli("fleet-rlm", ["feedback", "set", run_id, "bad", "--expected", "42", *server], env)
        listed = run_cli("fleet-rlm", ["feedback", "list", "--rating", "bad", "--json", *server], env)
        good = run_cli("fleet-rlm", ["feedback", "list", "--rating", "good", *server], env)
        run_cli("fleet-rlm", ["feedback", "set", run_id, "good", *server], env)
        table = run_cli("fleet-rlm", ["feedback", "list", *server], env)
        cleared = run_cli("fleet-rlm", ["feedback", "clear", run_id, *server], env)
        after = run_cli("fleet-rlm", ["feedback", "list", *server], env)
        again = run_cli("fleet-rlm", ["feedback", "clear", run_id, *server], env)
    assert rated.returncode == 0 and f"rated run {run_id} bad" in rated.stderr, rated
    items = json.loads(listed.stdout)["items"]
    assert [(i["run_id"], i["task"], i["expected_answer"]) for i in items] == [(run_id, "what is 6 x 7?", "42")]
    assert good.stdout == "no ratings\n"
    assert run_id in table.stdout and "good" in table.stdout and "what is 6 x 7?" in table.stdout
    assert cleared.returncode == 0 and after.stdout == "no ratings\n"
    assert again.returncode == 1 and again.stderr.startswith("error[feedback_not_found]"), again.stderr
