"""The stable error codes of context loading, in one place so clients and tests can match on them.

Each constructor returns a `FleetError` whose message names the source and whose action says what to change.
"""

from __future__ import annotations

from typing import Any

from fleet_rlm.errors import FleetError

# Defined with the converter (which must not import this package); re-exported so every code is listed here.
from fleet_rlm.runtime.docsafe.limits import DOCUMENT_CONVERT_FAILED as DOCUMENT_CONVERT_FAILED
from fleet_rlm.runtime.docsafe.limits import DOCUMENT_CONVERT_TIMEOUT as DOCUMENT_CONVERT_TIMEOUT
from fleet_rlm.runtime.docsafe.limits import DOCUMENT_TOO_LARGE as DOCUMENT_TOO_LARGE
from fleet_rlm.runtime.docsafe.limits import FILE_UNSUPPORTED as FILE_UNSUPPORTED

URL_BLOCKED = "context_url_blocked"
URL_TOO_LARGE = "context_url_too_large"
URL_FAILED = "context_url_failed"
REPO_BLOCKED = "context_repo_blocked"
REPO_FAILED = "context_repo_failed"
PATH_INVALID = "context_path_invalid"
FILE_MISSING = "context_file_missing"
TOO_LARGE = "context_too_large"
SOURCE_INVALID = "context_source_invalid"
CANCELLED = "context_cancelled"


def context_error(
    code: str, message: str, action: str | None = None, *, status: int = 422, **details: Any
) -> FleetError:
    """A user-facing context failure; `details` end up in the API's error body, the action is the error table's."""
    return FleetError(message, code=code, action=action, status=status, details=details or None)


def cancelled(what: str) -> FleetError:
    return context_error(CANCELLED, f"context loading cancelled during {what}", "start a new turn", status=499)
