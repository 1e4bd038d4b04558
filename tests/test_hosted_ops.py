"""Operating hosted mode on both stores: status, migrations, secret rotation, moving a
store between SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.errors import InvalidInput, NotFound
from memvault.hosted import HostedMemory, SchemaError, SecretError
from memvault.hosted.admin import migrate, status
from memvault.hosted.dump import export, import_dump
from memvault.hosted.rotation import rekey
from tests.hosted_backends import Backend, no_postgres

OLD = {"SESSION_SECRET": "old-secret-" + "o" * 30}
NEW = {"SESSION_SECRET": "new-secret-" + "n" * 30}
ROTATING = {**NEW, "SESSION_SECRET_PREVIOUS": OLD["SESSION_SECRET"]}


def _fill(target: str, env: dict[str, str], principals: int = 5, docs: int = 8) -> None:
    with HostedMemory.open(target, environ=env) as hm:
        for p in range(principals):
            hm.put_many(f"user-{p}", [(f"d{d}", f"user {p} doc {d}", "preference")
                                      for d in range(docs)])
        hm.apply_event("user-0", "evt-1", doc_id="from-event", content="evented text")
        hm.put("user-0", "gone", "forgotten text")
        hm.forget("user-0", "gone")


def _check_all(target: str, env: dict[str, str], principals: int = 5, docs: int = 8) -> None:
    with HostedMemory.open(target, environ=env) as hm:
        for p in range(principals):
            for d in range(docs):
                assert hm.get(f"user-{p}", f"d{d}").text == f"user {p} doc {d}"
        assert hm.apply_event("user-0", "evt-1", doc_id="from-event", content="evented text"
                              ).status == "duplicate"
        assert hm.apply_event("user-0", "evt-9", doc_id="x", content="forgotten text"
                              ).status == "tombstoned"


def test_status_reports_schema_and_counts_and_changes_nothing(backend: Backend) -> None:
    if backend.name == "sqlite":
        with pytest.raises(NotFound):
            status(backend.target, OLD)
        assert backend.folder is not None and not backend.folder.exists()
    else:
        assert status(backend.target, OLD)["schema"] == 0
    _fill(backend.target, OLD)
    data = status(backend.target, OLD)
    assert (data["schema"], data["secret"], data["principals"], data["documents"]) == (
        2, "ok", 5, 41)
    assert (data["tombstones"], data["events"], data["needs_rekey"]) == (1, 1, 0)
    assert data["keyring"] == [data["current_key"]]
    with pytest.raises(SecretError):
        status(backend.target, NEW)
    text = json.dumps(data)
    assert "user-0" not in text and OLD["SESSION_SECRET"] not in text


def test_migrate_creates_the_schema_once(backend: Backend) -> None:
    first = migrate(backend.target, OLD)
    assert (first["schema_before"], first["schema"], first["applied"]) == (0, 2, [1, 2])
    assert migrate(backend.target, OLD)["applied"] == []
    with pytest.raises(SecretError):
        migrate(backend.target, NEW)


def test_an_older_postgres_schema_needs_an_explicit_migrate(pg_server) -> None:
    """(A SQLite file is upgraded when opened: tests/test_hosted_upgrade.py.)"""
    if isinstance(pg_server, str):
        no_postgres(pg_server)
    from memvault.hosted.pg_store import MIGRATIONS

    backend = Backend("postgres", pg_server.create_database(), server=pg_server)
    for statement in MIGRATIONS[1]:
        backend.sql(statement)
    backend.sql("INSERT INTO meta (name, value) VALUES ('schema', ?)", (b"1",))
    with pytest.raises(SchemaError, match="run `memvault hosted migrate`"):
        HostedMemory.open(backend.target, environ=OLD)
    assert migrate(backend.target, OLD)["applied"] == [2]
    _fill(backend.target, OLD)
    _check_all(backend.target, OLD)


def test_rotation_reads_both_secrets_then_rekey_retires_the_old_one(backend: Backend) -> None:
    _fill(backend.target, OLD)
    with HostedMemory.open(backend.target, environ=ROTATING) as hm:  # the app, mid-rotation
        assert hm.get("user-3", "d2").text == "user 3 doc 2"  # old rows still open
        hm.put("user-3", "after", "written under the new secret")
        assert status(backend.target, ROTATING)["needs_rekey"] == 41
        result = rekey(hm, batch=7)
    assert result.finished and result.resealed == 41 and len(result.removed_keys) == 1
    assert status(backend.target, NEW)["needs_rekey"] == 0
    _check_all(backend.target, NEW)
    with pytest.raises(SecretError, match="does not match"):
        HostedMemory.open(backend.target, environ=OLD)


def test_rekey_refuses_when_rows_need_a_secret_it_does_not_hold(backend: Backend) -> None:
    _fill(backend.target, OLD, principals=1, docs=2)
    with HostedMemory.open(backend.target, environ=ROTATING):
        pass  # registers the new secret
    with HostedMemory.open(backend.target, environ=NEW) as hm:
        with pytest.raises(SecretError, match="SESSION_SECRET_PREVIOUS"):
            rekey(hm)
    _check_all(backend.target, ROTATING, principals=1, docs=2)


def test_export_and_import_move_a_store_between_sqlite_and_postgres(
        backend: Backend, pg_server, tmp_path: Path) -> None:
    if isinstance(pg_server, str):
        no_postgres(pg_server)
    other = (pg_server.create_database() if backend.name == "sqlite"
             else str(tmp_path / "moved" / "memory.sqlite"))
    _fill(backend.target, OLD)
    dump = tmp_path / "memory.dump"
    counts = export(backend.target, dump, OLD)
    assert counts == {"keyring": 1, "document": 41, "marker": 2}
    raw = dump.read_bytes()
    assert b"user 3 doc" not in raw and b"user-0" not in raw and b"evt-1" not in raw
    assert import_dump(other, dump, OLD)["document"] == 41
    _check_all(other, OLD)
    assert import_dump(other, dump, OLD)["document"] == 0  # re-running is safe
    with pytest.raises(SecretError):
        import_dump(str(tmp_path / "x.sqlite"), dump, NEW)


def test_a_truncated_dump_or_a_foreign_target_is_refused_with_nothing_imported(
        backend: Backend, tmp_path: Path) -> None:
    source = str(tmp_path / "source.sqlite")
    _fill(source, OLD)
    dump = tmp_path / "memory.dump"
    export(source, dump, OLD)
    cut = tmp_path / "cut.dump"
    cut.write_bytes(dump.read_bytes()[: len(dump.read_bytes()) // 2])
    with pytest.raises(InvalidInput, match="incomplete"):
        import_dump(backend.target, cut, OLD)
    _fill(backend.target, OLD, principals=1, docs=1)  # a store with its own keyring
    with pytest.raises(InvalidInput, match="another store"):
        import_dump(backend.target, dump, OLD)
    with HostedMemory.open(backend.target, environ=OLD) as hm:
        assert hm.principal_count() == 1
