"""Top-level fact commands: `remember` and `forget`."""

from __future__ import annotations

import click

from memvault.cli.state import confirm, console, esc, notice, print_json, state, warn, wants_json

FACT_CATEGORY_HELP = ("identity, preference, project, instruction, other, communication, "
                      "presentation, workflow or research.")


@click.command("remember")
@click.argument("text")
@click.option("--category", "-c", help=FACT_CATEGORY_HELP)
@click.pass_context
def remember(ctx: click.Context, text: str, category: str | None) -> None:
    """Save TEXT, a fact in the user's words, to Memory.md at once (no review: you are the
    authority).

    Saving the same text again is a no-op that reports the existing id.

    Example: memvault remember "My main project is Aurora" --category project
    """
    result = state(ctx).vault().memory.remember(text, category)
    if wants_json(ctx):
        print_json(result.to_dict())
        return
    f = result.fact
    if result.created:
        console().print(f"[green]remembered[/green] {esc(f.id)}: {esc(f.text)} "
                        f"[magenta]\\[{esc(f.category)}][/magenta]")
    else:
        console().print(f"already remembered as {esc(f.id)}: {esc(f.text)}")
    for near, score in result.near_duplicates:
        warn(f"similar to {near.id} ({score:.0f}%): {near.text!r} — "
             f"`memvault forget {near.id}` if one is enough")
    if result.lifted_tombstone:
        notice(ctx, "this text had been forgotten before; remembering it again lifted "
                    "that tombstone")


@click.command("forget")
@click.argument("query", metavar="TEXT_OR_ID")
@click.option("--permanent", is_flag=True,
              help="Also erase the facts' history: no copy of the text is left in the vault.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def forget(ctx: click.Context, query: str, permanent: bool, yes: bool) -> None:
    """Forget the facts whose id is TEXT_OR_ID, or whose text contains it
    (case-insensitive); shows what it will forget and asks first.

    A content-free tombstone stops the same text from being proposed again. With
    --permanent, an id only the history still holds is found there and erased too.

    Example: memvault forget "Aurora" --yes
    """
    vault = state(ctx).vault()
    matches = vault.memory.find_matches(query, history=permanent)
    as_json = wants_json(ctx)
    if not matches:
        from memvault.errors import NotFound

        raise NotFound(f"no fact matches {query!r}", path=vault.layout.memory)
    if not as_json:
        from memvault.cli.render import facts_table

        facts_table(matches, title="Will forget")
    if not confirm(f"Forget {len(matches)} fact(s){' permanently' if permanent else ''}?",
                   yes=yes, action="forget"):
        ctx.exit(1)
    result = vault.memory.forget([f.id for f in matches], permanent=permanent)
    if as_json:
        print_json(result.to_dict())
    else:
        console().print(f"forgot {len(result.forgotten)} fact(s)"
                        + (" permanently" if permanent else
                           " (history kept: `memvault memory restore ID` undoes it)"))
