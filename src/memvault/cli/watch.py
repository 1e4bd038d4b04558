"""`memvault watch`: report hand edits of the memory files as they happen."""

from __future__ import annotations

import json
import sys
import threading

import typer

from memvault.cli.state import notice, state, wants_json


def register(app: typer.Typer) -> None:
    @app.command("watch")
    def watch(
        ctx: typer.Context,
        debounce: float = typer.Option(150, "--debounce", min=0, max=10_000,
                                       help="Quiet time in ms before a changed file is read."),
        json_out: bool = typer.Option(False, "--json", help="One JSON object per line."),
    ) -> None:
        """Watch the vault until Ctrl-C; print one line per changed fact, lesson or proposal.

        Ticked Inbox boxes are applied and the search index refreshed. A half-written or
        invalid file is reported and ignored (the last valid state is kept).

        Example: memvault watch --json
        """
        from memvault.services.watcher import VaultWatcher, WatchEvent

        vault = state(ctx).vault()
        as_json = wants_json(ctx, json_out)
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
        except KeyboardInterrupt:
            pass
        finally:
            watcher.stop()
