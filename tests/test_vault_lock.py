"""The vault's cross-process lock, on POSIX and (simulated) on Windows.

The Windows branch uses `msvcrt.locking`; `tests/windows_sim.py` stands in for it with the
same documented behaviour and real exclusion between processes, so two real processes
remembering at once through that branch must still lose nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memvault.backends.fs_lock import FileLock
from memvault.core.bullets import parse_bullets

ROOT = Path(__file__).resolve().parents[1]

WRITER = r"""
import sys
from tests import windows_sim
if sys.argv[3] == "windows":
    windows_sim.install()
from memvault import Vault
from memvault.backends import fs_lock
assert fs_lock._platform_locker()[0] == ("msvcrt" if sys.argv[3] == "windows" else "fcntl")
vault = Vault.open(sys.argv[1])
for i in range(int(sys.argv[4])):
    vault.memory.remember(f"writer {sys.argv[2]} fact {i}")
"""


def _writers(vault_dir: Path, platform: str, count: int) -> list[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "src")]))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(vault_dir), tag, platform,
                               str(count)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for tag in "AB"]
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err[-2000:]
        outs.append(out)
    return outs


def _texts(vault_dir: Path) -> set[str]:
    return {it.text for it in parse_bullets((vault_dir / "Pilot/Memory.md").read_bytes()).items}


def test_two_processes_on_the_windows_lock_lose_no_update(vault_dir: Path) -> None:
    _writers(vault_dir, "windows", 40)
    assert _texts(vault_dir) == {f"writer {t} fact {i}" for t in "AB" for i in range(40)}


HOLDER = r"""
import sys, time
from tests import windows_sim
windows_sim.install()
from memvault.backends.fs_lock import FileLock
lock = FileLock(sys.argv[1])
if sys.argv[2] == "hold":
    with lock.hold():
        print("holding", flush=True)
        time.sleep(0.5)
else:
    start = time.monotonic()
    with lock.hold():
        print(f"{time.monotonic() - start:.3f} {windows_sim.failures}", flush=True)
"""


def test_the_windows_lock_waits_past_lk_lock_giving_up(tmp_path: Path) -> None:
    """LK_LOCK gives up after ten tries; the vault lock must keep waiting, not fail."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "src")]))
    lock_file = str(tmp_path / "lock")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, lock_file, "hold"], cwd=ROOT,
                              env=env, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "holding"
    waiter = subprocess.run([sys.executable, "-c", HOLDER, lock_file, "wait"], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=60)
    holder.wait(timeout=30)
    assert waiter.returncode == 0, waiter.stderr
    waited, gave_up = waiter.stdout.split()
    assert float(waited) > 0.2 and int(gave_up) >= 1


def test_two_processes_on_the_posix_lock_lose_no_update(vault_dir: Path) -> None:
    _writers(vault_dir, "posix", 40)
    assert _texts(vault_dir) == {f"writer {t} fact {i}" for t in "AB" for i in range(40)}


def test_the_lock_is_reentrant_and_shared_by_threads_of_one_process(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / "lock")
    inside = []
    with lock.hold():
        with lock.hold():  # nested: no deadlock
            inside.append("nested")

        def other() -> None:
            with lock.hold():
                inside.append("thread")

        t = threading.Thread(target=other)
        t.start()
        t.join(timeout=0.3)
        assert t.is_alive()  # another thread waits while this one holds it
    t.join(timeout=10)
    assert inside == ["nested", "thread"]


INDEX_HOLDER = r"""
import sys, time
from pathlib import Path
from tests import windows_sim
if sys.argv[2] == "windows":
    windows_sim.install()
from memvault.index.store import IndexStore
store = IndexStore(Path(sys.argv[1]), "Pilot")
if sys.argv[3] == "hold":
    with store.writer():
        print("holding", flush=True)
        time.sleep(0.8)
else:
    alive = store._writer_alive()
    start = time.monotonic()
    with store.writer():
        print(f"{time.monotonic() - start:.3f} {alive}", flush=True)
"""


@pytest.mark.parametrize("platform", ["windows", "posix"])
def test_the_search_index_writer_lock_excludes_another_process(tmp_path: Path,
                                                                platform: str) -> None:
    """Two processes updating the search index take turns, on Windows (simulated
    `msvcrt.locking`) as on POSIX; the second also sees that a writer is alive, so it
    does not mistake a build in progress for an interrupted one."""
    (tmp_path / ".memvault").mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "src")]))
    holder = subprocess.Popen([sys.executable, "-c", INDEX_HOLDER, str(tmp_path), platform,
                               "hold"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        waiter = subprocess.run([sys.executable, "-c", INDEX_HOLDER, str(tmp_path), platform,
                                 "wait"], cwd=ROOT, env=env, capture_output=True, text=True,
                                timeout=60)
    finally:
        holder.wait(timeout=30)
    assert waiter.returncode == 0, waiter.stderr
    waited, alive = waiter.stdout.split()
    assert alive == "True" and float(waited) > 0.3
