"""Forgetting reaches the safety net: a permanent forget leaves no copy of the text in
`.memvault/safety/` (lost.jsonl, last-known copies, fingerprints), even for a fact that had
already been deleted by hand, or one only the net still knows; a crash mid-forget is
finished by the next command, net included."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest

from memvault.services.setup import init_vault
from memvault.state_paths import SAFETY
from tests.conftest import run_memvault
from tests.git_helpers import bare_repo, clone, git, use_git_identity
from tests.test_forget_crash import _forget


def _mv(vault_dir: Path, *args: str, expect: int = 0):  # type: ignore[no-untyped-def]
    done = run_memvault("--vault", str(vault_dir), *args)
    assert done.returncode == expect, (args, done.stdout, done.stderr)
    return done


def _files_with(vault_dir: Path, needle: bytes) -> list[str]:
    """Every file in the vault (hidden folders included) whose bytes hold `needle`."""
    return sorted(p.relative_to(vault_dir).as_posix() for p in vault_dir.rglob("*")
                  if p.is_file() and needle in p.read_bytes())


def _hand_delete(vault_dir: Path, needle: str) -> None:
    path = vault_dir / "Pilot/Memory.md"
    path.write_bytes(b"".join(ln for ln in path.read_bytes().splitlines(keepends=True)
                              if needle.encode() not in ln))


def _remember(vault_dir: Path, text: str) -> str:
    return json.loads(_mv(vault_dir, "remember", text, "--json").stdout)["fact"]["id"]


@pytest.fixture
def plain_vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    init_vault(root)
    return root


@pytest.mark.parametrize("command", [("forget",), ("memory", "delete")])
def test_permanently_forgetting_a_hand_deleted_fact_scrubs_the_net(
        plain_vault: Path, command: tuple[str, ...]) -> None:
    fact_id = _remember(plain_vault, "my PIN is 4242")
    _remember(plain_vault, "I live in Oslo")
    _hand_delete(plain_vault, "4242")
    assert _files_with(plain_vault, b"4242")  # the net kept its copy, as it should
    out = _mv(plain_vault, *command, fact_id, "--permanent", "--yes").stdout
    assert "permanently" in out or "forgot" in out
    _mv(plain_vault, "remember", "something else")  # a later write notes what vanished
    assert _files_with(plain_vault, b"4242") == []
    assert "all good" in _mv(plain_vault, "doctor").stdout
    assert json.loads(_mv(plain_vault, "memory", "recover", "--json").stdout)["lost"] == []
    assert "I live in Oslo" in (plain_vault / "Pilot/Memory.md").read_text()


def test_a_permanent_forget_after_the_loss_was_noted_scrubs_lost_jsonl(plain_vault: Path) -> None:
    fact_id = _remember(plain_vault, "my safe code is 9911")
    _hand_delete(plain_vault, "9911")
    _mv(plain_vault, "remember", "absorb the loss")  # moves the line into lost.jsonl
    assert (plain_vault / SAFETY / "lost.jsonl").read_bytes().count(b"9911")
    _mv(plain_vault, "forget", fact_id, "--permanent", "--yes")
    assert _files_with(plain_vault, b"9911") == []


def test_an_id_only_the_net_knows_can_be_forgotten_permanently(plain_vault: Path) -> None:
    """The journal no longer has the record (its lines were trimmed by hand, say); the net
    still holds its text: `forget --permanent ID` finds it there and erases it."""
    fact_id = _remember(plain_vault, "my alarm code is 7788")
    _hand_delete(plain_vault, "7788")
    _mv(plain_vault, "remember", "absorb the loss")
    events = plain_vault / ".memvault/events.jsonl"
    events.write_bytes(b"".join(ln for ln in events.read_bytes().splitlines(keepends=True)
                                if fact_id.encode() not in ln))
    assert _files_with(plain_vault, b"7788") == [".memvault/safety/lost.jsonl"]
    _mv(plain_vault, "forget", fact_id, "--permanent", "--yes")
    assert _files_with(plain_vault, b"7788") == []
    _mv(plain_vault, "forget", fact_id, "--permanent", "--yes", expect=1)  # nothing left


@pytest.mark.slow
def test_a_forget_of_a_hand_deleted_fact_killed_at_any_step_leaves_no_copy(
        plain_vault: Path, tmp_path: Path) -> None:
    """The intent covers the net: SIGKILL after each fsync, then any command finishes it."""
    fact_id = _remember(plain_vault, "my PIN is 4242")
    _remember(plain_vault, "I use vim")
    _hand_delete(plain_vault, "4242")
    full = tmp_path / "full"
    shutil.copytree(plain_vault, full)
    done = _forget(full, fact_id, 10**9)
    assert done.returncode == 0, done.stderr
    assert _files_with(full, b"4242") == []
    steps = int(done.stderr.split("fsyncs")[-1])
    for n in range(1, steps + 1):
        vault_dir = tmp_path / f"kill-{n}"
        shutil.copytree(plain_vault, vault_dir)
        assert _forget(vault_dir, fact_id, n).returncode == -signal.SIGKILL, n
        _mv(vault_dir, "remember", f"the next command {n}")
        assert not (vault_dir / ".memvault/pending-forgets.jsonl").exists(), n
        left = _files_with(vault_dir, b"4242")
        if left:  # killed before the intent was durable: nothing forgotten yet
            _mv(vault_dir, "forget", fact_id, "--permanent", "--yes")
            assert _files_with(vault_dir, b"4242") == [], n


# -- a forget made on another clone ------------------------------------------------------


@pytest.fixture
def clones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Two clones of a bare repo, each set up with `memvault sync --setup`."""
    use_git_identity(monkeypatch)
    bare = bare_repo(tmp_path)
    a = clone(bare, tmp_path / "A")
    init_vault(a)
    _mv(a, "sync", "--setup")
    _mv(a, "remember", "I use vim")
    _mv(a, "sync")
    b = clone(bare, tmp_path / "B")
    _mv(b, "sync", "--setup")
    return a, b


@pytest.mark.parametrize("permanent", [True, False])
def test_a_fact_forgotten_on_another_clone_after_an_edit_is_never_lost(
        clones: tuple[Path, Path], permanent: bool) -> None:
    a, b = clones
    fact_id = _remember(a, "my code is 5566 heron")
    _mv(a, "sync")
    _mv(b, "sync")
    _mv(b, "memory", "edit", fact_id, "my code is 5566 heron, sure")
    _mv(b, "sync")
    _mv(a, "sync")
    _mv(b, "forget", fact_id, "--yes", *(["--permanent"] if permanent else []))
    _mv(b, "sync")
    _mv(a, "sync")
    if permanent:  # the forget arrived: no copy left in A's net, even before a write
        assert _files_with(a / SAFETY, b"5566") == []
    _mv(a, "remember", "x")  # a write notes what vanished since memvault last looked
    assert _files_with(a / SAFETY, b"5566") == []
    doctor = _mv(a, "doctor")
    assert "vanished" not in doctor.stdout and "all good" in doctor.stdout
    assert json.loads(_mv(a, "memory", "recover", "--json").stdout)["lost"] == []
    refused = _mv(a, "memory", "recover", fact_id, expect=1)
    assert fact_id in refused.stderr
    assert "5566" not in (a / "Pilot/Memory.md").read_text()
    if permanent:
        assert _files_with(a, b"5566") == [] or all(
            p.startswith(".git/") for p in _files_with(a, b"5566"))


def test_a_fact_lost_by_accident_is_still_offered_after_a_sync(
        clones: tuple[Path, Path]) -> None:
    """The rule is about forgets: a hand deletion synced in from elsewhere stays a loss."""
    a, b = clones
    fact_id = _remember(a, "my bike is blue")
    _mv(a, "sync")
    _mv(b, "sync")
    path = b / "Pilot/Memory.md"
    path.write_text("".join(ln for ln in path.read_text().splitlines(keepends=True)
                            if "bike" not in ln))
    git(b, "commit", "-qam", "edited by hand")
    git(b, "push", "-q")
    _mv(a, "sync")
    lost = json.loads(_mv(a, "memory", "recover", "--json").stdout)["lost"]
    assert [it["id"] for it in lost] == [fact_id]
