"""How an operator or a user names an MCP server whose tools turns may call (the settings' `mcp_servers`), and
the name each of its tools gets in a turn.

A tool is exposed as `mcp__<server>__<tool>`: the `mcp__` prefix keeps every MCP tool apart from the built-in
names (`llm_query`, `rlm_query`, `SUBMIT`, `print`, the host tools: none starts with it), and a server name
never contains `__` nor ends with `_`, so the first `__` after the prefix ends the server's name: two servers'
tools never share a name (`gh` + `enterprise_list` is `mcp__gh__enterprise_list`, `gh_enterprise` + `list` is
`mcp__gh_enterprise__list`). The tool part is the tool's name with every character that is not an ASCII letter,
digit or `_` replaced by `_` (ASCII only: Python folds look-alike Unicode identifiers together).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

PREFIX = "mcp__"
SEPARATOR = "__"
SERVERS_HELP = (
    'Operator MCP servers for every user, JSON: [{"name": "docs", "command": "uvx", "args": [...], '
    '"tools": ["search"]}] or {"url": ...}; in the policy file [[mcp.servers]] tables. Names are distinct.'
)
MCP_LIMIT = "Most %s in one message of an MCP server (a tool's result); more fails the call: mcp_result_too_large."


class NameCollision(ValueError):
    """A server name or allow-list that would make two tools share a name (refused when configured)."""


def exposed_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, a Python identifier (the REPL calls it by this name)."""
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", tool).strip("_") or "tool"
    return f"{PREFIX}{server}{SEPARATOR}{cleaned}"


class McpServerSpec(BaseModel):
    """One MCP server whose allow-listed tools turns may call: a stdio `command` or a streamable-HTTP `url`.

    Operators list them in `mcp_servers`; users add their own through the API (`/api/v1/mcp-servers`).
    `tools` is the allow-list of the server's tool names (`["*"]`: all of them); the model sees each as
    `mcp__<name>__<tool>`. `env` and `headers` go only to that server's process or requests, never to a sandbox.
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

    @field_validator("name")
    @classmethod
    def _unambiguous(cls, name: str) -> str:
        if SEPARATOR in name or name.endswith("_"):
            raise NameCollision(
                f"the server name {name!r} may not contain '__' nor end with '_': its tools are named "
                "mcp__<server>__<tool>, and '__' ends the server's part"
            )
        return name

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (stdio) or url (streamable HTTP)")
        return self

    @model_validator(mode="after")
    def _distinct_tools(self) -> McpServerSpec:
        exposed: dict[str, str] = {}
        for tool in self.tools:
            if tool == "*":
                continue
            other = exposed.setdefault(exposed_name(self.name, tool), tool)
            if other != tool:
                raise NameCollision(
                    f"the allowed tools {other!r} and {tool!r} would both be named {exposed_name(self.name, tool)}"
                )
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"


def _distinct(servers: list[McpServerSpec]) -> list[McpServerSpec]:
    names = [spec.name for spec in servers]
    if doubled := sorted({name for name in names if names.count(name) > 1}):
        raise ValueError(f"two MCP servers are named {doubled[0]!r}: their tools would share names")
    return servers


McpServers = Annotated[list[McpServerSpec], AfterValidator(_distinct)]
"""The operator's servers: distinct names."""
