"""A profile's extra HTTP headers: secrets like its key (a gateway token, an organization id...).

Their values are stored only encrypted (`SecretBox.seal`), shown by name only, and reach `dspy.LM` as its
`extra_headers` setting, where the recorder treats every value as a secret by its position
(`runtime.lm_exchange.secrets_of`). They are never set through a profile's plain `extra` options
(`HEADER_KWARGS`). Names are HTTP tokens, compared without case; values are one line.

An update sends the whole set (`merge`): a value sets or replaces a header, no value keeps the stored one (a
form re-sent whole), a name left out is removed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import SecretStr

HEADER_KWARGS = frozenset({"headers", "extra_headers", "default_headers"})
"""dspy.LM settings that carry headers: refused in a profile's `extra` (use its encrypted `extra_headers`)."""

MAX_HEADERS = 20
MAX_VALUE_CHARS = 4000
_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
RESERVED_NAMES = frozenset(
    {"host", "content-length", "content-type", "transfer-encoding", "connection", "keep-alive", "te", "upgrade"}
)
"""Headers the HTTP client owns: a profile setting them would break or smuggle requests."""


def check_header_name(name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"header name {name[:100]!r} is not an HTTP token (letters, digits, -, _ ...; 1-100)")
    if name.lower() in RESERVED_NAMES:
        raise ValueError(f"header {name!r} is set by the HTTP client and may not be configured")
    return name


def check_header_value(name: str, value: str) -> str:
    if len(value) > MAX_VALUE_CHARS or _CONTROL.search(value):
        raise ValueError(f"header {name!r}: the value must be one line of at most {MAX_VALUE_CHARS} characters")
    return value


def check_headers(headers: Mapping[str, SecretStr | str | None] | None) -> Mapping[str, SecretStr | str | None] | None:
    """Valid names, no name twice (in any case), values on one line; the mapping itself is returned."""
    if headers is None:
        return None
    if len(headers) > MAX_HEADERS:
        raise ValueError(f"at most {MAX_HEADERS} headers")
    seen: set[str] = set()
    for name, value in headers.items():
        check_header_name(name)
        if name.lower() in seen:
            raise ValueError(f"header {name!r} is given twice")
        seen.add(name.lower())
        if value is not None:
            check_header_value(name, value.get_secret_value() if isinstance(value, SecretStr) else value)
    return headers


def plain(headers: Mapping[str, SecretStr | str]) -> dict[str, str]:
    """The values as text (to encrypt or to send; never to show)."""
    return {name: v.get_secret_value() if isinstance(v, SecretStr) else v for name, v in headers.items()}


def merge(stored: Mapping[str, str], sent: Mapping[str, SecretStr | str | None]) -> tuple[dict[str, str], list[str]]:
    """The headers after an update that sent the whole set `sent`, and the names sent without a value that have
    no stored value to keep (the caller refuses them, or reports them dropped when the endpoint changed)."""
    by_lower = {name.lower(): value for name, value in stored.items()}
    merged: dict[str, str] = {}
    missing: list[str] = []
    for name, value in sent.items():
        if value is not None:
            merged[name] = value.get_secret_value() if isinstance(value, SecretStr) else value
        elif name.lower() in by_lower:
            merged[name] = by_lower[name.lower()]
        else:
            missing.append(name)
    return merged, missing
