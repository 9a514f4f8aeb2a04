"""`fleet-rlm sessions fork` and `sessions export --format` through the console script."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import cli_env, run_cli
from tests.cli.scripted import scripted_server


def test_fork_by_prefix_after_a_turn(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = cli_env(tmp_path / "cli")
    with scripted_server(settings) as (url, runtime):
        sid = json.loads(run_cli("fleet-rlm", ["run", "first", "--json", "--url-server", url], env).stdout)[
            "session_id"
        ]
        for task in ("second", "third"):
            run_cli("fleet-rlm", ["run", task, "--session", sid, "--url-server", url], env)
        forked = run_cli("fleet-rlm", ["sessions", "fork", sid[:10], "--after-turn", "1", "--url-server", url], env)
        fork_id = forked.stdout.strip()
        shown = run_cli("fleet-rlm", ["sessions", "show", fork_id, "--url-server", url], env)
        origin = run_cli("fleet-rlm", ["sessions", "show", sid, "--url-server", url], env)
        next_turn = run_cli("fleet-rlm", ["run", "fourth", "--session", fork_id, "--url-server", url], env)
        too_far = run_cli("fleet-rlm", ["sessions", "fork", sid, "--after-turn", "9", "--url-server", url], env)
    assert forked.returncode == 0, forked
    assert f"forked session {sid} after turn 1" in forked.stderr
    assert shown.returncode == 0 and f"forked from {sid} after turn 1" in shown.stdout
    assert "you: first" in shown.stdout and "second" not in shown.stdout
    assert f"fork {fork_id} after turn 1" in origin.stdout
    assert next_turn.returncode == 0 and next_turn.stdout == "answer 2: fourth\n", next_turn  # one turn of history
    assert [turn.user_message for turn in runtime.requests[-1].history] == ["first"]
    assert too_far.returncode == 1 and too_far.stderr.startswith("error[invalid_turn]"), too_far.stderr


def test_export_html_and_markdown_to_files(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = cli_env(tmp_path / "cli")
    page, notes = tmp_path / "shared.html", tmp_path / "shared.md"
    with scripted_server(settings) as (url, _):
        sid = json.loads(run_cli("fleet-rlm", ["run", "share <b>me</b>", "--json", "--url-server", url], env).stdout)[
            "session_id"
        ]
        as_html = run_cli(
            "fleet-rlm", ["sessions", "export", sid[:8], "--format", "html", "-o", str(page), "--url-server", url], env
        )
        as_md = run_cli(
            "fleet-rlm", ["sessions", "export", sid, "-f", "markdown", "-o", str(notes), "--url-server", url], env
        )
        to_stdout = run_cli("fleet-rlm", ["sessions", "export", sid, "--format", "markdown", "--url-server", url], env)
        bad = run_cli("fleet-rlm", ["sessions", "export", sid, "--format", "pdf", "--url-server", url], env)
    assert as_html.returncode == 0, as_html
    assert f"exported session {sid} (html) to {page}" in as_html.stderr
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and "share &lt;b&gt;me&lt;/b&gt;" in html
    assert "llm_query_batched" in html and "Child RLM · depth 1" in html and "answer 1: share" in html
    assert as_md.returncode == 0 and notes.read_text(encoding="utf-8") == to_stdout.stdout
    assert "## Turn 1" in to_stdout.stdout and "```text\nshare <b>me</b>\n```" in to_stdout.stdout
    assert bad.returncode == 2
