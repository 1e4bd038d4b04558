"""`memvault doctor`."""

from __future__ import annotations

import click

from memvault.cli.state import console, esc, print_json, state, wants_json


@click.command("doctor")
@click.option("--fix", is_flag=True,
              help="Stamp ids on hand-written bullets, resolve duplicate ids, remove temp files "
                   "a killed write left and journal facts a killed command saved without their "
                   "event (nothing else).")
@click.pass_context
def doctor(ctx: click.Context, fix: bool) -> None:
    """Check the vault; exit 1 if something needs your attention.

    Reports unknown categories, duplicate ids, read-only items, conflict copies, an
    invalid config and facts saved without their journal event, per file and line.

    Example: memvault doctor --fix
    """
    vault = state(ctx).vault()
    report = vault.doctor.fix() if fix else vault.doctor.check()
    if wants_json(ctx):
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
        ctx.exit(1)
