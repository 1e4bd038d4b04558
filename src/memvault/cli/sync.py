"""`memvault sync` (git) and `memvault merge-driver` (called by git, not by people)."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from memvault.cli.state import console, esc, notice, print_json, state, wants_json


def register(app: typer.Typer) -> None:
    @app.command("sync")
    def sync(
        ctx: typer.Context,
        setup: bool = typer.Option(False, "--setup", help="Install the fact-by-fact merge "
                                   "driver (.gitattributes, git config, .gitignore) and stop."),
        message: Optional[str] = typer.Option(None, "--message", "-m",
                                              help="Commit message for local changes."),
        json_out: bool = typer.Option(False, "--json", help="JSON output."),
    ) -> None:
        """Commit memvault's changes, pull with rebase, push; show what came in.

        The vault must be a git clone. Memory.md, Lessons.md and Inbox.md merge fact by
        fact; a fact edited differently on two machines is kept twice between conflict
        markers (`memvault doctor` shows where) and nothing is pushed until it is resolved.

        Example: memvault sync --setup && memvault sync
        """
        from memvault.services.sync import GitSync

        vault = state(ctx).vault()
        git = GitSync(vault)
        as_json = wants_json(ctx, json_out)
        if setup:
            report = git.setup()
            if as_json:
                print_json(report.to_dict())
            else:
                for line in report.lines():
                    console().print(esc(line))
            return
        result = git.sync(message=message)
        if as_json:
            print_json(result.to_dict())
        else:
            for line in result.lines():
                console().print(esc(line))
            for warning in result.warnings:
                notice(ctx, f"warning: {warning}")
        if result.conflicts:
            raise typer.Exit(1)

    @app.command("merge-driver", hidden=True)
    def merge_driver(
        base: str = typer.Argument(..., help="%O: the common ancestor"),
        ours: str = typer.Argument(..., help="%A: our version; the result is written here"),
        theirs: str = typer.Argument(..., help="%B: their version"),
        path: str = typer.Argument(..., help="%P: the path in the repository"),
    ) -> None:
        """git merge driver: merge memory files fact by fact (exit 1 on conflicts).

        Installed by `memvault sync --setup`; git runs it, people don't.

        Example: memvault merge-driver %O %A %B %P
        """
        from memvault.services.merge_driver import run_driver

        code = run_driver(base, ours, theirs, path)
        sys.stdout.flush()
        if code:
            raise typer.Exit(code)
