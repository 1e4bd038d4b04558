"""Hosted mode's behaviour, run against a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

import pytest

from memvault.errors import NotFound
from memvault.hosted import (
    MAX_DOC_BYTES,
    MAX_RECORDS,
    DecryptError,
    HostedMemory,
    LimitExceeded,
    SecretError,
)
from tests.hosted_backends import Backend, no_postgres

SECRET = "s" * 20 + "0123456789abcdefghijklmnop"
ENV = {"SESSION_SECRET": SECRET}


@pytest.fixture
def hm(backend: Backend):
    with HostedMemory.open(backend.target, environ=ENV) as memory:
        yield memory


def test_database_holds_no_plaintext_of_any_document(backend: Backend) -> None:
    """Not in the tables, indexes, WAL or (PostgreSQL) the server log, even with every
    statement and its parameters logged."""
    words = ["zanzibarquokka", "periwinkle-avalanche", "Grüße-Ölmühle"]
    if backend.name == "postgres":
        database = backend.target.rsplit("/", 1)[1]
        backend.sql(f'ALTER DATABASE "{database}" SET log_statement = \'all\'')
    with HostedMemory.open(backend.target, environ=ENV) as hm:
        hm.put("alice@example.com", "style-xq17", f"Prefers {words[0]} answers", kind="preference")
        hm.put("alice@example.com", "layout-wv93", f"Show {words[1]} tables first", kind="lesson")
        hm.put("bob-the-principal", "lang", f"Writes in German: {words[2]}")
        hm.apply_event("bob-the-principal", "evt-unguessable-77", doc_id="tz-doc",
                       content="Works in Lisbon time")
        hm.forget("bob-the-principal", "lang")
        raw_open = backend.raw_bytes()  # while open (SQLite: WAL present)
    raw = backend.raw_bytes() + raw_open
    if backend.name == "postgres":  # the log really holds the statements and parameters
        assert b"INSERT INTO memvault.documents" in raw and b"parameters: $1 = '\\x" in raw
    for needle in [*words, "alice@example.com", "style-xq17", "layout-wv93", "Prefers",
                   "bob-the-principal", "evt-unguessable-77", "tz-doc", "Lisbon"]:
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
    assert hm.principal_count() == 1


def test_a_row_moved_to_another_principal_does_not_open(hm: HostedMemory,
                                                        backend: Backend) -> None:
    hm.put("alice", "secret-doc", "alice only")
    with pytest.raises(NotFound):
        hm.get("mallory", "secret-doc")
    assert hm.list("mallory") == []
    mallory = hm.keyring.principal("mallory")
    backend.sql("UPDATE documents SET principal=?, doc=?",
                (mallory.tag, mallory.doc_tag("secret-doc")))
    with pytest.raises(DecryptError) as err:
        hm.get("mallory", "secret-doc")
    assert "alice only" not in str(err.value)


@pytest.mark.parametrize("column,value", [("kind", "lesson"), ("updated", 12345),
                                          ("updated", 2**40)])
def test_an_edited_kind_or_time_column_is_detected(hm: HostedMemory, backend: Backend,
                                                   column: str, value: object) -> None:
    hm.put("p", "d", "a preference about tables", kind="preference")
    hm.put("p", "other", "untouched")
    tag = hm.keyring.principal("p").doc_tag("d")
    assert backend.sql(f"UPDATE documents SET {column}=? WHERE doc=?", (value, tag)) == []
    with pytest.raises(DecryptError, match="failed authentication") as err:
        hm.get("p", "d")
    assert "tables" not in str(err.value)
    with pytest.raises(DecryptError):
        hm.list("p")
    assert hm.get("p", "other").text == "untouched"


def test_wrong_or_missing_secret_fails_cleanly(backend: Backend) -> None:
    with HostedMemory.open(backend.target, environ=ENV) as hm:
        hm.put("p", "d", "top secret words")
    wrong = "w" * 40
    with pytest.raises(SecretError) as err:
        HostedMemory.open(backend.target, environ={"SESSION_SECRET": wrong})
    message = str(err.value)
    assert "does not match" in message
    assert wrong not in message and SECRET not in message and "top secret" not in message
    with pytest.raises(SecretError, match="not set"):
        HostedMemory.open(backend.target, environ={})
    with pytest.raises(SecretError, match="too short"):
        HostedMemory.open(backend.target, environ={"SESSION_SECRET": "short"})
    with HostedMemory.open(backend.target, environ=ENV) as hm:  # the right secret still works
        assert hm.get("p", "d").text == "top secret words"


@pytest.mark.parametrize("env", [{}, {"SESSION_SECRET": "é" * 16},
                                 {"SESSION_SECRET": SECRET, "SESSION_SECRET_PREVIOUS": "x"}])
def test_refusing_for_the_secret_creates_nothing(backend: Backend, env: dict[str, str]) -> None:
    with pytest.raises(SecretError):
        HostedMemory.open(backend.target, environ=env)
    if backend.name == "sqlite":
        assert backend.folder is not None and not backend.folder.exists()
    else:
        assert backend.sql("SELECT to_regclass('memvault.meta')") == [(None,)]


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
    # the refused event was not consumed: it applies once there is room
    assert hm.apply_event("p", "ev-over", doc_id="one-more", content="over").status == "applied"
    assert hm.count("p") == 4096


def test_put_many_is_all_or_nothing(hm: HostedMemory) -> None:
    with pytest.raises(LimitExceeded):
        hm.put_many("p", [("ok", "fine", "preference"), ("big", b"x" * (MAX_DOC_BYTES + 1),
                                                         "preference")])
    assert hm.count("p") == 0


def test_forgotten_document_is_not_resurrected_by_replaying_its_event(
        hm: HostedMemory, backend: Backend) -> None:
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
    assert b"kumquat" not in backend.raw_bytes()  # the tombstone is content-free
    # an explicit put by the user lifts it
    hm.put("p", "pref", "Likes kumquat-ladders")
    assert hm.get("p", "pref").text == "Likes kumquat-ladders"


def test_forget_event_applies_once(hm: HostedMemory) -> None:
    hm.put("p", "d", "to be forgotten")
    assert hm.apply_event("p", "ev-f", op="forget", doc_id="d").status == "applied"
    assert hm.apply_event("p", "ev-f", op="forget", doc_id="d").status == "duplicate"
    with pytest.raises(NotFound):
        hm.get("p", "d")


def test_secret_is_read_from_the_process_environment(backend: Backend,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SESSION_SECRET", raising=False)
    with pytest.raises(SecretError, match="SESSION_SECRET is not set"):
        HostedMemory.open(backend.target)
    monkeypatch.setenv("SESSION_SECRET", SECRET)
    with HostedMemory.open(backend.target) as hm:
        hm.put("p", "d", "from the real environment")
        assert "SESSION_SECRET" not in repr(hm) and SECRET not in repr(hm)
        assert SECRET not in repr(hm.keyring)
    with HostedMemory.open(backend.target, environ=ENV) as hm:
        assert hm.get("p", "d").text == "from the real environment"


def test_forget_all_empties_one_principal_and_keeps_tombstones(hm: HostedMemory) -> None:
    hm.put_many("closing", [("a", "alpha words", "preference"), ("b", "beta words", "lesson")])
    hm.put("staying", "a", "alpha words")
    assert hm.forget_all("closing") == 2
    assert hm.list("closing") == []
    assert hm.apply_event("closing", "ev-old", doc_id="a", content="alpha words"
                          ).status == "tombstoned"
    assert hm.get("staying", "a").text == "alpha words"


def test_a_missing_postgres_fails_under_ci_and_skips_elsewhere(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="PostgreSQL needed.*no binaries"):
        no_postgres("no binaries")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="PostgreSQL needed.*no binaries"):
        no_postgres("no binaries")


FORGOTTEN = "Drinks café au lait at nine"
DISGUISES = ["Drinks cafe\u0301 au lait at nine",  # decomposed accent (NFD)
             "Drinks caf\u200be\u0301 au lait at nine".replace("e\u0301", "é"),  # zero-width
             "ＤＲＩＮＫＳ café au lait at nine",  # full-width letters
             "DRINKS CAFÉ AU LAIT AT NINE",  # case
             "Drinks\u00a0café au  lait at nine\u2060"]  # odd spaces, word joiner


def test_a_forgotten_document_stays_forgotten_in_every_disguise(hm: HostedMemory) -> None:
    """The same notion of "the same text" as the vault (core.records.match_key)."""
    hm.put("p", "coffee", FORGOTTEN)
    hm.forget("p", "coffee")
    for n, text in enumerate(DISGUISES):
        assert hm.is_forgotten("p", text), text
        assert hm.apply_event("p", f"ev-{n}", doc_id=f"d{n}", content=text
                              ).status == "tombstoned", text
    assert [r.status for r in hm.import_documents("p", [("x", DISGUISES[0], "preference")])
            ] == ["tombstoned"]
    assert not hm.is_forgotten("p", "Drinks tea at nine")
    assert hm.list("p") == []
    hm.put("p", "coffee", DISGUISES[2])  # the user saying it again lifts it, in any form
    assert not any(hm.is_forgotten("p", text) for text in [FORGOTTEN, *DISGUISES])


def test_a_tombstone_stored_before_match_keys_is_still_honoured(hm: HostedMemory) -> None:
    """A database whose tombstones were keyed by the older case-and-whitespace form (what
    hosted mode wrote before it used match keys) keeps them: the forgotten text and its
    disguises are refused, and an explicit put lifts the old tombstone."""
    import time

    keys = hm._principal("p")  # the principal's own keyed hash, as the older code used it
    old_form = " ".join(FORGOTTEN.casefold().split()).encode("utf-8")
    with hm.store.transaction(keys.tag) as txn:
        txn.add_marker(keys.keyed_hash("content", old_form), "tombstone", int(time.time()))
    for n, text in enumerate([FORGOTTEN, *DISGUISES]):
        assert hm.apply_event("p", f"ev-{n}", doc_id=f"d{n}", content=text
                              ).status == "tombstoned", text
    hm.put("p", "coffee", FORGOTTEN)
    assert not hm.is_forgotten("p", FORGOTTEN)
    assert hm.apply_event("p", "ev-after", doc_id="d", content=DISGUISES[0]).status == "applied"
