"""Why a write cannot take the vault lock, told truthfully: a read-only vault is called
read-only (not "a symlink?"), and the symlink hint comes only when `.memvault/lock` is
one. The vaults are made read-only for a real `memvault` subprocess the ways
`tests/test_read_only_vault.py` does (modes obeyed by root without capabilities, another
owner, a read-only bind mount)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from tests.test_read_only_vault import WAYS, ReadOnly

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("way", WAYS)
def test_remember_on_a_read_only_vault_says_read_only_not_symlink(tmp_path, memory_vault_dir,
                                                                   way):
    Vault.open(memory_vault_dir).memory.remember("I drink tea")
    before = (memory_vault_dir / "Pilot" / "Memory.md").read_bytes()
    with ReadOnly(way, memory_vault_dir, tmp_path) as ro:
        done = ro.run("remember", "I live in Oslo")
    assert done.returncode == 1, done.stdout
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert ".memvault/lock" in line and "read-only or not writable" in line, line
    assert "symlink" not in line, line
    assert (memory_vault_dir / "Pilot" / "Memory.md").read_bytes() == before


def test_a_lock_file_that_is_a_symlink_is_named_as_one(tmp_path, memory_vault_dir):
    outside = tmp_path / "elsewhere"
    outside.write_text("not memvault's\n")
    lock = memory_vault_dir / ".memvault" / "lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(outside)
    done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(memory_vault_dir),
                           "remember", "I live in Oslo"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")), timeout=120)
    assert done.returncode == 1, done.stdout
    [line] = done.stderr.strip().splitlines()
    assert "is a symlink" in line and "read-only" not in line, line
    assert outside.read_text() == "not memvault's\n"
