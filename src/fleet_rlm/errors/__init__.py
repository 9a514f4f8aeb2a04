"""The error every layer raises when a user can hit it: a stable code, a one-line message, the action to take.

The API renders it as `{"error": {"code", "message", "action"}}` with `status`; the CLI prints it as one line
without a traceback. Every code has one entry in the error table (`errors/codes.toml`, read by `catalog`): its
action is the one every client shows, whoever raised it. Leaf package: imports nothing internal.
"""

from __future__ import annotations

from typing import Any

# The table (`catalog`) loads with the first error, not with this package: the CLI's start imports errors.

ALLOW_PRIVATE_URLS = "FLEET_URL_ALLOW_PRIVATE=true"
"""How an operator allows localhost and private addresses as context (named the same by server, CLI and chat)."""


def action_of(code: str) -> str | None:
    """The error table's action for `code` (None for a code not in it)."""
    from fleet_rlm.errors.catalog import fill, spec_for

    spec = spec_for(code)
    return (fill(spec.action, {}) or spec.action) if spec else None


def message_for(code: str, **fields: Any) -> str:
    """The error table's message for `code` with `fields` filled in."""
    from fleet_rlm.errors.catalog import fill, spec_for

    spec = spec_for(code)
    if spec is None:
        raise KeyError(f"{code!r} is not in the error table (fleet_rlm/errors/codes.toml)")
    return fill(spec.message, fields) or spec.message


class FleetError(Exception):
    """A user-facing failure. `code` is stable (clients match on it); `message` is one line."""

    code: str = "internal_error"
    status: int = 500

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        action: str | None = None,
        status: int | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        from fleet_rlm.errors.catalog import action_for

        self.details = details or {}
        self.action = action_for(self.code, self.details, action)

    @classmethod
    def of(cls, code: str, *, status: int | None = None, **fields: Any) -> FleetError:
        """The error table's entry for `code`: its message with `fields` filled in, its status and action; the
        fields are the error's details."""
        from fleet_rlm.errors.catalog import spec_for

        spec = spec_for(code)
        return cls(
            message_for(code, **fields), code=code, status=status or (spec.status if spec else None), details=fields
        )

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.action:
            body["action"] = self.action
        if self.details:
            body["details"] = self.details
        return body

    def one_line(self) -> str:
        """How the CLI prints it: `error[code]: message (action)`."""
        text = f"error[{self.code}]: {self.message}"
        return f"{text} — {self.action}" if self.action else text


class NotFound(FleetError):
    code = "not_found"
    status = 404


class Conflict(FleetError):
    code = "conflict"
    status = 409


class InvalidInput(FleetError):
    code = "invalid_input"
    status = 422


class Unavailable(FleetError):
    code = "unavailable"
    status = 503


class EmptyTask(InvalidInput):
    """A task that is empty or only whitespace: refused the same way by the API, the WebSocket and the CLI."""

    code = "empty_task"

    def __init__(self) -> None:
        super().__init__("the task is empty", action="type what you want done (whitespace alone is not a task)")
