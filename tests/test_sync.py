"""`memvault sync` between two real git clones of a bare repository on the local disk."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from memvault import Vault
from memvault.core.merge import CONFLICT_OPEN
from memvault.services.setup import init_vault
from tests.conftest import Cli


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture
def machines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    for var, value in (("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@example.com"),
                       ("GIT_COMMITTER_NAME", "t"), ("GIT_COMMITTER_EMAIL", "t@example.com")):
        monkeypatch.setenv(var, value)
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a = tmp_path / "a"
    git(tmp_path, "clone", "-q", str(bare), str(a))
    init_vault(a)
    cli_a = Cli(a)
    cli_a("sync", "--setup")
    for text in ("I like tea", "I live in Oslo", "My project is Aurora", "I use vim"):
        cli_a("remember", text)
    cli_a("sync")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    Cli(b)("sync", "--setup")
    return a, b


def fact_ids(root: Path) -> dict[str, str]:
    return {f.text: f.id for f in Vault.open(root).memory.all()}


def test_setup_writes_attributes_ignore_and_driver_config_idempotently(machines) -> None:
    a, _ = machines
    attrs = (a / ".gitattributes").read_text()
    # Versioned: what every clone can do without setup (git's built-in union).
    assert "Pilot/**/Memory.md merge=union" in attrs
    assert ".memvault/tombstones.jsonl merge=union" in attrs
    # This clone only: the fact-by-fact driver, which takes precedence.
    info = (a / ".git/info/attributes").read_text()
    assert "Pilot/**/Memory.md merge=memvault" in info
    assert git(a, "check-attr", "merge", "Pilot/Memory.md").strip().endswith("memvault")
    assert ".memvault/index.sqlite" in (a / ".gitignore").read_text()
    assert "merge-driver %O %A %B %P" in git(a, "config", "merge.memvault.driver")
    again = Cli(a)("sync", "--setup", "--json")
    report = json.loads(again.stdout)
    assert report["gitattributes_added"] == [] and report["gitignore_added"] == []
    assert report["info_attributes_added"] == []
    assert (a / ".gitattributes").read_text() == attrs


def test_two_machines_merge_fact_by_fact_and_the_forgotten_fact_stays_gone(machines) -> None:
    a, b = machines
    ids = fact_ids(a)
    cli_a, cli_b = Cli(a), Cli(b)
    # Machine A adds facts and forgets one; machine B edits another and adds its own.
    cli_a("remember", "I prefer short answers")
    cli_a("remember", "I trade on weekends")
    cli_a("forget", ids["I like tea"], "--yes")
    cli_b("memory", "edit", ids["I live in Oslo"], "I live in Bergen")
    cli_b("remember", "My cat is called Miso")
    (b / "todo.md").write_text("my own note, not memvault's\n")  # never committed by sync
    cli_a("sync")
    out_b = cli_b("sync", "--json")
    incoming = json.loads(out_b.stdout)["incoming"]
    assert {f["text"] for f in incoming["added"]} == {"I prefer short answers",
                                                      "I trade on weekends"}
    assert incoming["forgotten"] == [ids["I like tea"]]
    out_a = cli_a("sync", "--json")
    back = json.loads(out_a.stdout)["incoming"]
    assert [f["text"] for f in back["added"]] == ["My cat is called Miso"]
    assert [f["text"] for f in back["changed"]] == ["I live in Bergen"]
    mem_a = (a / "Pilot/Memory.md").read_bytes()
    assert mem_a == (b / "Pilot/Memory.md").read_bytes()
    texts = set(fact_ids(a))
    assert texts == {"I live in Bergen", "My project is Aurora", "I use vim",
                     "I prefer short answers", "I trade on weekends", "My cat is called Miso"}
    assert b"like tea" not in mem_a and CONFLICT_OPEN.encode() not in mem_a
    assert git(a, "status", "--porcelain") == ""
    assert git(b, "status", "--porcelain") == "?? todo.md\n"
    for clone in (a, b):
        assert git(clone, "diff", "--name-only", "--diff-filter=U") == ""
    # Both journals hold both machines' events, once each.
    events_a = (a / ".memvault/events.jsonl").read_text().splitlines()
    assert events_a == (b / ".memvault/events.jsonl").read_text().splitlines()
    assert len(events_a) == len(set(events_a))
    assert Vault.open(b).tombstones.is_tombstoned("I like tea")


def test_a_true_conflict_is_reported_keeps_both_texts_and_doctor_names_it(machines) -> None:
    a, b = machines
    fid = fact_ids(a)["My project is Aurora"]
    Cli(a)("memory", "edit", fid, "My project is Aurora 2")
    Cli(b)("memory", "edit", fid, "My project is Borealis")
    Cli(a)("sync")
    out = Cli(b)("sync", expect=1)
    assert fid in out.stdout and "not pushed" in out.stdout
    text = (b / "Pilot/Memory.md").read_text()
    assert "My project is Aurora 2" in text and "My project is Borealis" in text
    assert git(b, "status", "--porcelain") == ""  # committed locally, no rebase left open
    doctor = Cli(b)("doctor", expect=1)
    assert fid in doctor.stdout and "changed on both sides" in doctor.stdout
    # Nothing reached the remote while the conflict is open.
    assert "Borealis" not in git(a, "show", "origin/main:Pilot/Memory.md")
    # The user keeps one line; the next sync pushes it.
    kept = "\n".join(ln for ln in text.split("\n") if not ln.startswith(("<<<<<<<", "=======",
                                                                          ">>>>>>>"))
                     and "Aurora 2" not in ln)
    (b / "Pilot/Memory.md").write_text(kept)
    assert "pushed" in Cli(b)("sync").stdout
    Cli(a)("sync")
    assert "Borealis" in (a / "Pilot/Memory.md").read_text()
    Cli(a)("doctor")


def test_doctor_warns_when_a_git_vault_lacks_the_merge_driver(tmp_path: Path) -> None:
    root = tmp_path / "v"
    init_vault(root)
    git(root, "init", "-q")
    out = Cli(root)("doctor", expect=1)
    assert "memvault sync --setup" in out.stdout
    Cli(root)("sync", "--setup")
    assert "sync --setup" not in Cli(root)("doctor", expect=None).stdout


def test_init_in_a_git_folder_installs_the_merge_driver_and_stays_idempotent(
        tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    git(root, "init", "-q")
    first = json.loads(Cli(root)("init", "--json").stdout)
    assert any("merge driver" in line for line in first["git"])
    assert "merge=union" in (root / ".gitattributes").read_text()
    assert "merge=memvault" in (root / ".git/info/attributes").read_text()
    attrs = (root / ".gitattributes").read_text()
    second = json.loads(Cli(root)("init", "--json").stdout)
    assert second["created"] == [] and (root / ".gitattributes").read_text() == attrs
    plain = tmp_path / "plain"
    Cli(plain)("init", "--json")
    assert not (plain / ".gitattributes").exists()


def test_sync_outside_a_git_clone_is_a_clear_error(vault_dir: Path) -> None:
    out = Cli(vault_dir)("sync", expect=1)
    assert "not a git clone" in out.stderr


def test_a_fact_forgotten_on_one_machine_and_touched_on_the_other_stays_forgotten(
        machines) -> None:
    a, b = machines
    tea = fact_ids(a)["I like tea"]
    Cli(b)("memory", "edit", tea, "I like tea")  # same text: only `updated` changes
    Cli(b)("sync")
    Cli(a)("forget", tea, "--yes")
    out = Cli(a)("sync", "--json")
    report = json.loads(out.stdout)
    assert report["conflicts"] == [] and report["pushed"] is True
    Cli(b)("sync")
    for clone in (a, b):
        text = (clone / "Pilot/Memory.md").read_text()
        assert "I like tea" not in text and CONFLICT_OPEN not in text
    assert (a / "Pilot/Memory.md").read_bytes() == (b / "Pilot/Memory.md").read_bytes()


def test_offline_sync_says_the_work_is_committed_locally_and_waits(
        machines, tmp_path: Path) -> None:
    a, _ = machines
    (tmp_path / "remote.git").rename(tmp_path / "gone.git")
    Cli(a)("remember", "I like rain")
    out = Cli(a)("sync", expect=1)
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("committed locally: 2 file(s)")
    assert lines[-1].startswith("not pushed: cannot reach origin (")
    assert "committed locally (1 local commit(s) wait)" in lines[-1]
    assert "next `memvault sync`" in lines[-1] and "repository exists" not in out.stdout
    assert "I like rain" in git(a, "show", "HEAD:Pilot/Memory.md")
    report = json.loads(Cli(a)("sync", "--json", expect=1).stdout)
    assert report["pushed"] is False and report["waiting"] == 1
    assert report["offline"].startswith("cannot reach origin")
    # Back online: the waiting commit goes out.
    (tmp_path / "gone.git").rename(tmp_path / "remote.git")
    back = json.loads(Cli(a)("sync", "--json").stdout)
    assert back["pushed"] is True and back["pushed_commits"] == 1 and back["waiting"] == 0


def test_the_first_sync_to_an_empty_remote_says_pushed(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(var, "t@example.com" if "EMAIL" in var else "t")
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(tmp_path / "empty.git"))
    a = tmp_path / "a"
    git(tmp_path, "clone", "-q", str(tmp_path / "empty.git"), str(a))
    init_vault(a)
    Cli(a)("remember", "I like tea")
    report = json.loads(Cli(a)("sync", "--json").stdout)
    assert report["pushed"] is True and report["remote"] == "origin/main"
    assert report["pushed_commits"] == 1
    assert "I like tea" in git(tmp_path / "empty.git", "show", "main:Pilot/Memory.md")
    human = Cli(a)("sync").stdout
    assert "up to date with origin/main" in human


def test_a_prose_conflict_in_memory_md_is_reported_like_a_fact_conflict(machines) -> None:
    a, b = machines
    for clone, words in ((a, "Notes from A."), (b, "Notes from B.")):
        path = clone / "Pilot/Memory.md"
        path.write_text(path.read_text().replace("Long-term facts about the user.", words))
    Cli(a)("sync")
    out = Cli(b)("sync", expect=1)
    assert "text changed on both sides" in out.stdout
    text = (b / "Pilot/Memory.md").read_text()
    assert "Notes from A." in text and "Notes from B." in text
    assert git(b, "status", "--porcelain") == ""  # no rebase left half-done


def test_identical_changes_on_two_machines_are_taken_once_without_a_conflict(
        machines) -> None:
    a, b = machines
    oslo = fact_ids(a)["I live in Oslo"]
    first = json.loads(Cli(a)("propose", "I prefer dark mode", "--json").stdout)
    second = json.loads(Cli(a)("propose", "I prefer tabs over spaces", "--json").stdout)
    mem_a = a / "Pilot/Memory.md"
    mem_a.write_text(mem_a.read_text() + "- A bullet typed by hand\n")
    Cli(a)("sync")
    Cli(b)("sync")
    pids = [first["proposal"]["id"], second["proposal"]["id"]]
    # The same four changes on each machine, a second apart (so only `updated:` differs).
    for clone in (a, b):
        cli = Cli(clone)
        cli("memory", "edit", oslo, "I live in Bergen")
        cli("accept", pids[0])
        inbox = clone / "Pilot/Inbox.md"
        inbox.write_text(inbox.read_text().replace("- [ ] I prefer tabs", "- [x] I prefer tabs"))
        cli("doctor", "--fix", expect=None)  # also applies the ticked box
        if clone == a:
            Cli(a)("sync")
            time.sleep(1.1)
    out = json.loads(Cli(b)("sync", "--json").stdout)
    assert out["conflicts"] == [] and out["pushed"] is True, out
    Cli(a)("sync")
    for clone in (a, b):
        text = (clone / "Pilot/Memory.md").read_text()
        assert text.count("I live in Bergen") == 1 and text.count("I prefer dark mode") == 1
        assert text.count("I prefer tabs over spaces") == 1
        assert text.count("A bullet typed by hand") == 1 and "<<<<<<<" not in text
        inbox_text = (clone / "Pilot/Inbox.md").read_text()
        assert "dark mode" not in inbox_text and "tabs over spaces" not in inbox_text
    assert (a / "Pilot/Memory.md").read_bytes() == (b / "Pilot/Memory.md").read_bytes()
