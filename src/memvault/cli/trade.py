"""`memvault trade record|show|list`, `memvault journal show` and `memvault learn`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memvault.cli.base import group
from memvault.cli.state import console, esc, notice, print_json, state, wants_json, warn
from memvault.state_paths import CONFIG

trade_group = group("trade", "Validated trades: record them as notes, read them back.\n\n"
                             "Example: memvault trade record trades.json")
journal_group = group("journal", "The day notes of validated activity (Journal/).\n\n"
                                 "Example: memvault journal show 2026-11-24")


@trade_group.command("record")
@click.argument("source", metavar="FILE|-")
@click.option("--no-learn", is_flag=True,
              help="Do not run inference afterwards (e.g. when loading history).")
@click.pass_context
def record(ctx: click.Context, source: str, no_learn: bool) -> None:
    """Record validated trade(s) from FILE (JSON: one trade, an array, or JSON lines; -
    reads stdin): Trades/<hash>.md, Reflections/<hash>.md, a journal line and a `trade`
    event, all or nothing. Re-recording the same trade changes nothing. The first trade
    also creates the token and venue notes its links point to.

    Example: memvault trade record examples/trades/2026-11-24.json
    """
    from memvault.errors import InvalidInput

    if source == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"cannot read {source}: {getattr(exc, 'strerror', None) or exc}")\
                from None
    vault = state(ctx).vault()
    report = vault.trades.record_text(text, "stdin" if source == "-" else source,
                                      learn=not no_learn)
    if report.learn_error:
        warn(f"learning skipped: {report.learn_error}")
    if wants_json(ctx):
        print_json(report.to_dict())
        return
    out = console()
    for r in report.results:
        if r.status == "recorded":
            out.print(f"[green]recorded[/green] {esc(r.hash)}")
        else:
            out.print(f"{esc(r.hash)}: already recorded")
    for p in report.learned:
        proposal = p.get("proposal") or {}
        notice(ctx, f"proposed {proposal.get('id')}: {p['text']} (review with "
                    "`memvault proposals list`)")


@trade_group.command("show")
@click.argument("hash_", metavar="HASH")
@click.pass_context
def show(ctx: click.Context, hash_: str) -> None:
    """One trade note (HASH or a unique prefix of it): its properties and summary.

    Example: memvault trade show 0xcde752a9
    """
    info = state(ctx).vault().trades.show(hash_)
    if wants_json(ctx):
        print_json(info)
        return
    out = console()
    out.print(f"[bold]{esc(info['path'])}[/bold]")
    for key, value in info["properties"].items():
        if key != "tags":
            out.print(f"{esc(str(key))}: {esc(str(value))}")
    out.print()
    out.print(info["body"].strip(), markup=False)


@trade_group.command("list")
@click.option("--since", metavar="DATE",
              help="Only trades on or after this date (YYYY-MM-DD, your time zone).")
@click.pass_context
def list_trades(ctx: click.Context, since: str | None) -> None:
    """Recorded trades, oldest first.

    Example: memvault trade list --since 2026-11-24 --json
    """
    trades = state(ctx).vault().trades.list(since=since)
    if wants_json(ctx):
        print_json({"trades": trades})
        return
    if not trades:
        console().print("no trades recorded yet — `memvault trade record FILE` adds one")
        return
    for t in trades:
        console().print(f"{t['date']}  {esc(str(t['hash'])[:12])}…  {t['amount_in']} "
                        f"{esc(str(t['asset_in']))} → {t['amount_out']} "
                        f"{esc(str(t['asset_out']))}  {esc(str(t['venue']))} "
                        f"({esc(str(t['network']))})", markup=True)


@journal_group.command("show")
@click.argument("day", required=False, metavar="[DATE]")
@click.pass_context
def journal_show(ctx: click.Context, day: str | None) -> None:
    """One day of the journal: DATE as YYYY-MM-DD (default: today in your time zone).

    Example: memvault journal show 2026-11-24
    """
    info = state(ctx).vault().trades.journal_day(day)
    if wants_json(ctx):
        print_json(info)
        return
    if not info["exists"]:
        console().print(f"no journal note for {info['date']} ({esc(info['path'])})")
        return
    console().print(info["text"].rstrip(), markup=False)


@click.command("learn")
@click.pass_context
def learn(ctx: click.Context) -> None:
    """Propose familiar assets and pairs from repeated validated trades (never accepted
    silently; never risk, profit or venue preferences). Needs `learning = true`.

    Example: memvault learn --json
    """
    vault = state(ctx).vault()
    if not vault.config.learning:
        if wants_json(ctx):
            print_json({"learning": False, "results": []})
        else:
            console().print(f"learning is off (learning = false in {CONFIG})")
        return
    results = vault.learning.run()
    if wants_json(ctx):
        print_json({"learning": True, "results": [r.to_dict() for r in results]})
        return
    proposed = [r for r in results if r.status == "proposed"]
    for r in proposed:
        console().print(f"[green]proposed[/green] {esc(r.proposal.id) if r.proposal else ''}: "
                        f"{esc(r.text)}")
    if not proposed:
        console().print("nothing new to propose")
