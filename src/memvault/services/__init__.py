"""The service layer: the `Vault` facade and one service per capability.

Services combine the pure core with a backend. The CLI and the MCP server call only
these; no business rule lives in a command function.
"""
