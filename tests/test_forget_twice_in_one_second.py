"""A fact forgotten, restored and forgotten again within one second stays forgotten
through every clean-up of the tombstones.

Tombstone lines carry the time in seconds, so the second forget writes a line byte for
byte the same as the first, with the restore's `lifted` line between them. Which line is
last decides whether the words are forgotten: `doctor --fix` and `memvault sync` (the
journal tidy, the merge driver's union of lines) must never drop the second forget as a
copy of the first. Real processes (`python -m memvault`), a real vault, real git.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import Cli, run_memvault
from tests.git_helpers import bare_repo, clone, git, use_git_identity

SECRET = "my bank PIN is quokka4821"
WORD = "quokka4821"
STONES = Path(".memvault") / "tombstones.jsonl"
_CUPS = itertools.count(1)


def _mv(root: Path, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    done = run_memvault("--vault", str(root), *args, timeout=120)
    assert done.returncode == expect, (args, done.stdout, done.stderr)
    return done


def _remember(root: Path, text: str = SECRET) -> str:
    return str(json.loads(_mv(root, "--json", "remember", text).stdout)["fact"]["id"])


def _forget_restore_forget(root: Path, fid: str) -> None:
    """Forget fact `fid`, restore it and forget it again with no wait in between
    (starting at the top of a second), until the two forgets wrote the same line: a slow
    machine that crosses a second restores the fact and tries again."""
    for attempt in range(5):
        if attempt:
            _mv(root, "memory", "restore", fid)
        time.sleep(1 - time.time() % 1)  # before the sequence, never inside it
        _mv(root, "forget", "--yes", fid)
        _mv(root, "memory", "restore", fid)
        _mv(root, "forget", "--yes", fid)
        mine = [ln for ln in (root / STONES).read_text("utf-8").splitlines()
                if f'"record":"{fid}"' in ln][-3:]
        assert [json.loads(ln)["kind"] for ln in mine] == ["forgotten", "lifted", "forgotten"]
        if mine[0] == mine[2]:
            return
    pytest.fail("the three commands never ran within one second")


def _assert_forgotten(root: Path, fid: str) -> None:
    """What the user sees: the words are nowhere in context or memory search; a line
    with those words typed into Memory.md by hand is left out of the context; a line
    carrying the fact's id (what a clone that still had it syncs back) is removed by the
    next write and never shown."""
    stones = (root / STONES).read_text("utf-8")
    assert WORD not in stones and "bank" not in stones  # content-free
    assert WORD not in _mv(root, "context", "--json").stdout
    found = json.loads(_mv(root, "search", "--memory", "--json", WORD).stdout)["results"]
    assert found == []

    memory = root / "Pilot" / "Memory.md"
    before = memory.read_bytes()
    memory.write_bytes(before + f"- {SECRET}\n".encode())
    ctx = json.loads(_mv(root, "context", "--json").stdout)
    assert WORD not in ctx["text"] and all(WORD not in s["text"] for s in ctx["selected"])

    memory.write_bytes(before + f"- {SECRET} [other] <!-- id:{fid} updated:1 -->\n".encode())
    _mv(root, "remember", f"I like green tea, cup {next(_CUPS)}")  # a write settles the file
    assert WORD not in memory.read_text("utf-8")
    assert WORD not in _mv(root, "context", "--json").stdout


def test_doctor_fix_keeps_the_second_forget(memory_vault_dir: Path) -> None:
    root = memory_vault_dir
    fid = _remember(root)
    _forget_restore_forget(root, fid)
    stones = (root / STONES).read_bytes()

    fixed = _mv(root, "doctor", "--fix")
    _assert_forgotten(root, fid)
    assert "held twice" not in fixed.stdout + fixed.stderr
    assert (root / STONES).read_bytes() == stones


def test_doctor_fix_still_removes_a_line_a_merge_held_twice(memory_vault_dir: Path) -> None:
    """A copy right after its original changes nothing about what is forgotten: removed."""
    root = memory_vault_dir
    fid = _remember(root)
    _forget_restore_forget(root, fid)
    path = root / STONES
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines + [lines[-1]]))  # a union merge's leftover

    fixed = _mv(root, "doctor", "--fix")
    _assert_forgotten(root, fid)
    assert "removed 1 line(s) a merge held twice" in fixed.stdout + fixed.stderr
    assert path.read_bytes().splitlines(keepends=True) == lines


def test_sync_keeps_the_second_forget_on_both_clones(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A forgets, restores and forgets within one second while B forgets something else;
    both sync (the merge driver unions the two tombstone files, then sync tidies them)."""
    use_git_identity(monkeypatch)
    bare = bare_repo(tmp_path)
    a = clone(bare, tmp_path / "a")
    _mv(a, "init")
    _mv(a, "sync", "--setup")
    _mv(a, "remember", "I like tea")
    _mv(a, "sync")
    b = clone(bare, tmp_path / "b")
    _mv(b, "sync", "--setup")

    fid = _remember(a)
    _forget_restore_forget(a, fid)
    _mv(b, "forget", "--yes", "I like tea")
    _mv(b, "sync")
    synced = _mv(a, "sync")
    _mv(b, "sync")
    for root in (a, b):
        _assert_forgotten(root, fid)
        kinds = [json.loads(ln)["kind"] for ln in (root / STONES).read_text().splitlines()
                 if f'"record":"{fid}"' in ln]
        assert kinds[-3:] == ["forgotten", "lifted", "forgotten"], root
        Cli(root)("doctor", "--fix", expect=None)
        _assert_forgotten(root, fid)
    assert "held twice" not in synced.stdout + synced.stderr


def test_a_clone_that_changed_the_fact_meanwhile_does_not_bring_it_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """B still has the fact and changes its category while A forgets, restores and
    forgets it within one second: the merge driver reads A's tombstones and the forget
    wins — no commit A's sync makes and pushes holds the words (not even in a conflict
    block that a later tidy settles)."""
    use_git_identity(monkeypatch)
    bare = bare_repo(tmp_path)
    a = clone(bare, tmp_path / "a")
    _mv(a, "init")
    _mv(a, "sync", "--setup")
    fid = _remember(a)
    _mv(a, "sync")
    b = clone(bare, tmp_path / "b")
    _mv(b, "sync", "--setup")

    _forget_restore_forget(a, fid)
    _mv(b, "memory", "edit", fid, "--category", "identity")
    _mv(b, "sync")
    edited = git(b, "rev-parse", "HEAD").strip()
    _mv(a, "sync")
    _mv(b, "sync")
    pushed = git(a, "rev-list", f"{edited}..HEAD").split()
    assert pushed
    for commit in pushed:
        assert WORD not in git(a, "show", f"{commit}:Pilot/Memory.md"), commit
    for root in (a, b):
        assert WORD not in (root / "Pilot" / "Memory.md").read_text("utf-8"), root
        _assert_forgotten(root, fid)
