"""The bounds of document conversion and the errors raised when a document exceeds them.

Stable codes: `document_too_large` (a size, count, ratio, nesting, page, character or memory limit),
`document_convert_timeout` (the wall-clock or CPU limit) and `document_convert_failed` (the converter process
died for another reason). Each message names the limit and the setting that raises it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from fleet_rlm.errors import FleetError

FILE_UNSUPPORTED = "context_file_unsupported"
DOCUMENT_TOO_LARGE = "document_too_large"
DOCUMENT_CONVERT_TIMEOUT = "document_convert_timeout"
DOCUMENT_CONVERT_FAILED = "document_convert_failed"
MB = 1024 * 1024


@dataclass(frozen=True)
class DocumentLimits:
    """Bounds of one conversion; `from_settings` in `fleet_rlm.runtime.context.convert` fills them from Settings."""

    max_uncompressed_bytes: int = 256 * MB
    max_entries: int = 10_000
    max_compression_ratio: float = 100.0
    max_nesting: int = 2
    max_pages: int = 5_000
    max_chars: int = 200_000_000
    timeout_s: float = 60.0
    memory_mb: int = 1024

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> DocumentLimits:
        return cls(**values)


SETTING = {
    "max_uncompressed_bytes": "FLEET_DOCUMENT_MAX_UNCOMPRESSED_MB",
    "max_entries": "FLEET_DOCUMENT_MAX_ENTRIES",
    "max_compression_ratio": "FLEET_DOCUMENT_MAX_COMPRESSION_RATIO",
    "max_nesting": "FLEET_DOCUMENT_MAX_NESTING",
    "max_pages": "FLEET_DOCUMENT_MAX_PAGES",
    "max_chars": "FLEET_CONTEXT_MAX_CHARS",
    "timeout_s": "FLEET_DOCUMENT_CONVERT_TIMEOUT_S",
    "memory_mb": "FLEET_DOCUMENT_CONVERT_MEMORY_MB",
}


def too_large(name: str, what: str, limit: str, bound: str) -> FleetError:
    """`name` exceeds `limit` (a `DocumentLimits` field): `what` says by how much, `bound` states the limit."""
    return FleetError(
        f"{name!r} is refused: {what} (limit {bound}, {SETTING[limit]})",
        code=DOCUMENT_TOO_LARGE,
        status=413,
        details={"name": name, "limit": limit},
    )


def timed_out(name: str, seconds: float) -> FleetError:
    return FleetError(
        f"converting {name!r} to text took longer than {seconds:g} s (FLEET_DOCUMENT_CONVERT_TIMEOUT_S)",
        code=DOCUMENT_CONVERT_TIMEOUT,
        status=422,
        action="upload a smaller document or its text, or raise FLEET_DOCUMENT_CONVERT_TIMEOUT_S",
        details={"name": name, "limit": "timeout_s"},
    )


def converter_died(name: str, how: str) -> FleetError:
    return FleetError(
        f"converting {name!r} to text failed: the converter process {how}",
        code=DOCUMENT_CONVERT_FAILED,
        status=422,
        action="check that the file is a valid document, or paste its text instead",
        details={"name": name},
    )


def unreadable(fmt: str, name: str, exc: BaseException) -> FleetError:
    return FleetError(
        f"cannot read {name!r} as {fmt}: {type(exc).__name__}: {str(exc)[:200]}",
        code=FILE_UNSUPPORTED,
        status=422,
        details={"name": name},
    )


def error_to_wire(error: FleetError) -> dict[str, Any]:
    return {
        "message": error.message,
        "code": error.code,
        "status": error.status,
        "action": error.action,
        "details": error.details,
    }


def error_from_wire(body: dict[str, Any]) -> FleetError:
    return FleetError(
        str(body.get("message") or "document conversion failed"),
        code=str(body.get("code") or DOCUMENT_CONVERT_FAILED),
        status=int(body.get("status") or 422),
        action=body.get("action"),
        details=body.get("details") or None,
    )
