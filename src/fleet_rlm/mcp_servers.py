"""How an operator or a user names an MCP server whose tools turns may call (the settings' `mcp_servers`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class McpServerSpec(BaseModel):
    """One MCP server whose allow-listed tools turns may call: a stdio `command` or a streamable-HTTP `url`.

    Operators list them in `mcp_servers`; users add their own through the API (`/api/v1/mcp-servers`).
    `tools` is the allow-list of the server's tool names (`["*"]`: all of them); the model sees each as
    `<name>_<tool>`. `env` and `headers` go only to that server's process or requests, never to a sandbox.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,31}$", description="Prefix of its tools' names.")
    command: str | None = Field(default=None, max_length=1000, description="stdio: the executable to start.")
    args: list[str] = Field(default_factory=list, max_length=100, description="stdio: its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="stdio: extra environment variables.")
    url: str | None = Field(default=None, max_length=2000, description="streamable HTTP: the endpoint URL.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP: extra request headers.")
    tools: list[str] = Field(min_length=1, max_length=200, description="Allow-list of tool names, or ['*'].")
    timeout_s: float | None = Field(default=None, gt=0, le=3600, description="Per-call time limit.")

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (stdio) or url (streamable HTTP)")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"
