"""`memvault search` and `memvault index rebuild|status`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Optional

import typer

from memvault.cli.state import console, esc, notice, print_json, state, wants_json
from memvault.state_paths import INDEX

index_app = typer.Typer(help=f"The search index ({INDEX}, a rebuildable cache).\n\n"
                             "Example: memvault index rebuild",
                        no_args_is_help=True)
JSON_OPT = typer.Option(False, "--json", help="JSON output.")
PROGRESS_FROM = 300
"""Show a progress bar when at least this many files are (re)indexed on a terminal."""


def register(app: typer.Typer) -> None:
    app.command("search")(search)
    app.add_typer(index_app, name="index")


@contextmanager
def _progress(ctx: typer.Context) -> Iterator[Callable[[int, int], None] | None]:
    if state(ctx).quiet or not sys.stderr.isatty():
        yield None
        return
    bar: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "p" not in bar:
            if total < PROGRESS_FROM:
                return
            from rich.progress import Progress

            from memvault.cli.state import err_console

            bar["p"] = Progress(console=err_console(), transient=True)
            bar["p"].start()
            bar["t"] = bar["p"].add_task("indexing notes", total=total)
        bar["p"].update(bar["t"], completed=done, total=total)

    try:
        yield update
    finally:
        if "p" in bar:
            bar["p"].stop()


def _show_notices(ctx: typer.Context, notices: list[str]) -> None:
    for line in notices:
        notice(ctx, f"note: {line}")


def _highlight(snippet: str) -> str:
    from memvault.index.query import HL_CLOSE, HL_OPEN

    return esc(snippet).replace(HL_OPEN, "[bold yellow]").replace(HL_CLOSE, "[/bold yellow]")


def search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help='Words (all required), "a phrase", prefix*, -exclude, '
                                          "a OR b."),
    limit: int = typer.Option(10, "--limit", "-n", help="At most this many results."),
    path: Optional[str] = typer.Option(None, "--path", "-p", metavar="GLOB",
                                       help="Only notes whose vault path matches (e.g. 'Venues/*')."),
    tag: Optional[str] = typer.Option(None, "--tag", "-t",
                                      help="Only notes with this tag (nested tags included)."),
    memory: bool = typer.Option(False, "--memory", "-m",
                                help="Search facts, lessons and proposals (with their ids)."),
    json_out: bool = JSON_OPT,
) -> None:
    """Search every note in the vault (full text, BM25, typo-tolerant titles and tags).

    Example: memvault search "internal links" --tag plugins --limit 5
    """
    service = state(ctx).vault().search
    with _progress(ctx) as progress:
        if memory:
            if path or tag:
                from memvault.errors import UsageError

                raise UsageError("--path and --tag apply to notes, not to --memory")
            mem_hits = service.search_memory(query, limit=limit, progress=progress)
        else:
            hits = service.search(query, limit=limit, path_glob=path, tag=tag,
                                  progress=progress)
    notices = list(service.notices)
    if wants_json(ctx, json_out):
        results = [h.to_dict() for h in (mem_hits if memory else hits)]
        print_json({"query": query, "results": results, "notices": notices})
        return
    _show_notices(ctx, notices)
    out = console()
    if memory:
        if not mem_hits:
            out.print("nothing found in memory")
        for m in mem_hits:
            out.print(f"[bold]{esc(m.id)}[/bold] [dim]{esc(m.kind)} · "
                      f"{esc(m.category or 'other')} · {esc(m.path)}:{m.line}[/dim]")
            out.print(f"  {_highlight(m.snippet)}")
        return
    if not hits:
        out.print("no matching notes")
    for h in hits:
        title = f" [dim]({esc(h.title)})[/dim]" if h.title else ""
        out.print(f"[bold cyan]{esc(h.path)}[/bold cyan]{title} [dim]{h.match}, "
                  f"score {h.score:.3g}[/dim]")
        if h.snippet:
            out.print(f"  {_highlight(h.snippet)}")


@index_app.command("rebuild")
def rebuild(ctx: typer.Context, json_out: bool = JSON_OPT) -> None:
    """Delete the index and read every note again (nothing is lost: it is a cache).

    Example: memvault index rebuild
    """
    service = state(ctx).vault().search
    with _progress(ctx) as progress:
        result = service.rebuild(progress)
    if wants_json(ctx, json_out):
        print_json({"rebuilt": True, **result.to_dict(), "notices": service.notices})
        return
    _show_notices(ctx, service.notices)
    console().print(f"indexed {result.added} files in {result.seconds:.2f}s"
                    + (f"; {len(result.skipped)} could not be read (see `memvault doctor`)"
                       if result.skipped else ""))


@index_app.command("status")
def status(ctx: typer.Context, json_out: bool = JSON_OPT) -> None:
    """What the index holds, after bringing it up to date.

    Example: memvault index status --json
    """
    service = state(ctx).vault().search
    with _progress(ctx) as progress:
        result = service.refresh(progress)
    info = service.status()
    if wants_json(ctx, json_out):
        print_json({**info, "refreshed": result.to_dict(), "notices": service.notices})
        return
    _show_notices(ctx, service.notices)
    out = console()
    out.print(f"index: {esc(info['path'])} ({info['bytes'] / 1e6:.1f} MB, schema "
              f"{info['schema_version']}, {info['state']})")
    out.print(f"notes: {info['notes']}; memory records: {info['memory_records']} in "
              f"{info['memory_files']} files; updated {result.changed} just now")
    for item in info["skipped"]:
        out.print(f"[yellow]not searchable[/yellow] {esc(item['path'])}: {esc(item['problem'])}")
