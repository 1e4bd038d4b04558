"""`memvault profile show|set`: the properties of Profile.md (the prose is the user's)."""

from __future__ import annotations

import click

from memvault.cli.base import group
from memvault.cli.state import console, esc, print_json, state, wants_json

profile_group = group("profile", "Who the user is: the properties of Profile.md.\n\n"
                                 "Example: memvault profile set timezone Europe/Lisbon")


@profile_group.command("show")
@click.pass_context
def show(ctx: click.Context) -> None:
    """The properties of Profile.md, with their lines.

    Example: memvault profile show --json
    """
    view = state(ctx).vault().profile.show()
    if wants_json(ctx):
        print_json(view.to_dict())
        return
    out = console()
    out.print(f"[bold]{esc(view.path)}[/bold]")
    if view.readonly_reason:
        out.print(f"[yellow]read-only: {esc(view.readonly_reason)}[/yellow]")
    if not view.properties:
        out.print("no properties yet — `memvault profile set timezone Europe/Lisbon` adds one")
    for key, value in view.properties.items():
        shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        out.print(f"{esc(key)}: {esc(shown)}")


@profile_group.command("set")
@click.argument("key", metavar="KEY")
@click.argument("value", metavar="VALUE")
@click.pass_context
def set_(ctx: click.Context, key: str, value: str) -> None:
    """Set property KEY to VALUE (text; for a list property: a, b, c); only its lines in
    Profile.md change.

    Example: memvault profile set timezone Europe/Lisbon
    """
    vault = state(ctx).vault()
    written = vault.profile.set(key, value)
    if wants_json(ctx):
        print_json({"path": vault.layout.profile, "key": key, "value": written})
    else:
        console().print(f"[green]set[/green] {esc(key)} in {esc(vault.layout.profile)}")
