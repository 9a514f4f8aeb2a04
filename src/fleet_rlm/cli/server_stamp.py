"""Which code and settings a local server runs: the CLI replaces a server whose stamp differs from its own.

Its own module because both sides need it without each other: the settings memo (the client's cached facts hold
the fingerprint) and the local server's discovery and serving code.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fleet_rlm.config import Settings


def code_stamp() -> str:
    """Changes whenever the installed code does: an upgrade (another version), a dev edit, another interpreter."""
    root = Path(__file__).resolve().parent.parent
    newest = 0
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                with contextlib.suppress(OSError):
                    newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime_ns)
    return f"{sys.executable}:{root}:{newest}"


def fingerprint(settings: Settings) -> str:
    """Hash of the code and every setting (secrets included, never stored in clear): same hash, same server."""
    values: dict[str, Any] = {}
    for name in sorted(type(settings).model_fields):
        value = getattr(settings, name)
        values[name] = value.get_secret_value() if hasattr(value, "get_secret_value") else value
    blob = json.dumps({"code": code_stamp(), "settings": values}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()
