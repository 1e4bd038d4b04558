"""Human rendering of records (rich tables); JSON goes through `state.print_json`."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from typing import Any

from memvault.cli.state import console, esc
from memvault.core.records import Fact


def when(ts: int | None) -> str:
    if not ts:
        return "-"
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%d %H:%M")


def facts_table(facts: Iterable[Fact], title: str | None = None) -> None:
    from rich.table import Table

    table = Table(title=title, show_lines=False, expand=False)
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("category", style="magenta", no_wrap=True)
    table.add_column("fact")
    table.add_column("updated (UTC)", style="dim", no_wrap=True)
    for f in facts:
        cat = f.category_raw or "other"
        flags = []
        if f.provisional:
            flags.append("no id yet")
        if f.readonly_reason:
            flags.append("read-only")
        if f.meta.get("status") == "superseded":
            flags.append("superseded")
        text = esc(f.text) + (f" [dim]({', '.join(flags)})[/dim]" if flags else "")
        table.add_row(esc(f.id), esc(cat), text, when(f.updated))
    console().print(table)


def fact_detail(fact: Fact, history: list[dict[str, Any]]) -> None:
    c = console()
    c.print(f"[bold cyan]{esc(fact.id)}[/]  [magenta]{esc(fact.category_raw or 'other')}[/]")
    c.print(esc(fact.text))
    c.print(f"[dim]updated {when(fact.updated)} · line {fact.line} · {fact.authority}"
            f" · {fact.status}[/dim]")
    extra = {k: v for k, v in fact.meta.items() if k not in ("id", "updated")}
    if extra:
        c.print("[dim]metadata: " + esc(" ".join(f"{k}:{v}" for k, v in extra.items())) + "[/dim]")
    if fact.readonly_reason:
        c.print(f"[yellow]read-only: {esc(fact.readonly_reason)}[/yellow]")
    history_lines(history)


def history_lines(history: list[dict[str, Any]]) -> None:
    c = console()
    if not history:
        c.print("[dim]no recorded history[/dim]")
        return
    c.print("[bold]history[/bold]")
    for ev in history:
        line = f"  {when(ev.get('ts'))}  {ev.get('type')}"
        detail = f"  {esc(repr(ev['text']))}" if ev.get("text") else ""
        if ev.get("previous_category"):
            detail += f"  [dim]category {esc(str(ev['previous_category']))} → " \
                      f"{esc(str(ev.get('category')))}[/dim]"
        if ev.get("via") == "doctor":  # appended by `doctor --fix` after an interrupted write
            detail += "  [dim](recovered by doctor)[/dim]"
        c.print(esc(line) + detail)


def lost_table(items: Iterable[Any]) -> None:
    """Records the safety net kept after they vanished (`memory recover`)."""
    from rich.table import Table

    table = Table(title="vanished without a forget", expand=False)
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("file", style="magenta", no_wrap=True)
    table.add_column("line as it was")
    table.add_column("noticed (UTC)", style="dim", no_wrap=True)
    for it in items:
        table.add_row(esc(it.id), esc(it.path), esc(it.lines), when(it.noticed))
    console().print(table)
    console().print("[dim]`memvault memory recover ID…` or `--all` puts them back; "
                    "`--dismiss` if you deleted them on purpose[/dim]")
