"""A user's MCP servers (tool sources for their turns): what the Settings page sends and shows.

Secret values (`env`, `headers`) are write-only: responses name them (`env_names`, `header_names`), never show
them. Operator servers are listed read-only next to the user's own."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from fleet_rlm.schemas.common import In

NAME = r"^[a-z][a-z0-9_]{0,31}$"


class McpServerCreate(In):
    name: str = Field(pattern=NAME, description="Prefix of its tools' names (lowercase, digits, _).")
    command: str | None = Field(default=None, max_length=1000, description="stdio: executable (admins only*).")
    args: list[str] = Field(default_factory=list, max_length=100, description="stdio: arguments.")
    env: dict[str, str] = Field(default_factory=dict, max_length=50, description="stdio: environment (secret).")
    url: str | None = Field(default=None, max_length=2000, description="Streamable HTTP endpoint (SSRF-checked*).")
    headers: dict[str, str] = Field(default_factory=dict, max_length=50, description="HTTP headers (secret).")
    tools: list[str] = Field(min_length=1, max_length=200, description="Allow-list of tool names, or ['*'].")
    timeout_s: float | None = Field(default=None, gt=0, le=3600, description="Per-call limit (default server's).")
    enabled: bool = True


class McpServerUpdate(In):
    """Only the fields present change; `env`/`headers` replace the stored ones when sent."""

    command: str | None = Field(default=None, max_length=1000)
    args: list[str] | None = Field(default=None, max_length=100)
    env: dict[str, str] | None = Field(default=None, max_length=50)
    url: str | None = Field(default=None, max_length=2000)
    headers: dict[str, str] | None = Field(default=None, max_length=50)
    tools: list[str] | None = Field(default=None, min_length=1, max_length=200)
    timeout_s: float | None = Field(default=None, gt=0, le=3600)
    enabled: bool | None = None


class McpServerOut(BaseModel):
    id: str | None = Field(description="None for operator servers.")
    name: str
    owner: Literal["user", "operator"]
    transport: Literal["stdio", "http"]
    command: str | None
    args: list[str]
    url: str | None
    tools: list[str]
    timeout_s: float | None
    enabled: bool
    env_names: list[str] = Field(description="Names of the stored environment variables (values never shown).")
    header_names: list[str] = Field(description="Names of the stored headers (values never shown).")
    created_at: datetime | None = None
    updated_at: datetime | None = None


class McpServerList(BaseModel):
    items: list[McpServerOut] = Field(description="Your servers, then the operator's (read-only).")
    can_add_stdio: bool = Field(description="Whether you may add stdio commands (admins, or auth mode none).")
