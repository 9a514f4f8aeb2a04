"""`fleet-rlm db upgrade|current|downgrade`: the only way a Postgres schema moves (upgrade also applies the job
queue's schema, Procrastinate's, on Postgres when it is missing)."""

from __future__ import annotations

import typer

from fleet_rlm.cli.errors import guarded
from fleet_rlm.config import load_settings

db_app = typer.Typer(help="Database schema migrations (Alembic).", no_args_is_help=True)


@db_app.command("upgrade")
def upgrade(revision: str = typer.Argument("head", help="Target revision.")) -> None:
    """Migrate the database up to REVISION (default: head); on PostgreSQL also apply the job queue's schema."""

    def body() -> None:
        from fleet_rlm.services.startup import migration_attributes
        from fleet_rlm.store import migrate  # imported when used: alembic/sqlalchemy cost seconds at startup

        settings = load_settings()
        _ensure_sqlite_dir(settings)
        migrate.upgrade(settings.resolved_database_url, revision, attributes=migration_attributes(settings))
        typer.echo(f"database at {migrate.current(settings.resolved_database_url) or 'base'}")
        if settings.database_kind == "postgresql":  # the job queue's own tables (queue execution, docs/deployment.md)
            import asyncio

            from fleet_rlm.services.queue.schema import apply_queue_schema

            if asyncio.run(apply_queue_schema(settings.resolved_database_url)):
                typer.echo("job queue schema applied")

    guarded(body)


@db_app.command("downgrade")
def downgrade(revision: str = typer.Argument(..., help="Target revision, e.g. base or -1.")) -> None:
    """Migrate the database down to REVISION."""

    def body() -> None:
        from fleet_rlm.services.startup import migration_attributes
        from fleet_rlm.store import migrate  # imported when used: alembic/sqlalchemy cost seconds at startup

        settings = load_settings()
        migrate.downgrade(settings.resolved_database_url, revision, attributes=migration_attributes(settings))
        typer.echo(f"database at {migrate.current(settings.resolved_database_url) or 'base'}")

    guarded(body)


@db_app.command("current")
def current() -> None:
    """Print the database's revision and the code's head."""

    def body() -> None:
        from fleet_rlm.store import migrate  # imported when used: alembic/sqlalchemy cost seconds at startup

        settings = load_settings()
        revision = migrate.current(settings.resolved_database_url)
        head = migrate.head()
        state = "at head" if revision == head else "behind head: run `fleet-rlm db upgrade`"
        typer.echo(f"current: {revision or 'base'}\nhead: {head}\n{state}")

    guarded(body)


def _ensure_sqlite_dir(settings) -> None:  # type: ignore[no-untyped-def]
    if settings.database_kind == "sqlite":
        settings.data_dir.mkdir(parents=True, exist_ok=True)
