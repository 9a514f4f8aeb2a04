"""One loader per source kind. Each turns a `ContextSource` into a `LoadedDocument` written to `context_dir`
(the session's host-only context directory; `workspace_dir` is only read, for `path` sources).

The loaders share `ContextLimits` (bounds that have no setting yet) and the `Settings` limits; they never hold
more than one copy of a large input beyond what writing it requires.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from fleet_rlm.config import Settings
from fleet_rlm.runtime.context.convert import convert_bytes, document_limits
from fleet_rlm.runtime.context.documents import LoadedDocument, write_document
from fleet_rlm.runtime.context.failures import FILE_MISSING, SOURCE_INVALID, TOO_LARGE, context_error
from fleet_rlm.runtime.context.fetch import fetch_url
from fleet_rlm.runtime.context.listing import gather_texts, tree_listing
from fleet_rlm.runtime.context.repo import clone_repo, redact
from fleet_rlm.runtime.context.wspath import path_error, read_workspace_bytes, workspace_entry
from fleet_rlm.runtime.contracts import CancelToken, ContextSource
from fleet_rlm.sandbox import guestfs

README_NAMES = ("README.md", "README.rst", "README.txt", "README", "readme.md", "Readme.md")


@dataclass(frozen=True)
class ContextLimits:
    """Bounds of context loading; `from_settings` takes the user-visible ones from Settings."""

    max_total_chars: int = 200_000_000
    url_timeout_s: float = 30.0
    repo_timeout_s: float = 180.0
    repo_max_bytes: int = 500 * 1024 * 1024
    dir_max_chars: int = 2_000_000
    readme_max_chars: int = 50_000
    listing_max_entries: int = 2_000

    @classmethod
    def from_settings(cls, settings: Settings) -> ContextLimits:
        return cls(
            max_total_chars=settings.context_max_chars,
            url_timeout_s=settings.url_timeout_s,
            repo_timeout_s=settings.repo_timeout_s,
            repo_max_bytes=settings.repo_max_bytes,
            dir_max_chars=settings.context_dir_max_chars,
        )


def _missing(field: str, kind: str) -> Exception:
    return context_error(SOURCE_INVALID, f"a {kind} source needs '{field}'")


def _too_large(what: str, size: int, limit: int, setting: str) -> Exception:
    return context_error(
        TOO_LARGE,
        f"{what} has {size} bytes, more than the limit of {limit}",
        status=413,
        size=size,
        limit=limit,
    )


def load_text(source: ContextSource, *, context_dir: Path, settings: Settings) -> LoadedDocument:
    if source.text is None:
        raise _missing("text", "text")
    if len(source.text) > settings.upload_max_bytes:
        raise _too_large("pasted text", len(source.text), settings.upload_max_bytes, "upload_max_bytes")
    return write_document(
        context_dir,
        name=source.name or "pasted text",
        kind="text",
        text=source.text,
        media_type=source.media_type or "text/plain",
    )


def load_file(source: ContextSource, *, context_dir: Path, settings: Settings) -> LoadedDocument:
    if not source.path:
        raise _missing("path", "file")
    host_path = Path(source.path)
    name = source.name or host_path.name
    if not host_path.is_file():
        raise context_error(
            FILE_MISSING, f"attachment {name!r} is missing", "upload the file again", status=404, name=name
        )
    size = host_path.stat().st_size
    if size > settings.upload_max_bytes:
        raise _too_large(f"attachment {name!r}", size, settings.upload_max_bytes, "upload_max_bytes")
    converted = convert_bytes(
        host_path.read_bytes(), name=name, media_type=source.media_type, limits=document_limits(settings)
    )
    info = {"bytes": size, **converted.info}
    if source.attachment_id:
        info["attachment_id"] = source.attachment_id
    return write_document(
        context_dir, name=name, kind="file", text=converted.text, media_type=converted.media_type, info=info
    )


def load_url(
    source: ContextSource,
    *,
    context_dir: Path,
    settings: Settings,
    limits: ContextLimits,
    cancel: CancelToken | None,
) -> LoadedDocument:
    if not source.url:
        raise _missing("url", "url")
    fetched = fetch_url(
        source.url,
        allow_private=settings.url_allow_private,
        max_bytes=settings.url_max_bytes,
        timeout_s=limits.url_timeout_s,
        cancel=cancel,
    )
    file_name = unquote(fetched.final_url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1])
    converted = convert_bytes(
        fetched.data, name=file_name, media_type=fetched.content_type, limits=document_limits(settings)
    )
    info = {"url": source.url, "http_status": fetched.status, "bytes": len(fetched.data), **converted.info}
    if fetched.redirects:
        info["final_url"] = fetched.final_url
        info["redirects"] = len(fetched.redirects)
    return write_document(
        context_dir,
        name=source.name or source.url,
        kind="url",
        text=converted.text,
        media_type=converted.media_type,
        info=info,
    )


def load_repo(
    source: ContextSource,
    *,
    context_dir: Path,
    settings: Settings,
    limits: ContextLimits,
    cancel: CancelToken | None,
) -> LoadedDocument:
    if not source.url:
        raise _missing("url", "repo")
    repo = clone_repo(
        source.url,
        source.ref,
        context_dir=context_dir,
        allow_private=settings.url_allow_private,
        timeout_s=limits.repo_timeout_s,
        max_bytes=limits.repo_max_bytes,
        cancel=cancel,
    )
    root = context_dir / repo.path
    listing, files, listing_truncated = tree_listing(root, max_entries=limits.listing_max_entries)
    url = redact(source.url)
    lines = [
        f"Repository: {url}",
        f"Ref: {source.ref or '(default branch)'}",
        f"Commit: {repo.commit}",
        f"Files are in CONTEXT_DIR/{repo.path}/ (read-only; /context/{repo.path}/ in a bubblewrap sandbox).",
        "",
        f"Files ({files}):",
        listing,
    ]
    readme_truncated = False
    for readme in README_NAMES:
        try:
            data, _info = guestfs.read_bytes(root, readme, max_bytes=limits.readme_max_chars * 4)
        except OSError:  # missing, a directory, a link or a special file: not a README
            continue
        text = data.decode("utf-8", "replace")
        readme_truncated = len(text) > limits.readme_max_chars
        lines += ["", f"--- {readme} ---", text[: limits.readme_max_chars]]
        break
    return write_document(
        context_dir,
        name=source.name or url,
        kind="repo",
        text="\n".join(lines) + "\n",
        truncated=listing_truncated or readme_truncated,
        info={
            "url": url,
            "ref": source.ref,
            "commit": repo.commit,
            "repo_path": repo.path,
            "files": files,
            "repo_bytes": repo.size_bytes,
            "clone_reused": repo.reused,
        },
    )


def load_path(
    source: ContextSource, *, workspace_dir: Path, context_dir: Path, settings: Settings, limits: ContextLimits
) -> LoadedDocument:
    """A workspace file or directory, read fd-relative through `sandbox.guestfs` (links are refused or skipped)."""
    if not source.path:
        raise _missing("path", "path")
    relative, kind = workspace_entry(workspace_dir, source.path)
    shown = relative or "."
    name = source.name or shown
    if kind == "file":
        limit = settings.upload_max_bytes
        data, size = read_workspace_bytes(workspace_dir, relative, max_bytes=limit + 1)
        if size > limit or len(data) > limit:
            raise _too_large(f"workspace file {shown!r}", max(size, len(data)), limit, "upload_max_bytes")
        converted = convert_bytes(
            data, name=relative.rsplit("/", 1)[-1], media_type=source.media_type, limits=document_limits(settings)
        )
        return write_document(
            context_dir,
            name=name,
            kind="path",
            text=converted.text,
            media_type=converted.media_type,
            info={"source_path": shown, "bytes": size, **converted.info},
        )
    try:
        listing, files, listing_truncated = tree_listing(
            workspace_dir, relative, max_entries=limits.listing_max_entries
        )
        gathered = gather_texts(workspace_dir, relative, label=relative, max_chars=limits.dir_max_chars)
    except OSError as exc:  # the directory was swapped for a link or removed meanwhile
        raise path_error(source.path, exc) from None
    parts = [f"Directory {shown}/ ({files} files):\n{listing}", *gathered.sections]
    if gathered.skipped:
        parts.append("Not included (binary, unreadable, a link or a special file): " + ", ".join(gathered.skipped))
    return write_document(
        context_dir,
        name=name,
        kind="path",
        text="\n\n".join(parts) + "\n",
        truncated=listing_truncated or gathered.truncated,
        info={"source_path": shown, "files": files, "skipped": len(gathered.skipped)},
    )
