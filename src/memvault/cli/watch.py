"""`memvault watch`: report hand edits of the memory files as they happen."""

from __future__ import annotations

import json
import sys
import threading

import click

from memvault.cli.state import notice, state, wants_json


@click.command("watch")
@click.option("--debounce", type=click.FloatRange(0, 10_000), default=150, show_default=True,
              help="Quiet time in ms before a changed file is read.")
@click.pass_context
def watch(ctx: click.Context, debounce: float) -> None:
    """Watch the vault until Ctrl-C (exit 130); print one line per changed fact, lesson or
    proposal (with --json, one JSON object per line).

    Ticked Inbox boxes are applied and the search index refreshed. A half-written or
    invalid file is reported and ignored (the last valid state is kept).

    Example: memvault watch --json
    """
    from memvault.services.watcher import VaultWatcher, WatchEvent

    vault = state(ctx).vault()
    as_json = wants_json(ctx)
    lock = threading.Lock()

    def show(event: WatchEvent) -> None:
        text = json.dumps(event.to_dict(), ensure_ascii=False) if as_json else event.line()
        with lock:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    watcher = VaultWatcher(vault, show, debounce=debounce / 1000)
    watcher.start()
    notice(ctx, f"watching {vault.root} (Ctrl-C to stop)")
    stop = threading.Event()
    try:
        while not stop.wait(3600):
            pass
    finally:
        watcher.stop()
