"""The index is a cache that heals itself: killed mid-build, truncated, garbage, deleted;
and two searchers with an editor never see an error. Real subprocesses throughout."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_memvault

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray").split()


def make_notes(root: Path, count: int, size: int = 1200) -> None:
    for i in range(count):
        folder = root / f"Notes{i % 20:02d}"
        folder.mkdir(exist_ok=True)
        words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(size // 7))
        (folder / f"Note {i:05d}.md").write_text(
            f"---\ntags: [gen, n{i % 7}]\n---\n# Note {i}\nmarker{i} {words}\n", encoding="utf-8")


def search_json(root: Path, *args: str) -> tuple[dict, str]:
    proc = run_memvault("--vault", str(root), "search", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def index_path(root: Path) -> Path:
    return root / ".memvault" / "index.sqlite"


@pytest.fixture
def small_vault(vault_dir: Path) -> Path:
    make_notes(vault_dir, 60)
    return vault_dir


def test_deleted_index_is_rebuilt_by_the_next_search(small_vault):
    data, _ = search_json(small_vault, "marker7")
    assert [r["path"] for r in data["results"]] == ["Notes07/Note 00007.md"]
    index_path(small_vault).unlink()
    data, _ = search_json(small_vault, "marker7")
    assert [r["path"] for r in data["results"]] == ["Notes07/Note 00007.md"]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_damaged_index_file_is_detected_and_rebuilt_with_a_notice(small_vault, damage):
    search_json(small_vault, "marker3")
    path = index_path(small_vault)
    size = path.stat().st_size
    if damage == "garbage":
        path.write_bytes(b"this is not an sqlite file at all" * 100)
    elif damage == "truncated":
        with open(path, "r+b") as fh:
            fh.truncate(size // 2)
    else:
        path.write_bytes(b"")
    data, _ = search_json(small_vault, "marker3")
    assert [r["path"] for r in data["results"]] == ["Notes03/Note 00003.md"]
    assert any("rebuilt" in n for n in data["notices"]), data["notices"]
    # the human form says it on stderr
    path.write_bytes(b"garbage" * 50)
    proc = run_memvault("--vault", str(small_vault), "search", "marker3")
    assert proc.returncode == 0 and "rebuilt" in proc.stderr and "Note 00003" in proc.stdout


def test_killed_rebuild_is_detected_and_rebuilt_by_the_next_search(vault_dir):
    make_notes(vault_dir, 2500, size=2500)
    path = index_path(vault_dir)
    proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault_dir),
                             "index", "rebuild"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    killed_mid_build = False
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
                state = conn.execute("SELECT value FROM meta WHERE key='build_state'").fetchone()
                count = conn.execute("SELECT count(*) FROM files").fetchone()[0]
                conn.close()
            except sqlite3.Error:
                time.sleep(0.01)
                continue
            if state and state[0] == "building" and count > 0:
                os.kill(proc.pid, signal.SIGKILL)
                killed_mid_build = True
                break
            time.sleep(0.01)
    finally:
        proc.wait(timeout=30)
    assert killed_mid_build, "the rebuild finished before it could be killed"
    data, _ = search_json(vault_dir, "marker2499")
    assert [r["path"] for r in data["results"]] == ["Notes19/Note 02499.md"]
    assert any("interrupted" in n and "rebuilt" in n for n in data["notices"]), data["notices"]
    status = json.loads(run_memvault("--vault", str(vault_dir), "index", "status",
                                     "--json").stdout)
    assert status["state"] == "complete" and status["notes"] >= 2500


_SEARCHER = """
import json, subprocess, sys, time
root, seconds = sys.argv[1], float(sys.argv[2])
from memvault import Vault
vault = Vault.open(root)
end = time.monotonic() + seconds
n = 0
while time.monotonic() < end:
    hits = vault.search.search("alpha", limit=5)
    assert hits, "no hits"
    vault.search.search_memory("zebra", limit=5)
    n += 1
print(n)
"""


def test_two_searchers_and_an_editor_never_see_an_error(small_vault):
    procs = [subprocess.Popen([sys.executable, "-c", _SEARCHER, str(small_vault), "4"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    end = time.monotonic() + 4
    i = 0
    while time.monotonic() < end:
        target = small_vault / f"Notes{i % 20:02d}" / f"Edited {i}.md"
        target.write_text(f"alpha edit {i}\n", encoding="utf-8")
        if i % 3 == 0:
            run_memvault("--vault", str(small_vault), "remember", f"zebra fact {i}")
        if i % 4 == 3:
            (small_vault / f"Notes{(i - 3) % 20:02d}" / f"Edited {i - 3}.md").unlink()
        i += 1
        time.sleep(0.05)
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert int(out.strip()) > 0


def test_threads_sharing_one_vault_search_and_refresh_without_errors(small_vault):
    import threading

    from memvault import Vault

    vault = Vault.open(small_vault)
    errors: list[BaseException] = []
    stop = time.monotonic() + 2

    def worker(kind: str) -> None:
        try:
            while time.monotonic() < stop:
                if kind == "search":
                    assert vault.search.search("alpha", limit=3)
                else:
                    vault.search.refresh()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in ("search", "search",
                                                                   "refresh")]
    for t in threads:
        t.start()
    i = 0
    while time.monotonic() < stop:
        (small_vault / f"Threaded {i}.md").write_text(f"alpha {i}\n", encoding="utf-8")
        i += 1
        time.sleep(0.02)
    for t in threads:
        t.join()
    assert errors == []
