"""`memvault memory ...`: list, show, edit, delete, clear, open, restore, recover."""

from __future__ import annotations

import os

import click

from memvault.cli.base import group
from memvault.cli.state import (
    collector_paused,
    confirm,
    console,
    esc,
    print_json,
    state,
    wants_json,
)
from memvault.cli.streams import change_made

memory_group = group("memory", "Read and manage the facts in Memory.md.\n\n"
                               "Example: memvault memory list --all")


@memory_group.command("list")
@click.option("--all", "-a", "all_", is_flag=True, help="Every fact, not only the 8 newest.")
@click.option("--category", "-c", help="Only this category.")
@click.pass_context
def list_facts(ctx: click.Context, all_: bool, category: str | None) -> None:
    """The 8 most recently updated facts (or --all); says how many there are in all.

    Example: memvault memory list --all --json
    """
    with collector_paused():
        vault = state(ctx).vault()
        listing = vault.memory.listing(all=all_, category=category)
        facts = listing.facts
        if listing.read_only:
            from memvault.cli.state import warn

            warn(f"{listing.path} is read-only for memvault: {listing.read_only}")
        if wants_json(ctx):
            print_json(listing.to_dict())
            return
    if not facts:
        console().print("no facts yet — `memvault remember \"...\"` adds one"
                        if not category else f"no facts in category {esc(category)}")
        return
    from memvault.cli.render import facts_table

    facts_table(facts)
    if len(facts) < listing.total:
        console().print(f"{len(facts)} of {listing.total} — `--all` for every fact")


@memory_group.command("show")
@click.argument("fact_id", metavar="ID")
@click.pass_context
def show(ctx: click.Context, fact_id: str) -> None:
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
    if wants_json(ctx):
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


@memory_group.command("edit")
@click.argument("fact_id", metavar="ID")
@click.argument("text", required=False)
@click.option("--category", "-c", help="The new category.")
@click.pass_context
def edit(ctx: click.Context, fact_id: str, text: str | None, category: str | None) -> None:
    """Correct fact ID with the new TEXT (omit it to change only the category): the id
    stays, `updated` is bumped, only its line changes. Asking for what is already there
    changes nothing.

    Example: memvault memory edit k3v9qa "I prefer short answers" --category preference
    """
    result = state(ctx).vault().memory.edit(fact_id, text, category)
    change_made(f"{'edited' if result.changed else 'unchanged'} {result.fact.id}")
    if wants_json(ctx):
        print_json(result.to_dict())
    elif result.changed:
        console().print(f"[green]updated[/green] {result.fact.id}: {esc(result.fact.text)}")
    else:
        console().print(f"unchanged {result.fact.id}: {esc(result.fact.text)} (already so)")


@memory_group.command("delete")
@click.argument("fact_id", metavar="ID")
@click.option("--permanent", is_flag=True, help="Also erase its history.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def delete(ctx: click.Context, fact_id: str, permanent: bool, yes: bool) -> None:
    """Forget one fact by id (a content-free tombstone is kept).

    Example: memvault memory delete k3v9qa --yes
    """
    vault = state(ctx).vault()
    found = vault.memory.find_matches(fact_id, history=permanent)
    fact = next((f for f in found if f.id == fact_id), None) or vault.memory.get(fact_id)
    if not wants_json(ctx):
        console().print(f"{esc(fact.id)}: {esc(fact.text)}")
    if not confirm("Forget this fact?", yes=yes, action="delete a fact"):
        ctx.exit(1)
    result = vault.memory.forget([fact.id], permanent=permanent)
    change_made(f"forgot {fact.id}")
    if wants_json(ctx):
        print_json(result.to_dict())
    else:
        from memvault.cli.forget_history import name_notes

        console().print(f"forgot {esc(fact.id)}")
        name_notes(ctx, result.notes)


@memory_group.command("clear")
@click.option("--permanent", is_flag=True, help="Also erase their history.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def clear(ctx: click.Context, permanent: bool, yes: bool) -> None:
    """Forget every fact in Memory.md (headings and prose stay).

    Example: memvault memory clear --yes
    """
    vault = state(ctx).vault()
    count = len([f for f in vault.memory.all() if f.editable])
    if not confirm(f"Forget all {count} facts?", yes=yes, action="clear memory"):
        ctx.exit(1)
    result = vault.memory.clear(permanent=permanent)
    change_made(f"forgot {len(result.forgotten)} fact(s)")
    if wants_json(ctx):
        print_json(result.to_dict())
    else:
        from memvault.cli.forget_history import name_notes

        console().print(f"forgot {len(result.forgotten)} fact(s)")
        name_notes(ctx, result.notes)


@memory_group.command("restore")
@click.argument("fact_id", metavar="ID")
@click.pass_context
def restore(ctx: click.Context, fact_id: str) -> None:
    """Undo a forget: bring the fact back from its history, with the same id.

    Example: memvault memory restore k3v9qa
    """
    fact = state(ctx).vault().memory.restore(fact_id)
    change_made(f"restored {fact.id}")
    if wants_json(ctx):
        print_json({"fact": fact.to_dict()})
    else:
        console().print(f"[green]restored[/green] {fact.id}: {esc(fact.text)}")


@memory_group.command("recover")
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--all", "-a", "all_", is_flag=True, help="Every lost record.")
@click.option("--dismiss", is_flag=True, help="Drop them from the safety net instead (you "
              "deleted them on purpose).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before --dismiss.")
@click.pass_context
def recover(ctx: click.Context, ids: tuple[str, ...], all_: bool, dismiss: bool,
            yes: bool) -> None:
    """Records that vanished from Memory.md or Lessons.md without a forget (an editor or
    sync accident, or a hand deletion): list them, restore them, or dismiss them.

    memvault keeps a local, git-ignored copy of each memory file as it last wrote it
    (.memvault/safety/). With no ID this lists what vanished since; with IDs (or --all)
    it puts those lines back with their ids. Forgotten texts are never kept there.

    Example: memvault memory recover --all
    """
    vault = state(ctx).vault()
    as_json = wants_json(ctx)
    if not all_ and not ids:
        lost = vault.recovery.lost()
        if as_json:
            print_json({"lost": [it.to_dict() for it in lost]})
        elif not lost:
            console().print("nothing lost: every record memvault last saw is still there")
        else:
            from memvault.cli.render import lost_table

            lost_table(lost)
        return
    chosen = None if all_ else list(ids)
    if dismiss:
        if not as_json:
            console().print("the safety net's copy of these records will be deleted")
        if not confirm("Dismiss them?", yes=yes, action="dismiss lost records"):
            ctx.exit(1)
        result = vault.recovery.dismiss(chosen)
    else:
        result = vault.recovery.restore(chosen)
    if as_json:
        print_json(result.to_dict())
        return
    for it in result.items:
        console().print(f"{result.action} {it.id} in {esc(it.path)}: {esc(it.text)}")
    if not result.items:
        console().print(f"nothing {result.action}")


@memory_group.command("open")
@click.pass_context
def open_memory(ctx: click.Context) -> None:
    """Open Memory.md in $EDITOR (or print its path when there is no editor or terminal).

    Example: EDITOR=vim memvault memory open
    """
    vault = state(ctx).vault()
    local_root = vault.backend.capabilities.local_root
    if local_root is None:
        from memvault.errors import InvalidInput

        raise InvalidInput("memory open needs a local vault (this one is "
                           f"{vault.backend.describe()}); use `memvault memory edit`")
    path = local_root / vault.layout.memory
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if wants_json(ctx) or not editor or not os.isatty(0) or not os.isatty(1):
        if wants_json(ctx):
            print_json({"path": str(path)})
        else:
            click.echo(str(path))
        return
    import shlex
    import subprocess  # only here: `memory list` need not import it

    ctx.exit(subprocess.call([*shlex.split(editor), str(path)]))
