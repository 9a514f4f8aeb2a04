"""Build the MCP server object (one per app): fleet-rlm's tools and resources, no transport of its own."""

from __future__ import annotations

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
    server: MCPServer = MCPServer("fleet-rlm", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    register_tools(server)
    register_resources(server)
    return server
