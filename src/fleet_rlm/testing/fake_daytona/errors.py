"""Error bodies shaped like the real Daytona API and daemon, so the SDK maps them to its own exceptions.

The SDK reads `message`, `code` and `source` from the JSON body and picks the exception class from the
status code (401 -> DaytonaAuthenticationError, 404 -> DaytonaNotFoundError, ...) or from (source, code).
"""

from __future__ import annotations

from http import HTTPStatus

from starlette.responses import JSONResponse

SOURCE_API = "DAYTONA_API"
SOURCE_DAEMON = "DAYTONA_DAEMON"


class FakeDaytonaError(Exception):
    """Raised inside route handlers; rendered by the app as a JSON error response."""

    def __init__(self, status: int, message: str, code: str | None = None, source: str = SOURCE_API) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code or HTTPStatus(status).phrase.upper().replace(" ", "_")
        self.source = source


def daemon_error(status: int, message: str, code: str | None = None) -> FakeDaytonaError:
    """An error as the in-sandbox daemon (toolbox API) reports it."""
    return FakeDaytonaError(status, message, code, SOURCE_DAEMON)


def error_response(error: FakeDaytonaError) -> JSONResponse:
    body = {
        "statusCode": error.status,
        "message": error.message,
        "error": HTTPStatus(error.status).phrase,
        "code": error.code,
        "source": error.source,
    }
    return JSONResponse(body, status_code=error.status)
