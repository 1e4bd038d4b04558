"""A clone that never ran `memvault sync --setup` (a new laptop, Obsidian Git) syncing by
plain `git pull --rebase` / `git pull`, next to set-up clones: nothing is lost, no
marker is left, forgotten text stays gone, and what git's union merge leaves is settled
by memvault. Also: reading and resolving while a conflict is open."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from memvault import Vault
from memvault.core.merge import CONFLICT_OPEN
from tests.conftest import Cli
from tests.git_helpers import fact_ids, fact_texts, git, three_clones


def plain_sync(root: Path, *, rebase: bool = True) -> None:
    """What Obsidian Git's "commit and sync" does: commit everything, pull, push."""
    git(root, "add", "-A")
    if git(root, "status", "--porcelain"):
        git(root, "commit", "-qm", "vault backup")
    for _ in range(5):
        mode = "--rebase" if rebase else "--no-rebase"
        pull = subprocess.run(["git", "pull", "-q", "--no-edit", mode], cwd=root,
                              capture_output=True, text=True, timeout=120)
        assert pull.returncode == 0, pull.stderr  # union merges never stop
        push = subprocess.run(["git", "push", "-q"], cwd=root, capture_output=True, text=True,
                              timeout=120)
        if push.returncode == 0:
            return
    raise AssertionError("could not push")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """A and B ran `sync --setup`; C is a plain clone that never did."""
    a, b, c = three_clones(tmp_path, monkeypatch,
                           ("I like tea", "I live in Oslo", "My project is Aurora"))
    assert not (c / ".git/info/attributes").exists()
    assert "merge=union" in (c / ".gitattributes").read_text()
    return a, b, c


def journal(root: Path) -> str:
    return (root / ".memvault/events.jsonl").read_text("utf-8")


@pytest.mark.parametrize("rebase", [True, False], ids=["pull-rebase", "pull-merge"])
def test_concurrent_facts_from_a_plain_clone_merge_without_markers(world, rebase: bool) -> None:
    a, _, c = world
    Cli(a)("remember", "Fact from A")
    Cli(a)("sync")
    Cli(c)("remember", "Fact from C")
    mem = c / "Pilot/Memory.md"  # a Windows editor adds a bullet with CRLF
    mem.write_bytes(mem.read_bytes() + b"- Typed on Windows\r\n")
    plain_sync(c, rebase=rebase)
    text = mem.read_text()
    assert "<<<<<<<" not in text and "<<<<<<<" not in journal(c)
    assert {"Fact from A", "Fact from C", "Typed on Windows"} <= fact_texts(c)
    Cli(a)("sync")
    assert {"Fact from A", "Fact from C", "Typed on Windows"} <= fact_texts(a)
    events = [json.loads(ln) for ln in journal(a).splitlines()]
    assert {"Fact from A", "Fact from C"} <= {e.get("text") for e in events}
    assert git(a, "status", "--porcelain") == "" and git(c, "status", "--porcelain") == ""


def test_a_fact_forgotten_permanently_stays_gone_with_its_history(world) -> None:
    a, _, c = world
    oslo = fact_ids(a)["I live in Oslo"]
    plain_sync(c)
    # C edits the fact before it hears of the forget; A forgets it permanently meanwhile.
    Cli(c)("memory", "edit", oslo, "I live in Oslo, Norway")
    Cli(a)("forget", oslo, "--permanent", "--yes")
    Cli(a)("sync")
    plain_sync(c)  # git's union keeps C's edited line and C's edit event
    assert "Oslo" not in json.dumps([f.text for f in Vault.open(c).memory.all()])
    assert "Oslo" not in Cli(c)("context", "--json").stdout  # never served
    assert all("Oslo" not in json.dumps(e) for e in Vault.open(c).events.events())
    Cli(c)("remember", "Fact from C")  # any write settles the file
    assert "Oslo" not in (c / "Pilot/Memory.md").read_text()
    plain_sync(c)
    out = json.loads(Cli(a)("sync", "--json").stdout)
    assert out["pushed"] is True
    # The edit event C made (text and previous_text) came in and was erased again.
    assert "Oslo" not in journal(a) and "Oslo" not in (a / "Pilot/Memory.md").read_text()
    assert "Oslo" not in git(a, "show", "origin/main:.memvault/events.jsonl")
    plain_sync(c)
    Cli(c)("doctor", "--fix", expect=None)
    assert "Oslo" not in journal(c) and "Oslo" not in (c / "Pilot/Memory.md").read_text()


def test_the_same_fact_edited_on_a_set_up_and_a_plain_clone_keeps_the_newer_edit(
        world) -> None:
    a, _, c = world
    tea = fact_ids(a)["I like tea"]
    plain_sync(c)
    Cli(a)("memory", "edit", tea, "I like green tea")
    Cli(a)("sync")
    time.sleep(1.1)
    Cli(c)("memory", "edit", tea, "I like black tea")
    plain_sync(c)
    listed = json.loads(Cli(c)("memory", "list", "--all", "--json").stdout)["facts"]
    assert [f["text"] for f in listed if f["id"] == tea] == ["I like black tea"]
    out = Cli(c)("remember", "Anything")  # the write settles it, and says so
    assert f"duplicate id {tea}" in out.stderr and "edited on two machines" in out.stderr
    history = json.dumps(json.loads(Cli(c)("memory", "show", tea, "--json").stdout))
    assert "I like green tea" in history  # the other version's words are kept
    plain_sync(c)
    Cli(a)("sync")
    assert "I like black tea" in fact_texts(a) and "I like green tea" not in fact_texts(a)


@pytest.fixture
def in_conflict(world) -> tuple[Path, Path, str, str]:
    """A and B edited one fact differently; B's sync left a conflict block."""
    a, b, _ = world
    ids = fact_ids(a)
    aurora, tea = ids["My project is Aurora"], ids["I like tea"]
    Cli(b)("sync")
    Cli(a)("memory", "edit", aurora, "My project is Aurora 2")
    Cli(a)("memory", "edit", tea, "I like tea with milk")
    Cli(a)("sync")
    Cli(b)("memory", "edit", aurora, "My project is Borealis")
    Cli(b)("forget", tea, "--yes")  # forgotten here, edited there: forget wins
    out = Cli(b)("sync", expect=1)
    assert aurora in out.stdout and "not pushed" in out.stdout
    return a, b, aurora, tea


def test_during_a_conflict_context_serves_this_clones_version_and_never_a_forgotten_fact(
        in_conflict) -> None:
    _, b, aurora, tea = in_conflict
    text = (b / "Pilot/Memory.md").read_text()
    assert "Aurora 2" in text and "Borealis" in text and "like tea" not in text
    block = json.loads(Cli(b)("context", "--json").stdout)
    assert "Borealis" in block["text"] and "Aurora 2" not in block["text"]
    assert "like tea" not in block["text"]
    assert any(aurora in w and "memvault resolve" in w for w in block["warnings"])
    human = Cli(b)("context")
    assert "unresolved merge conflict" in human.stderr
    listed = json.loads(Cli(b)("memory", "list", "--all", "--json").stdout)["facts"]
    assert [f["text"] for f in listed if f["id"] == aurora] == ["My project is Borealis"]


def test_doctor_fix_during_a_conflict_never_touches_the_lines_in_the_block(in_conflict) -> None:
    _, b, aurora, _ = in_conflict
    mem = b / "Pilot/Memory.md"
    mem.write_text(mem.read_text() + "- A hand-written bullet\n")
    before = mem.read_text().splitlines()
    start = next(i for i, ln in enumerate(before) if ln.startswith(CONFLICT_OPEN))
    end = next(i for i, ln in enumerate(before) if ln.startswith(">>>>>>> memvault"))
    report = json.loads(Cli(b)("doctor", "--fix", "--json", expect=1).stdout)
    after = mem.read_text().splitlines()
    assert after[start:end + 1] == before[start:end + 1]  # the block, byte for byte
    assert any("stamped id" in f for f in report["fixed"])  # the rest was fixed
    assert any(aurora in f["message"] for f in report["findings"] if f["severity"] == "error")
    assert sum(f"id:{aurora}" in ln for ln in after) == 2  # still one fact, two versions


def test_resolve_lists_then_keeps_the_chosen_version_and_sync_pushes(in_conflict) -> None:
    a, b, aurora, _ = in_conflict
    listing = Cli(b)("resolve", expect=1)  # no terminal, no choice: show and exit 1
    assert "this clone:" in listing.stdout and "Borealis" in listing.stdout
    assert "incoming:" in listing.stdout and "Aurora 2" in listing.stdout
    data = json.loads(Cli(b)("resolve", "--json", expect=1).stdout)
    assert [c["facts"] for c in data["left"]] == [[aurora]]
    Cli(b)("resolve", aurora, "--theirs")
    text = (b / "Pilot/Memory.md").read_text()
    assert "Aurora 2" in text and "Borealis" not in text and "<<<<<<<" not in text
    history = json.dumps(json.loads(Cli(b)("memory", "show", aurora, "--json").stdout))
    assert "Borealis" in history  # the version not kept stays in the history
    assert json.loads(Cli(b)("sync", "--json").stdout)["pushed"] is True
    Cli(a)("sync")
    assert "My project is Aurora 2" in fact_texts(a)
    Cli(b)("resolve")  # nothing left: exit 0


def test_resolve_both_keeps_two_facts(in_conflict) -> None:
    _, b, aurora, _ = in_conflict
    Cli(b)("resolve", "--both")
    facts = json.loads(Cli(b)("memory", "list", "--all", "--json").stdout)["facts"]
    texts = {f["text"]: f["id"] for f in facts}
    assert texts["My project is Borealis"] == aurora
    assert texts["My project is Aurora 2"] not in (aurora, "")
