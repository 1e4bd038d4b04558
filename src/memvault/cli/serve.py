"""`memvault serve`: run the MCP server over stdio (thin; see memvault.mcp.server)."""

from __future__ import annotations

import click

from memvault.cli.state import state


@click.command("serve")
@click.option("--access", default="propose", show_default=True,
              help="read: only reading tools; propose: agents may suggest memories into "
                   "Inbox.md; write: also remember, edit, forget, accept, reject, trade "
                   "record. Policy.md is never writable over MCP.")
@click.option("--watch/--no-watch", default=True, show_default=True,
              help="Also run the vault watcher in the background.")
@click.pass_context
def serve(ctx: click.Context, access: str, watch: bool) -> None:
    """Serve this vault to AI agents over MCP (stdio). Logs go to stderr.

    With --verbose, every change the watcher sees in the vault is logged (stderr).

    Example: memvault --vault ~/Notes serve --access propose
    """
    from memvault.errors import UsageError
    from memvault.extras import require

    require("mcp")  # before anything of memvault.mcp, which needs the SDK
    from memvault.mcp.session import ACCESS_LEVELS

    if access not in ACCESS_LEVELS:
        raise UsageError(f"--access must be one of {', '.join(ACCESS_LEVELS)}, not {access!r}")
    from memvault.mcp.server import serve_stdio

    st = state(ctx)
    serve_stdio(st.vault_path, scope=st.scope, access=access, watch=watch, verbose=st.verbose)
