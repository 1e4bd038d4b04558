"""Forgotten words in git history: `forget --permanent` counts the commits that still hold
them; `--rewrite-history` rewrites this clone's history (git-filter-repo), and the remote's
only through `sync --force-with-lease`; another clone is told, not made to pull them
back. Real git, real clones of a bare repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memvault.services.setup import init_vault
from tests.conftest import Cli
from tests.git_helpers import bare_repo, clone, git, use_git_identity

SECRET = "My bank PIN is 4242"
# What must be gone: the phrase, not the bare number, which a timestamp, an object id or
# a random record id can hold by chance (`git cat-file --batch` prints every object id in
# hex: with ~60 objects, "4242" turns up in about one run in twenty).
WORDS = "PIN is 4242"


def holding(repo: Path, words: str) -> int:
    """Lines of every commit's patch (all refs and reflogs) that hold `words`."""
    log = subprocess.run(["git", "log", "-p", "--all", "--reflog"], cwd=repo,
                         capture_output=True, text=True, timeout=60).stdout
    return log.count(words)


def in_any_object(repo: Path, words: str) -> bool:
    out = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo,
                         capture_output=True, timeout=60).stdout
    return words.encode() in out


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    use_git_identity(monkeypatch)
    bare = bare_repo(tmp_path)
    a = clone(bare, tmp_path / "a")
    init_vault(a)
    Cli(a)("sync", "--setup")
    fid = json.loads(Cli(a)("remember", SECRET, "--json").stdout)["fact"]["id"]
    Cli(a)("remember", "I like tea")
    Cli(a)("sync")
    Cli(a)("memory", "edit", fid, SECRET + ", and 4243 at work")
    Cli(a)("sync")
    b = clone(bare, tmp_path / "b")
    Cli(b)("sync", "--setup")
    return a, b, bare


def test_a_permanent_forget_says_how_many_commits_still_hold_the_words(world) -> None:
    a, _, _ = world
    out = Cli(a)("forget", "PIN", "--permanent", "--yes")
    assert "forgot 1 fact(s) permanently" in out.stdout
    assert "the words are still in 2 commit(s) of this clone's git history" in out.stderr
    assert "--rewrite-history" in out.stderr and WORDS not in out.stderr
    assert WORDS not in (a / "Pilot/Memory.md").read_text()
    assert holding(a, WORDS) > 0  # nothing rewritten without asking


def test_rewrite_history_removes_the_words_from_every_commit_and_object_here(world) -> None:
    a, _, bare = world
    ahead_before = git(a, "rev-list", "--count", "HEAD")
    out = Cli(a)("forget", "PIN", "--permanent", "--rewrite-history", "--yes", "--json")
    data = json.loads(out.stdout)
    assert data["permanent"] is True and data["history"]["rewritten"] is True
    assert data["history"]["commits_before"] == 2 and data["history"]["commits_after"] == 0
    assert holding(a, WORDS) == 0 and not in_any_object(a, WORDS)
    assert git(a, "rev-list", "--count", "HEAD") >= ahead_before  # no commit dropped
    assert "I like tea" in (a / "Pilot/Memory.md").read_text()
    assert git(a, "remote") == "origin\n"  # the remote is kept, to push to
    assert holding(bare, WORDS) > 0  # the remote is untouched until asked


def test_the_rewritten_history_reaches_the_remote_only_with_force_with_lease(world) -> None:
    a, b, bare = world
    Cli(a)("forget", "PIN", "--permanent", "--rewrite-history", "--yes")
    refused = Cli(a)("sync", expect=1)
    assert "history was rewritten" in refused.stdout and "--force-with-lease" in refused.stdout
    assert holding(bare, WORDS) > 0
    report = json.loads(Cli(a)("sync", "--force-with-lease", "--json").stdout)
    assert report["pushed"] is True
    assert holding(bare, WORDS) == 0
    # Afterwards syncing is ordinary again.
    Cli(a)("remember", "After the rewrite")
    assert json.loads(Cli(a)("sync", "--json").stdout)["pushed"] is True
    # Another clone is told (its own copy keeps the old history) and not made to pull
    # the words back; the steps given work.
    out = Cli(b)("sync", expect=1)
    assert "history was rewritten" in out.stdout and "git reset --keep origin/main" in out.stdout
    assert holding(bare, WORDS) == 0
    git(b, "reset", "-q", "--keep", "origin/main")
    Cli(b)("sync")
    assert "After the rewrite" in (b / "Pilot/Memory.md").read_text()
    assert WORDS not in (b / "Pilot/Memory.md").read_text()
    assert WORDS not in (b / ".memvault/events.jsonl").read_text()


def test_the_lease_protects_a_push_made_meanwhile(world) -> None:
    a, b, bare = world
    Cli(a)("forget", "PIN", "--permanent", "--rewrite-history", "--yes")
    Cli(b)("remember", "Pushed by B meanwhile")
    Cli(b)("sync")
    out = Cli(a)("sync", "--force-with-lease", expect=1)
    assert "not pushed" in out.stdout and "nothing of theirs was overwritten" in out.stdout
    assert "Pushed by B meanwhile" in git(bare, "show", "main:Pilot/Memory.md")


def test_words_forgotten_earlier_can_still_be_rewritten_away(world) -> None:
    a, _, _ = world
    Cli(a)("forget", "PIN", "--permanent", "--yes")
    Cli(a)("sync")
    Cli(a)("forget", "4242", "--permanent", "--rewrite-history", "--yes")
    assert holding(a, WORDS) == 0
    missing = Cli(a)("forget", "never written anywhere", "--permanent", "--rewrite-history",
                     "--yes", expect=1)
    assert "no commit of this clone's history holds those words" in missing.stderr


def test_rewrite_history_needs_permanent(world) -> None:
    a, _, _ = world
    out = Cli(a)("forget", "PIN", "--rewrite-history", "--yes", expect=2)
    assert "--rewrite-history goes with --permanent" in out.stderr
