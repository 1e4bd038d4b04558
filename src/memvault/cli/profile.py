"""`memvault profile show|set`: the properties of Profile.md (the prose is the user's)."""

from __future__ import annotations

import typer

from memvault.cli.state import console, esc, print_json, state, wants_json

profile_app = typer.Typer(help="Who the user is: the properties of Profile.md.\n\n"
                               "Example: memvault profile set timezone Europe/Lisbon",
                          no_args_is_help=True)
JSON_OPT = typer.Option(False, "--json", help="JSON output.")


def register(app: typer.Typer) -> None:
    app.add_typer(profile_app, name="profile")


@profile_app.command("show")
def show(ctx: typer.Context, json_out: bool = JSON_OPT) -> None:
    """The properties of Profile.md, with their lines.

    Example: memvault profile show --json
    """
    info = state(ctx).vault().profile.show()
    if wants_json(ctx, json_out):
        print_json(info)
        return
    out = console()
    out.print(f"[bold]{esc(info['path'])}[/bold]")
    if info["readonly_reason"]:
        out.print(f"[yellow]read-only: {esc(info['readonly_reason'])}[/yellow]")
    if not info["properties"]:
        out.print("no properties yet — `memvault profile set timezone Europe/Lisbon` adds one")
    for key, value in info["properties"].items():
        shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        out.print(f"{esc(key)}: {esc(shown)}")


@profile_app.command("set")
def set_(ctx: typer.Context, key: str = typer.Argument(..., metavar="KEY"),
         value: str = typer.Argument(..., metavar="VALUE",
                                     help="Text; for a list property: a, b, c"),
         json_out: bool = JSON_OPT) -> None:
    """Set one property; only its lines in Profile.md change.

    Example: memvault profile set timezone Europe/Lisbon
    """
    vault = state(ctx).vault()
    written = vault.profile.set(key, value)
    if wants_json(ctx, json_out):
        print_json({"path": vault.layout.profile, "key": key, "value": written})
    else:
        console().print(f"[green]set[/green] {esc(key)} in {esc(vault.layout.profile)}")
