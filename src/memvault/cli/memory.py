"""`memvault memory ...`: list, show, edit, delete, clear, open, restore."""

from __future__ import annotations

import os
import shlex
import subprocess
from typing import Optional

import typer

from memvault.cli.state import confirm, console, esc, print_json, state, wants_json

memory_app = typer.Typer(help="Read and manage the facts in Memory.md.\n\n"
                              "Example: memvault memory list --all", no_args_is_help=True)

JSON_OPT = typer.Option(False, "--json", help="JSON output.")


def register(app: typer.Typer) -> None:
    app.add_typer(memory_app, name="memory")


@memory_app.command("list")
def list_facts(
    ctx: typer.Context,
    all_: bool = typer.Option(False, "--all", "-a", help="Every fact, not only the 8 newest."),
    category: Optional[str] = typer.Option(None, "--category", "-c", help="Only this category."),
    json_out: bool = JSON_OPT,
) -> None:
    """The 8 most recently updated facts (or --all).

    Example: memvault memory list --all --json
    """
    vault = state(ctx).vault()
    facts = vault.memory.list(all=all_, category=category)
    problem = vault.memory.file_readonly
    if problem:
        from memvault.cli.state import warn

        warn(f"{vault.layout.memory} is read-only for memvault: {problem}")
    if wants_json(ctx, json_out):
        print_json({"facts": [f.to_dict() for f in facts], "path": vault.layout.memory,
                    "read_only": problem})
        return
    if not facts:
        console().print("no facts yet — `memvault remember \"...\"` adds one")
        return
    from memvault.cli.render import facts_table

    facts_table(facts)


@memory_app.command("show")
def show(ctx: typer.Context, fact_id: str = typer.Argument(..., metavar="ID"),
         json_out: bool = JSON_OPT) -> None:
    """One fact with its metadata and history (also for a forgotten fact's history).

    Example: memvault memory show k3v9qa
    """
    from memvault.errors import NotFound

    vault = state(ctx).vault()
    history = vault.memory.history(fact_id)
    try:
        fact = vault.memory.get(fact_id)
    except NotFound:
        if not history:
            raise
        fact = None
    if wants_json(ctx, json_out):
        print_json({"fact": fact.to_dict() if fact else None,
                    "state": "active" if fact else "forgotten", "history": history})
        return
    from memvault.cli.render import fact_detail, history_lines

    if fact:
        fact_detail(fact, history)
    else:
        console().print(f"[yellow]{esc(fact_id)} was forgotten[/yellow] "
                        "(`memvault memory restore ID` brings it back)")
        history_lines(history)


@memory_app.command("edit")
def edit(
    ctx: typer.Context,
    fact_id: str = typer.Argument(..., metavar="ID"),
    text: Optional[str] = typer.Argument(None, help="The corrected text (omit to change only "
                                                    "the category)."),
    category: Optional[str] = typer.Option(None, "--category", "-c"),
    json_out: bool = JSON_OPT,
) -> None:
    """Correct a fact: the id stays, `updated` is bumped; only its line changes.

    Example: memvault memory edit k3v9qa "I prefer short answers" --category preference
    """
    fact = state(ctx).vault().memory.edit(fact_id, text, category)
    if wants_json(ctx, json_out):
        print_json({"fact": fact.to_dict()})
    else:
        console().print(f"[green]updated[/green] {fact.id}: {esc(fact.text)}")


@memory_app.command("delete")
def delete(
    ctx: typer.Context,
    fact_id: str = typer.Argument(..., metavar="ID"),
    permanent: bool = typer.Option(False, "--permanent", help="Also erase its history."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    json_out: bool = JSON_OPT,
) -> None:
    """Forget one fact by id (a content-free tombstone is kept).

    Example: memvault memory delete k3v9qa --yes
    """
    vault = state(ctx).vault()
    fact = vault.memory.get(fact_id)
    if not wants_json(ctx, json_out):
        console().print(f"{fact.id}: {esc(fact.text)}")
    if not confirm("Forget this fact?", yes=yes, action="delete a fact"):
        raise typer.Exit(1)
    result = vault.memory.forget([fact.id], permanent=permanent)
    if wants_json(ctx, json_out):
        print_json(result.to_dict())
    else:
        console().print(f"forgot {fact.id}")


@memory_app.command("clear")
def clear(
    ctx: typer.Context,
    permanent: bool = typer.Option(False, "--permanent", help="Also erase their history."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    json_out: bool = JSON_OPT,
) -> None:
    """Forget every fact in Memory.md (headings and prose stay).

    Example: memvault memory clear --yes
    """
    vault = state(ctx).vault()
    count = len([f for f in vault.memory.all() if f.editable])
    if not confirm(f"Forget all {count} facts?", yes=yes, action="clear memory"):
        raise typer.Exit(1)
    result = vault.memory.clear(permanent=permanent)
    if wants_json(ctx, json_out):
        print_json(result.to_dict())
    else:
        console().print(f"forgot {len(result.forgotten)} fact(s)")


@memory_app.command("restore")
def restore(ctx: typer.Context, fact_id: str = typer.Argument(..., metavar="ID"),
            json_out: bool = JSON_OPT) -> None:
    """Undo a forget: bring the fact back from its history, with the same id.

    Example: memvault memory restore k3v9qa
    """
    fact = state(ctx).vault().memory.restore(fact_id)
    if wants_json(ctx, json_out):
        print_json({"fact": fact.to_dict()})
    else:
        console().print(f"[green]restored[/green] {fact.id}: {esc(fact.text)}")


@memory_app.command("open")
def open_memory(ctx: typer.Context, json_out: bool = JSON_OPT) -> None:
    """Open Memory.md in $EDITOR (or print its path when there is no editor or terminal).

    Example: EDITOR=vim memvault memory open
    """
    vault = state(ctx).vault()
    if vault.backend.name != "fs":
        from memvault.errors import InvalidInput

        raise InvalidInput("memory open needs a local vault (the backend is "
                           f"{vault.backend.name}); use `memvault memory edit`")
    path = vault.root / vault.layout.memory
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if wants_json(ctx, json_out) or not editor or not os.isatty(0) or not os.isatty(1):
        if wants_json(ctx, json_out):
            print_json({"path": str(path)})
        else:
            typer.echo(str(path))
        return
    raise typer.Exit(subprocess.call([*shlex.split(editor), str(path)]))
