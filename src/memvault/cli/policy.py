"""`memvault policy show|set|check`: the user's hard limits in Policy.md."""

from __future__ import annotations

import click

from memvault.cli.base import group
from memvault.cli.state import console, esc, print_json, state, wants_json

policy_group = group("policy", "The user's hard limits (Policy.md); only `policy set` or your "
                               "own hand edit changes them.\n\n"
                               "Example: memvault policy set max_trade_usd 2500")


@policy_group.command("show")
@click.pass_context
def show(ctx: click.Context) -> None:
    """The limits in effect (exit 1 when Policy.md is invalid: nothing is guessed).

    Example: memvault policy show --json
    """
    vault = state(ctx).vault()
    st = vault.policy.state()
    if not st.valid:
        raise st.error()
    limits = st.limits()
    if wants_json(ctx):
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


@policy_group.command("set")
@click.argument("key", metavar="KEY")
@click.argument("value", metavar="VALUE")
@click.pass_context
def set_(ctx: click.Context, key: str, value: str) -> None:
    """Set limit KEY to VALUE (a number, true/false, HH:MM-HH:MM, or a list: a, b; 'none'
    clears it). The value and the resulting file are validated first; an invalid value is
    refused and Policy.md is left unchanged.

    Example: memvault policy set max_trade_usd 2500
    """
    vault = state(ctx).vault()
    policy = vault.policy.set(key, value)
    from memvault.services.policy import _jsonable

    written = _jsonable(getattr(policy, key.strip().casefold()))
    if wants_json(ctx):
        print_json({"path": vault.layout.policy, "key": key.strip().casefold(),
                    "value": written})
        return
    shown = ", ".join(map(str, written)) if isinstance(written, list) else str(written)
    console().print(f"[green]set[/green] {esc(key)} = {esc(shown)} in "
                    f"{esc(vault.layout.policy)}")


@policy_group.command("check")
@click.pass_context
def check(ctx: click.Context) -> None:
    """Validate Policy.md after a hand edit: each problem with key, value, reason, line.

    Example: memvault policy check
    """
    vault = state(ctx).vault()
    st = vault.policy.check()
    if wants_json(ctx):
        print_json({"path": st.path, "valid": st.valid, "exists": st.exists,
                    "issues": [i.to_dict() for i in st.issues]})
    elif st.valid:
        what = f"{len(st.limits())} limit(s) set" if st.exists else "file missing, no limits"
        console().print(f"[green]ok[/green] {esc(st.path)}: {what}")
    else:
        for issue in st.issues:
            click.echo(f"{st.path}: {issue}", err=True)
    if not st.valid:
        ctx.exit(1)
