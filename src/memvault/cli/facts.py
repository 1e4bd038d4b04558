"""Top-level fact commands: `remember` and `forget`."""

from __future__ import annotations

from typing import Optional

import typer

from memvault.cli.state import (confirm, console, esc, notice, print_json, state, warn,
                                wants_json)


def register(app: typer.Typer) -> None:
    @app.command("remember")
    def remember(
        ctx: typer.Context,
        text: str = typer.Argument(..., help="The fact, in the user's words."),
        category: Optional[str] = typer.Option(None, "--category", "-c",
                                               help="identity, preference, project, "
                                                    "instruction, other, communication, "
                                                    "presentation, workflow or research."),
        json_out: bool = typer.Option(False, "--json", help="JSON output."),
    ) -> None:
        """Save an explicit fact to Memory.md at once (no review: you are the authority).

        Saving the same text again is a no-op that reports the existing id.

        Example: memvault remember "My main project is Aurora" --category project
        """
        result = state(ctx).vault().memory.remember(text, category)
        if wants_json(ctx, json_out):
            print_json(result.to_dict())
            return
        f = result.fact
        if result.created:
            console().print(f"[green]remembered[/green] {f.id}: {esc(f.text)} "
                            f"[magenta]\\[{esc(f.category)}][/magenta]")
        else:
            console().print(f"already remembered as {f.id}: {esc(f.text)}")
        for near, score in result.near_duplicates:
            warn(f"similar to {near.id} ({score:.0f}%): {near.text!r} — "
                 f"`memvault forget {near.id}` if one is enough")
        if result.lifted_tombstone:
            notice(ctx, "this text had been forgotten before; remembering it again lifted "
                        "that tombstone")

    @app.command("forget")
    def forget(
        ctx: typer.Context,
        query: str = typer.Argument(..., help="A fact id, or text contained in the facts "
                                              "to forget (case-insensitive)."),
        permanent: bool = typer.Option(False, "--permanent",
                                       help="Also erase the facts' history: no copy of the "
                                            "text is left in the vault."),
        yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
        json_out: bool = typer.Option(False, "--json", help="JSON output."),
    ) -> None:
        """Forget facts by id or text; shows what it will forget and asks first.

        A content-free tombstone stops the same text from being proposed again.

        Example: memvault forget "Aurora" --yes
        """
        vault = state(ctx).vault()
        matches = vault.memory.find_matches(query)
        as_json = wants_json(ctx, json_out)
        if not matches:
            from memvault.errors import NotFound

            raise NotFound(f"no fact matches {query!r}", path=vault.layout.memory)
        if not as_json:
            from memvault.cli.render import facts_table

            facts_table(matches, title="Will forget")
        if not confirm(f"Forget {len(matches)} fact(s){' permanently' if permanent else ''}?",
                       yes=yes, action="forget"):
            raise typer.Exit(1)
        result = vault.memory.forget([f.id for f in matches], permanent=permanent)
        if as_json:
            print_json(result.to_dict())
        else:
            console().print(f"forgot {len(result.forgotten)} fact(s)"
                            + (" permanently" if permanent else
                               " (history kept: `memvault memory restore ID` undoes it)"))
