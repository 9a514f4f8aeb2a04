"""`build_snapshot` (what `fleet-rlm daytona-snapshot` runs) against the fake server."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_rlm.config import Settings
from fleet_rlm.sandbox.daytona import DaytonaUnavailable, worker_version
from fleet_rlm.sandbox.daytona.snapshot import build_snapshot
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from tests.sandbox.daytona.fixtures import daytona_options


def test_build_keep_and_refresh(fake_daytona: FakeDaytonaServer, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    options = daytona_options(fake_daytona, snapshot="fleet-worker-test")
    built = build_snapshot(settings, options=options)
    assert (built.name, built.created, built.state, built.worker_version) == (
        "fleet-worker-test",
        True,
        "active",
        worker_version(),
    )
    first = fake_daytona.state.snapshot("fleet-worker-test")
    dockerfile = first.dockerfile or ""
    assert dockerfile.startswith("FROM python:3.11")
    assert f"/opt/fleet-rlm/{worker_version()}/worker.py" in dockerfile
    assert f"/opt/fleet-rlm/{worker_version()}/worker_lines.py" in dockerfile
    assert "import worker, worker_lines" in dockerfile  # the build fails on a broken worker

    kept = build_snapshot(settings, options=options)
    assert not kept.created and "already exists" in kept.detail
    assert fake_daytona.state.snapshot("fleet-worker-test").id == first.id

    rebuilt = build_snapshot(settings, refresh=True, options=options)
    assert rebuilt.created and "rebuilt" in rebuilt.detail
    assert fake_daytona.state.snapshot("fleet-worker-test").id != first.id


def test_build_against_an_unreachable_api_raises_an_actionable_error(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path, daytona_api_key="k", daytona_api_url="http://127.0.0.1:9/api", daytona_target="us"
    )
    with pytest.raises(DaytonaUnavailable) as info:
        build_snapshot(settings)
    assert info.value.code == "daytona_unreachable" and "DAYTONA_API_URL" in (info.value.action or "")
