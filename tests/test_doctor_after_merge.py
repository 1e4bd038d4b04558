"""What doctor says about what a plain `git pull` (git's union merge, a clone that never ran
`memvault sync --setup`) left in Memory.md: one piece of advice per situation, and the
right one (no "duplicate id: `--fix` renumbers" for what the next write settles as one
fact)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from memvault.services.setup import init_vault
from tests.conftest import run_memvault
from tests.git_helpers import bare_repo, clone, git, use_git_identity


def _mv(root: Path, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    done = run_memvault("--vault", str(root), *args)
    assert done.returncode == expect, (args, done.stdout, done.stderr)
    return done


@pytest.fixture
def a_and_plain_c(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    use_git_identity(monkeypatch)
    bare = bare_repo(tmp_path)
    a = clone(bare, tmp_path / "A")
    init_vault(a)
    _mv(a, "sync", "--setup")
    _mv(a, "remember", "I use vim")
    _mv(a, "sync")
    c = clone(bare, tmp_path / "C")  # never runs `sync --setup`
    git(c, "config", "pull.rebase", "false")
    return a, c


def _findings(root: Path) -> list[dict]:
    return json.loads(_mv(root, "doctor", "--json", expect=1).stdout)["findings"]


def test_the_same_edit_on_two_machines_is_one_finding_that_fix_settles(
        a_and_plain_c: tuple[Path, Path]) -> None:
    a, c = a_and_plain_c
    fid = json.loads(_mv(a, "memory", "list", "--json").stdout)["facts"][0]["id"]
    _mv(c, "memory", "edit", fid, "I use neovim")
    git(c, "commit", "-qam", "edit on C")
    time.sleep(1.1)  # a later `updated:` stamp on A
    _mv(a, "memory", "edit", fid, "I use neovim")
    _mv(a, "sync")
    git(c, "pull", "-q", "--no-edit")  # git's union merge: both lines stay
    memory = (c / "Pilot/Memory.md").read_text()
    assert memory.count(f"id:{fid}") == 2
    about = [f for f in _findings(c) if f["path"] == "Pilot/Memory.md"]
    assert len(about) == 1, about
    assert "same change made on two machines" in about[0]["message"]
    assert "new ids" not in about[0]["message"]
    fixed = json.loads(_mv(c, "doctor", "--fix", "--json").stdout)
    assert fixed["ok"] and (c / "Pilot/Memory.md").read_text().count(f"id:{fid}") == 1


def test_a_copied_line_is_one_duplicate_finding_that_fix_renumbers(
        a_and_plain_c: tuple[Path, Path]) -> None:
    _, c = a_and_plain_c
    path = c / "Pilot/Memory.md"
    line = next(ln for ln in path.read_text().splitlines() if "I use vim" in ln)
    path.write_text(path.read_text() + line.replace("I use vim", "I use vim daily") + "\n")
    about = [f for f in _findings(c) if f["path"] == "Pilot/Memory.md"]
    assert len(about) == 1 and "`doctor --fix` gives the later copies new ids" in \
        about[0]["message"], about
    assert json.loads(_mv(c, "doctor", "--fix", "--json").stdout)["ok"]
