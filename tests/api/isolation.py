"""Helpers for the API tests: token-mode settings, per-user bearer headers, and seeding runs/events/artifacts
through the store on the app's own event loop (there is no runtime in these tests)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.auth import mint_token
from fleet_rlm.config import Settings
from fleet_rlm.store import Database
from fleet_rlm.store.repos import artifacts, events, runs, turns

T = TypeVar("T")
SECRET = "test-signing-key-with-enough-entropy-0123456789"


def token_settings(settings: Settings, **extra: Any) -> Settings:
    return settings.model_copy(update={"auth_mode": "token", "jwt_secret": SecretStr(SECRET), **extra})


def bearer(settings: Settings, user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(settings, user)}"}


def on_app(client: TestClient, fn: Callable[[Database], Awaitable[T]]) -> T:
    """Run `fn(database)` on the app's event loop (the engine belongs to it)."""
    database: Database = client.app.state.database  # type: ignore[attr-defined]

    async def call() -> T:
        return await fn(database)

    assert client.portal is not None
    return client.portal.call(call)


def user_id(client: TestClient, headers: dict[str, str]) -> str:
    response = client.get("/api/v1/auth/me", headers=headers)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def new_session(client: TestClient, headers: dict[str, str], title: str = "chat") -> str:
    response = client.post("/api/v1/sessions", json={"title": title}, headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def seed_run(
    client: TestClient,
    headers: dict[str, str],
    session_id: str,
    *,
    event_types: list[tuple[str, dict[str, Any]]] | None = None,
    message: str = "hello",
    answer: str | None = "hi",
    status: str | None = None,
) -> str:
    """A turn + run in `session_id` with the given events appended; returns the run id."""
    owner = user_id(client, headers)

    async def seed(db: Database) -> str:
        async with db.transaction() as s:
            turn = await turns.add_turn(s, session_id=session_id, user_message=message)
            run, _ = await runs.create_run(s, user_id=owner, session_id=session_id, turn_id=turn.id)
            await turns.update_turn(s, turn_id=turn.id, answer=answer, run_id=run.id)
            for type_, payload in event_types or []:
                await events.append_event(s, run_id=run.id, type=type_, payload=payload)
            if status in ("running", "succeeded"):
                await runs.set_run_status(s, run_id=run.id, status="running")
            if status == "succeeded":
                await runs.set_run_status(s, run_id=run.id, status="succeeded")
        return run.id

    return on_app(client, seed)


def seed_artifact(
    client: TestClient,
    headers: dict[str, str],
    session_id: str,
    run_id: str | None,
    path: str,
    name: str = "a.txt",
    media_type: str | None = None,
) -> str:
    owner = user_id(client, headers)

    async def seed(db: Database) -> str:
        async with db.transaction() as s:
            row = await artifacts.create_artifact(
                s,
                user_id=owner,
                session_id=session_id,
                run_id=run_id,
                name=name,
                path=path,
                size=5,
                sha256="0" * 64,
                media_type=media_type,
            )
        return row.id

    return on_app(client, seed)


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert body["code"] == code, body
    assert body["message"]
    return dict(body)
