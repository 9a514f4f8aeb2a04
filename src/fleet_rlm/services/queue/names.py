"""The job queue's names: tasks, queues, locks. One place, read by the API (defer, abort) and the workers."""

from __future__ import annotations

TURN_TASK = "fleet.turn"
OPTIMIZATION_TASK = "fleet.optimization"
TURNS_QUEUE = "turns"  # any worker takes these
OPTIMIZATIONS_QUEUE = "optimizations"  # their own queue and concurrency (`fleet-rlm worker --optimization-slots`)
WORKER_QUEUE_PREFIX = "turns@"  # + a worker's name: the turns of sessions whose REPL that worker holds


def worker_queue(worker: str) -> str:
    """The queue only `worker` takes (a session's next turn goes there while that worker is alive)."""
    return f"{WORKER_QUEUE_PREFIX}{worker}"


def run_lock(kind: str, run_id: str) -> str:
    """Lock and queueing lock of a run's job: one waiting job per run, and never two running at once."""
    return f"{kind}:{run_id}"
