"""A permanent forget made on another clone leaves no copy of the words on this machine,
whichever way it arrives: `memvault sync`, or a plain `git pull` on a clone that never
ran `memvault sync --setup` followed by any memvault command (a read included). The
caches filled before the pull (the search index, the safety net, the parse cache) are
checked byte for byte with everything under the clone but `.git/`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memvault.services.setup import init_vault
from tests.conftest import run_memvault
from tests.git_helpers import bare_repo, clone, git, use_git_identity

SECRET = "my locker code is quokkaplatypus4471"
WORD = b"quokkaplatypus4471"


def _mv(root: Path, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    done = run_memvault("--vault", str(root), *args, timeout=120)
    assert done.returncode == expect, (args, done.stdout, done.stderr)
    return done


def _holding(root: Path, needle: bytes = WORD) -> list[str]:
    """Every file under the clone, except git's own, whose bytes hold `needle`."""
    out = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] == ".git" or not path.is_file() or path.is_symlink():
            continue
        if needle in path.read_bytes():
            out.append(rel.as_posix())
    return sorted(out)


def _fill_caches(root: Path) -> None:
    """Reads that fill this clone's index, safety net and parse cache with the words."""
    _mv(root, "memory", "list", "--json")
    _mv(root, "search", "--json", "quokkaplatypus4471")
    _mv(root, "search", "--memory", "--json", "quokkaplatypus4471")
    _mv(root, "context", "--request", "locker", "--json")
    _mv(root, "remember", "B likes bicycles")  # a write: the net keeps a copy of the file


def _forget_on_a(a: Path) -> None:
    facts = json.loads(_mv(a, "memory", "list", "--json").stdout)
    facts = facts["facts"] if isinstance(facts, dict) else facts
    fid = next(f["id"] for f in facts if f["text"] == SECRET)
    _mv(a, "forget", fid, "--permanent", "--yes")
    _mv(a, "sync")
    assert _holding(a) == []


def _vault_a(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    use_git_identity(monkeypatch)
    bare = bare_repo(tmp_path)
    a = clone(bare, tmp_path / "A")
    init_vault(a)
    _mv(a, "sync", "--setup")
    _mv(a, "remember", SECRET)
    _mv(a, "remember", "I like green tea in the morning")
    _mv(a, "sync")
    return bare, a


def test_a_permanent_forget_pulled_in_by_sync_leaves_no_word_in_the_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bare, a = _vault_a(tmp_path, monkeypatch)
    b = clone(bare, tmp_path / "B")
    _mv(b, "sync", "--setup")
    _fill_caches(b)
    assert ".memvault/index.sqlite" in _holding(b)
    _forget_on_a(a)
    _mv(b, "sync")
    assert _holding(b) == []  # before any other command runs
    hits = json.loads(_mv(b, "search", "--memory", "--json", "quokkaplatypus4471").stdout)
    assert hits["results"] == []
    assert "green tea" in _mv(b, "search", "--memory", "--json", "green").stdout  # rebuilt
    assert _holding(b) == []


@pytest.mark.parametrize("command", [
    ("memory", "list", "--json"),
    ("search", "--json", "tea"),  # the quick path of the CLI declines, the command scrubs
    ("context", "--request", "what do I drink", "--json"),
], ids=["memory-list", "search", "context"])
def test_a_permanent_forget_pulled_in_by_plain_git_is_applied_by_the_next_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]) -> None:
    bare, a = _vault_a(tmp_path, monkeypatch)
    b = clone(bare, tmp_path / "B")  # never ran `memvault sync --setup`
    _fill_caches(b)
    git(b, "add", "-A")
    git(b, "commit", "-qm", "B local")  # so the pull really merges the journals
    _forget_on_a(a)
    pull = subprocess.run(["git", "pull", "-q", "--no-rebase", "--no-edit"], cwd=b,
                          capture_output=True, text=True, timeout=120)
    assert pull.returncode == 0, pull.stderr
    left = _holding(b)
    assert left and all(p.startswith(".memvault/") for p in left)  # only the caches
    assert ".memvault/index.sqlite" in left
    _mv(b, *command)
    assert _holding(b) == []
    _mv(b, "search", "--json", "quokkaplatypus4471")  # a later search finds nothing either
    assert _holding(b) == []
    assert "B likes bicycles" in _mv(b, "memory", "list", "--json").stdout


def test_an_unseen_forget_makes_the_quick_search_path_decline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick path answers only when this machine's caches reflect every forget the
    journal holds: a changed journal (a pull) makes it leave the search to the command,
    which scrubs first; the next search may take the quick path again."""
    from memvault.cli.quick import _search, parse
    from memvault.services import forgets_applied

    _bare, a = _vault_a(tmp_path, monkeypatch)
    _mv(a, "search", "--json", "tea")
    options = parse(["--vault", str(a), "search", "--json", "tea"])
    assert options is not None
    assert forgets_applied.in_step(a) and _search(options) is not None
    # what a pull of another clone's permanent forget adds to the two journals
    journal, stones = a / ".memvault/events.jsonl", a / ".memvault/tombstones.jsonl"
    journal.write_bytes(journal.read_bytes() + b'{"id":"ev-x","ts":1,"type":"fact.forgotten",'
                        b'"scope":"default","record":"zzzzzz","permanent":true}\n')
    stones.write_bytes((stones.read_bytes() if stones.exists() else b"")
                       + b'{"key":"00ff","record":"zzzzzz","ts":1,"kind":"forgotten",'
                       b'"scope":"default"}\n')
    assert not forgets_applied.in_step(a) and _search(options) is None
    _mv(a, "search", "--json", "tea")
    assert forgets_applied.in_step(a) and _search(options) is not None
