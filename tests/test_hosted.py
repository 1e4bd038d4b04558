"""Hosted mode: encrypted per-principal documents in a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.errors import NotFound
from memvault.hosted import (MAX_DOC_BYTES, MAX_RECORDS, DecryptError, HostedMemory,
                             LimitExceeded, SecretError)

SECRET = "s" * 20 + "0123456789abcdefghijklmnop"
ENV = {"SESSION_SECRET": SECRET}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "hosted" / "memory.sqlite"


@pytest.fixture
def hm(db: Path):
    with HostedMemory.open(db, environ=ENV) as memory:
        yield memory


def _all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file())


def test_database_file_holds_no_plaintext_of_any_document(db: Path) -> None:
    words = ["zanzibarquokka", "periwinkle-avalanche", "Grüße-Ölmühle"]
    with HostedMemory.open(db, environ=ENV) as hm:
        hm.put("alice@example.com", "style", f"Prefers {words[0]} answers", kind="preference")
        hm.put("alice@example.com", "layout", f"Show {words[1]} tables first", kind="lesson")
        hm.put("bob", "lang", f"Writes in German: {words[2]}")
        hm.forget("bob", "lang")
        # while open (WAL present) and after close
        raw_open = _all_bytes(db.parent)
    raw = _all_bytes(db.parent) + raw_open
    for needle in [*words, "alice@example.com", "style", "layout", "Prefers", "bob"]:
        assert needle.encode("utf-8") not in raw, needle
    assert SECRET.encode() not in raw


def test_documents_round_trip_per_principal(hm: HostedMemory) -> None:
    hm.put("p1", "a", "first", kind="preference")
    hm.put("p1", "b", b"\x00\xffbinary", kind="lesson")
    assert hm.get("p1", "a").text == "first"
    assert hm.get("p1", "b").content == b"\x00\xffbinary"
    assert {d.doc_id for d in hm.list("p1")} == {"a", "b"}
    assert [d.doc_id for d in hm.list("p1", kind="lesson")] == ["b"]
    hm.put("p1", "a", "replaced")
    assert hm.get("p1", "a").text == "replaced"
    assert hm.count("p1") == 2


def test_two_principals_cannot_read_each_others_documents(hm: HostedMemory, db: Path) -> None:
    hm.put("alice", "secret-doc", "alice only")
    with pytest.raises(NotFound):
        hm.get("mallory", "secret-doc")
    assert hm.list("mallory") == []
    # even moving alice's sealed row under mallory's tag does not open it
    import sqlite3

    from memvault.hosted.keys import PrincipalKeys

    conn = sqlite3.connect(db)
    mallory = PrincipalKeys.derive(SECRET.encode(), "mallory")
    conn.execute("UPDATE documents SET principal=?, doc=?", (mallory.tag,
                                                               mallory.doc_tag("secret-doc")))
    conn.commit()
    conn.close()
    with pytest.raises(DecryptError) as err:
        hm.get("mallory", "secret-doc")
    assert "alice only" not in str(err.value)


def test_wrong_or_missing_secret_fails_cleanly(db: Path) -> None:
    with HostedMemory.open(db, environ=ENV) as hm:
        hm.put("p", "d", "top secret words")
    wrong = "w" * 40
    with pytest.raises(SecretError) as err:
        HostedMemory.open(db, environ={"SESSION_SECRET": wrong})
    message = str(err.value)
    assert "does not match" in message
    assert wrong not in message and SECRET not in message and "top secret" not in message
    with pytest.raises(SecretError, match="not set"):
        HostedMemory.open(db, environ={})
    with pytest.raises(SecretError, match="too short"):
        HostedMemory.open(db, environ={"SESSION_SECRET": "short"})
    with HostedMemory.open(db, environ=ENV) as hm:  # the right secret still works
        assert hm.get("p", "d").text == "top secret words"


def test_document_size_bound_is_exactly_one_mebibyte(hm: HostedMemory) -> None:
    hm.put("p", "edge", b"x" * MAX_DOC_BYTES)
    assert len(hm.get("p", "edge").content) == 1024 * 1024
    with pytest.raises(LimitExceeded, match="1 MiB"):
        hm.put("p", "over", b"x" * (MAX_DOC_BYTES + 1))
    with pytest.raises(NotFound):
        hm.get("p", "over")


def test_record_bound_is_exactly_4096_per_principal(hm: HostedMemory) -> None:
    hm.put_many("p", [(f"d{i}", f"doc {i}", "preference") for i in range(MAX_RECORDS)])
    assert hm.count("p") == 4096
    hm.put("p", "d7", "replacing an existing one is fine at the limit")
    with pytest.raises(LimitExceeded, match="4,096"):
        hm.put("p", "one-more", "over the limit")
    with pytest.raises(LimitExceeded):
        hm.apply_event("p", "ev-over", doc_id="one-more", content="over")
    assert hm.count("p") == 4096
    hm.put("other", "d0", "another principal has its own budget")
    hm.forget("p", "d0")
    hm.put("p", "one-more", "fits after a forget")
    assert hm.count("p") == 4096


def test_put_many_is_all_or_nothing(hm: HostedMemory) -> None:
    with pytest.raises(LimitExceeded):
        hm.put_many("p", [("ok", "fine", "preference"), ("big", b"x" * (MAX_DOC_BYTES + 1),
                                                         "preference")])
    assert hm.count("p") == 0


def test_forgotten_document_is_not_resurrected_by_replaying_its_event(hm: HostedMemory,
                                                                      db: Path) -> None:
    first = hm.apply_event("p", "ev-1", doc_id="pref", content="Likes kumquat-ladders")
    assert first.status == "applied"
    assert hm.apply_event("p", "ev-1", doc_id="pref", content="Likes kumquat-ladders"
                          ).status == "duplicate"
    hm.forget("p", "pref")
    assert hm.apply_event("p", "ev-1", doc_id="pref", content="Likes kumquat-ladders"
                          ).status == "duplicate"
    # a new event (or an import) with the same content is refused too
    again = hm.apply_event("p", "ev-2", doc_id="pref2", content="  likes KUMQUAT-ladders ")
    assert again.status == "tombstoned"
    assert [r.status for r in hm.import_documents("p", [("x", "Likes kumquat-ladders",
                                                          "preference")])] == ["tombstoned"]
    assert hm.list("p") == []
    assert hm.is_forgotten("p", "Likes kumquat-ladders")
    # the tombstone is content-free
    assert b"kumquat" not in _all_bytes(db.parent)
    # an explicit put by the user lifts it
    hm.put("p", "pref", "Likes kumquat-ladders")
    assert hm.get("p", "pref").text == "Likes kumquat-ladders"


def test_forget_event_applies_once(hm: HostedMemory) -> None:
    hm.put("p", "d", "to be forgotten")
    assert hm.apply_event("p", "ev-f", op="forget", doc_id="d").status == "applied"
    assert hm.apply_event("p", "ev-f", op="forget", doc_id="d").status == "duplicate"
    with pytest.raises(NotFound):
        hm.get("p", "d")


def test_secret_is_read_from_the_process_environment(db: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SESSION_SECRET", raising=False)
    with pytest.raises(SecretError, match="SESSION_SECRET is not set"):
        HostedMemory.open(db)
    monkeypatch.setenv("SESSION_SECRET", SECRET)
    with HostedMemory.open(db) as hm:
        hm.put("p", "d", "from the real environment")
        assert "SESSION_SECRET" not in repr(hm) and SECRET not in repr(hm)
    with HostedMemory.open(db, environ=ENV) as hm:
        assert hm.get("p", "d").text == "from the real environment"


def test_forget_all_empties_one_principal_and_keeps_tombstones(hm: HostedMemory) -> None:
    hm.put_many("closing", [("a", "alpha words", "preference"), ("b", "beta words", "lesson")])
    hm.put("staying", "a", "alpha words")
    assert hm.forget_all("closing") == 2
    assert hm.list("closing") == []
    assert hm.apply_event("closing", "ev-old", doc_id="a", content="alpha words"
                          ).status == "tombstoned"
    assert hm.get("staying", "a").text == "alpha words"
