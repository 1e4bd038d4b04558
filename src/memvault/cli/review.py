"""The interactive `memvault review` loop (rich prompts), kept apart from the command
wiring. It only calls ProposalService (accept / correct / reject); skip and quit write
nothing. It must never run without a terminal (the command checks first)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memvault.cli.state import esc
from memvault.errors import VaultError

if TYPE_CHECKING:
    from rich.console import Console

    from memvault.services.vault import Vault

CHOICES = {"a": "accept", "c": "correct", "r": "reject", "s": "skip", "q": "quit"}


def review_loop(vault: Vault, console: Console, prompt: Any) -> dict[str, int]:
    proposals = vault.proposals.list()
    counts = {"accepted": 0, "corrected": 0, "rejected": 0, "skipped": 0}
    if not proposals:
        console.print("no proposals waiting — nothing to review")
        return counts
    console.print(f"[bold]{len(proposals)} proposal(s) to review[/bold]  "
                  "[dim]a accept · c correct · r reject · s skip · q quit[/dim]")
    for n, p in enumerate(proposals, 1):
        console.print()
        console.print(f"[dim]{n}/{len(proposals)}[/dim] [cyan]{esc(p.id)}[/cyan] "
                      f"[magenta]\\[{esc(p.category_raw or 'other')}][/magenta] "
                      f"[dim]{p.kind} from {esc(p.meta.get('src', '-'))}[/dim]")
        console.print(f"  {esc(p.text)}")
        if p.evidence:
            console.print(f"  [dim]evidence: {esc(', '.join(p.evidence))}[/dim]")
        choice = prompt.ask("accept (a) / correct (c) / reject (r) / skip (s) / quit (q)",
                            choices=list(CHOICES), default="s", console=console)
        action = CHOICES[choice]
        if action == "quit":
            break
        try:
            if action == "accept":
                vault.proposals.accept(p.id)
                counts["accepted"] += 1
                console.print("[green]accepted[/green]")
            elif action == "reject":
                vault.proposals.reject(p.id)
                counts["rejected"] += 1
                console.print("rejected")
            elif action == "correct":
                text = prompt.ask("Your wording", default=p.text, console=console)
                cat = prompt.ask("Category", default=p.category_raw or "other",
                                 console=console)
                vault.proposals.correct(p.id, text,
                                        None if cat == (p.category_raw or "other") else cat)
                counts["corrected"] += 1
                console.print("[green]accepted (corrected)[/green]")
            else:
                counts["skipped"] += 1
        except VaultError as exc:  # e.g. a bad category: say so and move on
            console.print(f"[red]error:[/red] {esc(str(exc))} (left in the inbox)")
    console.print()
    console.print(", ".join(f"{v} {k}" for k, v in counts.items()))
    return counts
