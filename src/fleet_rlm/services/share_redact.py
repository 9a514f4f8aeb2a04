"""Redaction for shared exports: what a session looks like when it leaves its owner.

Two levels. Secrets are always removed, in every export format: the server's configured secrets by value (every
SecretStr setting, the database URL's password, and the values of the environment's secret-named variables such
as OPENAI_API_KEY), then anything shaped like a credential by the rule table of `secret_rules` (well-known token
formats, auth headers, URL passwords, values of secret-named keys), and the string value of a structured key with
a secret name (`{"password": ...}`). Identity and host layout are removed when `identify=False` (the default
for HTML and Markdown): the owner's user/workspace ids and names become `user-1` / `workspace-1`, host paths
(the data dir, the workspace root, the home directory) become `<data>`, `<workspace>`, `~`, and email addresses
become `<email>`. Each replacement is counted by kind (`redactions`: the rule's kind, `configured_secret`, `host_path`,
`user_identifier`, `email_address`); `report()` is the list printed at the top of a shared file.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import SecretStr

from fleet_rlm.config import Settings
from fleet_rlm.services.secret_rules import KEY_NAME_KIND, RULES, Rule, is_placeholder, key_kind

MIN_SECRET_CHARS = 8  # configured values shorter than this ("EMPTY", "fake") would shred ordinary text
KEY_MARK = "[redacted-key]"
CONFIGURED = "configured_secret"
PLAIN = re.compile(
    r"[0-9a-f]{32}|\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)?|[A-Za-z_][A-Za-z0-9_]{0,15}"
)  # ids, times, field names
EMAIL = re.compile(  # one start per run of local-part characters, bounded: linear on hostile text (`a.a.a...@`)
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+\b"
)
GENERIC_NAMES = frozenset({"local"})  # the single user of auth_mode=none: a word, not an identity
HOME_PATH = re.compile(r"(?<![\w.-])/(?:home|Users)/[^/\s\"'<>]+")


def settings_secrets(settings: Settings, environ: Mapping[str, str] | None = None) -> list[str]:
    """Every secret the server holds, as plain strings: its SecretStr settings (API keys, signing keys), the
    password of its database URL, and the values of environment variables with a secret's name (OPENAI_API_KEY,
    HF_TOKEN, AWS_SECRET_ACCESS_KEY: the provider keys LiteLLM reads itself). Values shorter than
    MIN_SECRET_CHARS, and paths, are left out: they would replace ordinary text."""
    found = []
    for name in type(settings).model_fields:
        value = getattr(settings, name, None)
        if isinstance(value, SecretStr):
            found.append(value.get_secret_value())
    if settings.database_url:
        try:
            found.append(urlsplit(settings.database_url).password or "")
        except ValueError:  # not a URL: nothing to take from it
            pass
    env = os.environ if environ is None else environ
    found += [value for name, value in env.items() if key_kind(name) and not value.startswith(("/", "~", "."))]
    return [value for value in found if len(value) >= MIN_SECRET_CHARS and not value.isspace()]


@dataclass
class Redactor:
    """Rewrites every string of a JSON-like value; counts what it replaced per kind."""

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

    @property
    def redactions(self) -> dict[str, int]:
        """What was replaced so far, counts by kind (sorted by kind)."""
        return {kind: count for kind, count in sorted(self.counts.items()) if count}

    def text(self, value: str) -> str:
        if len(value) < MIN_SECRET_CHARS:  # shorter than any key we look for
            return self._identity(value) if self.identify else value
        for secret in self._secrets:
            if secret in value:
                self.counts[CONFIGURED] += value.count(secret)
                value = value.replace(secret, KEY_MARK)
        if PLAIN.fullmatch(value):  # an id, a timestamp or a field name: no credential shape to look for
            return self._identity(value) if self.identify else value
        lowered = value.lower()
        for rule in RULES:
            if any(t in lowered for t in rule.triggers) and (not rule.needs or any(n in value for n in rule.needs)):
                value = rule.pattern.sub(partial(self._secret, rule=rule), value)
        if self.identify:
            value = self._identity(value)
        return value

    def value(self, data: Any) -> Any:
        """A copy of `data` (dicts, lists, strings, scalars) with every string (keys included) redacted; the
        string value of a key with a secret's name (`password`, `OPENAI_API_KEY`, `Authorization`) goes whole."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {self.text(k) if isinstance(k, str) else k: self._item(k, v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.value(item) for item in data]
        return data

    def report(self) -> list[str]:
        """What redaction did, one line each (shown at the top of a shared file), then one `kind: count` line per
        kind replaced."""
        lines = [
            "Secrets are always removed: the server's configured secrets, well-known credential formats (cloud, "
            "code-host, payment and model-provider keys, JWTs, private keys), auth headers, URL passwords and the "
            f"values of secret-named keys (password, token, api_key...) become {KEY_MARK}."
        ]
        if self.identify:
            lines.append(
                "Your user and workspace ids and names become user-1 / workspace-1; host paths become <data>, "
                "<workspace> and ~; email addresses become <email>."
            )
        else:
            lines.append("Identities and host paths were kept (redaction of them was turned off).")
        if counted := self.redactions:
            lines.append(f"Redactions in this file by kind, {sum(counted.values())} in all:")
            lines += [f"{kind}: {count}" for kind, count in counted.items()]
        else:
            lines.append("Nothing in this session needed replacing.")
        return lines

    def _item(self, key: Any, value: Any) -> Any:
        kind = key_kind(key) if isinstance(key, str) and isinstance(value, str) else None
        redacted = self.value(value)
        if kind is None or KEY_MARK in redacted or is_placeholder(value):  # counted once, by what found it first
            return redacted
        self.counts[kind] += 1
        return KEY_MARK

    def _secret(self, match: re.Match[str], rule: Rule) -> str:
        whole = match.group(0)
        if "secret" not in rule.pattern.groupindex:
            self.counts[rule.kind] += 1
            return KEY_MARK
        secret = match.group("secret")
        names = match.groupdict()
        bare = "open" in names and names["open"] is None
        if KEY_MARK in secret or ("name" in names and is_placeholder(secret, key=names["name"], bare=bare)):
            return whole
        self.counts[key_kind(names["name"]) or rule.kind if rule.kind == KEY_NAME_KIND else rule.kind] += 1
        start, end = match.span("secret")
        offset = match.start()
        return f"{whole[: start - offset]}{KEY_MARK}{whole[end - offset :]}"

    def _identity(self, value: str) -> str:
        for prefix, placeholder in self._paths:
            if prefix in value:
                self.counts["host_path"] += value.count(prefix)
                value = value.replace(prefix, placeholder)
        if "/home/" in value or "/Users/" in value:
            value, n = HOME_PATH.subn("~", value)
            self.counts["host_path"] += n
        for ident, pattern, replacement in self._ids:
            if ident in value:
                value, n = pattern.subn(replacement, value)
                self.counts["user_identifier"] += n
        if "@" in value:
            value, n = EMAIL.subn("<email>", value)
            self.counts["email_address"] += n
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
