"""What `memvault forget --permanent` says and does about copies of the words it cannot
remove itself: notes that still hold them (named, one line each), this clone's git
commits (counted; rewritten with `--rewrite-history`), and a GitHub repository's earlier
commits (which memvault cannot rewrite)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from memvault.cli.state import (
    confirm,
    console,
    notice,
    print_json,
    printable,
    wants_json,
    warn,
)

if TYPE_CHECKING:
    from memvault.services.forget_notes import NotesHolding
    from memvault.services.history import GitHistory
    from memvault.services.vault import Vault

ELSEWHERE = ("other clones, forks and the copies GitHub keeps (cached views, pull-request "
             "refs) still hold them: see docs/multi-machine.md")


NOTES_SHOWN = 10


def name_notes(ctx: click.Context, notes: NotesHolding | None) -> None:
    """After a permanent forget, unless --json (the result carries the paths): the notes
    that still hold the words, one line each (at most `NOTES_SHOWN`), never the words."""
    if notes is None or not notes.total or wants_json(ctx):
        return
    warn(f"{notes.total} note(s) still hold these words; memvault never edits notes, "
         "so edit them to remove the words:")
    for path in notes.paths[:NOTES_SHOWN]:
        click.echo(f"  {printable(path)}", err=True)
    if notes.total > NOTES_SHOWN:
        click.echo(f"  ... and {notes.total - NOTES_SHOWN} more (--json lists up to "
                   f"{len(notes.paths)})", err=True)


def after_forget(ctx: click.Context, vault: Vault, texts: list[str], *, rewrite: bool,
                 yes: bool) -> dict[str, Any] | None:
    """After a permanent forget: say where the words still are; rewrite if asked."""
    if vault.backend.capabilities.remote_history:
        warn(f"earlier commits of {vault.backend.describe()} still hold these words; "
             "memvault cannot rewrite that repository's history (see docs/multi-machine.md)")
        return {"commits": None, "rewritten": False, "where": "remote"}
    from memvault.services.history import GitHistory

    history = GitHistory(vault)
    if not history.available():
        return None
    count = history.commits_holding(texts)
    if count and rewrite:
        return _rewrite(ctx, history, texts, count, yes)
    if count:
        notice(ctx, f"the words are still in {count} commit(s) of this clone's git history "
                    "(and wherever it was pushed): `memvault forget \"<the words>\" "
                    "--permanent --rewrite-history` rewrites it (it asks first)")
    return {"commits": count, "rewritten": False}


def words_only(ctx: click.Context, vault: Vault, words: str, *, yes: bool) -> None:
    """`forget WORDS --permanent --rewrite-history` for words no fact holds any more."""
    from memvault.errors import InvalidInput, NotFound
    from memvault.services.history import GitHistory

    history = GitHistory(vault)
    if not history.available():
        raise InvalidInput("--rewrite-history works on a vault that is a git clone")
    count = history.commits_holding([words])
    if count == 0:
        raise NotFound(f"no fact matches {words!r}, and no commit of this clone's history "
                       "holds those words", path=vault.layout.memory)
    data = _rewrite(ctx, history, [words], count, yes)
    if wants_json(ctx):
        print_json({"forgotten": [], "permanent": True, "history": data})


def _rewrite(ctx: click.Context, history: GitHistory, texts: list[str], count: int,
             yes: bool) -> dict[str, Any]:
    if not confirm(f"Rewrite this clone's git history to remove the words from {count} "
                   f"commit(s)? It cannot be undone.", yes=yes, action="rewrite git history"):
        ctx.exit(1)
    report = history.rewrite(texts)
    if not wants_json(ctx):
        out = console()
        out.print(f"rewrote this clone's git history: the words were in "
                  f"{report.commits_before} commit(s), now in {report.commits_after}")
        if report.remote:
            out.print(f"{report.remote} still has them: `memvault sync --force-with-lease` "
                      "replaces its history with this one")
        out.print(ELSEWHERE)
    return {"commits": report.commits_before, "rewritten": True, **report.to_dict()}
