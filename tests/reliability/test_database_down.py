"""The database goes away under a running server: /ready says so (503), routes answer a clear 503, and both recover
when it returns. PostgreSQL only: an embedded SQLite file cannot be "down" independently of the server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from tests.conftest import POSTGRES_ADMIN_URL, _admin, drop_postgres_database, make_postgres_database

pytestmark = pytest.mark.skipif(POSTGRES_ADMIN_URL is None, reason="needs PostgreSQL (FLEET_TEST_POSTGRES_URL)")


@pytest.fixture
def postgres_url() -> Iterator[str]:
    from fleet_rlm.store import migrate

    url = make_postgres_database()
    migrate.upgrade(url, "head")
    try:
        yield url
    finally:
        asyncio.run(_admin(f'ALTER DATABASE "{url.rpartition("/")[2]}" WITH ALLOW_CONNECTIONS true'))
        drop_postgres_database(url)


def _take_down(name: str) -> None:
    asyncio.run(_admin(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false'))
    asyncio.run(_admin(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"))


def _bring_back(name: str) -> None:
    asyncio.run(_admin(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true'))


def test_ready_and_routes_report_the_outage_and_recover(postgres_url: str, tmp_path: Path) -> None:
    name = postgres_url.rpartition("/")[2]
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", database_url=postgres_url)  # type: ignore[call-arg]
    with TestClient(create_app(settings)) as client:
        assert client.get("/ready").status_code == 200
        assert client.post("/api/v1/sessions", json={"title": "before"}).status_code == 201

        _take_down(name)
        ready = client.get("/ready")
        assert ready.status_code == 503
        database = ready.json()["checks"]["database"]
        assert database["ok"] is False and database["detail"].startswith("unreachable")
        listing = client.get("/api/v1/sessions")
        assert listing.status_code == 503
        error = listing.json()["error"]
        assert error["code"] == "database_unavailable" and error["action"]
        assert client.get("/health").status_code == 200  # liveness does not depend on the database

        _bring_back(name)
        assert client.get("/ready").status_code == 200
        titles = [item["title"] for item in client.get("/api/v1/sessions").json()["items"]]
        assert titles == ["before"]
