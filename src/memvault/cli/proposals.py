"""Proposal commands: `proposals list`, `accept`, `reject`, `correct`, `propose`,
and the interactive `review`.

Thin: each command parses its arguments, calls `vault.proposals`, and renders. `review`
needs a real terminal (it asks questions); without one it refuses and points to the
one-shot commands. Nothing here writes Policy.md.
"""

from __future__ import annotations

from typing import Optional

import typer

from memvault.cli.state import console, esc, print_json, state, wants_json

proposals_app = typer.Typer(help="Proposals waiting for review in Inbox.md.\n\n"
                                 "Example: memvault proposals list --json",
                            no_args_is_help=True)
JSON_OPT = typer.Option(False, "--json", help="JSON output.")


def register(app: typer.Typer) -> None:
    app.add_typer(proposals_app, name="proposals")
    app.command("accept")(accept)
    app.command("reject")(reject)
    app.command("correct")(correct)
    app.command("propose")(propose)
    app.command("review")(review)


def _proposals_table(proposals) -> None:  # type: ignore[no-untyped-def]
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


@proposals_app.command("list")
def list_proposals(ctx: typer.Context, json_out: bool = JSON_OPT) -> None:
    """Proposals waiting in Inbox.md (ticked boxes and deleted lines are applied first).

    Example: memvault proposals list --json
    """
    vault = state(ctx).vault()
    proposals = vault.proposals.list()
    if wants_json(ctx, json_out):
        print_json({"proposals": [p.to_dict() for p in proposals], "path": vault.layout.inbox})
        return
    if not proposals:
        console().print("no proposals waiting")
        return
    _proposals_table(proposals)
    console().print("[dim]memvault accept ID · reject ID · correct ID TEXT · review[/dim]")


def accept(ctx: typer.Context, proposal_id: str = typer.Argument(..., metavar="ID"),
           json_out: bool = JSON_OPT) -> None:
    """Accept a proposal: it moves to Memory.md (or Lessons.md), keeping its id.

    Example: memvault accept p7f3a1
    """
    record = state(ctx).vault().proposals.accept(proposal_id)
    if wants_json(ctx, json_out):
        print_json({"accepted": record.to_dict()})
    else:
        console().print(f"[green]accepted[/green] {record.id}: {esc(record.text)}")


def reject(ctx: typer.Context, proposal_id: str = typer.Argument(..., metavar="ID"),
           json_out: bool = JSON_OPT) -> None:
    """Reject a proposal: removed, and never proposed again (a content-free key is kept).

    Example: memvault reject p7f3a1
    """
    record = state(ctx).vault().proposals.reject(proposal_id)
    if wants_json(ctx, json_out):
        print_json({"rejected": {"id": record.id, "category": record.category}})
    else:
        console().print(f"rejected {record.id}")


def correct(ctx: typer.Context, proposal_id: str = typer.Argument(..., metavar="ID"),
            text: str = typer.Argument(..., help="Your wording of the fact."),
            category: Optional[str] = typer.Option(None, "--category", "-c"),
            json_out: bool = JSON_OPT) -> None:
    """Accept a proposal with your wording (it becomes an explicit record).

    Example: memvault correct p7f3a1 "I prefer short answers" --category communication
    """
    record = state(ctx).vault().proposals.correct(proposal_id, text, category)
    if wants_json(ctx, json_out):
        print_json({"accepted": record.to_dict(), "corrected": True})
    else:
        console().print(f"[green]accepted (corrected)[/green] {record.id}: {esc(record.text)}")


def propose(ctx: typer.Context, text: str = typer.Argument(..., help="The proposed fact."),
            category: Optional[str] = typer.Option(None, "--category", "-c"),
            kind: str = typer.Option("fact", "--kind", help="fact or lesson."),
            evidence: Optional[list[str]] = typer.Option(None, "--evidence", "-e",
                                                         help="Lessons: event ids or trade "
                                                              "hashes (repeatable)."),
            source: str = typer.Option("agent", "--source", help="Who proposes (src: key)."),
            json_out: bool = JSON_OPT) -> None:
    """Suggest a fact (or lesson) for the user to review; nothing is saved until accepted.

    Example: memvault propose "I prefer metric units" --category preference --json
    """
    vault = state(ctx).vault()
    if kind == "lesson":
        result = vault.lessons.propose(text, category or "", evidence, source=source)
    elif evidence:
        from memvault.errors import UsageError

        raise UsageError("--evidence goes with --kind lesson")
    else:
        result = vault.proposals.propose(text, category, kind=kind, source=source)
    _print_propose(ctx, result, json_out)


def _print_propose(ctx: typer.Context, result, json_out: bool) -> None:  # type: ignore[no-untyped-def]
    if wants_json(ctx, json_out):
        print_json(result.to_dict())
        return
    if result.status == "proposed":
        console().print(f"[green]proposed[/green] {result.proposal.id}: {esc(result.text)} "
                        "(review with `memvault review`)")
    elif result.status == "duplicate":
        console().print(f"already known as {result.existing_id}; nothing proposed")
    elif result.status == "tombstoned":
        console().print("not proposed: this text was forgotten or rejected before")
    else:
        console().print(f"not proposed: {result.status}")


def review(ctx: typer.Context) -> None:
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
