"""The MCP server (`memvault serve`). Imported only by that command: the `mcp` SDK is
never loaded by other CLI commands. See memvault.mcp.server and docs/agents.md.

Without the `mcp` extra, importing this package fails with one line naming it."""

from memvault.extras import check_installed

check_installed("mcp")
