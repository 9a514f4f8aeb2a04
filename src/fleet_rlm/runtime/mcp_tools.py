"""MCP servers' tools for one turn, as `dspy.Tool`s: host tools in tools mode (ReAct) and callable functions in
the RLM sandbox (the guest's call travels over the sandbox bridge to the host, which calls the server).

The sandbox never talks to a server and never sees its command, URL, headers or env: only the tool's name,
description and argument schema. Only allow-listed tools exist (`McpServerSpec.tools`); each is named
`mcp__<server>__<tool>` (`fleet_rlm.mcp_servers.exposed_name`), and tools that would still share a name (two
servers of one name, tool names that differ only in punctuation) are all left out with a `warning` event
(`mcp_tool_name_collision`): never the first one silently. Calls are `dspy.Tool` calls, so the actor's event
callback records each as a `tool_call`/`tool_result` pair. A server that cannot be started or reached is a
`warning` event (`mcp_server_unavailable`) and the turn goes on without its tools; a tool that fails, reports
an error, exceeds its time limit or answers more than the `mcp_result_*` limits (`mcp_result_too_large`) raises
`McpToolError`, which the model sees as that tool's error (ReAct's observation, or a `ToolError` in the REPL); a
turn that stops wakes its waiting calls at once.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import dspy

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.events import WarningEvent
from fleet_rlm.mcp_servers import McpServerSpec, exposed_name
from fleet_rlm.netguard import GuardCodes, check_url
from fleet_rlm.runtime.control import TurnControl
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.mcp_client import LoopThread, McpCallFailed, McpConnection, McpUnavailable
from fleet_rlm.runtime.mcp_limits import ResultLimits

RESULT_MAX_CHARS = 100_000
MAX_TOOLS = 100
UNAVAILABLE = "mcp_server_unavailable"
COLLISION = "mcp_tool_name_collision"
URL_CODES = GuardCodes(blocked="mcp_url_blocked", failed="mcp_url_failed", allow_setting="FLEET_MCP_ALLOW_PRIVATE_URLS")


class McpToolError(RuntimeError):
    """A tool call that produced no result; its message is what the model reads (it names `code` when set)."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


def allowed(spec: McpServerSpec, tool: str) -> bool:
    return "*" in spec.tools or tool in spec.tools


def result_value(result: Any) -> Any:
    """A CallToolResult as what the model gets: its structured content (a tool returning one value: that value),
    else its text; an error result raises."""
    texts = [str(block.text) for block in result.content if getattr(block, "type", "") == "text"]
    others = [f"[{block.type} content]" for block in result.content if getattr(block, "type", "") != "text"]
    text = "\n".join(texts + others)
    if result.is_error:
        raise McpToolError(text[:2000] or "the tool reported an error")
    structured = result.structured_content
    if structured is not None:
        if isinstance(structured, dict) and set(structured) == {"result"}:
            return structured["result"]
        return structured
    if len(text) > RESULT_MAX_CHARS:
        return text[:RESULT_MAX_CHARS] + f"\n... [{len(text) - RESULT_MAX_CHARS} more chars cut]"
    return text


def _signature(schema: dict[str, Any]) -> tuple[inspect.Signature, dict[str, Any]]:
    """Parameters from a JSON Schema (required first), so guest code may pass them by position too."""
    properties = {k: v for k, v in (schema.get("properties") or {}).items() if k.isidentifier()}
    required = [k for k in schema.get("required") or [] if k in properties]
    optional = [k for k in properties if k not in required]
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [inspect.Parameter(k, kind) for k in required]
    params += [inspect.Parameter(k, kind, default=None) for k in optional]
    return inspect.Signature(params), properties


class McpToolbox:
    """The turn's MCP tools: servers are connected on first use (in parallel) and closed with the turn."""

    def __init__(
        self,
        settings: Settings,
        control: TurnControl,
        emitter: Emitter,
        *,
        servers: Sequence[McpServerSpec] = (),
        user_servers: Sequence[McpServerSpec] = (),
    ) -> None:
        self.settings = settings
        self.control = control
        self.emitter = emitter
        self.servers = list(servers)
        self.user_servers = list(user_servers)
        self._lock = threading.Lock()
        self._tools: list[dspy.Tool] | None = None
        self._connections: list[McpConnection] = []
        self._runner: LoopThread | None = None
        self.limits = ResultLimits(
            settings.mcp_result_max_bytes, settings.mcp_result_max_depth, settings.mcp_result_max_items
        )

    @property
    def configured(self) -> bool:
        return bool(self.servers or self.user_servers)

    def tools(self) -> list[dspy.Tool]:
        with self._lock:
            if self._tools is None:
                self._tools = self._connect() if self.configured else []
            return list(self._tools)

    def _connect(self) -> list[dspy.Tool]:
        self._runner = LoopThread()
        specs = [(spec, False) for spec in self.servers] + [(spec, True) for spec in self.user_servers]
        with ThreadPoolExecutor(max_workers=min(8, len(specs)), thread_name_prefix="mcp-connect") as pool:
            opened = list(pool.map(lambda item: self._open(*item), specs))
        offered: dict[str, list[tuple[McpConnection, Any]]] = {}
        for connection in opened:
            if connection is None:
                continue
            self._connections.append(connection)
            for tool in connection.tools:
                if allowed(connection.spec, tool.name):
                    offered.setdefault(exposed_name(connection.spec.name, tool.name), []).append((connection, tool))
        tools: list[dspy.Tool] = []
        for name, sources in offered.items():
            if len(sources) > 1:
                self._collision(name, sources)
            elif len(tools) < MAX_TOOLS:
                tools.append(self._tool(*sources[0], name))
        return tools

    def _collision(self, name: str, sources: list[tuple[McpConnection, Any]]) -> None:
        """Every tool that maps to `name` is left out: which one the model meant is unknowable."""
        which = ", ".join(f"{connection.spec.name!r}.{tool.name!r}" for connection, tool in sources)
        message = f"MCP tools {which} would all be named {name}; none of them is offered"
        self.emitter.emit(WarningEvent, code=COLLISION, message=message[:500])

    def _open(self, spec: McpServerSpec, users: bool) -> McpConnection | None:
        assert self._runner is not None
        try:
            guard = None
            if users and spec.url is not None:
                allow = self.settings.auth_mode == "none" or self.settings.mcp_allow_private_urls
                check_url(spec.url, allow_private=allow, codes=URL_CODES)
                guard = None if allow else URL_CODES  # and again at every connection (DNS can change)
            connection = McpConnection(
                spec, self._runner, limits=self.limits, logs_dir=self.settings.logs_dir, guard=guard
            )
            return connection.connect(self.settings.mcp_connect_timeout_s)
        except (McpUnavailable, FleetError) as exc:
            message = exc.message if isinstance(exc, FleetError) else str(exc)
            self.emitter.emit(WarningEvent, code=UNAVAILABLE, message=f"MCP server {spec.name!r}: {message}"[:500])
            return None

    def _tool(self, connection: McpConnection, tool: Any, name: str) -> dspy.Tool:
        signature, properties = _signature(tool.input_schema or {})
        timeout_s = connection.spec.timeout_s or self.settings.mcp_tool_timeout_s
        remote = tool.name

        def call(**kwargs: Any) -> Any:
            arguments = {k: v for k, v in kwargs.items() if v is not None}
            try:
                result = connection.call(remote, arguments, timeout_s=timeout_s, stop=self.control.on_stop)
            except McpCallFailed as exc:
                self.control.check()  # a stopped turn stops here, not in the model's next step
                raise McpToolError(f"{name} failed: {exc}", code=exc.code) from None
            return result_value(result)

        call.__name__ = name
        call.__doc__ = tool.description or f"Tool {remote!r} of the MCP server {connection.spec.name!r}."
        call.__signature__ = signature  # type: ignore[attr-defined]
        desc = (tool.description or call.__doc__ or "").strip()
        return dspy.Tool(call, name=name, desc=desc[:2000], args=properties)

    def close(self) -> None:
        for connection in self._connections:
            connection.close()
        self._connections.clear()
        if self._runner is not None:
            self._runner.stop()
            self._runner = None
