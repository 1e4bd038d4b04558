"""What git's union merge leaves of a hand-written bullet that became a fact with an id.

A clone that never ran `memvault sync --setup` (Obsidian Git, a new laptop) merges
memory files with git's `union`: a conflicting hunk keeps both sides. When a bullet typed
by hand got its id on one side (`doctor --fix` stamps it; `memory edit` stamps it too)
while the lines next to it changed on the other, the old id-less line survives next to
the new one. Every memvault command settles that leftover: removed once and said, never
stamped as a second fact. Real git: a bare repository, two set-up clones and one plain
clone syncing with `git pull --rebase`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memvault.core.bullets import parse_bullets
from memvault.services.setup import init_vault
from tests.conftest import Cli
from tests.git_helpers import git, three_clones


def plain_sync(root: Path) -> None:
    """Obsidian Git's "commit and sync": commit everything, pull --rebase, push."""
    git(root, "add", "-A")
    if git(root, "status", "--porcelain"):
        git(root, "commit", "-qm", "vault backup")
    pull = subprocess.run(["git", "pull", "-q", "--rebase"], cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert pull.returncode == 0, pull.stderr
    git(root, "push", "-q")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """A and B ran `sync --setup`; C never did."""
    return three_clones(tmp_path, monkeypatch, ("I like tea",))


def items(path: Path) -> list[tuple[str, str, bool]]:
    return [(it.text, it.id, it.provisional) for it in parse_bullets(path.read_bytes()).items]


def live_texts(root: Path, *args: str) -> list[str]:
    out = Cli(root)("memory", "list", "--all", "--json", *args).stdout
    return [f["text"] for f in json.loads(out)["facts"]]


def typed_then_changed_next_to_a_change(a: Path, c: Path, name: str, line: str,
                                        change: list[str], other: list[str] | str) -> Path:
    """C types `line` into `name`; A syncs it; C changes it by `change` (a memvault
    command) and commits; A runs `other` (or types that line into the same file) and
    syncs; C pulls with --rebase (a union)."""
    path = c / "Pilot" / name
    path.write_bytes(path.read_bytes() + line.encode() + b"\n")
    plain_sync(c)
    Cli(a)("sync")
    Cli(c)(*change)
    git(c, "commit", "-qam", "changed by memvault")
    if isinstance(other, str):
        theirs = a / "Pilot" / name
        theirs.write_bytes(theirs.read_bytes() + other.encode() + b"\n")
    else:
        Cli(a)(*other)
    Cli(a)("sync")
    pull = subprocess.run(["git", "pull", "-q", "--rebase"], cwd=c, capture_output=True,
                          text=True, timeout=120)
    assert pull.returncode == 0, pull.stderr
    return path


def test_a_stamped_hand_bullet_is_not_stamped_twice_after_a_union(world) -> None:
    a, b, c = world
    mem = typed_then_changed_next_to_a_change(a, c, "Memory.md", "- hand kiwi",
                                              ["doctor", "--fix"],
                                              ["remember", "new fact on A"])
    # What git's union left: the old id-less line and the stamped one.
    texts = [(t, p) for t, _, p in items(mem) if t == "hand kiwi"]
    assert texts == [("hand kiwi", True), ("hand kiwi", False)] or \
        sorted(texts) == [("hand kiwi", False), ("hand kiwi", True)]
    [stamped] = [i for t, i, p in items(mem) if t == "hand kiwi" and not p]
    # Reading already sees one fact; the file waits for the next write.
    assert live_texts(c).count("hand kiwi") == 1
    doctor = Cli(c)("doctor", expect=None).stdout
    assert f"copy of {stamped}" in doctor
    assert "stamps it" not in doctor  # one piece of advice: never offered an id of its own
    fixed = Cli(c)("doctor", "--fix", expect=None)
    assert "stamped id" not in fixed.stdout + fixed.stderr  # never a second id
    assert [(t, i) for t, i, _ in items(mem) if t == "hand kiwi"] == [("hand kiwi", stamped)]
    said = fixed.stdout + fixed.stderr
    assert said.count(f"copy of {stamped}") == 1 and "Pilot/Memory.md" in said
    assert "hand kiwi" not in said  # the report names the file and the id, not the words
    git(c, "commit", "-qam", "settled")
    git(c, "push", "-q")
    for clone_root in (a, b):
        Cli(clone_root)("sync")
        assert live_texts(clone_root).count("hand kiwi") == 1
        assert Cli(clone_root)("doctor", expect=None).stdout.count("hand kiwi") == 0
    assert live_texts(c).count("new fact on A") == 1


def test_an_edited_hand_bullet_keeps_its_old_line_as_the_users_own(world) -> None:
    """A union can leave a typed line's old words beside the fact an edit made of it. Those
    words differ from every live fact, and a line typed again with them looks the same in
    the file, so they are kept (a duplicate the user can delete), never removed."""
    a, _, c = world
    mem = c / "Pilot/Memory.md"
    mem.write_bytes(mem.read_bytes() + b"- hand kiwi\n")
    provisional = next(i for t, i, _ in items(mem) if t == "hand kiwi")
    mem.write_bytes(mem.read_bytes()[:-len(b"- hand kiwi\n")])
    mem = typed_then_changed_next_to_a_change(
        a, c, "Memory.md", "- hand kiwi", ["memory", "edit", provisional, "ripe hand kiwi"],
        ["remember", "new fact on A"])
    Cli(c)("remember", "another fact on C")
    kiwis = sorted(t for t, _, _ in items(mem) if "kiwi" in t)
    assert kiwis == ["hand kiwi", "ripe hand kiwi"]


def test_words_typed_again_after_an_edit_are_kept(tmp_path) -> None:
    """No merge at all: a typed bullet edited by memvault, then the old words typed again
    as a new bullet. The new line is the user's, not a leftover."""
    init_vault(tmp_path / "v")
    mem = tmp_path / "v" / "Pilot/Memory.md"
    mem.write_bytes(mem.read_bytes() + b"- coffee\n")
    typed = next(i for t, i, _ in items(mem) if t == "coffee")
    Cli(tmp_path / "v")("memory", "edit", typed, "tea")
    mem.write_bytes(mem.read_bytes() + b"- coffee\n")
    out = Cli(tmp_path / "v")("remember", "something else")
    assert "copy of" not in out.stderr
    assert sorted(t for t, _, _ in items(mem)) == ["coffee", "something else", "tea"]


@pytest.mark.parametrize("name, line, kind", [
    ("Lessons.md", "- Check the tests first", "lesson"),
    ("Inbox.md", "- [ ] I prefer short replies", "proposal"),
])
def test_lessons_and_inbox_leftovers_are_settled_too(world, name: str, line: str,
                                                     kind: str) -> None:
    a, _, c = world
    other: list[str] | str = "- Write the docs too" if kind == "lesson" else \
        ["propose", "I prefer bullet lists"]
    path = typed_then_changed_next_to_a_change(a, c, name, line, ["doctor", "--fix"], other)
    text = line.split("] ", 1)[-1] if "[ ]" in line else line[2:]
    before = [p for t, _, p in items(path) if t == text]
    assert sorted(before) == [False, True]  # what git's union left
    Cli(c)("doctor", "--fix")
    after = [(t, p) for t, _, p in items(path) if t == text]
    assert after == [(text, False)]


def test_a_hand_bullet_that_was_never_a_fact_is_kept(world) -> None:
    a, _, c = world
    mem = c / "Pilot/Memory.md"
    # Typed by hand with the words of an older version of a remembered fact, and with
    # words no fact ever had: both are the user's own, never a leftover.
    tea = next(i for t, i, p in items(mem) if t == "I like tea")
    Cli(c)("memory", "edit", tea, "I like green tea")
    mem.write_bytes(mem.read_bytes() + b"- I like tea\n- I like coffee\n")
    Cli(c)("doctor", "--fix")
    texts = [t for t, _, _ in items(mem)]
    assert texts.count("I like tea") == 1 and texts.count("I like coffee") == 1
    assert texts.count("I like green tea") == 1
