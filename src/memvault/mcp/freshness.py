"""Keeping the search index fresh for the MCP server without rescanning on every call.

Refreshing the index means stat-ing every note (about 50 ms on 10,000 notes). The server
instead keeps one search service for its lifetime and a `ChangeFlag`: a watchdog observer
over the vault that raises a flag on any file event outside `.memvault/`, `.git/`,
`.obsidian/` and `.trash/`. `memory_search` refreshes the index only when the flag is up,
when the observer is not running (it died, or watchdog is unavailable), or at least every
`max_age` seconds as a safety net. The index is a cache; the Markdown stays the truth, and
every other tool reads the files directly on each call.

This module never writes a file and never raises out of the observer thread.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from memvault.state_paths import STATE_DIR

log = logging.getLogger("memvault.mcp")

IGNORED_TOP = (STATE_DIR, ".git", ".obsidian", ".trash")


class ChangeFlag:
    """`take()` is True when something in the vault may have changed since the last take."""

    def __init__(self, root: Path, *, max_age: float = 30.0) -> None:
        self.root = Path(root).absolute()
        self.max_age = max_age
        self._lock = threading.Lock()
        self._dirty = True
        self._taken_at = 0.0
        self._observer: Any = None

    def start(self) -> bool:
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:
            return False
        flag = self

        class _Handler(FileSystemEventHandler):  # type: ignore[misc]
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                try:
                    flag._note(event.src_path, getattr(event, "dest_path", ""))
                except Exception:  # noqa: BLE001 - never kill the observer thread
                    flag.mark()

        try:
            observer = Observer()
            observer.schedule(_Handler(), str(self.root), recursive=True)
            observer.daemon = True
            observer.start()
        except Exception as exc:  # noqa: BLE001 - fall back to refreshing every call
            log.warning("search index watcher not started (%s); refreshing on every search",
                        exc)
            return False
        self._observer = observer
        return True

    def _note(self, *paths: str | bytes) -> None:
        for raw in paths:
            if not raw:
                continue
            path = os.fsdecode(raw)
            try:
                rel = Path(path).absolute().relative_to(self.root).as_posix()
            except ValueError:
                continue
            if rel.split("/", 1)[0] not in IGNORED_TOP:
                self.mark()
                return

    def mark(self) -> None:
        with self._lock:
            self._dirty = True

    @property
    def watching(self) -> bool:
        return self._observer is not None and self._observer.is_alive()

    def take(self) -> bool:
        """Whether to refresh now; resets the flag."""
        now = time.monotonic()
        with self._lock:
            due = (self._dirty or not self.watching or now - self._taken_at > self.max_age)
            self._dirty = False
            if due:
                self._taken_at = now
            return due

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
