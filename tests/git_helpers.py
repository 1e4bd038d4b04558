"""Real git for the sync tests: a bare repository on the local disk and clones of it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memvault import Vault

GIT_IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(cwd: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def git_proc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def use_git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for var, value in GIT_IDENTITY.items():
        monkeypatch.setenv(var, value)


def bare_repo(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    return bare


def clone(bare: Path, where: Path) -> Path:
    git(where.parent, "clone", "-q", str(bare), str(where))
    return where


def fact_texts(root: Path) -> set[str]:
    return {f.text for f in Vault.open(root).memory.all()}


def fact_ids(root: Path) -> dict[str, str]:
    return {f.text: f.id for f in Vault.open(root).memory.all()}


def three_clones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 facts: tuple[str, ...]) -> tuple[Path, Path, Path]:
    """A bare remote and three clones: A made the vault with `facts` and pushed it, A and B
    ran `sync --setup`, C is a plain clone that never did (like Obsidian Git)."""
    from memvault.services.setup import init_vault
    from tests.conftest import Cli

    use_git_identity(monkeypatch)
    bare = bare_repo(tmp_path)
    a = clone(bare, tmp_path / "a")
    init_vault(a)
    Cli(a)("sync", "--setup")
    for text in facts:
        Cli(a)("remember", text)
    Cli(a)("sync")
    b = clone(bare, tmp_path / "b")
    Cli(b)("sync", "--setup")
    return a, b, clone(bare, tmp_path / "c")
