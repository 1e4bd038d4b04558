"""Shared fixtures. Every test runs against a fresh vault in a temp folder, with all
per-user state (HOME, XDG_DATA_HOME, MEMVAULT_*) pointed at the temp folder."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest
from click.testing import CliRunner

from memvault import Vault
from memvault.cli.app import app
from memvault.services.setup import init_vault

# the hosted tests' stores (SQLite and a PostgreSQL server shared by the session)
pytest_plugins = ["tests.hosted_backends"]

@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    for var in list(os.environ):
        if var.startswith("MEMVAULT_") or var in ("GITHUB_TOKEN", "EDITOR", "VISUAL"):
            monkeypatch.delenv(var, raising=False)


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    """A vault with the trading parts (`init --trading`): most tests exercise those too."""
    root = tmp_path / "vault"
    init_vault(root, trading=True)
    return root


@pytest.fixture
def memory_vault_dir(tmp_path: Path) -> Path:
    """A vault as plain `memvault init` makes it: memory only, no trading parts."""
    root = tmp_path / "notes"
    init_vault(root)
    return root


@pytest.fixture
def vault(vault_dir: Path) -> Vault:
    return Vault.open(vault_dir)


class Cli:
    """Runs the real Typer app in-process against one vault."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None, expect: int | None = 0):
        result = self.runner.invoke(app, ["--vault", str(self.root), *args], input=input)
        if expect is not None:
            assert result.exit_code == expect, (
                f"exit {result.exit_code} != {expect}\nstdout: {result.stdout}\n"
                f"stderr: {result.stderr}\nexception: {result.exception!r}")
        return result


@pytest.fixture
def cli(vault_dir: Path) -> Cli:
    return Cli(vault_dir)


@pytest.fixture
def refused_port():  # type: ignore[no-untyped-def]
    """A loopback port that refuses connections for the whole test: bound by this socket
    but never listening. (A port merely found free could be taken meanwhile by a server
    another test starts in a parallel process.)"""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def run_memvault(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                 input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run `python -m memvault` as a real subprocess."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "memvault", *args], cwd=cwd, env=full_env,
                          input=input, capture_output=True, text=True, timeout=timeout)


# -- the shared corpus of real vaults ---------------------------------------------------

CORPUS_ENV = "MEMVAULT_TEST_CORPUS"
REPO_ROOT = Path(__file__).resolve().parents[1]


def corpus_folder() -> tuple[Path, bool]:
    """Where the real-vault corpus is, and whether it is required.

    `MEMVAULT_TEST_CORPUS` names the folder and makes the corpus required (`.ci/run` sets
    it, so a missing corpus fails CI). Without it, the folder is `shared/corpus` beside
    the repository (how CI lays out its checkout), and tests skip when it is absent.
    """
    named = os.environ.get(CORPUS_ENV)
    if named:
        return Path(named).expanduser().absolute(), True
    return REPO_ROOT.parent / "shared" / "corpus", False


def set_up_unavailable(reason: str) -> NoReturn:
    """A test whose set-up this machine cannot give (a PostgreSQL server, a read-only
    mount, a process without root's powers): it fails under CI (`CI=true`), where the
    set-up is promised, and skips elsewhere, naming the reason either way."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def corpus_file(name: str) -> Path:
    """A file of the corpus, or skip (or fail, when required) naming what is missing."""
    folder, required = corpus_folder()
    path = folder / name
    if not path.is_file():
        if required:
            pytest.fail(f"corpus file {path} is missing and {CORPUS_ENV} requires it")
        pytest.skip(f"corpus absent: no {name} in {folder} (put shared/corpus beside the "
                    f"repository or set {CORPUS_ENV} to its folder)")
    return path
