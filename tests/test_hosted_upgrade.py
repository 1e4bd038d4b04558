"""A hosted database written by memvault 0.1.0 keeps working, and is resealed so that its
rows' kind and time are bound too."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from memvault.hosted import DecryptError, HostedMemory, SecretError

FIXTURE = Path(__file__).parent / "data" / "hosted-0.1.0" / "memory.sqlite"
ENV = {"SESSION_SECRET": "hosted-0.1.0-fixture-secret-" + "k" * 20}


@pytest.fixture
def old_db(tmp_path: Path) -> Path:
    target = tmp_path / "memory.sqlite"
    shutil.copy(FIXTURE, target)
    return target


def _formats(db: Path) -> list[int]:
    conn = sqlite3.connect(db)
    try:
        return sorted(r[0] for r in conn.execute("SELECT fmt FROM documents"))
    finally:
        conn.close()


def test_a_0_1_0_database_opens_with_its_secret_and_keeps_its_promises(old_db: Path) -> None:
    with HostedMemory.open(old_db, environ=ENV) as hm:
        assert hm.get("alice@example.com", "style").text == (
            "Prefers answers with a pomegranate table")
        assert [(d.doc_id, d.kind) for d in sorted(hm.list("alice@example.com"),
                                                   key=lambda d: d.doc_id)] == [
            ("gas", "lesson"), ("style", "preference")]
        # alice was touched, so her rows are resealed; bob's are not yet
        assert _formats(old_db) == [1, 1, 2, 2]
        # the event ledger and the tombstone written by 0.1.0 still hold
        assert hm.apply_event("bob", "evt-1", doc_id="tz", content="Works in Lisbon time"
                              ).status == "duplicate"
        assert hm.apply_event("bob", "evt-2", doc_id="g", content="Likes quince-paste reminders"
                              ).status == "tombstoned"
        assert hm.get("bob", "tz").text == "Works in Lisbon time"
        assert _formats(old_db) == [2, 2, 2, 2]
        hm.put("carol", "new", "written today")
    with HostedMemory.open(old_db, environ=ENV) as hm:
        assert hm.get("carol", "new").text == "written today"
        assert hm.count("bob") == 2


def test_a_wrong_secret_leaves_a_0_1_0_database_untouched(old_db: Path) -> None:
    before = old_db.read_bytes()
    with pytest.raises(SecretError, match="does not match"):
        HostedMemory.open(old_db, environ={"SESSION_SECRET": "w" * 40})
    assert old_db.read_bytes() == before


def test_a_kind_edited_in_a_0_1_0_row_is_detected_before_resealing(old_db: Path) -> None:
    conn = sqlite3.connect(old_db)
    conn.execute("UPDATE documents SET kind='lesson' WHERE kind='preference'")
    conn.commit()
    conn.close()
    with pytest.raises(DecryptError, match="kind was altered"):
        HostedMemory.open(old_db, environ=ENV).get("bob", "lang")
