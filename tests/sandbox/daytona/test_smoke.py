"""`run_smoke` (what `fleet-rlm daytona-smoke` prints): all green against the fake, red with an action (and no
exception) when the setup is wrong."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fleet_rlm.config import Settings
from fleet_rlm.sandbox.daytona.smoke import run_smoke
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from tests.sandbox.daytona.fixtures import SNAPSHOT, daytona_options


def _git_repo(path: Path) -> str:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(path)]
    path.mkdir()
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    (path / "README.md").write_text("hello\n")
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    return path.as_uri()


def test_smoke_is_all_green_against_the_fake(fake_daytona: FakeDaytonaServer, tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        daytona_api_key=fake_daytona.api_key,
        daytona_api_url=fake_daytona.api_url,
        daytona_target="us",
        daytona_snapshot=SNAPSHOT,
    )
    steps = run_smoke(settings, repo=_git_repo(tmp_path / "repo"), ref="main")
    assert [(s.name, s.ok) for s in steps] == [
        ("configuration", True),
        ("connect", True),
        ("snapshot", True),
        ("volume", True),
        ("create sandbox", True),
        ("execute code", True),
        ("clone repository", True),
        ("volume write/read", True),
        ("delete sandbox", True),
    ], steps
    assert "cell and host callback ok" in steps[5].detail and "uploaded" in steps[5].detail
    assert "(2 top-level entries)" in steps[6].detail  # README.md and .git
    assert fake_daytona.state.sandboxes == {}


def test_smoke_against_an_unreachable_url_is_red_with_an_action(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path, daytona_api_key="k", daytona_api_url="http://127.0.0.1:9/api", daytona_target="us"
    )
    steps = run_smoke(settings)
    assert [(s.name, s.ok) for s in steps] == [("configuration", True), ("connect", False)]
    red = steps[-1]
    assert "[daytona_unreachable]" in red.detail and "127.0.0.1:9" in red.detail
    assert red.action is not None and "DAYTONA_API_URL" in red.action
    assert "Traceback" not in red.detail


def test_smoke_reports_missing_configuration_bad_key_and_missing_snapshot(
    fake_daytona: FakeDaytonaServer, tmp_path: Path
) -> None:
    unset = run_smoke(Settings(data_dir=tmp_path))
    assert [(s.name, s.ok) for s in unset] == [("configuration", False)]
    assert unset[0].action is not None and "DAYTONA_API_KEY" in unset[0].action

    bad_key = run_smoke(Settings(data_dir=tmp_path), options=daytona_options(fake_daytona, api_key="wrong"))
    assert (bad_key[-1].name, bad_key[-1].ok) == ("connect", False) and "daytona_auth_failed" in bad_key[-1].detail

    no_snapshot = run_smoke(Settings(data_dir=tmp_path), options=daytona_options(fake_daytona, snapshot="absent"))
    assert (no_snapshot[-1].name, no_snapshot[-1].ok) == ("snapshot", False)
    assert no_snapshot[-1].action is not None and "daytona-snapshot" in no_snapshot[-1].action
    assert fake_daytona.state.sandboxes == {}


def test_smoke_bad_repository_is_red_but_cleanup_still_runs(fake_daytona: FakeDaytonaServer, tmp_path: Path) -> None:
    options = daytona_options(fake_daytona)
    steps = run_smoke(Settings(data_dir=tmp_path), repo=(tmp_path / "missing").as_uri(), options=options)
    by_name = {s.name: s for s in steps}
    assert not by_name["clone repository"].ok and by_name["clone repository"].action
    assert by_name["volume write/read"].ok and by_name["delete sandbox"].ok
    assert fake_daytona.state.sandboxes == {}
