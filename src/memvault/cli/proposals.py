"""Proposal commands: `proposals list`, `accept`, `reject`, `correct`, `propose`, and the
interactive `review`.

Thin: each command parses its arguments, calls `vault.proposals`, and renders. `review`
needs a real terminal (it asks questions); without one it refuses and points to the
one-shot commands. Nothing here writes Policy.md.
"""

from __future__ import annotations

from typing import Any

import click

from memvault.cli.base import group
from memvault.cli.facts import FACT_CATEGORY_HELP
from memvault.cli.state import console, esc, print_json, state, wants_json
from memvault.cli.streams import change_made

proposals_group = group("proposals", "Proposals waiting for review in Inbox.md.\n\n"
                                     "Example: memvault proposals list --json")


def _proposals_table(proposals: list[Any]) -> None:
    from rich.table import Table

    table = Table(show_lines=False)
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("category", style="magenta", no_wrap=True)
    table.add_column("proposal")
    table.add_column("from", style="dim", no_wrap=True)
    for p in proposals:
        extra = f" [dim](evidence: {esc(', '.join(p.evidence))})[/dim]" if p.evidence else ""
        table.add_row(p.id, p.kind, esc(p.category_raw or "other"), esc(p.text) + extra,
                      esc(p.meta.get("src", "-")))
    console().print(table)


@proposals_group.command("list")
@click.pass_context
def list_proposals(ctx: click.Context) -> None:
    """Proposals waiting in Inbox.md (ticked boxes and deleted lines are applied first).

    Example: memvault proposals list --json
    """
    vault = state(ctx).vault()
    proposals = vault.proposals.list()
    if wants_json(ctx):
        print_json({"proposals": [p.to_dict() for p in proposals], "path": vault.layout.inbox})
        return
    if not proposals:
        console().print("no proposals waiting")
        return
    _proposals_table(proposals)
    console().print("[dim]memvault accept ID · reject ID · correct ID TEXT · review[/dim]")


@click.command("accept")
@click.argument("proposal_id", metavar="ID")
@click.pass_context
def accept(ctx: click.Context, proposal_id: str) -> None:
    """Accept proposal ID: it moves to Memory.md (or Lessons.md), keeping its id.

    Example: memvault accept p7f3a1
    """
    record = state(ctx).vault().proposals.accept(proposal_id)
    change_made(f"accepted as {record.id}")
    if wants_json(ctx):
        print_json({"accepted": record.to_dict()})
    else:
        console().print(f"[green]accepted[/green] {record.id}: {esc(record.text)}")
        if record.id != proposal_id:  # the text was there already, or the id was taken
            console().print(f"[dim]stored as {esc(record.id)}, not {esc(proposal_id)}[/dim]")


@click.command("reject")
@click.argument("proposal_id", metavar="ID")
@click.pass_context
def reject(ctx: click.Context, proposal_id: str) -> None:
    """Reject proposal ID: removed, and never proposed again (a content-free key is kept).

    Example: memvault reject p7f3a1
    """
    record = state(ctx).vault().proposals.reject(proposal_id)
    change_made(f"rejected {record.id}")
    if wants_json(ctx):
        print_json({"rejected": {"id": record.id, "category": record.category}})
    else:
        console().print(f"rejected {esc(record.id)}")


@click.command("correct")
@click.argument("proposal_id", metavar="ID")
@click.argument("text")
@click.option("--category", "-c", help="The category to save it under.")
@click.pass_context
def correct(ctx: click.Context, proposal_id: str, text: str, category: str | None) -> None:
    """Accept proposal ID in your own wording TEXT (it becomes an explicit record).

    Example: memvault correct p7f3a1 "I prefer short answers" --category communication
    """
    record = state(ctx).vault().proposals.correct(proposal_id, text, category)
    change_made(f"accepted as {record.id}")
    if wants_json(ctx):
        print_json({"accepted": record.to_dict(), "corrected": True})
    else:
        console().print(f"[green]accepted (corrected)[/green] {record.id}: {esc(record.text)}")


@click.command("propose")
@click.argument("text")
@click.option("--category", "-c", help=f"Facts: {FACT_CATEGORY_HELP} Lessons: see "
                                       "`memvault lesson propose -h`.")
@click.option("--kind", default="fact", show_default=True, help="fact or lesson.")
@click.option("--evidence", "-e", multiple=True,
              help="Lessons: event ids or trade hashes (repeatable).")
@click.option("--source", default="agent", show_default=True, help="Who proposes (src: key).")
@click.pass_context
def propose(ctx: click.Context, text: str, category: str | None, kind: str,
            evidence: tuple[str, ...], source: str) -> None:
    """Suggest a fact (or lesson) TEXT for the user to review; nothing is saved until
    accepted.

    Example: memvault propose "I prefer metric units" --category preference --json
    """
    vault = state(ctx).vault()
    if kind == "lesson":
        result = vault.lessons.propose(text, category or "", list(evidence) or None,
                                       source=source)
    elif evidence:
        from memvault.errors import UsageError

        raise UsageError("--evidence goes with --kind lesson")
    else:
        result = vault.proposals.propose(text, category, kind=kind, source=source)
    print_propose(ctx, result)


def print_propose(ctx: click.Context, result: Any) -> None:
    """Print what `propose` or `lesson propose` did (done by now: see `change_made`)."""
    change_made(f"proposed as {result.proposal.id}" if result.status == "proposed" else
                f"not proposed ({result.status})")
    if wants_json(ctx):
        print_json(result.to_dict())
        return
    if result.status == "proposed":
        console().print(f"[green]proposed[/green] {result.proposal.id}: {esc(result.text)} "
                        "(review with `memvault review`)")
    elif result.status == "duplicate":
        console().print(f"already known as {esc(str(result.existing_id))}; nothing proposed")
    elif result.status == "tombstoned":
        console().print("not proposed: this text was forgotten or rejected before")
    else:
        console().print(f"not proposed: {result.status}")


@click.command("review")
@click.pass_context
def review(ctx: click.Context) -> None:
    """Walk the inbox: accept, correct, reject or skip each proposal (needs a terminal).

    Example: memvault review
    """
    from memvault.cli.state import is_interactive
    from memvault.errors import NeedsConfirmation

    vault = state(ctx).vault()
    if not is_interactive():
        raise NeedsConfirmation("review asks questions and needs a terminal; use "
                                "`memvault proposals list` and `memvault accept|reject|correct "
                                "ID` instead")
    from rich.prompt import Prompt

    from memvault.cli.review import review_loop

    review_loop(vault, console(), Prompt)
