"""Concurrent writers through real processes: no lost update, no torn Memory.md."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvault.core.bullets import parse_bullets
from tests.golden.support import MEMORY

WRITER = r"""
import itertools, sys
from memvault import Vault

vault = Vault.open(sys.argv[1])
tag, count = sys.argv[2], int(sys.argv[3])
print("ready", flush=True)
numbers = itertools.count() if count < 0 else range(count)
for i in numbers:
    vault.memory.remember(f"writer {tag} fact number {i} " + sys.argv[4])
"""


def _start_writer(vault_dir: Path, tag: str, count: int, padding: str = "") -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1] / "src"),
                                        env.get("PYTHONPATH", "")])
    return subprocess.Popen([sys.executable, "-c", WRITER, str(vault_dir), tag, str(count),
                             padding], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _check_valid(data: bytes) -> list:
    doc = parse_bullets(data)
    assert doc.readonly_reason is None
    assert not doc.duplicate_ids
    assert data.endswith(b"\n")
    for it in doc.items:
        assert it.editable and not it.provisional, it
        assert set(it.meta) == {"id", "updated"} and it.category_raw == "other"
    return doc.items


@pytest.mark.slow
def test_two_processes_remembering_at_once_lose_nothing(vault_dir: Path) -> None:
    writers = [_start_writer(vault_dir, tag, 100) for tag in ("A", "B")]
    for w in writers:
        _, err = w.communicate(timeout=60)
        assert w.returncode == 0, err
    items = _check_valid((vault_dir / MEMORY).read_bytes())
    texts = {it.text for it in items}
    assert len(items) == 200
    assert texts == {f"writer {t} fact number {i}" for t in "AB" for i in range(100)}
    assert len({it.id for it in items}) == 200


@pytest.mark.slow
def test_a_writer_killed_mid_write_never_leaves_a_torn_memory_file(vault_dir: Path) -> None:
    path = vault_dir / MEMORY
    padding = "lorem ipsum " * 40  # bigger file: more time spent inside each write
    rng = random.Random(1234)
    seen = 0
    for _round in range(10):
        writer = _start_writer(vault_dir, f"R{_round}", -1, padding)
        assert writer.stdout.readline().strip() == "ready"
        if _round == 0:  # however slow the machine, let at least one fact land first
            deadline = time.monotonic() + 20
            while b"writer R0" not in path.read_bytes() and time.monotonic() < deadline:
                time.sleep(0.01)
        time.sleep(rng.uniform(0.05, 0.35))
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=10)
        assert writer.returncode == -signal.SIGKILL
        items = _check_valid(path.read_bytes())
        for it in items:
            assert it.text.startswith("writer R") and it.text.endswith(padding.strip())
        assert len(items) >= seen  # a kill never loses facts already written
        seen = len(items)
    assert seen > 0
    # The lock was released by the dead writers: a normal write still goes through.
    from memvault import Vault

    Vault.open(vault_dir).memory.remember("after the storm")
    assert len(_check_valid(path.read_bytes())) == seen + 1
    # ... and temp files a killed writer left behind are cleaned up by the next write.
    assert [p.name for p in path.parent.glob(".Memory.md.*")] == []


def test_an_external_save_during_an_edit_is_kept_and_the_edit_reapplied(vault) -> None:
    """Obsidian saving the file between memvault's read and write (G3): the write is a
    compare-and-swap, so memvault re-reads, re-applies its edit, and loses nothing."""
    from memvault.core.bullets import render_new_item
    from memvault.services.bullet_files import edit_bullet_file

    path = vault.root / MEMORY
    calls = []

    def apply(doc) -> None:
        calls.append(1)
        if len(calls) == 1:  # the user saves a hand edit right now
            path.write_bytes(path.read_bytes() + b"- typed in Obsidian [other]\n")
        doc.insert_item(render_new_item("added by memvault", "other",
                                        {"id": "mv0001", "updated": "1"}))

    edit_bullet_file(vault.backend, MEMORY, apply)
    assert len(calls) == 2
    texts = [it.text for it in parse_bullets(path.read_bytes()).items]
    assert texts == ["typed in Obsidian", "added by memvault"]
