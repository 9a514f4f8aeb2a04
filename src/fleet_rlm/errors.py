"""The error every layer raises when a user can hit it: a stable code, a one-line message, the action to take.

The API renders it as `{"error": {"code", "message", "action"}}` with `status`; the CLI prints it as one line
without a traceback. Leaf module: imports nothing internal.
"""

from __future__ import annotations

from typing import Any

ALLOW_PRIVATE_URLS = "FLEET_URL_ALLOW_PRIVATE=true"
"""How an operator allows localhost and private addresses as context (named the same by server, CLI and chat)."""

ACTIONS: dict[str, str] = {
    "file_not_found": "check the path and retry",
    "file_is_directory": "give a file; to use a folder, put it in the workspace volume and use `/context PATH`",
    "promotion_not_better": "promote anyway with confirm=true (CLI: `fleet-rlm optimize promote RUN --force`)",
}
"""The one action of each code raised from several places: it wins over the raiser's own wording."""


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
        self.action = ACTIONS.get(self.code, action)
        self.details = details or {}

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
