"""The embedded hosted store: one SQLite database file (WAL, synchronous=FULL, secure_delete).

Tables (every key is a keyed hash computed by the service; see hosted/keys.py)::

    documents(principal BLOB, doc BLOB, kind TEXT, sealed BLOB, updated INTEGER,
              UNIQUE (principal, doc))   -- a rowid table: rows are large (up to 1 MiB);
                                         -- the unique index makes counting cheap
    markers(principal BLOB, key BLOB, kind TEXT, created INTEGER,
            PRIMARY KEY (principal, key)) WITHOUT ROWID
    meta(name TEXT PRIMARY KEY, value BLOB)      -- schema version, secret verifier

`secure_delete` is on, so the sealed bytes of a forgotten document are overwritten in the
file rather than left in a free page. Writers take `BEGIN IMMEDIATE`, which serialises
them across processes. This module never sees a key or a plaintext.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memvault.errors import InvalidInput
from memvault.hosted.store import SealedRow

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    principal BLOB NOT NULL, doc BLOB NOT NULL, kind TEXT NOT NULL,
    sealed BLOB NOT NULL, updated INTEGER NOT NULL,
    UNIQUE (principal, doc));
CREATE TABLE IF NOT EXISTS markers (
    principal BLOB NOT NULL, key BLOB NOT NULL, kind TEXT NOT NULL, created INTEGER NOT NULL,
    PRIMARY KEY (principal, key)) WITHOUT ROWID;
"""


class _Txn:
    def __init__(self, conn: sqlite3.Connection, principal: bytes) -> None:
        self.conn = conn
        self.p = principal

    def get(self, doc_tag: bytes) -> SealedRow | None:
        row = self.conn.execute(
            "SELECT kind, sealed, updated FROM documents WHERE principal=? AND doc=?",
            (self.p, doc_tag)).fetchone()
        return SealedRow(doc_tag, row[0], bytes(row[1]), row[2]) if row else None

    def put(self, row: SealedRow) -> None:
        self.conn.execute(
            "INSERT INTO documents (principal, doc, kind, sealed, updated) VALUES (?,?,?,?,?) "
            "ON CONFLICT (principal, doc) DO UPDATE SET kind=excluded.kind, "
            "sealed=excluded.sealed, updated=excluded.updated",
            (self.p, row.doc_tag, row.kind, row.sealed, row.updated))

    def delete(self, doc_tag: bytes) -> bool:
        cur = self.conn.execute("DELETE FROM documents WHERE principal=? AND doc=?",
                                (self.p, doc_tag))
        return cur.rowcount > 0

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM documents WHERE principal=?",
                                     (self.p,)).fetchone()[0])

    def rows(self, kind: str | None = None) -> Iterator[SealedRow]:
        if kind is None:
            cur = self.conn.execute(
                "SELECT doc, kind, sealed, updated FROM documents WHERE principal=?", (self.p,))
        else:
            cur = self.conn.execute(
                "SELECT doc, kind, sealed, updated FROM documents WHERE principal=? AND kind=?",
                (self.p, kind))
        for doc, k, sealed, updated in cur.fetchall():
            yield SealedRow(bytes(doc), k, bytes(sealed), updated)

    def has_marker(self, key: bytes) -> str | None:
        row = self.conn.execute("SELECT kind FROM markers WHERE principal=? AND key=?",
                                (self.p, key)).fetchone()
        return row[0] if row else None

    def add_marker(self, key: bytes, kind: str, created: int) -> None:
        self.conn.execute("INSERT OR REPLACE INTO markers (principal, key, kind, created) "
                          "VALUES (?,?,?,?)", (self.p, key, kind, created))

    def remove_marker(self, key: bytes) -> bool:
        cur = self.conn.execute("DELETE FROM markers WHERE principal=? AND key=?",
                                (self.p, key))
        return cur.rowcount > 0


class SqliteStore:
    """A HostedStore in one SQLite file. Safe to share between threads (one lock)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise InvalidInput("the hosted database path is a folder", path=str(self.path))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(str(self.path), isolation_level=None,
                                        check_same_thread=False, timeout=30)
            self.conn.execute("PRAGMA journal_mode=WAL")
            # FULL: an acknowledged put survives a power loss, not only a crash
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute("PRAGMA secure_delete=ON")
            self.conn.executescript(_SCHEMA)
            self.conn.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('schema', ?)",
                              (str(SCHEMA_VERSION).encode(),))
        except sqlite3.DatabaseError as exc:
            raise InvalidInput(f"not a memvault hosted database ({exc})",
                               path=str(self.path)) from None
        self._lock = threading.RLock()

    def verifier(self) -> bytes | None:
        row = self.conn.execute("SELECT value FROM meta WHERE name='verifier'").fetchone()
        return bytes(row[0]) if row else None

    def set_verifier(self, value: bytes) -> None:
        with self._lock:
            self.conn.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('verifier', ?)",
                              (value,))

    @contextmanager
    def transaction(self, principal_tag: bytes) -> Iterator[_Txn]:
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield _Txn(self.conn, principal_tag)
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def principal_tags(self) -> list[bytes]:
        return [bytes(r[0]) for r in self.conn.execute(
            "SELECT DISTINCT principal FROM documents UNION "
            "SELECT DISTINCT principal FROM markers").fetchall()]

    def close(self) -> None:
        with self._lock:
            try:
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass
            self.conn.close()
