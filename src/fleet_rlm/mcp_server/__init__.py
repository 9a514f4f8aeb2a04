"""fleet-rlm as an MCP server: tools and resources over the same domain functions the HTTP routes call.

`server.build_server()` makes the `MCPServer` (tools in `tools.py`, resources in `resources.py`); the API mounts
it at `/mcp` (streamable HTTP, see `api/mcp_mount.py`; this package loads on the first `/mcp` request), which
authenticates every request like the API and hands the caller to the tools in the request's ASGI state.
`fleet-rlm mcp` serves stdio by relaying to that mount on the CLI's warm local server (`relay.py`),
so both transports run one implementation.
"""
