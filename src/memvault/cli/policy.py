"""`memvault policy show|set|check`: the user's hard limits in Policy.md."""

from __future__ import annotations

import typer

from memvault.cli.state import console, esc, print_json, state, wants_json

policy_app = typer.Typer(help="The user's hard limits (Policy.md); only `policy set` or "
                              "your own hand edit changes them.\n\n"
                              "Example: memvault policy set max_trade_usd 2500", no_args_is_help=True)
JSON_OPT = typer.Option(False, "--json", help="JSON output.")


def register(app: typer.Typer) -> None:
    app.add_typer(policy_app, name="policy")


@policy_app.command("show")
def show(ctx: typer.Context, json_out: bool = JSON_OPT) -> None:
    """The limits in effect (exit 1 when Policy.md is invalid: nothing is guessed).

    Example: memvault policy show --json
    """
    vault = state(ctx).vault()
    st = vault.policy.state()
    if not st.valid:
        raise st.error()
    limits = st.limits()
    if wants_json(ctx, json_out):
        print_json({"path": st.path, "exists": st.exists, "limits": limits,
                    "lines": {k: v for k, v in st.lines.items()}})
        return
    from memvault.core.policy import describe_keys

    out = console()
    if not st.exists:
        out.print(f"no {esc(st.path)}: no limits are set")
        return
    out.print(f"[bold]{esc(st.path)}[/bold] (authoritative)")
    for row in describe_keys():
        value = limits.get(row["key"])
        shown = "not set" if value is None else (
            ", ".join(map(str, value)) if isinstance(value, list) else str(value))
        out.print(f"{row['key']}: {esc(shown)}  [dim]{esc(row['meaning'])}[/dim]")


@policy_app.command("set")
def set_(ctx: typer.Context, key: str = typer.Argument(..., metavar="KEY"),
         value: str = typer.Argument(..., metavar="VALUE",
                                     help="A number, true/false, HH:MM-HH:MM, or a list: a, b; "
                                          "'none' clears the limit."),
         json_out: bool = JSON_OPT) -> None:
    """Set one limit. The value and the resulting file are validated first; an invalid
    value is refused and Policy.md is left unchanged.

    Example: memvault policy set max_trade_usd 2500
    """
    vault = state(ctx).vault()
    policy = vault.policy.set(key, value)
    from memvault.services.policy import _jsonable

    written = _jsonable(getattr(policy, key.strip().casefold()))
    if wants_json(ctx, json_out):
        print_json({"path": vault.layout.policy, "key": key.strip().casefold(),
                    "value": written})
        return
    shown = ", ".join(map(str, written)) if isinstance(written, list) else str(written)
    console().print(f"[green]set[/green] {esc(key)} = {esc(shown)} in "
                    f"{esc(vault.layout.policy)}")


@policy_app.command("check")
def check(ctx: typer.Context, json_out: bool = JSON_OPT) -> None:
    """Validate Policy.md after a hand edit: each problem with key, value, reason, line.

    Example: memvault policy check
    """
    vault = state(ctx).vault()
    st = vault.policy.check()
    if wants_json(ctx, json_out):
        print_json({"path": st.path, "valid": st.valid, "exists": st.exists,
                    "issues": [i.to_dict() for i in st.issues]})
    elif st.valid:
        what = f"{len(st.limits())} limit(s) set" if st.exists else "file missing, no limits"
        console().print(f"[green]ok[/green] {esc(st.path)}: {what}")
    else:
        for issue in st.issues:
            typer.echo(f"{st.path}: {issue}", err=True)
    if not st.valid:
        raise typer.Exit(1)
