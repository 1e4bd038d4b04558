"""The experience journal and tombstones: every change writes an event, event ids
dedupe retries, torn lines are skipped, tombstones are keyed hashes scoped per principal."""

from __future__ import annotations

import json
from pathlib import Path

from memvault import Vault
from memvault.state_paths import EVENTS, TOMBSTONES


def _lines(vault_dir: Path, rel: str) -> list[dict]:
    return [json.loads(x) for x in (vault_dir / rel).read_bytes().splitlines() if x.strip()]


def test_every_fact_change_writes_one_event(vault: Vault, vault_dir: Path) -> None:
    mem = vault.memory
    fact = mem.remember("I like tea", "preference").fact
    mem.remember("i like TEA")  # exact duplicate: no change, no event
    mem.edit(fact.id, "I like green tea")
    mem.forget([fact.id])
    mem.restore(fact.id)
    events = _lines(vault_dir, EVENTS)
    assert [e["type"] for e in events] == ["fact.remembered", "fact.edited", "fact.forgotten",
                                          "fact.restored"]
    for e in events:
        assert {"id", "ts", "type", "scope", "record"} <= set(e)
        assert e["scope"] == "default" and e["record"] == fact.id
    assert events[1]["previous_text"] == "I like tea" and events[1]["text"] == "I like green tea"
    assert "text" not in events[2]  # the forget event is content-free
    assert len({e["id"] for e in events}) == 4


def test_an_event_id_appended_twice_is_kept_once(vault: Vault, vault_dir: Path) -> None:
    assert vault.events.append("test.retry", event_id="ev-fixed-1", record="r1") is True
    assert vault.events.append("test.retry", event_id="ev-fixed-1", record="r1") is False
    assert vault.events.append_many([{"type": "t", "id": "ev-a"}, {"type": "t", "id": "ev-a"},
                                     {"type": "t", "id": "ev-fixed-1"}]) == 1
    assert [e["id"] for e in _lines(vault_dir, EVENTS)] == ["ev-fixed-1", "ev-a"]


def test_a_torn_journal_line_is_skipped_and_the_next_event_starts_fresh(
        vault: Vault, vault_dir: Path) -> None:
    vault.events.append("test.one", event_id="ev-1")
    path = vault_dir / EVENTS
    path.write_bytes(path.read_bytes() + b'{"id":"ev-torn","type":"te')  # a crash mid-append
    vault.events.append("test.two", event_id="ev-2")
    assert [e["id"] for e in vault.events.read_all()] == ["ev-1", "ev-2"]
    assert path.read_bytes().split(b"\n")[1] == b'{"id":"ev-torn","type":"te'


def test_events_and_tombstones_are_scoped_per_principal(vault_dir: Path) -> None:
    alice = Vault.open(vault_dir, scope="alice")
    bob = Vault.open(vault_dir, scope="bob")
    fact = alice.memory.remember("shared words").fact
    alice.memory.forget([fact.id])
    assert alice.memory.history(fact.id) and not bob.memory.history(fact.id)
    assert alice.tombstones.is_tombstoned("shared words")
    assert not bob.tombstones.is_tombstoned("shared words")
    assert {e["scope"] for e in _lines(vault_dir, TOMBSTONES)} == {"alice"}


def test_tombstone_keys_are_keyed_hashes_of_the_normalised_text(vault: Vault,
                                                                vault_dir: Path) -> None:
    key = vault.tombstones.key_for("I like Tea")
    assert key == vault.tombstones.key_for("  i   LIKE tea ")
    assert "tea" not in key and len(key) == 32
    other = Vault.open(vault_dir)
    other.tombstones.salt = "another-vaults-salt"
    assert other.tombstones.key_for("I like Tea") != key  # not a plain, guessable hash
    vault.tombstones.add("I like Tea", "r1")
    assert vault.tombstones.lift("i like tea", "r2") is True
    assert vault.tombstones.lift("i like tea", "r2") is False  # nothing left to lift
    assert [e["kind"] for e in _lines(vault_dir, TOMBSTONES)] == ["forgotten", "lifted"]


def test_permanent_purge_removes_linked_records_and_keeps_other_lines(
        vault: Vault, vault_dir: Path) -> None:
    mem = vault.memory
    old = mem.remember("Secret plan alpha").fact
    mem.forget([old.id])
    new = mem.remember("Secret plan alpha").fact  # the same words under a new id
    keep = mem.remember("Unrelated fact").fact
    path = vault_dir / EVENTS
    path.write_bytes(path.read_bytes() + b"not json at all\n")
    result = mem.forget([new.id], permanent=True)
    assert result.purged_events == 3  # old: remembered + forgotten; new: remembered
    raw = path.read_bytes()
    assert b"Secret plan" not in raw and b"not json at all" in raw
    assert [e["record"] for e in vault.events.events(type_prefix="fact.remembered")] == [
        keep.id]
