"""Migration 0012 encrypts the plaintext headers profiles held in their `extra` options (SQLite and Postgres).

A row written at 0011 with `extra_headers`/`headers` among its dspy.LM options holds them in clear; after the
upgrade the values exist only inside one Fernet token (with the server's key, passed as the app passes it), the
other options are untouched, and the downgrade puts them back. No key is read when no profile has headers.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from cryptography.fernet import Fernet
from sqlalchemy.engine import Connection

from fleet_rlm.llm.secrets import SecretBox
from fleet_rlm.store import migrate
from tests.store.throwaway import run_on

ORG = "org-secret-value-0123"
TOKEN = "tok-secret-value-4567"
OPTIONS = {
    "engine": "auto",
    "temperature": 0.2,
    "extra": {"extra_headers": {"X-Org": ORG}, "headers": {"X-Token": TOKEN}, "top_p": 0.5},
}


def _insert(connection: Connection, rows: list[tuple[str, dict[str, Any]]]) -> None:
    now = datetime.now(UTC)
    connection.execute(
        sa.text("INSERT INTO users (id, name, settings, created_at, updated_at) VALUES ('u1', 'alice', '{}', :t, :t)"),
        {"t": now},
    )
    for name, extra in rows:
        connection.execute(
            sa.text(
                "INSERT INTO llm_profiles (id, user_id, name, model, extra, created_at, updated_at) "
                "VALUES (:id, 'u1', :name, 'openai/m', :extra, :t, :t)"
            ),
            {"id": f"p-{name}", "name": name, "extra": json.dumps(extra), "t": now},
        )


def _rows(connection: Connection) -> dict[str, dict[str, Any]]:
    result = connection.execute(sa.text("SELECT * FROM llm_profiles ORDER BY name"))
    found = {}
    for row in result.mappings():
        data = dict(row)
        if isinstance(data["extra"], str):
            data["extra"] = json.loads(data["extra"])
        found[data["name"]] = data
    return found


async def _at_0011(db_url: str, is_sqlite: bool) -> None:
    if is_sqlite:
        Path(db_url.split("///", 1)[1]).parent.mkdir(parents=True)
    await migrate.upgrade_async(db_url, "0011")


async def test_plaintext_headers_are_encrypted_and_restored(db_url: str, is_sqlite: bool) -> None:
    await _at_0011(db_url, is_sqlite)
    await run_on(db_url, lambda c: _insert(c, [("gateway", OPTIONS), ("plain", {"engine": "auto"})]), begin=True)
    key = Fernet.generate_key()

    await migrate.upgrade_async(db_url, "head", attributes={"secret_key": lambda: key})

    rows = await run_on(db_url, _rows)
    gateway = rows["gateway"]
    assert ORG not in json.dumps(gateway, default=str) and TOKEN not in json.dumps(gateway, default=str)
    assert gateway["extra"] == {"engine": "auto", "temperature": 0.2, "extra": {"top_p": 0.5}}
    assert SecretBox(key).unseal(gateway["extra_headers_encrypted"]) == {"X-Org": ORG, "X-Token": TOKEN}
    assert rows["plain"]["extra_headers_encrypted"] is None and rows["plain"]["extra"] == {"engine": "auto"}

    await migrate.downgrade_async(db_url, "0011", attributes={"secret_key": lambda: key})
    restored = (await run_on(db_url, _rows))["gateway"]
    assert restored["extra"]["extra"] == {"top_p": 0.5, "extra_headers": {"X-Org": ORG, "X-Token": TOKEN}}
    assert "extra_headers_encrypted" not in restored


async def test_no_key_is_read_without_headers(db_url: str, is_sqlite: bool) -> None:
    await _at_0011(db_url, is_sqlite)
    await run_on(db_url, lambda c: _insert(c, [("plain", {"engine": "auto", "extra": {"top_p": 1}})]), begin=True)

    def refuse() -> bytes:
        raise AssertionError("the key was read although no profile has headers")

    await migrate.upgrade_async(db_url, "head", attributes={"secret_key": refuse})
    assert (await run_on(db_url, _rows))["plain"]["extra"] == {"engine": "auto", "extra": {"top_p": 1}}


def test_the_server_startup_passes_its_key(tmp_path: Path) -> None:
    """The app's path (prepare_database -> ensure_sqlite_schema): the key comes from the settings' data dir,
    not from whatever the environment says."""
    import asyncio

    from fleet_rlm.config import Settings
    from fleet_rlm.services.lms import headers_of
    from fleet_rlm.services.startup import prepare_database
    from fleet_rlm.store.models import LlmProfile

    data_dir = tmp_path / "data"
    settings = Settings(_env_file=None, data_dir=data_dir)  # type: ignore[call-arg]
    url = settings.resolved_database_url
    data_dir.mkdir()
    migrate.upgrade(url, "0011")
    asyncio.run(run_on(url, lambda c: _insert(c, [("gateway", OPTIONS)]), begin=True))

    async def start_and_read() -> dict[str, str]:
        database = await prepare_database(settings)
        try:
            async with database.session() as s:
                row = (await s.execute(sa.select(LlmProfile))).scalar_one()
            return headers_of(row, settings)
        finally:
            await database.dispose()

    assert asyncio.run(start_and_read()) == {"X-Org": ORG, "X-Token": TOKEN}
    assert (data_dir / "secret.key").is_file()
