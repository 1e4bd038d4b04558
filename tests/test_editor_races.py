"""Deterministic races between memvault and an editor saving the same memory file.

The editor is a real process (`tests/editor_sim.py`) or, where the race must hit one exact
instant inside memvault's write, an outside action triggered from a wrapped system call
(`os.fsync` while the temp file is staged) or just before memvault's own install step.
The trigger only decides *when* the other program acts; memvault's code runs unchanged.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvault import Vault
from memvault.backends import fs_io
from memvault.core.bullets import parse_bullets
from memvault.errors import Conflict
from tests.conftest import run_memvault

MEMORY = "Pilot/Memory.md"
ROOT = Path(__file__).resolve().parents[1]


def _editor(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "tests.editor_sim", *args], cwd=ROOT,
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def _texts(vault_dir: Path) -> list[str]:
    return [it.text for it in parse_bullets((vault_dir / MEMORY).read_bytes()).items]


def _remember_in_background(vault_dir: Path, text: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault_dir),
                             "remember", text], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


# -- in place: truncate, then write --------------------------------------------------------


def test_a_write_waits_for_an_in_place_save_and_keeps_both(vault_dir: Path) -> None:
    """The issue's reproduction: the editor truncated Memory.md and is about to write it
    back with a typed line; `remember` runs in that gap. Both must survive."""
    for i in (1, 2, 3):
        assert run_memvault("--vault", str(vault_dir), "remember", f"fact {i}").returncode == 0
    editor = _editor("hold", str(vault_dir / MEMORY), "- typed by hand")
    assert editor.stdout.readline().strip() == "truncated"
    writer = _remember_in_background(vault_dir, "new fact")
    time.sleep(0.5)  # the writer has read the empty file by now and is waiting
    assert writer.poll() is None, writer.communicate()
    editor.stdin.write("go\n")
    editor.stdin.flush()
    assert editor.stdout.readline().strip() == "saved"
    editor.wait(timeout=30)
    _, err = writer.communicate(timeout=30)
    assert writer.returncode == 0, err
    assert _texts(vault_dir) == ["fact 1", "fact 2", "fact 3", "typed by hand", "new fact"]


def test_a_save_still_in_progress_after_the_wait_is_refused_and_nothing_written(
        vault_dir: Path) -> None:
    """An editor writing the file byte by byte for 4 s: after waiting 2 s memvault refuses
    in one line, and the editor's save ends exactly as the editor wrote it."""
    for i in (1, 2):
        assert run_memvault("--vault", str(vault_dir), "remember", f"fact {i}").returncode == 0
    expected = (vault_dir / MEMORY).read_bytes() + b"- typed slowly\n"
    editor = _editor("trickle", str(vault_dir / MEMORY), "- typed slowly", "4")
    assert editor.stdout.readline().strip() == "truncated"
    time.sleep(0.3)
    started = time.monotonic()
    result = run_memvault("--vault", str(vault_dir), "remember", "too early", timeout=60)
    waited = time.monotonic() - started
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: Pilot/Memory.md: ")
    assert "another program is saving it" in result.stderr
    assert waited < 10
    assert editor.stdout.readline().strip() == "saved"
    editor.wait(timeout=30)
    assert (vault_dir / MEMORY).read_bytes() == expected
    assert run_memvault("--vault", str(vault_dir), "remember", "later").returncode == 0
    assert _texts(vault_dir) == ["fact 1", "fact 2", "typed slowly", "later"]


def test_an_old_empty_file_is_settled_and_written_without_waiting(vault_dir: Path) -> None:
    """The user emptied Memory.md a while ago: that is the file now, no wait."""
    from memvault.services.settle import QUIET_SECONDS

    path = vault_dir / MEMORY
    path.write_bytes(b"")
    time.sleep(QUIET_SECONDS + 0.1)  # a change time cannot be backdated (ctime)
    started = time.monotonic()
    Vault.open(vault_dir).memory.remember("first fact")
    assert time.monotonic() - started < 0.9
    assert _texts(vault_dir) == ["first fact"]


# -- by rename: during staging, and after the final check ---------------------------------


def _rename_save(path: Path, line: bytes) -> None:
    data = path.read_bytes() + line
    tmp = path.with_name(".editor.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_a_rename_save_while_the_temp_file_is_staged_is_kept(vault_dir: Path,
                                                               monkeypatch) -> None:
    """The editor renames its save over Memory.md while memvault fsyncs its temp file:
    the check after staging notices, memvault re-reads and re-applies its edit."""
    vault = Vault.open(vault_dir)
    vault.memory.remember("fact 1")
    path = vault_dir / MEMORY
    real_fsync = os.fsync
    fired = []

    def fsync(fd: int) -> None:
        real_fsync(fd)
        name = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd") else ""
        if not fired and ".Memory.md." in name:
            fired.append(name)
            _rename_save(path, b"- saved by the editor mid-staging\n")

    monkeypatch.setattr(os, "fsync", fsync)
    vault.memory.remember("fact 2")
    assert fired
    assert _texts(vault_dir) == ["fact 1", "saved by the editor mid-staging", "fact 2"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="atomic exchange is Linux's")
def test_a_rename_save_after_the_final_check_is_put_back(vault_dir: Path, monkeypatch) -> None:
    """The editor's rename lands in the last instant, after the final check and before
    memvault installs its file. The exchange hands memvault the file it displaced; it is
    not the one memvault read, so the exchange is undone and the edit re-applied."""
    vault = Vault.open(vault_dir)
    vault.memory.remember("fact 1")
    path = vault_dir / MEMORY
    real_swap = fs_io.swap
    calls = []

    def swap(a, b, device):  # type: ignore[no-untyped-def]
        if not calls and Path(b) == path:
            _rename_save(path, b"- saved by the editor at the last instant\n")
        calls.append(Path(b))
        return real_swap(a, b, device)

    monkeypatch.setattr(fs_io, "swap", swap)
    monkeypatch.setattr("memvault.backends.fs.swap", swap)
    vault.memory.remember("fact 2")
    assert len(calls) >= 3  # install, undo, install again
    assert _texts(vault_dir) == ["fact 1", "saved by the editor at the last instant", "fact 2"]
    assert not list(path.parent.glob("*conflict*"))
    assert not list(path.parent.glob(".*.tmp"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="atomic exchange is Linux's")
def test_a_third_save_during_the_undo_is_kept_as_a_conflict_copy(vault_dir: Path,
                                                                   monkeypatch) -> None:
    """Two editor saves around memvault's install: nobody's words are deleted. The first is
    put back in place, the second is kept beside it as a conflict copy doctor reports."""
    vault = Vault.open(vault_dir)
    vault.memory.remember("fact 1")
    path = vault_dir / MEMORY
    real_swap = fs_io.swap
    calls = []

    def swap(a, b, device):  # type: ignore[no-untyped-def]
        calls.append(Path(b))
        if len(calls) == 1:
            _rename_save(path, b"- first editor save\n")
        elif len(calls) == 2:
            # memvault's file is in place now; a second save replaces it before the undo
            _rename_save(path, b"- second editor save\n")
        return real_swap(a, b, device)

    monkeypatch.setattr(fs_io, "swap", swap)
    monkeypatch.setattr("memvault.backends.fs.swap", swap)
    vault.memory.remember("fact 2")
    copies = list(path.parent.glob("Memory (memvault conflict copy *).md"))
    assert len(copies) == 1
    assert b"- second editor save" in copies[0].read_bytes()
    assert _texts(vault_dir) == ["fact 1", "first editor save", "fact 2"]
    report = vault.doctor.check()
    assert any("conflict copy" in f.message for f in report.findings)


def test_without_an_atomic_exchange_the_final_check_still_catches_a_staging_save(
        vault_dir: Path, monkeypatch) -> None:
    """Systems without RENAME_EXCHANGE fall back to check-then-rename; the check after
    staging still sees a save that landed while the temp file was written."""
    monkeypatch.setattr(fs_io, "_renameat2", False)
    test_a_rename_save_while_the_temp_file_is_staged_is_kept(vault_dir, monkeypatch)


def test_cas_refuses_when_the_file_moves_under_a_direct_backend_write(vault_dir: Path,
                                                                      monkeypatch) -> None:
    backend = Vault.open(vault_dir).backend
    blob = backend.read(MEMORY)
    path = vault_dir / MEMORY
    real_fsync = os.fsync
    done = []

    def fsync(fd: int) -> None:
        real_fsync(fd)
        if not done:
            done.append(1)
            _rename_save(path, b"- by hand\n")

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(Conflict):
        backend.write(MEMORY, b"- mine\n", expected=blob.version)
    assert path.read_bytes().endswith(b"- by hand\n")


def test_a_profile_set_waits_for_an_in_place_save_of_profile_md(vault_dir: Path) -> None:
    """The same race on a note with properties: `profile set` during Obsidian's save of
    Profile.md must keep the prose the user is saving."""
    profile = vault_dir / "Pilot" / "Profile.md"
    editor = _editor("hold", str(profile), "My own paragraph about myself.")
    assert editor.stdout.readline().strip() == "truncated"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    setter = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault_dir),
                               "profile", "set", "name", "Sam"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    assert setter.poll() is None
    editor.stdin.write("go\n")
    editor.stdin.flush()
    editor.wait(timeout=30)
    _, err = setter.communicate(timeout=30)
    assert setter.returncode == 0, err
    text = profile.read_text()
    assert "My own paragraph about myself." in text and "name: Sam" in text
