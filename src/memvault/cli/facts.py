"""Top-level fact commands: `remember` and `forget`."""

from __future__ import annotations

import click

from memvault.cli.state import (
    collector_paused,
    confirm,
    console,
    notice,
    print_json,
    printable,
    state,
    wants_json,
    warn,
)
from memvault.cli.streams import change_made

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
    with collector_paused():
        result = state(ctx).vault().memory.remember(text, category)
    f = result.fact
    # saved: from here an unwritable stdout loses the report only (exit 0, see cli.streams)
    change_made(f"{'remembered' if result.created else 'already remembered'} as "
                f"{printable(f.id)}")
    if wants_json(ctx):
        print_json(result.to_dict())
        return
    # click, not rich: the one line a cold `remember` prints is not worth importing rich
    # (~15 ms); colours are dropped where stdout is not a terminal, as rich does.
    if result.created:
        click.echo(f"{click.style('remembered', fg='green')} {printable(f.id)}: "
                   f"{printable(f.text)} {click.style(f'[{printable(f.category)}]', fg='magenta')}")
    else:
        click.echo(f"already remembered as {printable(f.id)}: {printable(f.text)}")
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
@click.option("--rewrite-history", "rewrite_history", is_flag=True,
              help="With --permanent, in a git clone: also rewrite this clone's git history "
                   "without the words (asks first; then `memvault sync --force-with-lease`). "
                   "Also for words forgotten earlier: give them as TEXT_OR_ID.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def forget(ctx: click.Context, query: str, permanent: bool, rewrite_history: bool,
           yes: bool) -> None:
    """Forget the facts whose id is TEXT_OR_ID, or whose text contains it
    (case-insensitive); shows what it will forget and asks first.

    A content-free tombstone stops the same text from being proposed again. With
    --permanent, an id only the history still holds is found there and erased too;
    memvault then names the notes that still hold the words (it never edits notes) and,
    in a git clone, says how many commits still hold them.

    Example: memvault forget "Aurora" --permanent --rewrite-history
    """
    from memvault.cli.forget_history import after_forget, name_notes, words_only

    if rewrite_history and not permanent:
        from memvault.errors import UsageError

        raise UsageError("--rewrite-history goes with --permanent")
    vault = state(ctx).vault()
    matches = vault.memory.find_matches(query, history=permanent)
    as_json = wants_json(ctx)
    if not matches:
        if rewrite_history:  # words forgotten earlier, still in git history
            words_only(ctx, vault, query, yes=yes)
            return
        from memvault.errors import NotFound

        raise NotFound(f"no fact matches {query!r}", path=vault.layout.memory)
    if not as_json:
        from memvault.cli.render import facts_table

        facts_table(matches, title="Will forget")
    if not confirm(f"Forget {len(matches)} fact(s){' permanently' if permanent else ''}?",
                   yes=yes, action="forget"):
        ctx.exit(1)
    texts = []
    if permanent:
        from memvault.services.history import texts_of

        texts = texts_of(vault, [f.id for f in matches]) or [f.text for f in matches]
    result = vault.memory.forget([f.id for f in matches], permanent=permanent)
    change_made(f"forgot {len(result.forgotten)} fact(s)")
    if not as_json:
        console().print(f"forgot {len(result.forgotten)} fact(s)"
                        + (" permanently" if permanent else
                           " (history kept: `memvault memory restore ID` undoes it)"))
    name_notes(ctx, result.notes)
    history = after_forget(ctx, vault, texts, rewrite=rewrite_history, yes=yes) \
        if permanent else None
    if as_json:
        print_json({**result.to_dict(), **({"history": history} if history else {})})
