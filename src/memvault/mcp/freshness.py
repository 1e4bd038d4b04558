"""Keeping the search index fresh for the MCP server without rescanning on every call.

Refreshing the whole index means stat-ing every note (tens of milliseconds on 10,000
notes). The server instead keeps one search service for its lifetime and a
`ChangeFlag` that collects the paths a watchdog observer reports (outside `.memvault/`,
`.git/`, `.obsidian/` and `.trash/`). `memory_search` then refreshes just those paths;
it falls back to a full refresh when a folder moved or was deleted, when too many paths
piled up, when nothing is watching, or at least every `max_age` seconds as a safety net.

There is one observer per process: in `memvault serve` the vault watcher
(`services/watcher.py`) owns it and feeds this flag (`note`); only without the watcher
(`--no-watch`) does the flag start an observer of its own (`start`). The index is a
cache; the Markdown stays the truth, and every other tool reads the files directly on
each call. This module never writes a file and never raises out of the observer thread.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memvault.state_paths import STATE_DIR

log = logging.getLogger("memvault.mcp")

IGNORED_TOP = (STATE_DIR, ".git", ".obsidian", ".trash")
MAX_PATHS = 500
"""More changed paths than this are refreshed with one walk of the vault instead."""
FULL = "full"


class ChangeFlag:
    """`take()` says what to refresh: nothing (None), these paths (a set) or everything
    (`FULL`), and resets."""

    def __init__(self, root: Path, *, max_age: float = 30.0) -> None:
        self.root = Path(root).absolute()
        self.max_age = max_age
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._full = True  # nothing is known about the index yet
        self._taken_at = 0.0
        self._observer: Any = None
        self._alive: Callable[[], bool] | None = None

    # -- where changes come from ----------------------------------------------------------

    def follow(self, alive: Callable[[], bool]) -> None:
        """Changes arrive through `note` from another observer (the vault watcher's);
        `alive` tells whether that observer still runs."""
        self._alive = alive

    def start(self) -> bool:
        """Run an observer of our own (only when no vault watcher runs in this process)."""
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
                    flag.event(event)
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
        self._alive = observer.is_alive
        return True

    def event(self, event: Any) -> None:
        """A watchdog event (called from an observer thread). A folder's own "modified"
        event (a file inside it changed) says nothing the file's event does not."""
        if event.is_directory and event.event_type == "modified":
            return
        self.note(event.src_path, event.is_directory)
        if getattr(event, "dest_path", ""):
            self.note(event.dest_path, event.is_directory)

    def note(self, raw: str | bytes, is_directory: bool = False) -> None:
        """A file (or a whole folder) changed."""
        path = os.fsdecode(raw)
        try:
            rel = Path(path).absolute().relative_to(self.root).as_posix()
        except ValueError:
            return
        if rel.split("/", 1)[0] in IGNORED_TOP:
            return
        with self._lock:
            if is_directory or rel == ".":
                self._full = True
            elif len(self._paths) < MAX_PATHS:
                self._paths.add(rel)
            else:
                self._full = True

    def mark(self) -> None:
        with self._lock:
            self._full = True

    @property
    def watching(self) -> bool:
        return self._alive is not None and self._alive()

    def take(self) -> set[str] | str | None:
        """What to refresh now (see the class doc); resets."""
        now = time.monotonic()
        with self._lock:
            if self._full or not self.watching or now - self._taken_at > self.max_age:
                plan: set[str] | str | None = FULL
            else:
                plan = set(self._paths) or None
            self._full = False
            self._paths = set()
            if plan == FULL:
                self._taken_at = now
            return plan

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
