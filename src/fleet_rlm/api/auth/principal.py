"""Who is calling: the `Principal` every authorized route receives, resolved from a verified user name.

A user and their default workspace are created on first sight, and the workspace's durable roots
(`<workspaces_dir>/<workspace_id>/{memory,artifacts,buffers,meta}`) exist before any route uses them.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    async with db.transaction(inline=True) as s:  # every request waits for these reads (store.Database)
        user = await users.get_or_create_user(s, name=name, display_name=display_name)
        return await _with_workspace(s, settings, user, is_admin=is_admin)


async def principal_for_user_id(db: Database, settings: Settings, user_id: str) -> Principal | None:
    """The principal of an existing user (used after consuming a WebSocket ticket); None if gone."""
    async with db.transaction(inline=True) as s:
        user = await users.get_user(s, user_id=user_id)
        if user is None:
            return None
        return await _with_workspace(s, settings, user, is_admin=is_admin(settings, user.name))


async def _with_workspace(s: AsyncSession, settings: Settings, user: User, *, is_admin: bool = False) -> Principal:
    workspace_id = new_id()
    workspace = await workspaces.get_or_create_workspace(
        s,
        user_id=user.id,
        workspace_id=workspace_id,
        root_path=str(settings.workspaces_dir / workspace_id),
    )
    root = Path(workspace.root_path)
    ensure_roots(root.parent, workspace.id)
    return Principal(
        user_id=user.id,
        name=user.name,
        display_name=user.display_name,
        workspace_id=workspace.id,
        workspace_root=root,
        is_admin=is_admin,
    )


def require_admin(principal: Principal, what: str) -> None:
    if not principal.is_admin:
        raise admin_required(what)
