"""`memvault serve`: run the MCP server over stdio (thin; see memvault.mcp.server)."""

from __future__ import annotations

import typer

from memvault.cli.state import state


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    ctx: typer.Context,
    access: str = typer.Option("propose", "--access",
                               help="read: only reading tools; propose (default): agents may "
                                    "suggest memories into Inbox.md; write: also remember, "
                                    "edit, forget, accept, reject, trade record. Policy.md is "
                                    "never writable over MCP."),
    watch: bool = typer.Option(True, "--watch/--no-watch",
                               help="Also run the vault watcher in the background."),
) -> None:
    """Serve this vault to AI agents over MCP (stdio). Logs go to stderr.

    With --verbose, every change the watcher sees in the vault is logged (stderr).

    Example: memvault --vault ~/Notes serve --access propose
    """
    from memvault.errors import UsageError
    from memvault.mcp.session import ACCESS_LEVELS

    if access not in ACCESS_LEVELS:
        raise UsageError(f"--access must be one of {', '.join(ACCESS_LEVELS)}, not {access!r}")
    from memvault.mcp.server import serve_stdio

    st = state(ctx)
    serve_stdio(st.vault_path, scope=st.scope, access=access, watch=watch, verbose=st.verbose)
