"""Learning-loop commands: `extract`, `lesson propose|list`, `feedback`, `replay`,
`config get|set`.

Thin wrappers over vault.extraction, vault.lessons, vault.lifecycle and vault.controls.
`extract` never fails a chat app: an extractor failure exits 0 and is only described
with --verbose (never with the API key).
"""

from __future__ import annotations

import sys

import click

from memvault.cli.base import group
from memvault.cli.state import console, err_console, esc, print_json, state, wants_json

lesson_group = group("lesson", "Workflow lessons in Lessons.md.\n\n"
                               "Example: memvault lesson list --json")
config_group = group("config", "The learning, retrieval and capture controls.\n\n"
                               "Example: memvault config set learning false")


@click.command("extract")
@click.argument("source", default="-", metavar="[FILE|-]")
@click.pass_context
def extract(ctx: click.Context, source: str) -> None:
    """Find durable facts in one chat turn and propose them (or save, or nothing: see the
    `capture` control). The turn (FILE, or - for stdin) is JSON {"user", "assistant"}, a
    JSON list of messages, or plain text.

    Example: echo '{"user": "I prefer concise answers"}' | memvault extract - --json
    """
    st = state(ctx)
    if source == "-":
        data = sys.stdin.buffer.read()
        where = "stdin"
    else:
        from pathlib import Path

        from memvault.errors import NotFound

        path = Path(source)
        if not path.is_file():
            raise NotFound("no such file", path=source)
        data = path.read_bytes()
        where = source
    from memvault.services.extraction import parse_turn

    turn = parse_turn(data, where)
    result = st.vault().extraction.extract(turn)
    if result.error and st.verbose:
        err_console().print(f"extractor failed: {result.error}"
                            + (" (used the built-in rules)" if result.used_fallback else
                               " (nothing extracted)"), markup=False)
    if wants_json(ctx):
        print_json(result.to_dict())
        return
    if result.mode in ("manual", "learning-off"):
        if not st.quiet:
            console().print(f"nothing extracted (capture is {result.mode})"
                            if result.mode == "manual" else "nothing extracted (learning is off)")
        return
    for o in result.outcomes:
        if o["status"] in ("proposed", "saved"):
            console().print(f"[green]{o['status']}[/green] {esc(str(o['id']))}: "
                            f"{esc(o['text'])}")
        elif not st.quiet:
            console().print(f"[dim]{o['status']}: {esc(o['text'])}[/dim]")
    if not result.outcomes and not st.quiet:
        console().print("nothing durable found")


@lesson_group.command("propose")
@click.argument("text")
@click.option("--category", "-c", required=True,
              help="response-detail, evidence-layout or comparison-emphasis; in a vault "
                   "that records trades also approval-explanations or risk-posture.")
@click.option("--evidence", "-e", multiple=True,
              help="Event ids or trade hashes it rests on (repeatable; not needed for "
                   "risk-posture).")
@click.pass_context
def lesson_propose(ctx: click.Context, text: str, category: str,
                   evidence: tuple[str, ...]) -> None:
    """Propose the workflow lesson TEXT; its evidence must exist in the journal or as
    trades.

    Example: memvault lesson propose "Lead with the summary" -c evidence-layout -e ev-1784-9f2a
    """
    from memvault.cli.proposals import print_propose

    result = state(ctx).vault().lessons.propose(text, category, list(evidence) or None)
    print_propose(ctx, result)


@lesson_group.command("list")
@click.pass_context
def lesson_list(ctx: click.Context) -> None:
    """Accepted lessons in Lessons.md.

    Example: memvault lesson list --json
    """
    vault = state(ctx).vault()
    lessons = vault.lessons.list()
    if wants_json(ctx):
        print_json({"lessons": [item.to_dict() | {"evidence": item.evidence}
                                for item in lessons], "path": vault.layout.lessons})
        return
    if not lessons:
        console().print("no lessons yet — `memvault lesson propose` suggests one")
        return
    from rich.table import Table

    table = Table()
    for col in ("id", "category", "lesson", "status", "evidence"):
        table.add_column(col)
    for item in lessons:
        table.add_row(esc(item.id), esc(item.category_raw or "-"), esc(item.text),
                      esc(item.status),
                      esc(", ".join(item.evidence) or "-"))
    console().print(table)


@click.command("feedback")
@click.argument("record_id", metavar="ID")
@click.argument("outcome", metavar="used|ignored|overridden|corrected|failed")
@click.option("--text", help="With `corrected`: the right wording; the old record is kept as "
                             "superseded.")
@click.option("--event-id", help="Idempotency key for retries.")
@click.pass_context
def feedback(ctx: click.Context, record_id: str, outcome: str, text: str | None,
             event_id: str | None) -> None:
    """Record how fact or lesson ID fared when applied (drives its lifecycle and rank).

    Example: memvault feedback k3v9qa used
    """
    result = state(ctx).vault().lifecycle.feedback(record_id, outcome, text=text,
                                                   event_id=event_id)
    if wants_json(ctx):
        print_json(result.to_dict())
        return
    line = f"{result.record.id}: {outcome} · {result.status_before}"
    if result.status_after != result.status_before:
        line += f" -> {result.status_after}"
    console().print(esc(line) + f" · rank {result.rank:+.1f}")
    if result.replaced_by:
        console().print(f"[green]new record[/green] {esc(result.replaced_by.id)}: "
                        f"{esc(result.replaced_by.text)}")


@click.command("replay")
@click.option("--fix", is_flag=True,
              help="Write the journal's status back into drifted Markdown lines.")
@click.pass_context
def replay(ctx: click.Context, fix: bool) -> None:
    """Rebuild lifecycle state and ranks from the journal and check the Markdown agrees.

    Example: memvault replay --fix
    """
    report = state(ctx).vault().lifecycle.replay(fix=fix)
    if wants_json(ctx):
        print_json(report.to_dict())
    else:
        console().print(f"{report.records} record(s); {len(report.drift)} differ from "
                        f"the journal; {report.fixed} fixed; {len(report.ranks)} with "
                        "feedback")
        for d in report.drift:
            console().print(f"  {d.id} ({esc(d.file)}): markdown {d.markdown}, "
                            f"journal {d.journal}")
    if report.drift and not fix:
        ctx.exit(1)


@config_group.command("get")
@click.argument("key", required=False)
@click.pass_context
def config_get(ctx: click.Context, key: str | None) -> None:
    """Show control KEY (learning, retrieval or capture), or all of them.

    Example: memvault config get learning
    """
    controls = state(ctx).vault().controls
    values = controls.all() if key is None else {key: controls.get(key)}
    if wants_json(ctx):
        print_json(values)
        return
    for k, v in values.items():
        shown = ("true" if v else "false") if isinstance(v, bool) else v
        click.echo(shown if key else f"{k} = {shown}")


@config_group.command("set")
@click.argument("key")
@click.argument("value")
@click.pass_context
def config_set(ctx: click.Context, key: str, value: str) -> None:
    """Set control KEY (learning, retrieval or capture) to VALUE (true/false, or
    ask/silent/manual) in .memvault/config.toml; only its value changes, comments stay.

    Example: memvault config set learning false
    """
    new, changed = state(ctx).vault().controls.set(key, value)
    if wants_json(ctx):
        print_json({"key": key, "value": new, "changed": changed})
        return
    shown = ("true" if new else "false") if isinstance(new, bool) else new
    console().print(f"{key} = {shown}" + ("" if changed else " (unchanged)"))
