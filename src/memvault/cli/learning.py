"""Learning-loop commands: `extract`, `lesson propose|list`, `feedback`, `replay`,
`config get|set`.

Thin wrappers over vault.extraction, vault.lessons, vault.lifecycle and vault.controls.
`extract` never fails a chat app: an extractor failure exits 0 and is only described
with --verbose (never with the API key).
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from memvault.cli.state import console, err_console, esc, print_json, state, wants_json

JSON_OPT = typer.Option(False, "--json", help="JSON output.")
lesson_app = typer.Typer(help="Workflow lessons in Lessons.md.\n\n"
                         "Example: memvault lesson list --json", no_args_is_help=True)
config_app = typer.Typer(help="The learning, retrieval and capture controls.\n\n"
                         "Example: memvault config set learning false",
                         no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("extract")(extract)
    app.add_typer(lesson_app, name="lesson")
    app.command("feedback")(feedback)
    app.command("replay")(replay)
    app.add_typer(config_app, name="config")


def extract(ctx: typer.Context,
            source: str = typer.Argument("-", metavar="[FILE|-]",
                                         help="A chat turn: JSON {\"user\", \"assistant\"}, a "
                                              "JSON list of messages, or plain text."),
            json_out: bool = JSON_OPT) -> None:
    """Find durable facts in one chat turn and propose them (or save, or nothing: capture).

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
    if wants_json(ctx, json_out):
        print_json(result.to_dict())
        return
    if result.mode in ("manual", "learning-off"):
        if not st.quiet:
            console().print(f"nothing extracted (capture is {result.mode})"
                            if result.mode == "manual" else "nothing extracted (learning is off)")
        return
    for o in result.outcomes:
        if o["status"] in ("proposed", "saved"):
            console().print(f"[green]{o['status']}[/green] {o['id']}: {esc(o['text'])}")
        elif not st.quiet:
            console().print(f"[dim]{o['status']}: {esc(o['text'])}[/dim]")
    if not result.outcomes and not st.quiet:
        console().print("nothing durable found")


@lesson_app.command("propose")
def lesson_propose(
    ctx: typer.Context,
    text: str = typer.Argument(..., help="The lesson."),
    category: str = typer.Option(..., "--category", "-c",
                                 help="response-detail, evidence-layout, "
                                      "approval-explanations, comparison-emphasis or "
                                      "risk-posture."),
    evidence: Optional[list[str]] = typer.Option(None, "--evidence", "-e",
                                                 help="Event ids or trade hashes it rests on "
                                                      "(repeatable; not needed for "
                                                      "risk-posture)."),
    json_out: bool = JSON_OPT,
) -> None:
    """Propose a workflow lesson; its evidence must exist in the journal or as trades.

    Example: memvault lesson propose "Lead with the fill price" -c evidence-layout -e 0xabc
    """
    from memvault.cli.proposals import _print_propose

    result = state(ctx).vault().lessons.propose(text, category, evidence)
    _print_propose(ctx, result, json_out)


@lesson_app.command("list")
def lesson_list(ctx: typer.Context, json_out: bool = JSON_OPT) -> None:
    """Accepted lessons in Lessons.md.

    Example: memvault lesson list --json
    """
    vault = state(ctx).vault()
    lessons = vault.lessons.list()
    if wants_json(ctx, json_out):
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
        table.add_row(item.id, esc(item.category_raw or "-"), esc(item.text), item.status,
                      esc(", ".join(item.evidence) or "-"))
    console().print(table)


def feedback(ctx: typer.Context,
             record_id: str = typer.Argument(..., metavar="ID"),
             outcome: str = typer.Argument(..., metavar="used|ignored|overridden|corrected|"
                                                        "failed"),
             text: Optional[str] = typer.Option(None, "--text",
                                                help="With `corrected`: the right wording; the "
                                                     "old record is kept as superseded."),
             event_id: Optional[str] = typer.Option(None, "--event-id",
                                                    help="Idempotency key for retries."),
             json_out: bool = JSON_OPT) -> None:
    """Record how a fact or lesson fared when applied (drives its lifecycle and rank).

    Example: memvault feedback k3v9qa used
    """
    result = state(ctx).vault().lifecycle.feedback(record_id, outcome, text=text,
                                                   event_id=event_id)
    if wants_json(ctx, json_out):
        print_json(result.to_dict())
        return
    line = f"{result.record.id}: {outcome} · {result.status_before}"
    if result.status_after != result.status_before:
        line += f" -> {result.status_after}"
    console().print(esc(line) + f" · rank {result.rank:+.1f}")
    if result.replaced_by:
        console().print(f"[green]new record[/green] {result.replaced_by.id}: "
                        f"{esc(result.replaced_by.text)}")


def replay(ctx: typer.Context,
           fix: bool = typer.Option(False, "--fix", help="Write the journal's status back "
                                                         "into drifted Markdown lines."),
           json_out: bool = JSON_OPT) -> None:
    """Rebuild lifecycle state and ranks from the journal and check the Markdown agrees.

    Example: memvault replay --fix
    """
    report = state(ctx).vault().lifecycle.replay(fix=fix)
    if wants_json(ctx, json_out):
        print_json(report)
        return
    console().print(f"{report['records']} record(s); {len(report['drift'])} differ from the "
                    f"journal; {report['fixed']} fixed; {len(report['ranks'])} with feedback")
    for d in report["drift"]:
        console().print(f"  {d['id']} ({esc(d['file'])}): markdown {d['markdown']}, "
                        f"journal {d['journal']}")
    if report["drift"] and not fix:
        raise typer.Exit(1)


@config_app.command("get")
def config_get(ctx: typer.Context,
               key: Optional[str] = typer.Argument(None, help="learning, retrieval or capture "
                                                              "(omit for all)."),
               json_out: bool = JSON_OPT) -> None:
    """Show a control (or all of them).

    Example: memvault config get learning
    """
    controls = state(ctx).vault().controls
    values = controls.all() if key is None else {key: controls.get(key)}
    if wants_json(ctx, json_out):
        print_json(values)
        return
    for k, v in values.items():
        shown = ("true" if v else "false") if isinstance(v, bool) else v
        typer.echo(shown if key else f"{k} = {shown}")


@config_app.command("set")
def config_set(ctx: typer.Context,
               key: str = typer.Argument(..., help="learning, retrieval or capture."),
               value: str = typer.Argument(..., help="true/false, or ask/silent/manual."),
               json_out: bool = JSON_OPT) -> None:
    """Change a control in .memvault/config.toml (only that line is edited).

    Example: memvault config set learning false
    """
    new, changed = state(ctx).vault().controls.set(key, value)
    if wants_json(ctx, json_out):
        print_json({"key": key, "value": new, "changed": changed})
        return
    shown = ("true" if new else "false") if isinstance(new, bool) else new
    console().print(f"{key} = {shown}" + ("" if changed else " (unchanged)"))
