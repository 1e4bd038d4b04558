"""`memvault search` and `memvault index rebuild|status`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from memvault.cli.base import group
from memvault.cli.state import console, esc, notice, print_json, state, wants_json
from memvault.state_paths import INDEX

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

index_group = group("index", f"The search index ({INDEX}, a rebuildable cache).\n\n"
                             "Example: memvault index rebuild")
PROGRESS_FROM = 300
"""Show progress when at least this many files are (re)indexed."""
PLAIN_EVERY = 3.0
"""Seconds between progress lines when stderr is not a terminal."""


@contextmanager
def _progress(ctx: click.Context) -> Iterator[Callable[[int, int], None] | None]:
    """Progress of a big (re)index on stderr: a bar on a terminal, otherwise one plain
    line at the start and then every `PLAIN_EVERY` seconds (for logs and pipes)."""
    if state(ctx).quiet:
        yield None
        return
    if not sys.stderr.isatty():
        yield _plain_progress()
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


def _plain_progress() -> Callable[[int, int], None]:
    import time

    last: list[float] = []

    def update(done: int, total: int) -> None:
        if total < PROGRESS_FROM:
            return
        now = time.monotonic()
        if last and now - last[0] < PLAIN_EVERY and done < total:
            return
        if done >= total and not last:
            return  # finished before the first line was due: nothing to report
        last[:] = [now]
        sys.stderr.write(f"indexing notes: {done:,} of {total:,} files "
                         f"({100 * done // max(total, 1)}%)\n")
        sys.stderr.flush()

    return update


def _show_notices(ctx: click.Context, notices: list[str]) -> None:
    for line in notices:
        notice(ctx, f"note: {line}")


def _highlight(snippet: str, out: Console) -> Text:
    """A snippet indented for the terminal, its matches (between the index's highlight
    markers) in bold yellow; plain words when colour is off (NO_COLOR). Never the
    markers themselves, on a terminal or in a pipe."""
    import re

    from rich.text import Text

    from memvault.cli.state import printable
    from memvault.index.query import HL_CLOSE, HL_OPEN

    style = None if out.no_color else "bold yellow"
    line = Text("  ")
    inside = False
    for part in re.split(f"({re.escape(HL_OPEN)}|{re.escape(HL_CLOSE)})", snippet):
        if part in (HL_OPEN, HL_CLOSE):
            inside = part == HL_OPEN
        elif part:
            line.append(printable(part), style=style if inside else None)
    return line


@click.command("search")
@click.argument("query")
@click.option("--limit", "-n", type=int, default=10, show_default=True,
              help="At most this many results.")
@click.option("--path", "-p", metavar="GLOB",
              help="Only notes whose vault path matches (e.g. 'Projects/*').")
@click.option("--tag", "-t", help="Only notes with this tag (nested tags included).")
@click.option("--memory", "-m", is_flag=True,
              help="Search facts, lessons and proposals (with their ids).")
@click.pass_context
def search(ctx: click.Context, query: str, limit: int, path: str | None, tag: str | None,
           memory: bool) -> None:
    """Search every note in the vault for QUERY (full text, BM25, typo-tolerant titles and
    tags): words (all required), "a phrase", prefix*, -exclude, a OR b.

    Example: memvault search "canvas" --tag desktop --limit 5
    """
    from memvault.cli.streams import utf8_arg

    query, path, tag = utf8_arg(query), path and utf8_arg(path), tag and utf8_arg(tag)
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
    if wants_json(ctx):
        from memvault.cli.json_output import search_document

        print_json(search_document(query, mem_hits if memory else hits, notices))
        return
    _show_notices(ctx, notices)
    out = console()
    if memory:
        if not mem_hits:
            out.print("nothing found in memory")
        for m in mem_hits:
            out.print(f"[bold]{esc(m.id)}[/bold] [dim]{esc(m.kind)} · "
                      f"{esc(m.category or 'other')} · {esc(m.path)}:{m.line}[/dim]")
            out.print(_highlight(m.snippet, out))
        return
    if not hits:
        out.print("no matching notes")
    for h in hits:
        title = f" [dim]({esc(h.title)})[/dim]" if h.title else ""
        out.print(f"[bold cyan]{esc(h.path)}[/bold cyan]{title} [dim]{h.match}, "
                  f"score {h.score:.3g}[/dim]")
        if h.snippet:
            out.print(_highlight(h.snippet, out))


@index_group.command("rebuild")
@click.pass_context
def rebuild(ctx: click.Context) -> None:
    """Delete the index and read every note again (nothing is lost: it is a cache).

    Example: memvault index rebuild
    """
    service = state(ctx).vault().search
    with _progress(ctx) as progress:
        result = service.rebuild(progress)
    if wants_json(ctx):
        print_json({"rebuilt": True, **result.to_dict(), "notices": service.notices})
        return
    _show_notices(ctx, service.notices)
    console().print(f"indexed {result.added} files in {result.seconds:.2f}s"
                    + (f"; {len(result.skipped)} could not be read (see `memvault doctor`)"
                       if result.skipped else ""))


@index_group.command("embed")
@click.pass_context
def embed(ctx: click.Context) -> None:
    """Embed every remembered record for recall by meaning now, not ten seconds per call.

    A large memory's first embedding (about 8 ms a record with the built-in model) is
    otherwise spread over the calls that rank it; until it is done, records without a
    vector are ranked by their words. Progress goes to stderr. Safe to stop: what was
    done is kept.

    Example: memvault index embed
    """
    service = state(ctx).vault().search
    result = service.embed_memory()
    if wants_json(ctx):
        print_json({**result, "notices": service.notices})
        return
    _show_notices(ctx, service.notices)
    if result["model"] is None:
        console().print("recall by meaning is off: nothing to embed")
        return
    console().print(f"embedded {result['embedded']:,} of {result['texts']:,} memory texts "
                    f"with {esc(result['model'])} in {result['seconds']:.1f}s (the rest were "
                    "already embedded)")


@index_group.command("status")
@click.pass_context
def status(ctx: click.Context) -> None:
    """What the index holds, after bringing it up to date.

    Example: memvault index status --json
    """
    service = state(ctx).vault().search
    with _progress(ctx) as progress:
        result = service.refresh(progress)
    info = service.status()
    if wants_json(ctx):
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
