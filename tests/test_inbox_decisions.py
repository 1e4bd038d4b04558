"""Decisions made in Inbox.md count only when the inbox was read whole: a ticked box
accepts, a deleted line rejects — but an inbox caught mid-save, emptied, cut off or
replaced by a symlink rejects nothing (a rejection writes a tombstone: that text could
never be proposed again)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvault import Vault
from memvault.services.settle import QUIET_SECONDS
from tests.conftest import run_memvault

INBOX = "Pilot/Inbox.md"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def three_proposals(vault_dir: Path) -> list[str]:
    vault = Vault.open(vault_dir)
    return [vault.proposals.propose(t).proposal.id
            for t in ("I like jazz", "I work from Lisbon", "I run on Sundays")]


def _pending(vault_dir: Path) -> set[str]:
    return set(Vault.open(vault_dir).proposals.pending_ids())


def _rejections(vault_dir: Path) -> list[dict]:
    return Vault.open(vault_dir).events.events(type_prefix="proposal.rejected")


def test_a_read_command_during_an_in_place_save_rejects_nothing(vault_dir: Path,
                                                                 three_proposals) -> None:
    """The issue's reproduction: `memory list` while Obsidian saves Inbox.md in place."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    editor = subprocess.Popen([sys.executable, "-m", "tests.editor_sim", "hold",
                               str(vault_dir / INBOX), "- a line typed meanwhile"], cwd=ROOT,
                              env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert editor.stdout.readline().strip() == "truncated"
    reader = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault_dir),
                               "memory", "list"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    time.sleep(0.4)
    editor.stdin.write("go\n")
    editor.stdin.flush()
    editor.wait(timeout=30)
    _, err = reader.communicate(timeout=60)
    assert reader.returncode == 0, err
    assert "rejected" not in err
    assert _rejections(vault_dir) == []
    assert _pending(vault_dir) == set(three_proposals)


@pytest.mark.parametrize("damage", ["emptied", "missing", "cut off", "symlinked"])
def test_a_damaged_inbox_rejects_nothing(vault_dir: Path, three_proposals,
                                         damage: str) -> None:
    path = vault_dir / INBOX
    data = path.read_bytes()
    if damage == "emptied":
        path.write_bytes(b"")
    elif damage == "missing":
        path.unlink()
    elif damage == "cut off":
        path.write_bytes(data[: len(data) - 40])
    else:
        (vault_dir / "Pilot" / "Other.md").write_text("# nothing here\n")
        path.unlink()
        path.symlink_to("Other.md")
    time.sleep(QUIET_SECONDS + 0.1)  # settled: this is how the file is now
    result = run_memvault("--vault", str(vault_dir), "memory", "list")
    assert result.returncode == 0, result.stderr
    assert "rejected" not in result.stderr
    assert _rejections(vault_dir) == []
    assert _pending(vault_dir) == set(three_proposals)
    tombstones = vault_dir / ".memvault" / "tombstones.jsonl"
    assert not tombstones.exists() or b"rejected" not in tombstones.read_bytes()


def test_deleting_one_line_from_a_whole_inbox_rejects_exactly_that_one(
        vault_dir: Path, three_proposals) -> None:
    path = vault_dir / INBOX
    path.write_text("".join(ln for ln in path.read_text().splitlines(keepends=True)
                            if "Lisbon" not in ln))
    result = run_memvault("--vault", str(vault_dir), "memory", "list")
    assert f"inbox: rejected {three_proposals[1]} 'I work from Lisbon'" in result.stderr
    assert [e["record"] for e in _rejections(vault_dir)] == [three_proposals[1]]
    assert _pending(vault_dir) == {three_proposals[0], three_proposals[2]}


def test_a_ticked_box_is_accepted_the_same_way_by_the_cli_and_mcp(vault_dir: Path,
                                                                  three_proposals) -> None:
    from tests.mcp_helpers import in_process, ok, run

    path = vault_dir / INBOX
    path.write_text(path.read_text().replace("- [ ] I like jazz", "- [x] I like jazz"))

    async def body() -> None:
        async with in_process(vault_dir) as client:
            listed = await ok(client, "memory_list", {})
            assert [f["text"] for f in listed["facts"]] == ["I like jazz"]

    run(body)
    path.write_text(path.read_text().replace("- [ ] I run on Sundays", "- [x] I run on Sundays"))
    listed = run_memvault("--vault", str(vault_dir), "memory", "list", "--json")
    assert {f["text"] for f in json.loads(listed.stdout)["facts"]} == {"I like jazz",
                                                                      "I run on Sundays"}
    assert f"inbox: accepted {three_proposals[2]}" in listed.stderr


def test_one_bad_ticked_line_holds_only_itself_and_is_reported_once(
        vault_dir: Path, three_proposals) -> None:
    """A ticked line whose text memvault cannot accept (here edited by hand into a
    heading) stays ticked and pending; every other decision in the same inbox still takes
    effect; commands say so once, doctor every time."""
    jazz, lisbon, sundays = three_proposals
    path = vault_dir / INBOX
    text = path.read_text()
    text = text.replace("- [ ] I like jazz", "- [x] # I like jazz")
    text = text.replace("- [ ] I run on Sundays", "- [x] I run on Sundays")
    text = "".join(ln for ln in text.splitlines(keepends=True) if "Lisbon" not in ln)
    path.write_text(text)
    bad_line = next(n for n, ln in enumerate(text.splitlines(), 1) if jazz in ln)

    first = run_memvault("--vault", str(vault_dir), "memory", "list", "--json")
    assert first.returncode == 0, first.stderr
    assert [f["text"] for f in json.loads(first.stdout)["facts"]] == ["I run on Sundays"]
    assert f"inbox: accepted {sundays}" in first.stderr
    assert f"inbox: rejected {lisbon}" in first.stderr
    warnings = [ln for ln in first.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1, first.stderr
    assert f"{INBOX}:{bad_line}: ticked proposal {jazz}" in warnings[0]
    assert "heading" in warnings[0]
    assert "- [x] # I like jazz" in path.read_text()
    assert _pending(vault_dir) == {jazz}

    again = run_memvault("--vault", str(vault_dir), "memory", "list")
    assert again.returncode == 0, again.stderr
    assert again.stderr == ""  # said once

    doctor = run_memvault("--vault", str(vault_dir), "doctor", "--json")
    assert doctor.returncode == 1
    held = [f for f in json.loads(doctor.stdout)["findings"] if jazz in f["message"]]
    assert [(f["path"], f["line"], f["severity"]) for f in held] == [(INBOX, bad_line,
                                                                      "warning")]
    doctor_again = run_memvault("--vault", str(vault_dir), "doctor")
    assert jazz in doctor_again.stdout + doctor_again.stderr  # doctor keeps listing it

    path.write_text(path.read_text().replace("# I like jazz", "> I like jazz"))  # changed
    changed = run_memvault("--vault", str(vault_dir), "memory", "list")
    assert f"ticked proposal {jazz}" in changed.stderr and "quote" in changed.stderr
    assert run_memvault("--vault", str(vault_dir), "memory", "list").stderr == ""

    path.write_text(path.read_text().replace("> I like jazz", "I like jazz"))  # fixed
    fixed = run_memvault("--vault", str(vault_dir), "memory", "list", "--json")
    assert f"inbox: accepted {jazz}" in fixed.stderr
    assert {f["text"] for f in json.loads(fixed.stdout)["facts"]} == {"I like jazz",
                                                                     "I run on Sundays"}
    assert _pending(vault_dir) == set()


def test_a_held_line_is_logged_once_by_the_mcp_server(vault_dir: Path, three_proposals,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    from tests.mcp_helpers import in_process, ok, run

    jazz, _, sundays = three_proposals
    path = vault_dir / INBOX
    path.write_text(path.read_text().replace("- [ ] I like jazz", "- [x] > I like jazz")
                    .replace("- [ ] I run on Sundays", "- [x] I run on Sundays"))

    async def body() -> None:
        async with in_process(vault_dir) as client:
            for _ in range(3):
                listed = await ok(client, "memory_list", {})
                assert [f["text"] for f in listed["facts"]] == ["I run on Sundays"]

    with caplog.at_level("WARNING"):
        run(body)
    held = [r.getMessage() for r in caplog.records if f"ticked proposal {jazz}" in
            r.getMessage()]
    assert len(held) == 1 and held[0].startswith(f"{INBOX}:"), held
