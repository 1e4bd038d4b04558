"""`memvault resolve`: choose between the two versions of a merge conflict."""

from __future__ import annotations

import click

from memvault.cli.state import console, esc, is_interactive, print_json, state, wants_json


@click.command("resolve")
@click.argument("fact_id", required=False)
@click.option("--ours", "choice", flag_value="ours",
              help="Keep this clone's version.")
@click.option("--theirs", "choice", flag_value="theirs",
              help="Keep the incoming version (from the other machine).")
@click.option("--both", "choice", flag_value="both",
              help="Keep both (a second copy of one fact gets an id of its own).")
@click.pass_context
def resolve(ctx: click.Context, fact_id: str | None, choice: str | None) -> None:
    """Settle merge conflicts left in Memory.md, Lessons.md or Inbox.md.

    memvault settles what it can by itself; a fact changed differently on two machines
    (or edited on one and deleted on the other) waits here. Without a choice, shows each
    conflict and, in a terminal, asks which version to keep; FACT_ID limits it to one
    fact. A version you do not keep stays in the fact's history (`memory show`). Exit 1
    while a conflict is left.

    Example: memvault resolve k3v9qa --theirs
    """
    vault = state(ctx).vault()
    service = vault.resolver
    if choice is not None:
        report = service.resolve(choice, fact_id=fact_id)
        _show(ctx, report.to_dict())
        if report.left:
            ctx.exit(1)
        return
    conflicts = [c for c in service.conflicts()
                 if fact_id is None or fact_id in c.block.fact_ids()]
    if not conflicts:
        if wants_json(ctx):
            print_json({"resolved": [], "left": []})
        else:
            console().print("no merge conflicts left")
        return
    if wants_json(ctx) or not is_interactive():
        if wants_json(ctx):
            print_json({"resolved": [], "left": [c.to_dict() for c in conflicts]})
        else:
            for c in conflicts:
                _print_conflict(c.to_dict())
            console().print("choose with --ours (this clone), --theirs (incoming) or --both")
        ctx.exit(1)
    resolved = []
    for c in conflicts:
        _print_conflict(c.to_dict())
        answer = click.prompt("keep [o]urs, [t]heirs, [b]oth, or [s]kip", err=True,
                              type=click.Choice(["o", "t", "b", "s"]), default="s")
        if answer == "s":
            continue
        picked = {"o": "ours", "t": "theirs", "b": "both"}[answer]
        resolved += service.resolve(picked, line=c.block.line_no, path=c.path).resolved
    left = service.conflicts()
    _show(ctx, {"resolved": resolved, "left": [c.to_dict() for c in left]})
    if left:
        ctx.exit(1)


def _print_conflict(c: dict) -> None:  # type: ignore[type-arg]
    out = console()
    facts = ", ".join(c["facts"]) or "notes"
    out.print(f"[bold]{esc(c['path'])}:{c['line']}[/bold] ({esc(facts)}): {esc(c['reason'])}")
    for label, lines in (("this clone", c["this_clone"]), ("incoming", c["incoming"])):
        out.print(f"  [cyan]{label}:[/cyan]" + ("" if lines else " (deleted)"))
        for line in lines:
            out.print(f"    {esc(line)}")


def _show(ctx: click.Context, data: dict) -> None:  # type: ignore[type-arg]
    if wants_json(ctx):
        print_json(data)
        return
    out = console()
    for r in data["resolved"]:
        out.print(f"resolved {esc(r['path'])}:{r['line']} ({esc(', '.join(r['facts']) or 'notes')})"
                  f": kept {r['kept']}")
    if data["left"]:
        out.print(f"{len(data['left'])} conflict(s) left: `memvault resolve` shows them")
    else:
        out.print("no merge conflicts left; `memvault sync` can push")
