"""Redaction for shared exports: what a session looks like when it leaves its owner.

Two levels. Secrets are always removed, in every export format: the server's configured keys (every SecretStr
setting) by value, and anything shaped like a credential (provider keys, bearer/basic auth headers, JWTs,
`api_key=...` assignments) by pattern. Identity and host layout are removed when `identify=False` (the default
for HTML and Markdown): the owner's user/workspace ids and names become `user-1` / `workspace-1`, host paths
(the data dir, the workspace root, the home directory) become `<data>`, `<workspace>`, `~`, and email addresses
become `<email>`. Each replacement is counted; `report()` is the list printed at the top of a shared file.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from fleet_rlm.config import Settings

MIN_SECRET_CHARS = 8  # shorter values ("EMPTY", "fake") would shred ordinary text
KEY_MARK = "[redacted-key]"
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "auth header",
        re.compile(
            r"(?i)\b(authorization|proxy-authorization|x-api-key|api-key|cookie)(\s*[:=]\s*)[^\s\"',;]+(\s+[^\s\"',;]+)?"
        ),
    ),
    ("bearer token", re.compile(r"(?i)\b(bearer|basic|token)\s+(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{12,}")),
    (
        "provider key",
        re.compile(
            r"\b(sk|pk|rk)-[A-Za-z0-9_-]{12,}|\b(ghp|gho|ghs|ghu|github_pat|xox[abpr]|glpat)[-_][A-Za-z0-9_-]{12,}"
        ),
    ),
    ("provider key", re.compile(r"\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{30,}")),
    ("JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    (
        "key assignment",
        re.compile(
            r"(?i)\b([a-z_]*(?:api_key|apikey|secret|password|passwd|token))(\s*[:=]\s*)[\"']?[^\s\"',;]{6,}[\"']?"
        ),
    ),
)
TRIGGERS = (
    "authoriz",
    "cookie",
    "api-key",
    "api_key",
    "apikey",
    "bearer",
    "basic",
    "token",
    "secret",
    "passw",
    "sk-",
    "pk-",
    "rk-",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat",
    "xox",
    "glpat",
    "akia",
    "aiza",
    "eyj",
)  # cheap substring scans of the lowered text; the credential patterns only run on text holding one of these
PLAIN = re.compile(
    r"[0-9a-f]{32}|\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)?|[A-Za-z_][A-Za-z0-9_]{0,15}"
)  # ids, times, field names
EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b")
GENERIC_NAMES = frozenset({"local"})  # the single user of auth_mode=none: a word, not an identity
HOME_PATH = re.compile(r"(?<![\w.-])/(?:home|Users)/[^/\s\"'<>]+")


def settings_secrets(settings: Settings) -> list[str]:
    """Every secret the server is configured with (API keys, signing keys), as plain strings."""
    found = []
    for name in type(settings).model_fields:
        value = getattr(settings, name, None)
        if isinstance(value, SecretStr) and len(value.get_secret_value()) >= MIN_SECRET_CHARS:
            found.append(value.get_secret_value())
    return found


@dataclass
class Redactor:
    """Rewrites every string of a JSON-like value; counts what it replaced per category."""

    secrets: Iterable[str] = ()
    identify: bool = True
    identities: dict[str, str] = field(default_factory=dict)  # exact value -> replacement (ids, names)
    paths: dict[str, str] = field(default_factory=dict)  # host path prefix -> placeholder
    counts: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._secrets = sorted({s for s in self.secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        self._paths = sorted(((p, r) for p, r in self.paths.items() if len(p) > 1), key=lambda pr: -len(pr[0]))
        ids = sorted(((v, r) for v, r in self.identities.items() if len(v) >= 3), key=lambda vr: -len(vr[0]))
        self._ids = [(v, re.compile(rf"(?<![\w-]){re.escape(v)}(?![\w-])"), r) for v, r in ids]  # whole words only

    def text(self, value: str) -> str:
        if len(value) < MIN_SECRET_CHARS:  # shorter than any key we look for
            return self._identity(value) if self.identify else value
        for secret in self._secrets:
            if secret in value:
                self.counts["configured key"] += value.count(secret)
                value = value.replace(secret, KEY_MARK)
        if PLAIN.fullmatch(value):  # an id, a timestamp or a field name: no credential shape to look for
            return self._identity(value) if self.identify else value
        lowered = value.lower()
        if any(trigger in lowered for trigger in TRIGGERS):
            for label, pattern in SECRET_PATTERNS:
                value = pattern.sub(partial(self._secret, label=label), value)
        if self.identify:
            value = self._identity(value)
        return value

    def value(self, data: Any) -> Any:
        """A copy of `data` (dicts, lists, strings, scalars) with every string (keys included) redacted."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.value(item) for item in data]
        return data

    def report(self) -> list[str]:
        """What redaction did, one line each (shown at the top of a shared file)."""
        lines = [
            "Secrets are always removed: the server's configured keys and anything shaped like a credential "
            f"(provider keys, auth headers, bearer tokens, JWTs, key=value assignments) become {KEY_MARK}."
        ]
        if self.identify:
            lines.append(
                "Your user and workspace ids and names become user-1 / workspace-1; host paths become <data>, "
                "<workspace> and ~; email addresses become <email>."
            )
        else:
            lines.append("Identities and host paths were kept (redaction of them was turned off).")
        counted = sorted((label, count) for label, count in self.counts.items() if count)
        if counted:
            done = ", ".join(f"{count} {label}" for label, count in counted)
            lines.append(f"Replaced in this file: {done}.")
        else:
            lines.append("Nothing in this session needed replacing.")
        return lines

    def _secret(self, match: re.Match[str], label: str) -> str:
        self.counts[label] += 1
        if label in ("auth header", "key assignment"):
            return f"{match.group(1)}{match.group(2)}{KEY_MARK}"
        return KEY_MARK

    def _identity(self, value: str) -> str:
        for prefix, placeholder in self._paths:
            if prefix in value:
                self.counts["host path"] += value.count(prefix)
                value = value.replace(prefix, placeholder)
        if "/home/" in value or "/Users/" in value:
            value, n = HOME_PATH.subn("~", value)
            self.counts["host path"] += n
        for ident, pattern, replacement in self._ids:
            if ident in value:
                value, n = pattern.subn(replacement, value)
                self.counts["user identifier"] += n
        if "@" in value:
            value, n = EMAIL.subn("<email>", value)
            self.counts["email address"] += n
        return value


def share_redactor(
    settings: Settings,
    *,
    identify: bool,
    user_id: str,
    user_names: Iterable[str | None] = (),
    workspace_id: str | None = None,
    workspace_root: Path | None = None,
) -> Redactor:
    """The redactor for one owner's export on this server."""
    identities = {user_id: "user-1"}
    identities.update({name: "user-1" for name in user_names if name and name not in GENERIC_NAMES})
    if workspace_id:
        identities[workspace_id] = "workspace-1"
    paths: dict[str, str] = {}
    for root, placeholder in ((workspace_root, "<workspace>"), (settings.data_dir, "<data>"), (Path.home(), "~")):
        if root is None:
            continue
        for form in {str(root), str(Path(root).resolve())}:
            if form not in ("/", ""):
                paths[form] = placeholder
    return Redactor(secrets=settings_secrets(settings), identify=identify, identities=identities, paths=paths)
