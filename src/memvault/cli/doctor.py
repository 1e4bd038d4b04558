"""`memvault doctor`."""

from __future__ import annotations

import typer

from memvault.cli.state import console, esc, print_json, state, wants_json


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor(
        ctx: typer.Context,
        fix: bool = typer.Option(False, "--fix", help="Stamp ids on hand-written bullets and "
                                                      "resolve duplicate ids (nothing else)."),
        json_out: bool = typer.Option(False, "--json", help="JSON output."),
    ) -> None:
        """Check the vault; exit 1 if something needs your attention.

        Reports unknown categories, duplicate ids, read-only items, conflict copies and an
        invalid config, per file and line.

        Example: memvault doctor --fix
        """
        vault = state(ctx).vault()
        report = vault.doctor.fix() if fix else vault.doctor.check()
        if wants_json(ctx, json_out):
            print_json(report.to_dict())
        else:
            c = console()
            for note in report.fixed:
                c.print(f"[green]fixed[/green] {esc(note)}")
            styles = {"error": "red", "warning": "yellow", "info": "dim"}
            for f in report.findings:
                c.print(f"[{styles.get(f.severity, 'white')}]{f.severity:7}[/] {esc(str(f))}")
            if not report.findings:
                c.print("[green]all good[/green]")
        if report.needs_attention:
            raise typer.Exit(1)
