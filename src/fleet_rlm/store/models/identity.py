"""Who uses the workbench and with which models: users, workspaces, WebSocket tickets, LLM profiles, roles."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field

from fleet_rlm.store.base import (
    StoreModel,
    created_field,
    fk_field,
    id_field,
    in_check,
    json_field,
    str_field,
    text_field,
    time_field,
    updated_field,
)
from fleet_rlm.store.types import UTCDateTime

ROLES = ("root", "sub", "delegate", "router", "reflection")


class User(StoreModel, table=True):
    """An account; `name` is the stable login (the OIDC subject or the local user's name)."""

    __tablename__ = "users"

    id: str = id_field()
    name: str = str_field(255)
    display_name: str | None = str_field(255, default=None, nullable=True)
    # runtime overrides the user chose (GET/PATCH /runtime/settings); the server default is migration 0002's
    settings: dict[str, Any] = json_field(server_default="'{}'")
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()

    __table_args__ = (sa.UniqueConstraint("name"),)


class Workspace(StoreModel, table=True):
    """A directory the sandboxes may read and write; `slug` names it under data_dir/workspaces/<user>/."""

    __tablename__ = "workspaces"

    id: str = id_field()
    user_id: str = fk_field("users.id", index=False)  # covered by uq(user_id, slug)
    name: str = str_field(255)
    slug: str = str_field(255)
    root_path: str = text_field(nullable=False)
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()

    __table_args__ = (sa.UniqueConstraint("user_id", "slug"),)


class WsTicket(StoreModel, table=True):
    """A one-time WebSocket ticket; only the SHA-256 of the token is stored."""

    __tablename__ = "ws_tickets"

    id: str = str_field(64)  # hex sha256 of the ticket token
    user_id: str = fk_field("users.id")
    expires_at: datetime = Field(nullable=False, index=True, sa_type=UTCDateTime())
    used_at: datetime | None = time_field()
    created_at: datetime = created_field()

    __table_args__ = (sa.PrimaryKeyConstraint("id"),)


class LlmProfile(StoreModel, table=True):
    """A named model configuration; the API key and the extra HTTP headers are stored encrypted (Fernet token
    text; the headers as one token of a JSON object {name: value}), never in clear."""

    __tablename__ = "llm_profiles"

    id: str = id_field()
    user_id: str = fk_field("users.id", index=False)  # covered by uq(user_id, name)
    name: str = str_field(255)
    model: str = str_field(255)
    api_base: str | None = text_field()
    api_key_encrypted: str | None = text_field()
    # "env" / "env-delegate": the key (and model, api_base) is the server environment's, resolved at use and
    # never copied here; None: the profile's own key, if any.
    key_source: str | None = str_field(32, default=None, nullable=True)
    extra: dict[str, Any] = json_field()
    extra_headers_encrypted: str | None = text_field()
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()

    __table_args__ = (sa.UniqueConstraint("user_id", "name"),)


class RoleBinding(StoreModel, table=True):
    """Which profile (and optional model override) serves a role for a user; one binding per role."""

    __tablename__ = "role_bindings"

    id: str = id_field()
    user_id: str = fk_field("users.id", index=False)  # covered by uq(user_id, role)
    role: str = str_field(32)
    profile_id: str = fk_field("llm_profiles.id")
    model_override: str | None = str_field(255, default=None, nullable=True)
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()

    __table_args__ = (sa.UniqueConstraint("user_id", "role"), in_check("role", ROLES, name="role"))
