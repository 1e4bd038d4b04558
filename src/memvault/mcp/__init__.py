"""The MCP server (`memvault serve`). Imported only by that command: the `mcp` SDK is
never loaded by other CLI commands. See memvault.mcp.server and docs/agents.md."""
