"""`memvault sync` when git is not in a happy state: a broken merge driver, a rebase or
merge left open, an autostash that met incoming changes. Real git, real clones; every
step memvault advises is followed here exactly as written, and must work."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from memvault.core.merge import CONFLICT_OPEN
from memvault.services.git_setup import driver_command
from memvault.services.setup import init_vault
from tests.conftest import Cli
from tests.git_helpers import bare_repo, clone, fact_texts, git, git_proc, use_git_identity

BROKEN = "/nonexistent/old-venv/bin/python -m memvault merge-driver %O %A %B %P"


@pytest.fixture
def machines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    use_git_identity(monkeypatch)
    bare = bare_repo(tmp_path)
    a = clone(bare, tmp_path / "a")
    init_vault(a)
    Cli(a)("sync", "--setup")
    (a / "note.md").write_text("my note\n")
    git(a, "add", "note.md")
    git(a, "commit", "-qm", "a note of my own")
    Cli(a)("remember", "I like tea")
    Cli(a)("sync")
    b = clone(bare, tmp_path / "b")
    Cli(b)("sync", "--setup")
    return a, b


def test_a_driver_whose_program_is_gone_is_repaired_and_no_fact_is_lost(machines) -> None:
    a, b = machines
    git(b, "config", "merge.memvault.driver", BROKEN)
    Cli(a)("remember", "Fact from A")
    Cli(a)("sync")
    Cli(b)("remember", "Fact from B")
    doctor = Cli(b)("doctor", expect=1)
    assert "merge driver does not work" in doctor.stdout and "/nonexistent" in doctor.stdout
    out = Cli(b)("sync")
    assert "repaired the merge driver" in out.stderr and "cannot run" in out.stderr
    assert git(b, "config", "merge.memvault.driver").strip() == driver_command()
    assert {"Fact from A", "Fact from B", "I like tea"} <= fact_texts(b)
    Cli(a)("sync")
    assert {"Fact from A", "Fact from B"} <= fact_texts(a)
    assert "merge driver" not in Cli(b)("doctor").stdout


def test_doctor_fix_repairs_a_driver_of_another_version(machines, tmp_path: Path) -> None:
    _, b = machines
    fake = tmp_path / "old-memvault"
    fake.write_text("#!/bin/sh\ncat \"$3\" >> \"$2\"\nexit 0\n")  # merges, prints no version
    fake.chmod(0o755)
    git(b, "config", "merge.memvault.driver", f"{fake} %O %A %B %P")
    assert "runs memvault an older version" in Cli(b)("doctor", expect=1).stdout
    fixed = Cli(b)("doctor", "--fix")
    assert "repaired the memvault merge driver" in fixed.stdout
    assert git(b, "config", "merge.memvault.driver").strip() == driver_command()


def test_a_plain_git_pull_stopped_on_memory_md_without_markers_is_finished_by_sync(
        machines) -> None:
    a, b = machines
    git(b, "config", "merge.memvault.driver", BROKEN)
    Cli(a)("remember", "Fact from A")
    Cli(a)("sync")
    Cli(b)("remember", "Fact from B")
    git(b, "add", "-A")
    git(b, "commit", "-qm", "B's fact, committed by hand")
    pull = git_proc(b, "pull", "--rebase")  # as Obsidian Git would
    assert pull.returncode != 0
    assert "Pilot/Memory.md" in git(b, "diff", "--name-only", "--diff-filter=U")
    assert b"<<<<<<<" not in (b / "Pilot/Memory.md").read_bytes()  # git left A's file only
    # While git is mid-rebase, memvault changes nothing (it would break --continue).
    refused = Cli(b)("remember", "Fact written mid-rebase", expect=1)
    assert refused.stderr.startswith("error: a git rebase is in progress") and \
        len(refused.stderr.strip().splitlines()) == 1
    report = json.loads(Cli(b)("sync", "--json").stdout)
    assert report["pushed"] is True and report["problems"] == []
    assert {"Fact from A", "Fact from B", "I like tea"} <= fact_texts(b)
    assert git(b, "status", "--porcelain") == ""
    assert "rebase" not in git(b, "status")
    Cli(a)("sync")
    assert "Fact from B" in fact_texts(a)


def test_an_autostash_that_meets_incoming_changes_is_reported_with_steps_that_work(
        machines) -> None:
    a, b = machines
    (a / "note.md").write_text("my note, edited on A\n")
    git(a, "commit", "-qam", "edit the note on A")
    Cli(a)("remember", "Fact from A")
    Cli(a)("sync")
    (b / "note.md").write_text("my note, edited on B (not committed)\n")
    Cli(b)("remember", "Fact from B")
    out = Cli(b)("sync", expect=1)
    assert "your uncommitted changes to note.md met incoming changes" in out.stdout
    assert "pushed 1 commit(s)" in out.stdout  # memvault's own commit went out
    assert git(b, "status", "--porcelain").startswith("UU note.md")
    steps = re.search(r"run `(git restore --staged note\.md)`, then `(git stash drop "
                      r"stash@\{\d+\})`", out.stdout)
    assert steps, out.stdout
    # Until the user finishes, sync keeps giving the same steps (not `rebase --continue`).
    again = Cli(b)("sync", expect=1)
    assert steps.group(0) in again.stdout and "rebase --continue" not in again.stdout
    assert "note.md" in Cli(b)("doctor", expect=1).stdout
    # Follow the steps exactly.
    (b / "note.md").write_text("my note, edited on A and on B\n")
    for step in steps.groups():
        git(b, *step.split()[1:])
    assert git(b, "stash", "list") == ""
    assert git(b, "status", "--porcelain") == " M note.md\n"
    done = json.loads(Cli(b)("sync", "--json").stdout)
    assert done["problems"] == [] and done["conflicts"] == []
    assert {"Fact from A", "Fact from B"} <= fact_texts(b)


def test_a_rebase_stopped_on_the_users_own_notes_is_finished_as_advised(machines) -> None:
    a, b = machines
    (a / "note.md").write_text("note from A\n")
    git(a, "commit", "-qam", "A's note")
    Cli(a)("sync")
    (b / "note.md").write_text("note from B\n")
    git(b, "commit", "-qam", "B's note")
    Cli(b)("remember", "Fact from B")
    out = Cli(b)("sync", expect=1)
    assert "git stopped the rebase on conflicts in your notes: note.md" in out.stdout
    assert "`git add` them, then run `memvault sync` again" in out.stdout
    refused = Cli(b)("remember", "Written mid-rebase", expect=1)
    assert "a git rebase is in progress" in refused.stderr
    (b / "note.md").write_text("note from A and B\n")
    git(b, "add", "note.md")
    report = json.loads(Cli(b)("sync", "--json").stdout)
    assert report["pushed"] is True, report
    assert "Fact from B" in fact_texts(b) and git(b, "status", "--porcelain") == ""
    assert git(a, "pull", "-q") is not None
    assert (a / "note.md").read_text() == "note from A and B\n"


def test_a_merge_stopped_on_memory_md_by_an_old_clone_is_finished_fact_by_fact(
        machines) -> None:
    a, b = machines
    # A clone of a memvault 0.1 vault: .gitattributes names the driver, which this
    # clone does not have, so git merges Memory.md as text and stops with markers.
    (b / ".git/info/attributes").unlink()
    git(b, "config", "--remove-section", "merge.memvault")
    attrs = b / ".gitattributes"
    attrs.write_text(attrs.read_text().replace("merge=union", "merge=memvault"))
    git(b, "commit", "-qam", "0.1 attributes")
    Cli(a)("remember", "Fact from A")
    Cli(a)("sync")
    Cli(b)("remember", "Fact from B")
    git(b, "add", "-A")
    git(b, "commit", "-qm", "B's fact")
    pull = git_proc(b, "-c", "pull.rebase=false", "pull", "--no-edit")
    assert pull.returncode != 0 and b"<<<<<<<" in (b / "Pilot/Memory.md").read_bytes()
    out = Cli(b)("sync")
    assert "finished the git merge" in out.stderr
    text = (b / "Pilot/Memory.md").read_text()
    assert "Fact from A" in text and "Fact from B" in text and "<<<<<<<" not in text
    assert CONFLICT_OPEN not in text
    assert "merge=union" in attrs.read_text()  # the 0.1 lines were brought up to date
    assert git(b, "status", "--porcelain") == ""


def test_the_refusal_during_a_rebase_covers_every_kind_of_write(machines) -> None:
    _, b = machines
    (b / ".git/rebase-merge").mkdir()
    try:
        for args in (("remember", "x"), ("propose", "I prefer y"),
                     ("profile", "set", "name", "Ada")):
            out = Cli(b)(*args, expect=1)
            assert "a git rebase is in progress" in out.stderr, args
        assert Cli(b)("memory", "list", "--json").exit_code == 0  # reads still work
    finally:
        (b / ".git/rebase-merge").rmdir()
    assert sys.executable  # the interpreter memvault repairs the driver with


def test_an_old_vault_in_the_middle_of_a_rebase_opens_and_sync_finishes_it(machines) -> None:
    _, b = machines
    config = b / ".memvault/config.toml"
    config.write_text("\n".join(ln for ln in config.read_text().splitlines()
                                if not ln.startswith("vault_format")) + "\n")
    git(b, "commit", "-qam", "an older vault format")
    (b / ".git/rebase-merge").mkdir()
    try:  # reading works and writes nothing while git is mid-operation
        assert Cli(b)("memory", "list", "--json").exit_code == 0
        assert "vault_format" not in config.read_text()
    finally:
        (b / ".git/rebase-merge").rmdir()
    Cli(b)("memory", "list")
    assert "vault_format" in config.read_text()  # upgraded once git was done


def test_the_vault_upgrade_turns_0_1_driver_lines_into_union_lines_and_nothing_else(
        tmp_path: Path) -> None:
    from memvault.backends.fs import FsBackend
    from memvault.services.git_setup import union_merge_attributes

    root = tmp_path / "v"
    init_vault(root)
    attrs = root / ".gitattributes"
    old = ("*.png binary\r\n"
           "# memvault: merge memory files fact by fact (memvault sync --setup)\r\n"
           "Pilot/**/Memory.md merge=memvault\r\n"
           "Pilot/**/Inbox.md merge=memvault\r\n"
           "notes/**/x.md merge=memvault\r\n"
           ".memvault/events.jsonl merge=memvault")
    attrs.write_bytes(old.encode())
    [change] = union_merge_attributes(FsBackend(root))
    assert change.data == old.replace("Memory.md merge=memvault", "Memory.md merge=union") \
        .replace("Inbox.md merge=memvault", "Inbox.md merge=union") \
        .replace("events.jsonl merge=memvault", "events.jsonl merge=union") \
        .replace("merge memory files fact by fact (memvault sync --setup)",
                 "memory files merge as unions of lines in every clone; memvault tidies the "
                 "result").encode()
    attrs.write_bytes(change.data)
    assert union_merge_attributes(FsBackend(root)) == []  # idempotent
