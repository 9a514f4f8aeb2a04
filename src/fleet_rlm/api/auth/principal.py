"""Who is calling: the `Principal` every authorized route receives, resolved from a verified user name.

A user and their default workspace are created on first sight, and the workspace's durable roots
(`<workspaces_dir>/<workspace_id>/{memory,artifacts,buffers,meta}`) exist before any route uses them.

Every request resolves its caller, so the rows are remembered per database once read: users and their default
workspaces are never renamed, moved or deleted (a stored display name is the one given at creation), so a row read
once stays true for the life of the process, in every worker. The roots are still made sure of on every request:
a guest may have displaced one since.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.api.auth.admin import admin_required, is_admin
from fleet_rlm.api.auth.tokens import check_subject
from fleet_rlm.config import Settings
from fleet_rlm.sandbox import ensure_roots
from fleet_rlm.store import Database, new_id
from fleet_rlm.store.models import User
from fleet_rlm.store.repos import users, workspaces

LOCAL_USER = "local"
MAX_NAME = 255
KNOWN_LIMIT = 4096  # remembered callers per database; an OIDC server may see many subjects


@dataclass(frozen=True)
class Principal:
    """The authenticated user and the workspace their requests act in."""

    user_id: str
    name: str
    display_name: str | None
    workspace_id: str
    workspace_root: Path
    is_admin: bool = False  # see api/auth/admin.py


def check_user_name(name: object) -> str:
    """A user name from a token must be a printable string that fits the users table (see check_subject)."""
    return check_subject(name)


async def principal_for_name(
    db: Database, settings: Settings, name: str, *, display_name: str | None = None, is_admin: bool = False
) -> Principal:
    """Get or create the user called `name` and their default workspace (with its roots on disk)."""
    known = _known(db)
    principal = known.by_name.get(name)
    if principal is None:
        async with db.transaction(inline=True) as s:  # every first request waits for these reads (store.Database)
            user = await users.get_or_create_user(s, name=name, display_name=display_name)
            principal = await _with_workspace(s, settings, user)
        known.remember(principal)
    return _ready(principal, is_admin=is_admin)


async def principal_for_user_id(db: Database, settings: Settings, user_id: str) -> Principal | None:
    """The principal of an existing user (used after consuming a WebSocket ticket); None if gone."""
    known = _known(db)
    principal = known.by_user_id.get(user_id)
    if principal is None:
        async with db.transaction(inline=True) as s:
            user = await users.get_user(s, user_id=user_id)
            if user is None:
                return None
            principal = await _with_workspace(s, settings, user)
        known.remember(principal)
    return _ready(principal, is_admin=is_admin(settings, principal.name))


def _ready(principal: Principal, *, is_admin: bool) -> Principal:
    """The remembered principal for this request: roots made sure of, admin as this request's token says."""
    ensure_roots(principal.workspace_root.parent, principal.workspace_id)
    return principal if principal.is_admin == is_admin else replace(principal, is_admin=is_admin)


async def _with_workspace(s: AsyncSession, settings: Settings, user: User) -> Principal:
    workspace_id = new_id()
    workspace = await workspaces.get_or_create_workspace(
        s,
        user_id=user.id,
        workspace_id=workspace_id,
        root_path=str(settings.workspaces_dir / workspace_id),
    )
    return Principal(
        user_id=user.id,
        name=user.name,
        display_name=user.display_name,
        workspace_id=workspace.id,
        workspace_root=Path(workspace.root_path),
    )


class _Known:
    """The callers one database has been asked about, by name and by id (oldest forgotten past KNOWN_LIMIT)."""

    def __init__(self, limit: int = KNOWN_LIMIT) -> None:
        self.limit = limit
        self.by_name: dict[str, Principal] = {}
        self.by_user_id: dict[str, Principal] = {}

    def remember(self, principal: Principal) -> None:
        while len(self.by_user_id) >= self.limit:
            oldest = self.by_user_id.pop(next(iter(self.by_user_id)))
            self.by_name.pop(oldest.name, None)
        self.by_name[principal.name] = principal
        self.by_user_id[principal.user_id] = principal


_KNOWN: weakref.WeakKeyDictionary[Database, _Known] = weakref.WeakKeyDictionary()


def _known(db: Database) -> _Known:
    known = _KNOWN.get(db)
    if known is None:
        known = _KNOWN[db] = _Known()
    return known


def require_admin(principal: Principal, what: str) -> None:
    if not principal.is_admin:
        raise admin_required(what)
