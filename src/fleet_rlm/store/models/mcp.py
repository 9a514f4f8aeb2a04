"""A user's own MCP servers (tool sources for their turns). Header and environment values may be credentials:
they are stored only Fernet-encrypted (`secrets_encrypted`, a JSON object {"env": {...}, "headers": {...}}),
encrypted and decrypted above the store."""

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
    json_field,
    str_field,
    text_field,
    updated_field,
)


class McpServer(StoreModel, table=True):
    __tablename__ = "mcp_servers"

    id: str = id_field()
    user_id: str = fk_field("users.id", index=False)  # covered by uq(user_id, name)
    name: str = str_field(32)
    command: str | None = text_field()
    args: list[str] = json_field(factory=list)
    url: str | None = text_field()
    tools: list[str] = json_field(factory=list)
    secrets_encrypted: str | None = text_field()
    timeout_s: float | None = Field(default=None, nullable=True)
    enabled: bool = Field(default=True, nullable=False)
    extra: dict[str, Any] = json_field()
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()

    __table_args__ = (sa.UniqueConstraint("user_id", "name"),)
