"""The watcher with a real watchdog observer on a temp vault."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memvault import Vault
from memvault.services.watcher import VaultWatcher, WatchEvent

QUIET = 0.6  # how long "nothing else happens" is waited for


class Recorder:
    def __init__(self) -> None:
        self.q: queue.Queue[tuple[float, WatchEvent]] = queue.Queue()

    def __call__(self, ev: WatchEvent) -> None:
        self.q.put((time.monotonic(), ev))

    def next(self, timeout: float = 2.0) -> tuple[float, WatchEvent]:
        return self.q.get(timeout=timeout)

    def lines(self, settle: float = QUIET) -> list[str]:
        out = []
        while True:
            try:
                out.append(self.q.get(timeout=settle)[1].line())
            except queue.Empty:
                return out


@pytest.fixture
def watched(vault: Vault):  # type: ignore[no-untyped-def]
    tea = vault.memory.remember("I like tea", "preference").fact
    vault.memory.remember("I live in Oslo", "identity")
    rec = Recorder()
    watcher = VaultWatcher(vault, rec, health_interval=0.3)
    watcher.start()
    time.sleep(0.2)  # let inotify settle
    yield vault, watcher, rec, tea.id
    watcher.stop()


def memory_path(vault: Vault) -> Path:
    return Path(vault.root) / vault.layout.memory


def test_an_edit_in_place_gives_one_changed_line_within_a_second(watched) -> None:
    vault, watcher, rec, tea = watched
    path = memory_path(vault)
    data = path.read_text().replace("I like tea", "I like green tea")
    start = time.monotonic()
    with open(path, "r+") as fh:
        fh.write(data)
        fh.truncate()
    at, ev = rec.next()
    assert ev.line() == f'~ fact {tea} "I like green tea"'
    assert at - start < 1.0
    assert rec.lines() == []


def test_an_editor_style_save_temp_then_rename_gives_one_added_line(watched) -> None:
    vault, watcher, rec, _ = watched
    path = memory_path(vault)
    tmp = path.with_name(".Memory.md.swp.tmp")
    tmp.write_text(path.read_text() + "- I cycle to work [preference] <!-- id:cyc123 -->\n")
    os.replace(tmp, path)
    assert rec.lines() == ['+ fact cyc123 "I cycle to work"']


def test_a_burst_of_twenty_saves_in_200ms_is_read_once(watched) -> None:
    vault, watcher, rec, _ = watched
    path = memory_path(vault)
    original = path.read_text()
    before = watcher.reloads
    for i in range(20):
        path.write_text(original + f"- Burst {i} [other] <!-- id:burst{i:02d} -->\n")
        time.sleep(0.01)
    assert rec.lines() == ['+ fact burst19 "Burst 19"']
    assert watcher.reloads - before == 1


def test_a_half_written_file_is_not_acted_on_until_it_is_complete(watched) -> None:
    vault, watcher, rec, _ = watched
    path = memory_path(vault)
    original = path.read_text()
    fh = open(path, "w")
    try:
        fh.write(original + "- Half a fact [pref")
        fh.flush()
        assert rec.lines(settle=1.0) == []  # still open for writing: nothing read
        fh.write("erence] <!-- id:half01 updated:1 -->\n")
    finally:
        fh.close()
    assert rec.lines() == ['+ fact half01 "Half a fact"']


def test_an_invalid_file_is_reported_and_the_last_valid_state_kept(watched) -> None:
    vault, watcher, rec, tea = watched
    path = memory_path(vault)
    original = path.read_text()
    path.write_text(original + "- Broken <!-- id:brk001 updated:1\n")
    lines = rec.lines()
    assert len(lines) == 1 and lines[0].startswith("! Pilot/Memory.md: invalid: line ")
    assert lines[0].endswith("keeping last valid")
    path.write_text(original.replace("I like tea", "I like mint tea"))
    assert rec.lines() == [f'~ fact {tea} "I like mint tea"']


def test_a_deleted_then_recreated_memory_file_gives_one_line_each(watched) -> None:
    vault, watcher, rec, _ = watched
    path = memory_path(vault)
    original = path.read_text()
    path.unlink()
    assert rec.lines() == ["! Pilot/Memory.md: deleted; keeping the last valid records "
                           "until it comes back"]
    path.write_text(original)
    assert rec.lines() == ["+ Pilot/Memory.md: re-created; no record changed"]
    path.write_text(original + "- New [other] <!-- id:new001 -->\n")
    assert rec.lines() == ['+ fact new001 "New"']


def test_an_invalid_policy_is_reported_and_a_dead_observer_is_restarted(watched) -> None:
    vault, watcher, rec, tea = watched
    policy = Path(vault.root) / vault.layout.policy
    policy.write_text("---\nmax_trade_usd: [unclosed\n---\n# Policy\n")
    lines = rec.lines()
    assert len(lines) == 1 and lines[0].startswith("! Pilot/Policy.md: invalid: ")
    watcher._observer.stop()  # simulate the observer thread dying
    watcher._observer.join()
    _, ev = rec.next(timeout=3)
    assert ev.kind == "watcher" and "restarted" in (ev.message or "")
    assert watcher.restarts == 1
    path = memory_path(vault)
    path.write_text(path.read_text().replace("I like tea", "I like chai"))
    assert rec.lines() == [f'~ fact {tea} "I like chai"']


def test_watch_command_prints_json_lines_until_interrupted(vault_dir: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault_dir),
                             "watch", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert "watching" in proc.stderr.readline()
        time.sleep(0.3)
        cpu_before = _cpu_seconds(proc.pid)
        time.sleep(2.0)
        assert _cpu_seconds(proc.pid) - cpu_before < 0.1  # idle: near-zero CPU
        path = vault_dir / "Pilot/Memory.md"
        path.write_text(path.read_text() + "- Watched fact [other] <!-- id:wat001 -->\n")
        got: list[str] = []
        reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()))
        reader.start()
        reader.join(timeout=5)
        event = json.loads(got[0])
        assert (event["op"], event["kind"], event["id"], event["text"]) == \
            ("+", "fact", "wat001", "Watched fact")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
    assert proc.returncode in (0, 130, -signal.SIGINT)


def test_a_ticked_inbox_box_is_applied_and_reported(watched) -> None:
    vault, watcher, rec, _ = watched
    proposal = vault.proposals.propose("I prefer dark mode", "preference").proposal
    assert rec.lines() == [f'+ proposal {proposal.id} "I prefer dark mode"']
    inbox = Path(vault.root) / vault.layout.inbox
    inbox.write_text(inbox.read_text().replace("- [ ] I prefer dark mode",
                                               "- [x] I prefer dark mode"))
    lines = rec.lines()
    assert lines[:2] == [f'~ proposal {proposal.id} "I prefer dark mode" (ticked)',
                         f'✓ proposal {proposal.id} "I prefer dark mode" (accepted)']
    assert "I prefer dark mode" in {f.text for f in Vault.open(vault.root).memory.all()}
    assert any(ln.startswith("+ fact ") and "dark mode" in ln for ln in lines[2:])



def test_a_deleted_inbox_line_rejects_its_proposal_and_is_reported(watched) -> None:
    """The watcher applies inbox decisions through the same Vault step as every front
    end: a line deleted from a whole inbox is a rejection."""
    vault, watcher, rec, _ = watched
    keep = vault.proposals.propose("I prefer light mode", "preference").proposal
    drop = vault.proposals.propose("I prefer dark mode", "preference").proposal
    rec.lines()
    inbox = Path(vault.root) / vault.layout.inbox
    text = inbox.read_text()
    inbox.write_text("".join(line for line in text.splitlines(keepends=True)
                             if "I prefer dark mode" not in line))
    lines = rec.lines(settle=3.0)  # a read that lost a record waits for the save to settle
    assert lines[:2] == [f'- proposal {drop.id}',
                         f'✓ proposal {drop.id} "I prefer dark mode" (rejected)']
    pending = {p.id for p in Vault.open(vault.root).proposals.list()}
    assert keep.id in pending and drop.id not in pending
    assert "I prefer dark mode" not in {f.text for f in Vault.open(vault.root).memory.all()}

def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
