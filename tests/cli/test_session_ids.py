"""Session ids as users type them: whole ids in `sessions list`, unique prefixes accepted, ambiguous ones refused
with the candidates, and not-found hints that name a CLI command instead of an HTTP route."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from fleet_rlm.cli.client import FleetClient
from tests.cli.helpers import cli_env, run_cli
from tests.cli.scripted import scripted_server


def test_prefixes_whole_ids_and_hints(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = cli_env(tmp_path / "cli", COLUMNS="60")  # a narrow terminal still shows whole ids
    with scripted_server(settings) as (url, _runtime), FleetClient(url) as client:
        ids = [str(client.create_session(title=f"s{i}")["id"]) for i in range(17)]  # 17 > 16: a shared first digit
        listed = run_cli("fleet-rlm", ["sessions", "list", "--limit", "50", "--url-server", url], env)
        unique = ids[0][:12]
        shown = run_cli("fleet-rlm", ["sessions", "show", unique, "--url-server", url], env)
        shared = Counter(i[0] for i in ids).most_common(1)[0][0]
        ambiguous = run_cli("fleet-rlm", ["sessions", "show", shared, "--url-server", url], env)
        missing = run_cli("fleet-rlm", ["sessions", "export", "zzzz", "--url-server", url], env)
        gone = run_cli("fleet-rlm", ["sessions", "show", "0" * 32, "--url-server", url], env)
        deleted = run_cli("fleet-rlm", ["sessions", "delete", unique, "--yes", "--url-server", url], env)
    assert listed.returncode == 0 and all(i in listed.stdout for i in ids), listed.stdout
    assert shown.returncode == 0 and ids[0] in shown.stdout and "s0" in shown.stdout, shown
    assert ambiguous.returncode == 1 and "error[ambiguous_id]" in ambiguous.stderr, ambiguous
    assert sum(i in ambiguous.stderr for i in ids) >= 2  # the candidates are named
    assert missing.returncode == 1 and "error[not_found]" in missing.stderr
    for result in (missing, gone):
        assert "fleet-rlm sessions list" in result.stderr and "/api/v1" not in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    assert deleted.returncode == 0 and f"deleted session {ids[0]}" in deleted.stdout, deleted
