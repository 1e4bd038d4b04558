"""Record kinds as data: ids unique across the kinds, and a new kind added in one place.

The table in `memvault.core.kinds` is what every part of memvault reads; a test-only kind
registered there gets its file from `init`, typed records when parsed, its records in the
search index, the record-by-record merge and a line in the git attributes, with no other
change to the code.
"""

from __future__ import annotations

import json
from pathlib import Path

from memvault import Vault
from memvault.core.kinds import (
    FACT,
    LESSON,
    PROPOSAL,
    RecordKind,
    all_kinds,
    kind_of_file,
    registered,
)
from memvault.core.records import Fact, Lesson, Proposal, Record

FACT_LINE = "- I live in Lisbon [identity] <!-- id:abc123 updated:1784594521 -->\n"
INBOX_LINE = ("- [ ] I prefer tea to coffee [preference] "
              "<!-- id:abc123 kind:fact src:import proposed:1784594521 -->\n")


def _collide(root: Path) -> None:
    """An older vault: a proposal (say, imported) carries the id of an existing fact."""
    memory = root / "Pilot" / "Memory.md"
    memory.write_text(memory.read_text() + FACT_LINE)
    inbox = root / "Pilot" / "Inbox.md"
    inbox.write_text(inbox.read_text() + INBOX_LINE)


def test_accepting_a_proposal_whose_id_a_fact_has_keeps_both_texts(vault_dir: Path) -> None:
    _collide(vault_dir)
    vault = Vault.open(vault_dir)
    accepted = vault.proposals.accept("abc123")
    assert accepted.text == "I prefer tea to coffee"  # not the fact that had the id
    assert accepted.id != "abc123"
    facts = {f.id: f.text for f in vault.memory.all()}
    assert facts["abc123"] == "I live in Lisbon"
    assert facts[accepted.id] == "I prefer tea to coffee"
    assert vault.proposals.list() == []
    events = [json.loads(line) for line in
              (vault_dir / ".memvault/events.jsonl").read_text().splitlines()]
    done = [e for e in events if e["type"] == "proposal.accepted"]
    assert done and done[-1]["record"] == "abc123" and done[-1]["stored_as"] == accepted.id


def test_the_new_id_of_a_colliding_proposal_is_the_same_on_every_machine(
        tmp_path: Path) -> None:
    from memvault.services.setup import init_vault

    ids = []
    for name in ("laptop", "desktop"):
        root = tmp_path / name
        init_vault(root)
        _collide(root)
        ids.append(Vault.open(root).proposals.accept("abc123").id)
    assert ids[0] == ids[1] != "abc123"


def test_a_retried_accept_after_a_crash_is_still_recognised(vault_dir: Path) -> None:
    """The proposal was written to Memory.md but the crash left it in the inbox too."""
    vault = Vault.open(vault_dir)
    proposed = vault.proposals.propose("I use vim", "preference")
    assert proposed.proposal is not None
    pid = proposed.proposal.id
    inbox_before = (vault_dir / "Pilot/Inbox.md").read_bytes()
    vault.proposals.accept(pid)
    (vault_dir / "Pilot/Inbox.md").write_bytes(inbox_before)  # as if _remove never ran
    again = Vault.open(vault_dir).proposals.accept(pid)
    assert again.id == pid
    assert [f.text for f in Vault.open(vault_dir).memory.all()].count("I use vim") == 1


def test_doctor_reports_an_id_used_by_two_kinds(vault_dir: Path) -> None:
    _collide(vault_dir)
    report = Vault.open(vault_dir).doctor.check()
    clashes = [f for f in report.findings if "abc123" in f.message and "also" in f.message]
    assert clashes and clashes[0].path.endswith("Inbox.md")


def test_new_ids_are_checked_against_every_kind(vault_dir: Path, monkeypatch) -> None:
    """The random source offers a fact's id first: the proposal must not take it."""
    from memvault.core.bullets import encode_id
    from memvault.services import bullet_files

    memory = vault_dir / "Pilot" / "Memory.md"
    taken_number = 12345
    taken = encode_id(taken_number)
    memory.write_text(memory.read_text() + f"- I live in Porto <!-- id:{taken} -->\n")
    offers = iter([taken_number, taken_number, 999_999])
    monkeypatch.setattr(bullet_files, "random_id_number", lambda: next(offers))
    result = Vault.open(vault_dir).proposals.propose("I like green tea", "preference")
    assert result.proposal is not None and result.proposal.id == encode_id(999_999)


def test_a_new_fact_never_takes_a_proposals_id(vault_dir: Path, monkeypatch) -> None:
    from memvault.core.bullets import _ID_ALPHABET, encode_id
    from memvault.services import bullet_files

    vault = Vault.open(vault_dir)
    proposed = vault.proposals.propose("I like green tea", "preference").proposal
    assert proposed is not None
    taken_number = sum(_ID_ALPHABET.index(c) * 36 ** i for i, c in enumerate(proposed.id))
    assert encode_id(taken_number) == proposed.id
    offers = iter([taken_number, 424_242])
    monkeypatch.setattr(bullet_files, "random_id_number", lambda: next(offers))
    fact = Vault.open(vault_dir).memory.remember("I live in Porto").fact
    assert fact.id == encode_id(424_242)


def test_records_are_typed_by_kind(vault_dir: Path) -> None:
    vault = Vault.open(vault_dir)
    vault.memory.remember("I live in Lisbon")
    vault.lessons.propose("Keep position sizes small", "risk-posture")
    (lesson_proposal,) = vault.proposals.list()
    assert type(lesson_proposal) is Proposal and lesson_proposal.kind == "lesson"
    assert all(type(f) is Fact for f in vault.memory.all())
    accepted = vault.proposals.accept(lesson_proposal.id)
    assert type(accepted) is Lesson and accepted.evidence == []
    assert type(vault.lifecycle.locate(accepted.id)[1]) is Lesson
    assert [k.record_type for k in all_kinds()] == [Fact, Lesson, Proposal]


# -- a kind added in one place ------------------------------------------------------------


class Habit(Record):
    """A test-only kind: habits the user keeps."""

    __slots__ = ()
    record_kind = "habit"


HABIT = RecordKind("habit", "Habits.md", Habit, ("daily", "weekly"), "daily",
                   "# Habits\n\nThings the user does regularly.\n\n", index_kind="habit",
                   collection="habits", description="Things the user does regularly.")


def test_a_kind_registered_in_the_table_is_handled_everywhere(tmp_path: Path) -> None:
    from memvault.core.bullets import parse_bullets
    from memvault.core.records import record_from_item
    from memvault.services.git_setup import attribute_lines
    from memvault.services.merge_driver import merge_files
    from memvault.services.setup import init_vault

    with registered(HABIT):
        root = tmp_path / "vault"
        init_vault(root)
        habits = root / "Pilot" / "Habits.md"
        assert habits.read_text().startswith("# Habits")  # file creation
        vault = Vault.open(root)
        assert vault.layout.path("habit") == "Pilot/Habits.md"
        assert "Pilot/Habits.md" in vault.layout.memory_files
        assert kind_of_file("Habits.md") is HABIT

        base = habits.read_bytes()
        ours = base + b"- I run before work [daily] <!-- id:h1run -->\n"
        theirs = base + b"- I call my sister on Sundays [weekly] <!-- id:h2sis -->\n"
        habits.write_bytes(ours)
        (item,) = parse_bullets(ours).items  # parsing into the kind's record type
        record = record_from_item(item, HABIT.record_type, HABIT.categories)
        assert type(record) is Habit and record.category == "daily"

        merged = merge_files(base, ours, theirs, "Pilot/Habits.md", cwd=root)  # merge
        assert merged.clean
        assert b"I run before work" in merged.data and b"I call my sister" in merged.data
        assert "Pilot/**/Habits.md merge=union" in attribute_lines("Pilot")
        from memvault.mcp.server import resources

        assert ("memvault://habits", "Habits.md", HABIT.description) in resources()

        hits = vault.search.search_memory("run before work", limit=5)  # indexing
        assert [(h.id, h.kind) for h in hits] == [("h1run", "habit")]

        report = vault.doctor.check()  # checked like the other bullet files
        habits.write_text(habits.read_text() + "- I swim [monthly] <!-- id:h3sw -->\n")
        report = Vault.open(root).doctor.check()
        assert any(f.path == "Pilot/Habits.md" and "monthly" in f.message
                   for f in report.findings)
    assert kind_of_file("Habits.md") is None  # the table is as it was
    assert [k.name for k in all_kinds()] == [FACT.name, LESSON.name, PROPOSAL.name]


def test_the_cli_says_where_a_colliding_proposal_was_stored(cli, vault_dir: Path) -> None:
    _collide(vault_dir)
    out = cli("accept", "abc123")
    assert "I prefer tea to coffee" in out.stdout
    stored = json.loads(cli("memory", "list", "--all", "--json").stdout)["facts"]
    new_id = next(f["id"] for f in stored if f["text"] == "I prefer tea to coffee")
    assert f"stored as {new_id}, not abc123" in out.stdout
    assert json.loads(cli("proposals", "list", "--json").stdout)["proposals"] == []
