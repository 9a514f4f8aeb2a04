"""Resolve a user-given path inside the workspace, refusing anything that could reach outside it.

Relative paths only, no `..` component (even one that would stay inside: the rule is easier to trust than the
arithmetic), and after resolving every symlink the target must still lie under the workspace root.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context.failures import PATH_INVALID, context_error


def _invalid(raw: str, why: str, *, status: int = 422) -> FleetError:
    return context_error(
        PATH_INVALID,
        f"workspace path {raw[:200]!r} {why}",
        "give a path relative to the workspace root, e.g. memory/notes.md or artifacts/",
        status=status,
        path=raw[:500],
    )


def resolve_workspace_path(workspace_dir: Path, raw: str) -> tuple[Path, str]:
    """(resolved absolute path, normalized relative path) of an existing file or directory in the workspace."""
    if not raw or not raw.strip() or "\x00" in raw:
        raise _invalid(raw, "is empty or malformed")
    candidate = PurePosixPath(raw.replace("\\", "/"))
    if candidate.is_absolute() or raw.startswith("~") or Path(raw).is_absolute():
        raise _invalid(raw, "is absolute")
    if ".." in candidate.parts:
        raise _invalid(raw, "contains '..'")
    root = workspace_dir.resolve()
    try:
        resolved = (root / candidate).resolve(strict=True)
    except FileNotFoundError:
        raise _invalid(raw, "does not exist", status=404) from None
    except (OSError, RuntimeError) as exc:  # symlink loops, permission errors
        raise _invalid(raw, f"cannot be resolved ({type(exc).__name__})") from exc
    if not resolved.is_relative_to(root):
        raise _invalid(raw, "points outside the workspace (symlink)", status=403)
    relative = resolved.relative_to(root).as_posix()
    return resolved, relative if relative != "." else ""
