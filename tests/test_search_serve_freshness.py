"""Inside `memvault serve`: one watchdog observer for the whole process (the vault
watcher's), and one index refresh per edit — of the edited file only — seen by the
next `memory_search` through the real MCP client."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import anyio

from tests.mcp_helpers import ok, run


def make_notes(root: Path, count: int) -> list[Path]:
    out = []
    for i in range(count):
        path = root / f"Area {i % 4}" / f"Note {i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {i}\n\nharbor lattice quartz {i}\n", encoding="utf-8")
        out.append(path)
    return out


def _observers() -> list[threading.Thread]:
    from watchdog.observers.api import BaseObserver

    return [t for t in threading.enumerate() if isinstance(t, BaseObserver) and t.is_alive()]


def wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def test_serve_runs_one_observer_and_refreshes_once_per_edit(vault_dir: Path) -> None:
    from mcp import Client

    from memvault.mcp.server import build_server, start_watcher
    from memvault.mcp.session import VaultSession

    notes = make_notes(vault_dir, 40)
    before_threads = len(_observers())
    session = VaultSession.open(vault_dir)
    watcher = start_watcher(session)  # as `serve` does
    assert watcher is not None

    async def go() -> None:
        async with Client(build_server(session)) as client:
            first = await ok(client, "memory_search", {"query": "harbor", "limit": 100})
            assert len(first["notes"]) == 40  # the first search indexed the vault
            assert len(_observers()) == before_threads + 1  # the watcher's, nothing else
            store = session.kept_search(session.vault()).store()
            refreshes = store.refreshes

            notes[7].write_text("# Note 7\n\nharbor zanzibarquoka\n", encoding="utf-8")
            # Search until the edit shows: searches made before the watcher saw it
            # refresh nothing, the one after it refreshes once.
            deadline = time.monotonic() + 10
            while True:
                found = await ok(client, "memory_search", {"query": "zanzibarquoka"})
                if found["notes"] or time.monotonic() > deadline:
                    break
                await anyio.sleep(0.02)
            assert [n["path"] for n in found["notes"]] == ["Area 3/Note 007.md"]
            assert store.refreshes == refreshes + 1  # one refresh, for this edit
            again = await ok(client, "memory_search", {"query": "zanzibarquoka"})
            assert again["notes"] == found["notes"] and store.refreshes == refreshes + 1
            assert watcher.reloads == 0  # notes are not memory files: nothing re-read there

    try:
        run(go)
    finally:
        watcher.stop()
        session.close()
    assert wait_for(lambda: len(_observers()) == before_threads)
