"""Where attachment bytes live and how their names are made safe.

Files go to `<data_dir>/attachments/<user_id>/<attachment_id>`: outside every workspace, so no sandbox (not
even the owner's) can rewrite bytes whose hash was recorded; the runtime copies or reads them when a turn uses
them. Rows store the path relative to data_dir, so a moved data dir keeps working.
"""

from __future__ import annotations

import mimetypes
import re
import unicodedata
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from fleet_rlm.config import Settings
from fleet_rlm.errors import NotFound

MAX_NAME = 200
_UNSAFE = re.compile(r"[^\w.\- ()+,@]+", re.UNICODE)
_MEDIA_TYPE = re.compile(r"^[A-Za-z0-9][\w.+-]*/[A-Za-z0-9][\w.+-]*(\s*;\s*[\w.+-]+=[\w.+\-\"]+)*$")
DEFAULT_MEDIA_TYPE = "application/octet-stream"


def sanitize_filename(raw: str | None, *, default: str = "upload") -> str:
    """A display/download name with no path, control or shell-special characters, at most 200 chars."""
    name = unicodedata.normalize("NFKC", raw or "")
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    name = _UNSAFE.sub("_", name).strip(" .")
    if not name:
        return default
    if len(name) > MAX_NAME:
        stem, dot, ext = name.rpartition(".")
        keep = ext[:20] if dot and stem else ""
        name = name[: MAX_NAME - len(keep) - 1] + "." + keep if keep else name[:MAX_NAME]
    return name


def media_type_for(declared: str | None, filename: str) -> str:
    """The declared type when it is well-formed, else a guess from the name, else octet-stream."""
    if declared and len(declared) <= 255 and _MEDIA_TYPE.match(declared.strip()):
        return declared.strip()
    guessed, _ = mimetypes.guess_type(filename)
    return guessed or DEFAULT_MEDIA_TYPE


def name_from_url(url: str) -> str:
    parts = urlsplit(url)
    last = PurePosixPath(parts.path).name
    return sanitize_filename(last or parts.hostname, default="url")


def relative_path(user_id: str, attachment_id: str) -> str:
    return f"attachments/{user_id}/{attachment_id}"


def absolute_path(settings: Settings, storage_path: str) -> Path:
    """The file behind a stored relative path, refusing anything outside data_dir/attachments."""
    base = (settings.data_dir / "attachments").resolve()
    path = (settings.data_dir / storage_path).resolve()
    if not storage_path or not path.is_relative_to(base) or not path.is_file():
        raise NotFound("the attachment's content is missing", code="content_missing", action="upload it again")
    return path


def prepare_dir(settings: Settings, user_id: str) -> Path:
    path = settings.data_dir / "attachments" / user_id
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path
