"""`memvault init`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from memvault.cli.state import console, esc, print_json, state, wants_json


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init(
        ctx: typer.Context,
        path: Optional[Path] = typer.Argument(None, help="Vault folder (default: --vault, "
                                              "MEMVAULT_VAULT, or the current folder)."),
        json_out: bool = typer.Option(False, "--json", help="JSON output."),
    ) -> None:
        """Create the memvault layout in a vault. Idempotent; never overwrites a file.

        Example: memvault init ~/Notes
        """
        from memvault.services.setup import init_vault

        st = state(ctx)
        root = (path or Path(st.vault_path or Path.cwd())).expanduser().absolute()
        report = init_vault(root, scope=st.scope)
        if wants_json(ctx, json_out):
            print_json(report.to_dict())
            return
        c = console()
        c.print(f"vault: {esc(report.root)}")
        for p in report.created:
            c.print(f"  [green]created[/green] {esc(p)}")
        for p in report.kept:
            c.print(f"  [dim]kept    {esc(p)}[/dim]")
