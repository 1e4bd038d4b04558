"""A fact saved in Memory.md whose `fact.remembered` event never reached the journal.

A real `memvault remember` is SIGKILLed after each of its steps in turn (the mechanism of
`tests/test_remember_kill.py`). Wherever the kill leaves the fact in Memory.md without
its event, `memvault doctor` (a real process) names the file, the line and the id in one
line and exits 1; `doctor --fix` appends the event, marked as recovered by doctor, and
doctor is silent afterwards. Wherever the kill leaves no such gap, doctor says nothing
about the journal. A remember paused (not killed) after saving still holds the vault
lock, so a `doctor --fix` meanwhile never journals the fact a second time.

No false alarms: a bullet typed by hand (with no id, and once `doctor --fix` stamped
it), a copied line renumbered by `doctor --fix` or by the next write, a forgotten
fact's line a merge brought back, a fact whose earlier wording was forgotten
permanently, another principal's fact, and facts that arrived from another clone
through a plain `git pull` (one of them edited by hand on both clones).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvault import Vault
from memvault.services.setup import init_vault
from tests.conftest import Cli
from tests.git_helpers import fact_ids, three_clones
from tests.test_remember_kill import KILLED_REMEMBER
from tests.test_sync_plain_git import plain_sync

ROOT = Path(__file__).resolve().parents[1]
TEXT = "I play the cello"
GAP = "was remembered but not journaled"

PAUSED_REMEMBER = r"""
import fcntl, os, signal, sys
synced, real_fsync, real_flock = [0], os.fsync, fcntl.flock
def fsync(fd):
    real_fsync(fd)
    synced[0] += 1
def flock(fd, op):
    real_flock(fd, op)
    if op == fcntl.LOCK_UN and synced[0] >= 2:  # Memory.md and its folder are synced
        os.kill(os.getpid(), signal.SIGSTOP)
        synced[0] = -1000  # once
os.fsync, fcntl.flock = fsync, flock
sys.argv = ["memvault", *sys.argv[1:]]
from memvault.cli.entry import main
main()
"""
"""A `remember` that stops itself (SIGSTOP) the first time it lets go of the vault lock
after saving Memory.md (its temp file and folder fsynced)."""


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_COLOR="1", COLUMNS="250")


def _mv(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root), *args],
                          env=_env(), capture_output=True, text=True, timeout=60)


def _events(root: Path) -> list[dict]:
    path = root / ".memvault" / "events.jsonl"
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()] \
        if path.exists() else []


def _gap_lines(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if GAP in ln]


def _id_of(root: Path, text: str) -> str | None:
    return next((f.id for f in Vault.open(root).memory.all() if f.text == text), None)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gaps") / "vault"
    init_vault(root)
    v = Vault.open(root)
    for text in ("I drink tea", "My main project is Aurora"):
        v.memory.remember(text)
    return root


def _steps(template: Path, tmp_path: Path) -> list[str]:
    full = tmp_path / "full"
    shutil.copytree(template, full)
    log = tmp_path / "steps.txt"
    done = subprocess.run([sys.executable, "-c", KILLED_REMEMBER, str(log), "0", "--vault",
                           str(full), "remember", TEXT], env=_env(), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return log.read_text().split()


def test_a_remember_killed_after_saving_is_named_by_doctor_and_journaled_by_fix(
        template: Path, tmp_path: Path) -> None:
    steps = _steps(template, tmp_path)
    gaps_seen = 0
    for limit in range(1, len(steps) + 1):
        root = tmp_path / f"kill{limit}"
        shutil.copytree(template, root)
        memory_before = (root / "Pilot" / "Memory.md").read_bytes()
        killed = subprocess.run([sys.executable, "-c", KILLED_REMEMBER,
                                 str(tmp_path / "log.txt"), str(limit), "--vault", str(root),
                                 "remember", TEXT], env=_env(), capture_output=True,
                                text=True, timeout=60)
        assert killed.returncode == -signal.SIGKILL, (limit, killed.stderr)
        saved = TEXT.encode() in (root / "Pilot" / "Memory.md").read_bytes()
        journaled = any(e.get("text") == TEXT for e in _events(root))
        events_before = _events(root)
        doctor = _mv(root, "doctor")
        if not saved or journaled:
            assert _gap_lines(doctor.stdout) == [], (limit, doctor.stdout)
            continue
        gaps_seen += 1
        fact_id = _id_of(root, TEXT)
        assert fact_id is not None
        lines = (root / "Pilot" / "Memory.md").read_text(encoding="utf-8").splitlines()
        line = next(n for n, ln in enumerate(lines, 1) if TEXT in ln)
        assert doctor.returncode == 1, (limit, doctor.stdout, doctor.stderr)
        assert _gap_lines(doctor.stdout) == [
            f"warning Pilot/Memory.md:{line}: fact {fact_id} was remembered but not "
            "journaled (a command was interrupted after saving it): `doctor --fix` adds its "
            "journal event"], (limit, doctor.stdout)
        # --json says the same, with the file, the line and the id
        as_json = json.loads(_mv(root, "doctor", "--json").stdout)
        assert [(f["path"], f["line"]) for f in as_json["findings"]
                if GAP in f["message"]] == [("Pilot/Memory.md", line)]
        assert _events(root) == events_before  # doctor alone writes nothing

        fixed = _mv(root, "doctor", "--fix")
        assert fixed.returncode == 0, (limit, fixed.stdout, fixed.stderr)
        assert f"fixed Pilot/Memory.md:{line}: journaled fact {fact_id} (event recovered by " \
               "doctor)" in fixed.stdout
        new = _events(root)[len(events_before):]
        assert len(new) == 1, new
        event = new[0]
        assert {k: v for k, v in event.items() if k != "ts"} == {
            "id": f"recovered-{fact_id}", "type": "fact.remembered", "scope": "default",
            "record": fact_id, "text": TEXT, "category": "other", "source": "cli",
            "via": "doctor"}
        again = _mv(root, "doctor")
        assert again.returncode == 0 and again.stdout.strip() == "all good", again.stdout
        assert _mv(root, "doctor", "--fix").stdout.strip() == "all good"  # nothing twice
        assert len(_events(root)) == len(events_before) + 1
        show = _mv(root, "memory", "show", fact_id)
        assert "fact.remembered" in show.stdout and "(recovered by doctor)" in show.stdout
        assert (root / "Pilot" / "Memory.md").read_bytes() != memory_before
    # the swap is followed by at least its folder's fsync before the journal line
    assert gaps_seen >= 1, steps


def test_doctor_fix_never_journals_a_remember_still_running(template: Path,
                                                            tmp_path: Path) -> None:
    """`remember` keeps the vault lock from saving the fact until its event is written,
    so a `doctor --fix` running meanwhile finds no gap: the journal gets the event once,
    from `remember` itself. (Were the lock let go in between, the paused remember would
    be seen as interrupted and its fact journaled twice.)"""
    root = tmp_path / "vault"
    shutil.copytree(template, root)
    remember = subprocess.Popen([sys.executable, "-c", PAUSED_REMEMBER, "--vault", str(root),
                                 "remember", TEXT], env=_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    fixer: subprocess.Popen[str] | None = None
    try:
        deadline = time.monotonic() + 30
        while not _stopped(remember.pid):
            assert time.monotonic() < deadline and remember.poll() is None, "never paused"
            time.sleep(0.02)
        assert TEXT.encode() in (root / "Pilot" / "Memory.md").read_bytes()
        fixer = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(root),
                                  "doctor", "--fix"], env=_env(), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            fixer.wait(timeout=3)  # done at once, or waiting for the lock: either is fine
        except subprocess.TimeoutExpired:
            pass
    finally:
        os.kill(remember.pid, signal.SIGCONT)
        _, err = remember.communicate(timeout=60)
        fixed_out = fixer.communicate(timeout=60)[0] if fixer is not None else ""
    assert remember.returncode == 0, err
    assert "journaled fact" not in fixed_out, fixed_out
    remembered = [e for e in _events(root) if e.get("text") == TEXT]
    assert len(remembered) == 1 and "via" not in remembered[0], remembered
    assert _mv(root, "doctor").returncode == 0


def _stopped(pid: int) -> bool:
    """Whether the process is stopped (state T in /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] in ("T", "t")


def test_hand_written_copied_and_forgotten_lines_are_no_journal_gaps(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    cli = Cli(root)
    cli("remember", "I drink tea")
    gone = json.loads(cli("--json", "remember", "My old gate code is Q5150Z").stdout)
    gone_line = next(ln for ln in (root / "Pilot/Memory.md").read_text().splitlines()
                     if "Q5150Z" in ln)
    cli("forget", gone["fact"]["id"], "--yes")
    # a permanent forget of an earlier fact erases the events of a later one with its words
    first = json.loads(cli("--json", "remember", "My bike lock is 4711").stdout)["fact"]["id"]
    cli("forget", first, "--yes")
    cli("remember", "My bike lock is 4711")
    time.sleep(1.1)  # (a tombstone line the same as an earlier one is a merge's duplicate)
    cli("forget", first, "--permanent", "--yes")
    assert "4711" in (root / "Pilot/Memory.md").read_text()
    memory = root / "Pilot" / "Memory.md"
    tea = next(ln for ln in memory.read_text().splitlines() if "I drink tea" in ln)
    memory.write_text(memory.read_text()
                      + "- I typed this bullet myself [preference]\n"
                      + tea.replace("I drink tea", "I drink tea, green") + "\n"
                      + gone_line + "\n")  # a forgotten line, as a merge may bring back
    out = _mv(root, "doctor")
    assert _gap_lines(out.stdout) == [], out.stdout
    fixed = _mv(root, "doctor", "--fix")  # stamps the bullet, renumbers the copy
    assert "stamped id" in fixed.stdout and "duplicate id" in fixed.stdout, fixed.stdout
    assert "journaled fact" not in fixed.stdout and _gap_lines(fixed.stdout) == []
    assert _gap_lines(_mv(root, "doctor").stdout) == []
    # the next write renumbers a copy too (a copied line: different words, same id)
    tea = next(ln for ln in memory.read_text().splitlines() if "I drink tea [" in ln)
    memory.write_text(memory.read_text() + tea.replace("I drink tea", "I drink rooibos") + "\n")
    cli("remember", "I live in Oslo")
    assert "rooibos" in memory.read_text()
    assert _gap_lines(_mv(root, "doctor").stdout) == []
    # another principal's fact, in its own Memory.md, journaled under its own scope
    assert _mv(root, "--scope", "bob", "remember", "Bob likes jazz").returncode == 0
    for scope in ("default", "bob"):
        assert _gap_lines(_mv(root, "--scope", scope, "doctor").stdout) == []


def test_facts_from_another_clone_are_no_journal_gaps(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    a, _, c = three_clones(tmp_path, monkeypatch, ("I like tea", "I live in Oslo"))
    plain_sync(c)
    tea = fact_ids(a)["I like tea"]
    Cli(a)("remember", "Fact from A")
    Cli(a)("sync")
    # the same fact edited by hand on both clones: the union keeps both lines
    for root, words in ((a, "I like green tea"), (c, "I like black tea")):
        memory = root / "Pilot" / "Memory.md"
        memory.write_text(memory.read_text().replace("I like tea [", f"{words} ["))
    Cli(a)("sync")
    plain_sync(c)
    Cli(c)("remember", "Fact from C")  # the write settles what the union left
    texts = {f.text: f.id for f in Vault.open(c).memory.all()}
    assert {"Fact from A", "I like green tea", "I like black tea"} <= set(texts)
    assert tea in texts.values()
    out = _mv(c, "doctor")
    assert _gap_lines(out.stdout) == [], out.stdout
