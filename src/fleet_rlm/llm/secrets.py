"""Secrets at rest: Fernet encryption with a key from FLEET_SECRET_KEY or a 0600 key file in data_dir.

One secret (an API key) is one token; named secrets (a profile's or an MCP server's HTTP headers, an MCP
server's environment) are one token of a JSON object (`seal`/`unseal`), whose names the API may show and whose
values it never returns. Losing the key makes stored secrets unreadable (users must re-enter them), so the key
file is created once, atomically, and never rewritten. `mask` is what the API and CLI show instead of a key.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from pydantic import SecretStr

from fleet_rlm.config import Settings
from fleet_rlm.llm.errors import SecretError

KEY_FILE = "secret.key"
_GENERATE = 'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'


class SecretBox:
    """Encrypts and decrypts short secrets (API keys) with one Fernet key."""

    def __init__(self, key: bytes) -> None:
        try:
            self._fernet = Fernet(key)
        except (ValueError, TypeError) as exc:
            raise SecretError(
                "the secret key is not a valid Fernet key (32 url-safe base64-encoded bytes)",
                code="invalid_secret_key",
            ) from exc

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode("utf-8")).decode("ascii")

    def decrypt(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode("utf-8")
        except (InvalidToken, ValueError) as exc:
            raise SecretError(
                "a stored secret (an API key or header value) cannot be decrypted with the current secret key",
                code="secret_undecryptable",
                action="Restore the original FLEET_SECRET_KEY (or <data_dir>/secret.key), or re-enter the secret.",
            ) from exc

    def seal(self, values: Mapping[str, Any]) -> str | None:
        """Named secrets (a JSON object) as one token; None when there are none."""
        return self.encrypt(json.dumps(dict(values), sort_keys=True)) if values else None

    def unseal(self, token: str | None) -> dict[str, Any]:
        """What `seal` stored ({} for None); raises SecretError when it cannot be decrypted."""
        if not token:
            return {}
        value = json.loads(self.decrypt(token))
        return dict(value) if isinstance(value, dict) else {}


def key_file(settings: Settings) -> Path:
    return settings.data_dir / KEY_FILE


def load_or_create_key(settings: Settings) -> bytes:
    """FLEET_SECRET_KEY when set; else <data_dir>/secret.key, created (mode 0600) on first use."""
    if settings.secret_key is not None:
        key = settings.secret_key.get_secret_value().strip().encode("ascii")
        SecretBox(key)  # validate now, with the actionable message
        return key
    path = key_file(settings)
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = Fernet.generate_key()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process created it first: use theirs once it is written
        return _wait_for_key(path)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    return key


def _wait_for_key(path: Path) -> bytes:
    for _ in range(100):
        if path.stat().st_size > 0:
            break
        time.sleep(0.02)
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    key = path.read_bytes().strip()
    SecretBox(key)
    return key


def secret_box(settings: Settings) -> SecretBox:
    return SecretBox(load_or_create_key(settings))


def mask(secret: str | SecretStr | None) -> str:
    """A display form that never reveals the key: "sk-…abcd" (first 3 and last 4 characters)."""
    if secret is None:
        return ""
    value = secret.get_secret_value() if isinstance(secret, SecretStr) else secret
    if not value:
        return ""
    if len(value) < 12:
        return "…" + value[-2:] if len(value) >= 6 else "…"
    return f"{value[:3]}…{value[-4:]}"
