"""Symlinks never widen a write: not to Policy.md, not to another note, not out of the vault,
not to another principal — whether the link was made by hand, arrived through `sync`, or
is met by an MCP client at the default access level."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memvault import Vault
from tests.conftest import Cli, run_memvault
from tests.mcp_helpers import call, in_process, run

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt",
                                reason="POSIX symlinks")

POLICY = "Pilot/Policy.md"


def _mv(vault_dir: Path, *args: str):  # type: ignore[no-untyped-def]
    return run_memvault("--vault", str(vault_dir), *args, timeout=60)


def _one_line(result, *parts: str) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = [ln for ln in result.stderr.splitlines() if not ln.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])


def test_profile_linked_to_policy_cannot_raise_a_limit(vault_dir: Path) -> None:
    """The issue's reproduction: `profile set` through Profile.md -> Policy.md."""
    assert _mv(vault_dir, "policy", "set", "max_trade_usd", "250").returncode == 0
    before = (vault_dir / POLICY).read_bytes()
    profile = vault_dir / "Pilot" / "Profile.md"
    profile.unlink()
    profile.symlink_to("Policy.md")
    _one_line(_mv(vault_dir, "profile", "set", "max_trade_usd", "1000000"),
              "Pilot/Profile.md", "symlink", "nothing was written")
    assert (vault_dir / POLICY).read_bytes() == before
    shown = _mv(vault_dir, "policy", "show", "--json")
    assert '"max_trade_usd": 250' in shown.stdout
    doctor = _mv(vault_dir, "doctor")
    assert doctor.returncode == 1
    assert "Pilot/Profile.md: is reached through a symlink (it leads to Pilot/Policy.md)" \
        in doctor.stdout


def test_inbox_linked_to_policy_refuses_an_mcp_proposal(vault_dir: Path) -> None:
    """At the default access level an agent can only propose; through Inbox.md ->
    Policy.md that proposal would have been appended to the limits."""
    Vault.open(vault_dir).policy.set("max_trade_usd", "250")
    before = (vault_dir / POLICY).read_bytes()
    inbox = vault_dir / "Pilot" / "Inbox.md"
    inbox.unlink(missing_ok=True)
    inbox.symlink_to("Policy.md")

    async def body() -> None:
        async with in_process(vault_dir) as client:
            is_error, text = await call(client, "memory_propose",
                                        {"text": "max_trade_usd: 1000000"})
            assert is_error and "Pilot/Inbox.md" in text and "symlink" in text
            is_error, data = await call(client, "policy_show", {})
            assert not is_error and data["limits"]["max_trade_usd"] == 250

    run(body)
    assert (vault_dir / POLICY).read_bytes() == before


def test_a_policy_that_is_a_symlink_fails_closed(vault_dir: Path) -> None:
    """Limits read through a link would follow whatever is written to the target (here
    the inbox, which agents write to), so a symlinked Policy.md is no policy at all."""
    policy = vault_dir / POLICY
    policy.unlink()
    policy.symlink_to("Inbox.md")
    shown = _mv(vault_dir, "policy", "check")
    assert shown.returncode == 1 and "symlink" in shown.stdout + shown.stderr
    context = _mv(vault_dir, "context", "--json")
    assert context.returncode == 0
    assert '"state": "invalid"' in context.stdout and '"limits": null' in context.stdout
    _one_line(_mv(vault_dir, "policy", "set", "max_trade_usd", "5"), POLICY, "symlink")
    assert policy.is_symlink()


def test_memory_linked_to_another_note_or_outside_is_refused(vault_dir: Path,
                                                             tmp_path: Path) -> None:
    (vault_dir / "Notes").mkdir()
    note = vault_dir / "Notes" / "Diary.md"
    note.write_text("- my private diary line\n")
    memory = vault_dir / "Pilot" / "Memory.md"
    memory.unlink()
    memory.symlink_to(Path("..") / "Notes" / "Diary.md")
    _one_line(_mv(vault_dir, "remember", "A fact"), "Pilot/Memory.md", "symlink")
    assert note.read_text() == "- my private diary line\n"
    outside = tmp_path / "outside.md"
    outside.write_text("outside\n")
    memory.unlink()
    memory.symlink_to(outside)
    _one_line(_mv(vault_dir, "remember", "A fact"), "Pilot/Memory.md", "outside the vault")
    assert outside.read_text() == "outside\n"
    memory.unlink()
    assert _mv(vault_dir, "remember", "A fact").returncode == 0  # the next command works


def test_a_scope_folder_linked_to_another_principal_is_refused(vault_dir: Path) -> None:
    """bob's home linked to the default principal's: bob can neither write its memory
    nor get its limits."""
    Vault.open(vault_dir).policy.set("max_trade_usd", "250")
    scopes = vault_dir / "Pilot" / "scopes"
    scopes.mkdir()
    (scopes / "bob").symlink_to(Path(".."), target_is_directory=True)
    before = {p.name: p.read_bytes() for p in (vault_dir / "Pilot").iterdir() if p.is_file()}
    _one_line(_mv(vault_dir, "--scope", "bob", "remember", "bob's fact"), "symlink")
    shown = _mv(vault_dir, "--scope", "bob", "policy", "check")
    assert shown.returncode == 1 and "symlink" in shown.stdout + shown.stderr
    after = {p.name: p.read_bytes() for p in (vault_dir / "Pilot").iterdir() if p.is_file()}
    assert after == before


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True, timeout=60).stdout


def test_a_symlink_arriving_through_sync_is_reported_and_refused(tmp_path: Path,
                                                                 monkeypatch) -> None:
    """Machine A commits `Pilot/Inbox.md -> Policy.md`; machine B pulls it with
    `memvault sync`. On B, every write through it is refused and doctor says why."""
    from memvault.services.setup import init_vault

    for var, value in (("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@example.com"),
                       ("GIT_COMMITTER_NAME", "t"), ("GIT_COMMITTER_EMAIL", "t@example.com")):
        monkeypatch.setenv(var, value)
    bare = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a, b = tmp_path / "a", tmp_path / "b"
    _git(tmp_path, "clone", "-q", str(bare), str(a))
    init_vault(a)
    Cli(a)("sync", "--setup")
    Cli(a)("policy", "set", "max_trade_usd", "250")
    Cli(a)("propose", "Something to review")
    Cli(a)("sync")
    _git(tmp_path, "clone", "-q", str(bare), str(b))
    Cli(b)("sync", "--setup")
    # machine A (or anyone with push access) replaces the inbox with a link
    (a / "Pilot" / "Inbox.md").unlink()
    (a / "Pilot" / "Inbox.md").symlink_to("Policy.md")
    _git(a, "add", "-A")
    _git(a, "commit", "-q", "-m", "link the inbox")
    _git(a, "push", "-q", "origin", "HEAD")
    Cli(b)("sync", expect=None)
    assert (b / "Pilot" / "Inbox.md").is_symlink()
    before = (b / POLICY).read_bytes()
    _one_line(_mv(b, "propose", "max_trade_usd: 1000000"), "Pilot/Inbox.md", "symlink")

    async def body() -> None:
        async with in_process(b) as client:
            is_error, text = await call(client, "memory_propose", {"text": "limit: none"})
            assert is_error and "symlink" in text

    run(body)
    assert (b / POLICY).read_bytes() == before
    doctor = _mv(b, "doctor")
    assert "Pilot/Inbox.md: is reached through a symlink" in doctor.stdout
