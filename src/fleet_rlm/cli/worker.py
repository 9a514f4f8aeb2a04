"""`fleet-rlm worker`: run turns and optimization runs from the job queue (queue execution on PostgreSQL).

No HTTP: clients follow the turns it runs on any API replica (events travel through the database and NOTIFY).
See docs/deployment.md for the topology.
"""

from __future__ import annotations

import logging

import typer

from fleet_rlm.cli.errors import guarded


def worker(
    concurrency: int = typer.Option(4, "--concurrency", min=1, max=256, help="Turns this worker runs at once."),
    optimization_slots: int = typer.Option(
        1, "--optimization-slots", min=1, max=64, help="Optimization runs this worker runs at once."
    ),
) -> None:
    """Run turns (and optimization runs) from the PostgreSQL job queue; start as many as you need, anywhere.

    For API servers with FLEET_EXECUTION=queue on the same FLEET_DATABASE_URL (after `fleet-rlm db upgrade`),
    sharing their data dir and secret key. No HTTP: clients follow its turns on any API server. A session's next
    turn prefers the worker that holds its REPL while that worker is alive. SIGTERM stops it gracefully
    (running turns get FLEET_SHUTDOWN_GRACE_S, then are recorded interrupted). See docs/deployment.md.
    """

    def body() -> None:
        import asyncio

        from fleet_rlm.config import load_settings
        from fleet_rlm.services.queue.worker import serve_worker
        from fleet_rlm.services.startup import check_execution, prepare_data_dir

        settings = load_settings(execution="queue")
        check_execution(settings, worker=True)  # one line on SQLite, before anything starts
        prepare_data_dir(settings)
        level = getattr(logging, settings.log_level.upper())
        logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        logging.getLogger("procrastinate").setLevel(max(level, logging.WARNING))

        def ready(name: str) -> None:
            typer.echo(
                f"fleet-rlm worker {name}: {concurrency} turn slot(s), {optimization_slots} optimization slot(s)"
            )

        asyncio.run(serve_worker(settings, turn_slots=concurrency, optimization_slots=optimization_slots, ready=ready))

    guarded(body)
