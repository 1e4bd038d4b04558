"""A `remember` through the console script (collector off, os._exit at the end) killed at
every step, and the safety net's unsynced copy lost as a power cut can lose it.

The kill is the outside actor: a real `memvault remember` process SIGKILLs itself right
after its N-th step (an `fsync`, a rename or replace: every point where a file changes
for good), for N = 1, 2, ... up to the number of steps a full run makes, on a vault that
holds a forget (so the forgets note is written too). After each kill the next ordinary
commands must find every fact (the new one at most once), no fact reported lost, a
parse-cache entry equal to a full parse, the forgets note in step, and the lock free.

A power cut after a remember can undo the safety net's last copy (replaced without
`fsync`): the test puts back the previous copy, an empty file, or none, and checks that a
permanent forget and the next writes still lose nothing and leave no copy of the words.
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
from memvault.services import forgets_applied
from memvault.services.safety_net import SafetyNet
from memvault.services.setup import init_vault
from tests.test_parse_cache import _entry_matches_a_full_parse

ROOT = Path(__file__).resolve().parents[1]
NET = Path(".memvault") / "safety" / "Pilot%2FMemory.md"

KILLED_REMEMBER = r"""
import os, signal, sys
log, limit = sys.argv[1], int(sys.argv[2])
count = [0]
def step(real):
    def wrapped(*args, **kwargs):
        result = real(*args, **kwargs)
        count[0] += 1
        with open(log, "a") as fh:
            fh.write(f"{real.__name__}\n")
        if count[0] == limit:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return wrapped
os.fsync, os.replace, os.rename = step(os.fsync), step(os.replace), step(os.rename)
os.supports_dir_fd.add(os.rename)  # the parse cache renames inside its folder's descriptor
sys.argv = ["memvault", *sys.argv[3:]]
from memvault.cli.entry import main
main()
"""


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_COLOR="1")


def _remember(root: Path, text: str, log: Path, limit: int) -> subprocess.CompletedProcess[str]:
    log.unlink(missing_ok=True)
    return subprocess.run([sys.executable, "-c", KILLED_REMEMBER, str(log), str(limit),
                           "--vault", str(root), "remember", text], env=_env(),
                          capture_output=True, text=True, timeout=60)


def _mv(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root), *args],
                          env=_env(), capture_output=True, text=True, timeout=60)


def _texts(root: Path) -> list[str]:
    done = _mv(root, "memory", "list", "--all", "--json")
    assert done.returncode == 0, done.stderr
    return sorted(f["text"] for f in json.loads(done.stdout)["facts"])


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kill") / "vault"
    init_vault(root)
    v = Vault.open(root)
    for text in ("I drink tea", "My main project is Aurora", "I live in Oslo"):
        v.memory.remember(text)
    v.memory.forget([v.memory.remember("My old gate code is Q5150Z").fact.id])
    return root


def test_a_remember_killed_at_every_step_loses_nothing(template: Path,
                                                       tmp_path: Path) -> None:
    full = tmp_path / "full"
    shutil.copytree(template, full)
    done = _remember(full, "I play the cello", tmp_path / "steps.txt", 0)
    assert done.returncode == 0, done.stderr
    steps = (tmp_path / "steps.txt").read_text().split()
    # Memory.md staged and its folder, the journal line (fsync); the net's copy and the
    # forgets note (replace); parse-cache entries (rename; a copied vault's cache is
    # rebuilt: its key belongs to the original folder)
    assert (steps.count("fsync"), steps.count("replace")) == (3, 2), steps
    assert steps.count("rename") >= 1, steps
    before = _texts(template)
    for limit in range(1, len(steps) + 1):
        root = tmp_path / f"kill{limit}"
        shutil.copytree(template, root)
        killed = _remember(root, "I play the cello", tmp_path / "log.txt", limit)
        assert killed.returncode == -signal.SIGKILL, (limit, killed.stderr)
        texts = _texts(root)  # the next command, after the kill
        assert texts in (before, sorted([*before, "I play the cello"])), (limit, texts)
        assert SafetyNet(Vault.open(root).backend).lost() == [], limit
        _entry_matches_a_full_parse(root)
        assert forgets_applied.in_step(root), limit
        again = _mv(root, "remember", "I play the cello")  # the lock is free; once only
        assert again.returncode == 0, (limit, again.stderr)
        assert _texts(root).count("I play the cello") == 1, limit


@pytest.mark.parametrize("outcome", ["previous copy", "empty file", "no file"])
def test_a_power_cut_undoing_the_nets_unsynced_copy_loses_nothing(
        template: Path, tmp_path: Path, outcome: str) -> None:
    root = tmp_path / "vault"
    shutil.copytree(template, root)
    previous = (root / NET).read_bytes()
    done = _mv(root, "--json", "remember", "My bank PIN is Q8086Z")
    assert done.returncode == 0, done.stderr
    secret = json.loads(done.stdout)["fact"]["id"]
    assert _mv(root, "remember", "I like long walks").returncode == 0
    if outcome == "previous copy":  # what the net held before the two unsynced copies
        (root / NET).write_bytes(previous)
    elif outcome == "empty file":
        (root / NET).write_bytes(b"")
    else:
        (root / NET).unlink()
    gone = _mv(root, "forget", secret, "--permanent", "--yes")
    assert gone.returncode == 0, gone.stderr
    assert _mv(root, "remember", "I take the night train").returncode == 0
    texts = _texts(root)
    assert "My bank PIN is Q8086Z" not in texts
    assert {"I drink tea", "I like long walks", "I take the night train"} <= set(texts)
    assert SafetyNet(Vault.open(root).backend).lost() == []
    held = [p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and b"Q8086Z" in p.read_bytes()]
    assert held == []
    # a hand deletion is still caught: the net's copy is current again after that write
    memory = root / "Pilot" / "Memory.md"
    memory.write_text("".join(line for line in memory.read_text(encoding="utf-8")
                              .splitlines(keepends=True) if "I like long walks" not in line),
                      encoding="utf-8")
    assert _mv(root, "remember", "I read before bed").returncode == 0
    assert [it.text for it in SafetyNet(Vault.open(root).backend).lost()] == \
        ["I like long walks"]
