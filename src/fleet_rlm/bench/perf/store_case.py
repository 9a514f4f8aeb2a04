"""Scenario 6, the API on a large store: list sessions, page a session's history, replay a run's events.

Seeds 10,000 sessions / 1,000,000 events (`--quick`: 300 / 6,000) with bulk inserts, then times requests
against a real `serve-api` over keep-alive HTTP: p50/p99 of each. SQLite always (the shared server's database);
Postgres only with `--postgres-url` / FLEET_TEST_POSTGRES_URL, in a database created for the run and dropped after.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from sqlalchemy.engine import make_url

from fleet_rlm.bench.perf.context import SuiteContext
from fleet_rlm.bench.perf.measure import ms, percentile
from fleet_rlm.bench.perf.report import Row
from fleet_rlm.bench.perf.seed import Seeded, seed
from fleet_rlm.bench.perf.server import (
    SERVER_SETTINGS,
    ApiServer,
    Harness,
    api_server,
    harness,
    new_session,
    server_command,
)

S = "6 API on a large store"


def _sizes(quick: bool) -> tuple[int, int, int]:
    """sessions, turns (= runs) per session, events per run."""
    return (300, 1, 20) if quick else (10_000, 5, 20)


def _timed_gets(server: ApiServer, paths: list[str]) -> list[float]:
    samples = []
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        client.get(paths[0]).raise_for_status()
        for path in paths:
            started = time.perf_counter()
            client.get(path).raise_for_status()
            samples.append(time.perf_counter() - started)
    return samples


def _measure(server: ApiServer, url: str, backend: str, quick: bool, ctx: SuiteContext) -> list[Row]:
    sessions, turns, events = _sizes(quick)
    started = time.perf_counter()
    seeded: Seeded = asyncio.run(
        seed(
            url,
            like_session=new_session(server, "seed owner"),
            sessions=sessions,
            turns_per_session=turns,
            events_per_run=events,
        )
    )
    took = time.perf_counter() - started
    ctx.log(f"api/{backend}: seeded {sessions:,} sessions, {seeded.events:,} events in {took:.1f} s")
    n = 20 if quick else 200
    rng = random.Random(7)
    listing = [f"/api/v1/sessions?limit=50&offset={rng.randrange(0, sessions - 50)}" for _ in range(n)]
    history = [f"/api/v1/sessions/{rng.choice(seeded.session_ids)}/turns?limit=20" for _ in range(n)]
    replay = [f"/api/v1/runs/{rng.choice(seeded.run_ids)}/events?after=0&limit=500" for _ in range(n)]
    scale = f"{sessions:,} sessions / {seeded.events:,} events"
    rows = []
    for metric, paths in (
        ("list sessions (50 per page)", listing),
        ("page a session's history", history),
        (f"replay a run's events ({events} per run)", replay),
    ):
        samples = _timed_gets(server, paths)
        for q in (50, 99):
            rows.append(
                Row(
                    S,
                    f"{backend}, {scale}: {metric} (p{q})",
                    "ms",
                    ms(percentile(samples, q)),
                    {},
                    note=f"{n} requests" if q == 50 else "",
                )
            )
    return rows


@contextmanager
def _postgres_database(admin_url: str) -> Iterator[str]:
    """A fresh database on the given server for this run; dropped afterwards."""
    import asyncpg

    url = make_url(admin_url)
    name = f"fleet_perf_{uuid.uuid4().hex[:10]}"
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)

    async def admin(sql: str) -> None:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    try:
        yield url.set(drivername="postgresql+asyncpg", database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def run(ctx: SuiteContext) -> list[Row]:
    shared: Harness = ctx.shared("harness", lambda: harness(ctx.work_dir / "server"))
    sqlite_url = f"sqlite+aiosqlite:///{Path(ctx.work_dir / 'server' / 'fleet.db')}"
    rows = _measure(shared.server, sqlite_url, "SQLite", ctx.quick, ctx)
    if not ctx.postgres_url:
        rows.append(Row(S, "Postgres", "", None, note="not run: pass --postgres-url or set FLEET_TEST_POSTGRES_URL"))
        return rows
    try:
        with _postgres_database(ctx.postgres_url) as pg_url:
            _migrate(pg_url)
            settings = {**SERVER_SETTINGS, "database_url": pg_url}
            with api_server(ctx.work_dir / "server-pg", shared.lm.base_url, **settings) as server:
                rows += _measure(server, pg_url, "Postgres", ctx.quick, ctx)
    except Exception as exc:  # the SQLite rows stand; the table says why Postgres has none
        rows.append(Row(S, "Postgres", "", None, note=f"failed: {type(exc).__name__}: {str(exc)[:200]}"))
    return rows


def _migrate(url: str) -> None:
    """`fleet-rlm db upgrade` on the fresh database (the server refuses a schema behind the code)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEET_", "DSPY_"))}
    env["FLEET_DATABASE_URL"] = url
    command = [*server_command()[:-1], "db", "upgrade"]
    subprocess.run(command, env=env, check=True, capture_output=True, timeout=300)
