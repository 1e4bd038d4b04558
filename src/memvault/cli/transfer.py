"""`memvault export` and `memvault import`. Format and rules: services/transfer.py and
docs/learning.md. Import validates the whole file before writing anything; `--dry-run`
only shows the plan."""

from __future__ import annotations

import sys

import click

from memvault.cli.state import console, esc, print_json, state, wants_json

PROGRESS_MIN = 50


@click.command("export")
@click.option("--output", "-o", metavar="FILE", help="Write to this file (default: stdout).")
@click.pass_context
def export(ctx: click.Context, output: str | None) -> None:
    """Export facts, preferences, lessons, proposals and controls as versioned JSON (v2).

    The export is JSON already: on stdout it is the one document `--json` asks for; with
    --output and --json, stdout gets {"output": FILE, "records": N}. Forgotten text is
    never exported (only content-free tombstone keys).

    Example: memvault export --output memory-backup.json
    """
    import json

    data = state(ctx).vault().transfer.export()
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    from pathlib import Path

    path = Path(output)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    count = sum(len(data[k]) for k in ("facts", "preferences", "lessons", "proposals"))
    if wants_json(ctx):
        print_json({"output": str(path), "records": count})
    elif not state(ctx).quiet:
        console().print(f"exported {count} record(s) to {esc(str(path))}")


@click.command("import")
@click.argument("source", metavar="FILE")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--with-controls", is_flag=True,
              help="Also restore the export's controls (learning, retrieval, capture); "
                   "without it they are only reported.")
@click.pass_context
def import_(ctx: click.Context, source: str, dry_run: bool, with_controls: bool) -> None:
    """Import memories from FILE (a memvault export, v1 or v2, or a Markdown bullet list;
    - for stdin); inferred or foreign items arrive as proposals for review, never ticked.

    Example: memvault import saved-memories.md --dry-run
    """
    if source == "-":
        data, where = sys.stdin.buffer.read(), "stdin"
    else:
        from pathlib import Path

        from memvault.errors import NotFound

        path = Path(source)
        if not path.is_file():
            raise NotFound("no such file", path=source)
        data, where = path.read_bytes(), source
    st = state(ctx)
    service = st.vault().transfer
    plan = service.plan(data, where, with_controls=with_controls)
    as_json = wants_json(ctx)
    if not dry_run and plan.changes:
        if len(plan.actions) >= PROGRESS_MIN and sys.stderr.isatty() and not as_json:
            from rich.progress import Progress

            from memvault.cli.state import err_console

            with Progress(console=err_console(), transient=True) as bar:
                task = bar.add_task("importing", total=len(plan.actions))
                service.apply(plan, progress=lambda done, total: bar.update(task,
                                                                             completed=done))
        else:
            service.apply(plan)
    if as_json:
        print_json(plan.to_dict() | {"dry_run": dry_run})
        return
    verb = "would add" if dry_run else "added"
    report = plan.to_dict()
    if not plan.changes:
        console().print(f"nothing to import ({len(plan.skipped)} already present or skipped)")
    else:
        from memvault.core.kinds import all_kinds

        files = {k.collection: k.file_name + (" (as proposals)" if k.inbox else "")
                 for k in all_kinds()}
        for target, count in report["added"].items():
            console().print(f"{verb} {count} to {files[target]}")
        for key, value in plan.controls.items():
            console().print(f"{'would set' if dry_run else 'set'} {key} = {value}")
        if plan.tombstone_keys:
            console().print(f"{verb} {len(plan.tombstone_keys)} tombstone key(s)")
    for key, value in plan.controls_not_applied.items():
        console().print(f"[dim]not applied: {key} = {esc(str(value))} (pass --with-controls "
                        "to restore the export's controls)[/dim]")
    if plan.skipped and not st.quiet:
        console().print(f"[dim]skipped {len(plan.skipped)}[/dim]")
    if dry_run and plan.actions:
        for a in plan.actions[:20]:
            console().print(f"  + {a.target}: {esc(a.text)}")
