"""Errors of the store a user or API client can hit: each has a stable `code` and a one-line message."""

from __future__ import annotations


class StoreError(Exception):
    """Base of store errors; `code` is stable and safe to show in API responses."""

    code = "store_error"


class SchemaBehindError(StoreError):
    """The database is not at the migration head; Postgres is never migrated automatically."""

    code = "schema_behind"

    def __init__(self, current: str | None, head: str) -> None:
        self.current = current
        self.head = head
        super().__init__(f"database schema is at {current or 'empty'}, code needs {head}: run `fleet-rlm db upgrade`")


class SchemaUnknownError(StoreError):
    """The database carries a revision this code does not know (written by a newer fleet-rlm)."""

    code = "schema_unknown"

    def __init__(self, current: str, head: str) -> None:
        self.current = current
        self.head = head
        super().__init__(f"database schema is at {current}, unknown to this version (head {head}): upgrade fleet-rlm")


class IdempotencyConflictError(StoreError):
    """An idempotency key was reused with a different input."""

    code = "idempotency_conflict"

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"idempotency key {key!r} was already used for a different request: use a new key")


class InvalidTransitionError(StoreError):
    """A run status change that the state machine forbids (e.g. leaving a terminal state)."""

    code = "invalid_run_transition"

    def __init__(self, run_id: str, current: str, target: str) -> None:
        self.run_id = run_id
        self.current = current
        self.target = target
        super().__init__(f"run {run_id} is {current} and cannot become {target}")


class NotFoundError(StoreError):
    code = "not_found"

    def __init__(self, kind: str, ident: str) -> None:
        self.kind = kind
        self.ident = ident
        super().__init__(f"{kind} {ident} not found")
