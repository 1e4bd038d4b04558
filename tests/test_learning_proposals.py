"""Proposals from the command line and from Obsidian edits, and the interactive review."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from memvault import Vault


def _inbox(root: Path) -> Path:
    return root / "Pilot" / "Inbox.md"


def _memory(root: Path) -> Path:
    return root / "Pilot" / "Memory.md"


def test_propose_accept_moves_the_proposal_into_memory_with_its_id(cli, vault_dir) -> None:
    out = cli("propose", "I prefer metric units", "--category", "preference", "--json")
    pid = json.loads(out.stdout)["proposal"]["id"]
    assert "I prefer metric units" not in _memory(vault_dir).read_text()
    listed = json.loads(cli("proposals", "list", "--json").stdout)["proposals"]
    assert [p["id"] for p in listed] == [pid]
    accepted = json.loads(cli("accept", pid, "--json").stdout)["accepted"]
    assert accepted["id"] == pid and accepted["status"] == "trial"
    assert f"id:{pid}" in _memory(vault_dir).read_text()
    assert json.loads(cli("proposals", "list", "--json").stdout)["proposals"] == []


def test_correct_accepts_with_the_users_wording_as_explicit(cli, vault_dir) -> None:
    pid = json.loads(cli("propose", "I like tabels", "--json").stdout)["proposal"]["id"]
    rec = json.loads(cli("correct", pid, "I like tables", "--category", "presentation",
                         "--json").stdout)["accepted"]
    assert rec["text"] == "I like tables" and rec["authority"] == "explicit"
    assert "I like tables [presentation]" in _memory(vault_dir).read_text()


def test_reject_removes_it_and_it_is_never_proposed_again(cli, vault_dir) -> None:
    pid = json.loads(cli("propose", "I enjoy jazz", "--json").stdout)["proposal"]["id"]
    cli("reject", pid)
    assert "I enjoy jazz" not in _inbox(vault_dir).read_text()
    again = json.loads(cli("propose", "i enjoy   JAZZ", "--json").stdout)
    assert again["status"] == "tombstoned"
    stones = (vault_dir / ".memvault" / "tombstones.jsonl").read_text()
    assert "jazz" not in stones.lower()


def test_unknown_proposal_id_is_a_one_line_error(cli) -> None:
    out = cli("accept", "nope99", expect=1)
    assert "nope99" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_ticking_a_box_by_byte_edit_accepts_on_the_next_command(cli, vault_dir) -> None:
    cli("remember", "My name is Ada", "--category", "identity")
    keep = json.loads(cli("propose", "I use Emacs", "--json").stdout)["proposal"]["id"]
    pid = json.loads(cli("propose", "I prefer dark mode", "--json").stdout)["proposal"]["id"]
    inbox_before = _inbox(vault_dir).read_bytes()
    memory_before = _memory(vault_dir).read_bytes()
    line = next(ln for ln in inbox_before.split(b"\n") if f"id:{pid}".encode() in ln)
    ticked = inbox_before.replace(line, line.replace(b"- [ ]", b"- [x]", 1))
    _inbox(vault_dir).write_bytes(ticked)

    listed = json.loads(cli("proposals", "list", "--json").stdout)["proposals"]
    assert [p["id"] for p in listed] == [keep]
    inbox_after = _inbox(vault_dir).read_bytes()
    memory_after = _memory(vault_dir).read_bytes()
    # The inbox lost exactly that line; nothing else changed.
    assert inbox_after == inbox_before.replace(line + b"\n", b"")
    # Memory.md gained exactly one line, appended after the existing facts.
    added = [ln for ln in memory_after.split(b"\n") if ln not in memory_before.split(b"\n")]
    assert len(added) == 1 and added[0].startswith(b"- I prefer dark mode ")
    assert f"id:{pid}".encode() in added[0]
    assert memory_after.replace(added[0] + b"\n", b"") == memory_before


def test_deleting_an_inbox_line_rejects_it(cli, vault_dir) -> None:
    pid = json.loads(cli("propose", "I like sushi", "--json").stdout)["proposal"]["id"]
    data = _inbox(vault_dir).read_text()
    _inbox(vault_dir).write_text("\n".join(ln for ln in data.split("\n")
                                           if f"id:{pid}" not in ln))
    cli("proposals", "list")
    assert json.loads(cli("propose", "I like sushi", "--json").stdout)["status"] == "tombstoned"


def test_review_refuses_politely_without_a_terminal(cli) -> None:
    cli("propose", "I like tea")
    out = cli("review", expect=1)
    assert "needs a terminal" in out.stderr
    assert "Traceback" not in out.stderr


def _run_in_pty(args: list[str], answers: list[tuple[str, str]], timeout: float = 30) -> str:
    """Run memvault in a real pseudo-terminal, answering prompts as they appear."""
    pid, fd = pty.fork()
    if pid == 0:  # child
        env = dict(os.environ)
        env.pop("CI", None)
        env["COLUMNS"] = "120"
        os.execvpe(sys.executable, [sys.executable, "-m", "memvault", *args], env)
    output = b""
    pending = list(answers)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        if pending and pending[0][0].encode() in output.split(b"\x00")[-1]:
            want, reply = pending.pop(0)
            output += b"\x00"  # marks how far prompts were answered
            os.write(fd, reply.encode() + b"\r")
    for _ in range(50):  # give it 5 s to exit, then end it (it is our own child)
        done, _status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    os.close(fd)
    return output.replace(b"\x00", b"").decode("utf-8", "replace")


def test_review_in_a_real_terminal_accepts_corrects_rejects_and_skips(vault_dir) -> None:
    v = Vault.open(vault_dir)
    ids = [v.proposals.propose(t, c).proposal.id for t, c in (
        ("I prefer short answers", "communication"), ("I like tabels", "presentation"),
        ("I enjoy opera", "preference"), ("I drink tea", "preference"))]
    out = _run_in_pty(["--vault", str(vault_dir), "review"], [
        ("quit (q)", "a"),
        ("quit (q)", "c"), ("Your wording", "I like tables"), ("Category", ""),
        ("quit (q)", "r"),
        ("quit (q)", "s"),
    ])
    assert "4 proposal(s) to review" in out, out
    v = Vault.open(vault_dir)
    memory = {f.id: f for f in v.memory.all()}
    assert ids[0] in memory and memory[ids[0]].text == "I prefer short answers"
    assert memory[ids[1]].text == "I like tables" and memory[ids[1]].authority == "explicit"
    assert ids[2] not in memory and v.tombstones.is_tombstoned("I enjoy opera")
    assert [p.id for p in v.proposals.list()] == [ids[3]]


def test_review_quit_leaves_everything_in_place(vault_dir) -> None:
    v = Vault.open(vault_dir)
    v.proposals.propose("I like tea")
    before = _inbox(vault_dir).read_bytes()
    _run_in_pty(["--vault", str(vault_dir), "review"], [("quit (q)", "q")])
    assert _inbox(vault_dir).read_bytes() == before


def test_review_subprocess_without_tty_exits_1(vault_dir) -> None:
    out = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault_dir),
                          "review"], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                         timeout=60)
    assert out.returncode == 1 and "needs a terminal" in out.stderr
