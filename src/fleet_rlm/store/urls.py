"""Database URL handling: one place that knows which drivers we use and where a SQLite file lives."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from sqlalchemy.engine import make_url

Backend = Literal["sqlite", "postgresql"]

_ASYNC_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
}


def normalize_url(url: str) -> str:
    """Return `url` with our async driver (`sqlite://` -> `sqlite+aiosqlite://`, `postgres://` -> asyncpg)."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend not in _ASYNC_DRIVERS:
        raise ValueError(f"unsupported database {backend!r}: use sqlite+aiosqlite:// or postgresql+asyncpg://")
    driver = _ASYNC_DRIVERS[backend]
    if parsed.drivername != driver:
        parsed = parsed.set(drivername=driver)
    return parsed.render_as_string(hide_password=False)


def backend_of(url: str) -> Backend:
    return "sqlite" if make_url(url).get_backend_name() == "sqlite" else "postgresql"


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL, or None for in-memory databases and other backends."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).expanduser()
