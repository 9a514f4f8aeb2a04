"""Build the MCP server object (one per app): fleet-rlm's tools and resources, no transport of its own."""

from __future__ import annotations

import logging

from mcp.server.mcpserver import MCPServer

from fleet_rlm import __version__
from fleet_rlm.mcp_server.resources import register_resources
from fleet_rlm.mcp_server.tools import register_tools

INSTRUCTIONS = (
    "fleet-rlm runs tasks with a DSPy workbench: it answers directly, uses host tools, or runs a recursive LM "
    "whose Python REPL lives in a sandbox. Call run_task (pass session_id to continue a conversation); read "
    "sessions, history and run events with the other tools or the fleet:// resources."
)


def build_server() -> MCPServer:
    """The server object. The SDK's constructor calls `logging.basicConfig` (a rich stderr handler on the root
    logger); the app's logging belongs to the operator and the CLI, so whatever it added is taken off again."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        server: MCPServer = MCPServer("fleet-rlm", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        root.setLevel(level)
    register_tools(server)
    register_resources(server)
    return server
