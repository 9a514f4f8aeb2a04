"""Every error response has one shape: `{"error": {"code", "message", "action"?}}` with the right status."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from fleet_rlm.errors import FleetError

log = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_input",
    429: "rate_limited",
    503: "unavailable",
}


def error_body(code: str, message: str, action: str | None = None) -> dict[str, dict[str, str]]:
    body = {"code": code, "message": message}
    if action:
        body["action"] = action
    return {"error": body}


async def _fleet_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, FleetError)
    return JSONResponse({"error": exc.to_dict()}, status_code=exc.status)


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
    return JSONResponse(error_body(code, message), status_code=exc.status_code, headers=exc.headers)


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(part) for part in first.get("loc", ()) if part != "body") or "request"
    message = f"{where}: {first.get('msg', 'invalid input')}"
    return JSONResponse(
        error_body("invalid_input", message, "fix the named field and retry"),
        status_code=422,
    )


async def _unexpected_error(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    return JSONResponse(
        error_body("internal_error", "the server hit an unexpected error"),
        status_code=500,
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(FleetError, _fleet_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected_error)
    install_database_error_handler(app)


def _is_database_outage(exc: BaseException) -> bool:
    """Connection-level database failures (the server or file is unreachable), not bad queries."""
    from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

    if isinstance(exc, OperationalError | InterfaceError):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    text = f"{type(exc).__name__} {exc}".lower()
    return isinstance(exc, OSError | ConnectionError) or ("connection" in text and "database" in text)


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    if not _is_database_outage(exc):
        return await _unexpected_error(request, exc)
    log.warning("database unavailable: %s", exc)
    return JSONResponse(
        error_body(
            "database_unavailable",
            "the database is not reachable right now",
            "retry shortly; if it persists, check the database server (GET /ready shows its state)",
        ),
        status_code=503,
        headers={"Retry-After": "5"},
    )


def install_database_error_handler(app: FastAPI) -> None:
    from sqlalchemy.exc import SQLAlchemyError

    app.add_exception_handler(SQLAlchemyError, _database_error)
    app.add_exception_handler(ConnectionError, _database_error)
