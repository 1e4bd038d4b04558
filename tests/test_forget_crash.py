"""`forget --permanent` killed at every step: once the next command has run, either the fact
is intact or no copy of its text is left anywhere in the vault.

The kill is the outside actor: a real `memvault` process SIGKILLs itself right after its
N-th `fsync` (every durable step of a write: a staged temp file, a folder, an append), for
N = 1, 2, ... up to the number of fsyncs a full run makes. memvault's code runs unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from tests.conftest import run_memvault

ROOT = Path(__file__).resolve().parents[1]
SECRETS = (b"X1234567", b"Y7654321")  # the fact's text before and after an edit

KILLED_FORGET = r"""
import os, signal, sys
limit = int(sys.argv[2])
real_fsync, count = os.fsync, [0]
def fsync(fd):
    real_fsync(fd)
    count[0] += 1
    if count[0] == limit:
        os.kill(os.getpid(), signal.SIGKILL)
os.fsync = fsync
from memvault.cli.app import main
sys.argv = ["memvault", "--vault", sys.argv[1], "forget", sys.argv[3], "--permanent", "--yes"]
try:
    main()
finally:
    print("fsyncs", count[0], file=sys.stderr)
"""


def _forget(vault_dir: Path, fact_id: str, kill_after: int) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-c", KILLED_FORGET, str(vault_dir),
                           str(kill_after), fact_id], env=env, capture_output=True, text=True,
                          timeout=120)


def _copies(vault_dir: Path) -> list[str]:
    """Every file in the vault (any folder, hidden ones included) holding the text."""
    return [p.relative_to(vault_dir).as_posix() for p in vault_dir.rglob("*")
            if p.is_file() and any(s in p.read_bytes() for s in SECRETS)]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    from memvault.services.setup import init_vault

    root = tmp_path_factory.mktemp("forget") / "vault"
    init_vault(root)
    vault = Vault.open(root)
    for text in ("I like tea", "I live in Oslo"):
        vault.memory.remember(text)
    fact = vault.memory.remember("My passport number is X1234567").fact
    vault.memory.edit(fact.id, "My passport number is Y7654321")
    vault.memory.remember("I use vim")
    pilot = root / "Pilot"
    (pilot / "Inbox.md").write_text((pilot / "Inbox.md").read_text()
                                    + "- [ ] My passport number is Y7654321\n")
    (pilot / "Lessons.md").write_text("# Lessons\n\n- My passport number is Y7654321\n")
    assert run_memvault("--vault", str(root), "search", "passport").returncode == 0
    assert {"Pilot/Memory.md", ".memvault/events.jsonl", ".memvault/index.sqlite",
            "Pilot/Inbox.md", "Pilot/Lessons.md"} <= set(_copies(root))
    return root, fact.id


@pytest.mark.slow
def test_a_permanent_forget_killed_at_any_step_leaves_the_fact_or_no_copy(
        template: tuple[Path, str], tmp_path: Path) -> None:
    source, fact_id = template
    full = tmp_path / "full"
    shutil.copytree(source, full)
    done = _forget(full, fact_id, 10**9)
    assert done.returncode == 0, done.stderr
    steps = int(done.stderr.split("fsyncs")[-1])
    assert _copies(full) == []
    assert steps >= 10
    outcomes = {"intact": 0, "gone": 0}
    for n in range(1, steps + 1):
        vault_dir = tmp_path / f"kill-{n}"
        shutil.copytree(source, vault_dir)
        killed = _forget(vault_dir, fact_id, n)
        assert killed.returncode == -signal.SIGKILL, (n, killed.stderr)
        # the next command, whatever it is
        nxt = run_memvault("--vault", str(vault_dir), "memory", "list", "--all", "--json")
        assert nxt.returncode == 0, (n, nxt.stderr)
        ids = [f["id"] for f in json.loads(nxt.stdout)["facts"]]
        assert {"I like tea", "I live in Oslo", "I use vim"} <= {
            f["text"] for f in json.loads(nxt.stdout)["facts"]}, n
        assert not (vault_dir / ".memvault" / "pending-forgets.jsonl").exists(), n
        if fact_id in ids:
            outcomes["intact"] += 1
            assert b"Y7654321" in (vault_dir / "Pilot/Memory.md").read_bytes()
            again = run_memvault("--vault", str(vault_dir), "forget", fact_id, "--permanent",
                                 "--yes")
            assert again.returncode == 0, (n, again.stderr)
        else:
            outcomes["gone"] += 1
        assert _copies(vault_dir) == [], (n, _copies(vault_dir))
        tombstoned = Vault.open(vault_dir).tombstones.is_tombstoned(
            "My passport number is Y7654321")
        assert tombstoned, n
    assert outcomes["gone"] > 0
    print(f"{steps} kill points: {outcomes}")


def test_forget_permanent_erases_an_id_only_the_history_holds(cli, vault_dir: Path) -> None:
    """A fact forgotten without --permanent (or lost mid-forget) keeps its text in the
    journal; `forget --permanent ID` must still find it there and erase it."""
    fact_id = json.loads(cli("remember", "My locker code is K4711Z", "--json").stdout)["fact"]["id"]
    cli("forget", fact_id, "--yes")
    assert b"K4711Z" in (vault_dir / ".memvault/events.jsonl").read_bytes()
    assert "no fact matches" in cli("forget", fact_id, "--yes", expect=1).stderr
    out = json.loads(cli("forget", fact_id, "--permanent", "--yes", "--json").stdout)
    assert out["forgotten"] == [{"id": fact_id, "category": "other"}]
    assert out["purged_events"] >= 2
    assert not [p for p in vault_dir.rglob("*")  # the index keeps words case-folded
                if p.is_file() and b"k4711z" in p.read_bytes().lower()]
    assert "no fact matches" in cli("forget", fact_id, "--permanent", "--yes",
                                    expect=1).stderr
    cli("remember", "Another fact")
    memory_delete = json.loads(cli("remember", "My PIN is Q0000Z", "--json").stdout)["fact"]["id"]
    cli("memory", "delete", memory_delete, "--yes")
    cli("memory", "delete", memory_delete, "--permanent", "--yes")
    assert not [p for p in vault_dir.rglob("*")
                if p.is_file() and b"q0000z" in p.read_bytes().lower()]
