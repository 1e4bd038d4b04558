"""The temp file a killed write leaves (`Pilot/.Memory.md.<12 hex>.tmp`): never shared by
`memvault sync`, ignored by plain git, named by `doctor`, removed by `doctor --fix` and by
the next write or forget, never by a read.

The outside actors: a real `memvault remember` process SIGKILLed right after the folder
`fsync` that follows its exchange (the temp name then holds the *previous* Memory.md), a
plain `git add -A` (what Obsidian Git runs), and a history where an older memvault already
committed such a file. Real git with a bare repository throughout.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_remember_kill import KILLED_REMEMBER

ROOT = Path(__file__).resolve().parents[1]
SECRET = "my locker code is quokka4471"
PLANTED = ".Memory.md.0123456789ab.tmp"
IGNORED = "Pilot/**/.*." + "[0-9a-f]" * 12 + ".tmp"  # memvault's temp names only


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_COLOR="1")
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        env[var] = "t"
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        env[var] = "t@example.com"
    return env


def mv(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root), *args],
                          env=_env(), capture_output=True, text=True, timeout=120)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True, env=_env(), timeout=60).stdout


def temps(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "Pilot").glob(".*.tmp"))


def in_history(bare: Path) -> list[str]:
    """Every path any commit of the shared repository ever held."""
    out = git(bare, "log", "--all", "--name-only", "--format=")
    return sorted({ln for ln in out.splitlines() if ln.strip()})


@pytest.fixture
def clone(tmp_path: Path) -> tuple[Path, Path]:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    root = tmp_path / "a"
    git(tmp_path, "clone", "-q", str(bare), str(root))
    assert mv(root, "init").returncode == 0
    for text in ("I drink tea", SECRET):
        assert mv(root, "remember", text).returncode == 0
    done = mv(root, "sync")
    assert done.returncode == 0, done.stderr
    return root, bare


def _killed_after_the_exchange(root: Path, tmp_path: Path) -> None:
    """`remember` SIGKILLed right after its second fsync (the folder's, after the
    exchange): the temp name now holds the previous Memory.md."""
    done = subprocess.run([sys.executable, "-c", KILLED_REMEMBER, str(tmp_path / "log"), "2",
                           "--vault", str(root), "remember", "I play the cello"],
                          env=_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_a_killed_remembers_leftover_is_never_pushed_and_the_next_sync_removes_it(
        clone: tuple[Path, Path], tmp_path: Path) -> None:
    root, bare = clone
    _killed_after_the_exchange(root, tmp_path)
    [left] = temps(root)
    assert SECRET in (root / "Pilot" / left).read_text()  # the previous copy of the file
    assert mv(root, "memory", "list").returncode == 0  # reads leave it
    assert mv(root, "search", "locker").returncode in (0, 1)
    assert temps(root) == [left]
    done = mv(root, "sync")
    assert done.returncode == 0, done.stderr
    assert ".tmp" not in done.stdout
    assert temps(root) == []
    assert not [p for p in in_history(bare) if p.endswith(".tmp")]
    assert "I play the cello" in git(bare, "show", "main:Pilot/Memory.md")


def test_a_temp_an_older_version_committed_stops_being_tracked(
        clone: tuple[Path, Path]) -> None:
    root, bare = clone
    (root / "Pilot" / PLANTED).write_text((root / "Pilot" / "Memory.md").read_text())
    git(root, "add", "-f", f"Pilot/{PLANTED}")
    git(root, "commit", "-q", "-m", "what an older memvault sync committed")
    git(root, "push", "-q")
    done = mv(root, "sync")
    assert done.returncode == 0, done.stderr
    assert f"Pilot/{PLANTED}" in done.stdout  # the commit that removes it
    assert temps(root) == []
    assert PLANTED not in git(bare, "ls-tree", "-r", "--name-only", "main")
    assert git(root, "status", "--porcelain") == ""


def test_plain_git_add_all_ignores_the_temps_also_in_a_clone_set_up_before(
        clone: tuple[Path, Path]) -> None:
    root, _ = clone
    ignore = root / ".gitignore"
    assert IGNORED in ignore.read_text().splitlines()
    # a clone set up by an older memvault: its .gitignore lacks the line; a user line too
    older = [ln for ln in ignore.read_text().splitlines() if ln != IGNORED]
    ignore.write_text("\n".join([*older, "  *.bak   # mine, spaced as I like"]) + "\n")
    git(root, "commit", "-q", "-am", "older setup")
    assert mv(root, "sync").returncode == 0
    lines = ignore.read_text().splitlines()
    assert lines[:len(older) + 1] == [*older, "  *.bak   # mine, spaced as I like"]
    assert lines.count(IGNORED) == 1
    (root / "Pilot" / "scopes" / "bob").mkdir(parents=True)
    for where in (root / "Pilot" / PLANTED, root / "Pilot/scopes/bob" / PLANTED):
        where.write_text(SECRET + "\n")
    (root / "Pilot" / ".my-draft.tmp").write_text("a user's own hidden file\n")
    git(root, "add", "-A")  # what Obsidian Git does
    assert [ln for ln in git(root, "status", "--porcelain").splitlines() if ".tmp" in ln] == [
        "A  Pilot/.my-draft.tmp"]


def test_doctor_names_the_leftover_and_fix_removes_it(clone: tuple[Path, Path]) -> None:
    root, _ = clone
    (root / "Pilot" / PLANTED).write_text((root / "Pilot" / "Memory.md").read_text())
    (root / "Pilot" / ".notes.tmp").write_text("a user's own hidden file\n")  # not ours
    found = mv(root, "doctor")
    assert found.returncode == 1
    [line] = [ln for ln in found.stdout.splitlines() if ".tmp" in ln]
    assert f"Pilot/{PLANTED}" in line and "killed write" in line and "older copy" in line
    report = json.loads(mv(root, "--json", "doctor").stdout)
    assert [f["path"] for f in report["findings"] if ".tmp" in f["path"]] == [
        f"Pilot/{PLANTED}"]
    fixed = mv(root, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout
    assert f"removed Pilot/{PLANTED}" in fixed.stdout
    assert temps(root) == [".notes.tmp"]
    assert mv(root, "doctor").returncode == 0
    done = mv(root, "sync")  # the user's own hidden file is theirs to share
    assert done.returncode == 0, done.stderr
    assert "Pilot/.notes.tmp" in git(root, "ls-files")


def test_a_forget_removes_an_exchanged_out_copy_holding_the_words(
        clone: tuple[Path, Path], tmp_path: Path) -> None:
    root, _ = clone
    _killed_after_the_exchange(root, tmp_path)
    assert len(temps(root)) == 1
    facts = json.loads(mv(root, "memory", "list", "--json").stdout)["facts"]
    [fid] = [f["id"] for f in facts if f["text"] == SECRET]
    done = mv(root, "forget", "--permanent", "--yes", fid)
    assert done.returncode == 0, done.stderr
    assert temps(root) == []
    hits = subprocess.run(["grep", "-rl", "quokka4471", str(root / "Pilot")],
                          capture_output=True, text=True, timeout=30)
    assert hits.stdout == ""
