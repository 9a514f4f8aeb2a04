"""Fixtures for running the sandbox suites on the Daytona backend against the in-repo fake Daytona server.

Imported by `tests/sandbox/conftest.py` (the shared conformance suite's "daytona" param) and by the Daytona
tests themselves. Each test gets its own fake server (its own sandboxes and volumes under tmp_path) and its
own backend, shut down afterwards so no sandbox, loop thread or worker outlives the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet_rlm.sandbox.daytona import DaytonaBackend, DaytonaOptions
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer

SNAPSHOT = "fleet-rlm-worker"


def daytona_options(fake: FakeDaytonaServer, **changes: object) -> DaytonaOptions:
    base = DaytonaOptions(api_key=fake.api_key, api_url=fake.api_url, target="us", snapshot=SNAPSHOT)
    return base.with_changes(**changes)


@pytest.fixture
def fake_daytona(tmp_path: Path) -> Iterator[FakeDaytonaServer]:
    with FakeDaytonaServer(root=tmp_path / "fake-daytona", snapshots=(SNAPSHOT,)) as server:
        yield server


@pytest.fixture
def daytona_backend(fake_daytona: FakeDaytonaServer) -> Iterator[DaytonaBackend]:
    backend = DaytonaBackend(daytona_options(fake_daytona))
    try:
        yield backend
    finally:
        backend.shutdown()


@pytest.fixture(scope="module")
def shared_daytona_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaytonaBackend]:
    """One fake server and backend per module, for suites that never inspect the fake's state (conformance):
    callers give every test its own workspace id, so each test still gets its own volume subpath."""
    root = tmp_path_factory.mktemp("fake-daytona-shared")
    with FakeDaytonaServer(root=root, snapshots=(SNAPSHOT,)) as server:
        backend = DaytonaBackend(daytona_options(server))
        try:
            yield backend
        finally:
            backend.shutdown()
