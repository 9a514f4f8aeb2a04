"""The app factory and the health surface: /health, /ready, /api/v1/info and the error shape."""

from __future__ import annotations

from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.store import migrate


def test_health_ready_and_info_tell_the_truth(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        health = client.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"

        ready = client.get("/ready")
        assert ready.status_code == 200, ready.json()
        body = ready.json()
        assert body["status"] == "ready"
        assert body["checks"]["database"]["ok"] is True
        assert body["checks"]["sandbox"]["ok"] is True

        info = client.get("/api/v1/info").json()
        assert info["database"] == settings.database_kind
        assert info["sandbox_backend"] == "local"
        assert info["isolation"] in {"bubblewrap", "reduced"}
        assert info["auth_mode"] == "none"
        assert info["model"] == {"configured": False, "root": None, "delegate": None}


def test_sqlite_default_creates_and_migrates_the_database(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        assert client.get("/ready").status_code == 200
    if settings.database_kind == "sqlite":
        assert (settings.data_dir / "fleet.db").is_file()
    assert (settings.data_dir / "workspaces").is_dir()
    assert (settings.data_dir / "logs").is_dir()
    assert migrate.current(settings.resolved_database_url) == migrate.head()


def test_info_reports_a_configured_model(settings: Settings) -> None:
    configured = settings.model_copy(update={"lm_model": "openai/fake-model", "delegate_lm_model": None})
    with TestClient(create_app(configured)) as client:
        model = client.get("/api/v1/info").json()["model"]
    assert model == {"configured": True, "root": "openai/fake-model", "delegate": "openai/fake-model"}


def test_ready_is_503_when_the_schema_falls_behind(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        migrate.downgrade(settings.resolved_database_url, "base")
        ready = client.get("/ready")
        assert ready.status_code == 503
        database = ready.json()["checks"]["database"]
        assert database["ok"] is False
        assert "fleet-rlm db upgrade" in database["detail"]


def test_errors_have_one_shape(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        missing = client.get("/api/v1/no-such-route")
        assert missing.status_code == 404
        assert missing.json() == {"error": {"code": "not_found", "message": "Not Found"}}
        wrong_method = client.post("/health")
        assert wrong_method.status_code == 405
        assert wrong_method.json()["error"]["code"] == "method_not_allowed"


def test_create_app_builds_nothing_at_import() -> None:
    import fleet_rlm.api.app as module

    assert not any(type(value).__name__ == "FastAPI" for value in vars(module).values())
