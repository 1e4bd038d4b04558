"""`memvault sync` (git) and `memvault merge-driver` (called by git, not by people)."""

from __future__ import annotations

import sys

import click

from memvault.cli.state import console, esc, notice, print_json, state, wants_json


@click.command("sync")
@click.option("--setup", is_flag=True, help="Set this clone up to merge memory files safely "
              "(.gitattributes, .git/info/attributes, the merge driver, .gitignore) and stop.")
@click.option("--message", "-m", help="Commit message for local changes.")
@click.option("--force-with-lease", "force_with_lease", is_flag=True,
              help="After `forget --rewrite-history`: replace the remote's history with this "
                   "clone's (only if the remote is still where the rewrite started).")
@click.pass_context
def sync(ctx: click.Context, setup: bool, message: str | None,
         force_with_lease: bool) -> None:
    """Commit memvault's changes, pull with rebase, push; show what came in.

    The vault must be a git clone. Memory.md, Lessons.md and Inbox.md merge fact by
    fact; a fact edited differently on two machines is kept twice between conflict
    markers (`memvault resolve` settles it) and nothing is pushed until it is resolved.
    Also finishes a rebase or merge that stopped on memory files, and says what was
    committed locally, what was pushed and what still waits. Exit 1 when something
    needs you (a conflict, an unreachable remote, a conflict in your own notes).

    Example: memvault sync --setup && memvault sync
    """
    from memvault.services.sync import GitSync

    vault = state(ctx).vault()
    git = GitSync(vault)
    as_json = wants_json(ctx)
    if setup:
        report = git.setup()
        if as_json:
            print_json(report.to_dict())
        elif not state(ctx).quiet:
            for line in report.lines():
                console().print(esc(line))
        return
    result = git.sync(message=message, force_with_lease=force_with_lease)
    if as_json:
        print_json(result.to_dict())
    else:
        for warning in result.warnings:
            notice(ctx, f"warning: {warning}")
        for line in result.lines():
            console().print(esc(line))
    if result.needs_attention:
        ctx.exit(1)


@click.command("merge-driver", hidden=True)
@click.argument("base")
@click.argument("ours")
@click.argument("theirs")
@click.argument("path")
def merge_driver(base: str, ours: str, theirs: str, path: str) -> None:
    """git merge driver: merge memory files fact by fact (exit 1 on conflicts). BASE (%O)
    is the common ancestor, OURS (%A) our version and where the result is written,
    THEIRS (%B) their version, PATH (%P) the path in the repository.

    Installed by `memvault sync --setup`; git runs it, people don't.

    Example: memvault merge-driver %O %A %B %P
    """
    from memvault.services.merge_driver import run_driver

    code = run_driver(base, ours, theirs, path)
    sys.stdout.flush()
    if code:
        sys.exit(code)
