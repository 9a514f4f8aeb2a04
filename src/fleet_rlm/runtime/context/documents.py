"""What loading produced: documents written once into the session's context directory, and the `context`
variable built from them.

Every document is a UTF-8 text file in `<data_dir>/sessions/<session_id>/context/` (host-only, never in the
guest-writable workspace; a sandbox sees it read-only at /context, see `sandbox.context_view`), named by the
sha256 of its content, so loading the same content again writes nothing. `LoadedContext.as_variable()` joins
the documents once (cached) for RLM's `context` input; the sandbox's context cache then sends it once.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str, *, default: str = "context", max_len: int = 60) -> str:
    """A file-name fragment from a user-given name: no separators, no leading dots, bounded length."""
    cleaned = _UNSAFE.sub("-", name).strip("-.")[:max_len].strip("-.")
    return cleaned or default


@dataclass
class LoadedDocument:
    """One loaded source. `path` is relative to the session's context directory (and to /context in the
    sandbox); `text` is read from that file unless the loader still holds it."""

    name: str
    kind: str
    path: str
    chars: int
    sha256: str
    media_type: str
    truncated: bool
    context_dir: Path
    info: dict[str, Any] = field(default_factory=dict)
    _text: str | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        if self._text is not None:
            return self._text
        return self.file.read_text(encoding="utf-8")

    @property
    def file(self) -> Path:
        return self.context_dir / self.path

    @property
    def header(self) -> str:
        turn = self.info.get("from_turn")
        held = f", added on turn {turn}" if turn else ""
        return f"=== {self.name} ({self.kind}, {self.chars} chars{held}) ==="

    def manifest_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "path": self.path,
            "chars": self.chars,
            "sha256": self.sha256,
            "media_type": self.media_type,
            "truncated": self.truncated,
        }
        entry.update(self.info)
        return entry


class LoadedContext:
    """The documents of one turn, in source order."""

    def __init__(self, documents: list[LoadedDocument]) -> None:
        self.documents = documents
        self._variable: str | None = None

    @property
    def total_chars(self) -> int:
        return sum(doc.chars for doc in self.documents)

    def as_variable(self) -> str:
        """Documents joined under `=== name (kind, N chars) ===` headers; built once, then cached."""
        if self._variable is None:
            self._variable = "\n\n".join(f"{doc.header}\n{doc.text}" for doc in self.documents)
        return self._variable

    def manifest(self) -> list[dict[str, Any]]:
        return [doc.manifest_entry() for doc in self.documents]

    def __len__(self) -> int:
        return len(self.documents)


def write_document(
    context_dir: Path,
    *,
    name: str,
    kind: str,
    text: str,
    media_type: str = "text/plain",
    truncated: bool = False,
    info: dict[str, Any] | None = None,
) -> LoadedDocument:
    """Write `text` to `<context_dir>/<sha16>-<name>.txt` unless that exact file already exists.

    `context_dir` is host-only (a session's context directory), so ordinary path operations are safe there."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: store what a reader of the file will see
        data = text.encode("utf-8", "replace")
        text = data.decode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    stem = safe_name(name)
    file_name = f"{digest[:16]}-{stem}" + ("" if stem.endswith(".txt") else ".txt")
    written = _write_once(context_dir / file_name, data)
    details = dict(info or {})
    details["reused"] = not written
    return LoadedDocument(
        name=name,
        kind=kind,
        path=file_name,
        chars=len(text),
        sha256=digest,
        media_type=media_type,
        truncated=truncated,
        context_dir=context_dir,
        info=details,
        _text=text,
    )


def _write_once(target: Path, data: bytes) -> bool:
    """Atomically write `data` unless `target` (content-addressed) already holds it. True if written."""
    try:
        if target.stat().st_size == len(data):
            return False
    except FileNotFoundError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return True
