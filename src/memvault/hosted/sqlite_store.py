"""The embedded hosted store: one SQLite database file (WAL, synchronous=FULL, secure_delete).

Tables (every key is a keyed hash computed by the service; see hosted/keys.py)::

    documents(principal BLOB, doc BLOB, kind TEXT, sealed BLOB, updated INTEGER,
              key_id BLOB, fmt INTEGER, UNIQUE (principal, doc))
                                   -- a rowid table: rows are large (up to 1 MiB);
                                   -- the unique index makes counting cheap
    markers(principal BLOB, key BLOB, kind TEXT, created INTEGER,
            PRIMARY KEY (principal, key)) WITHOUT ROWID
    keyring(key_id BLOB PRIMARY KEY, wrapped BLOB, created INTEGER)
    meta(name TEXT PRIMARY KEY, value BLOB)      -- schema version; 0.1.0's verifier

Schema versions: 1 is memvault 0.1.0's; 2 adds the key id and format of each row and
the keyring. A file made by 0.1.0 is upgraded when opened (it belongs to one app).
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
from typing import Any

from memvault.errors import InvalidInput, NotFound
from memvault.hosted.sql_store import Sql, SqlStoreMixin, apply_migrations

MIGRATIONS: dict[int, list[str]] = {
    1: [  # memvault 0.1.0
        "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB NOT NULL)",
        "CREATE TABLE IF NOT EXISTS documents (principal BLOB NOT NULL, doc BLOB NOT NULL, "
        "kind TEXT NOT NULL, sealed BLOB NOT NULL, updated INTEGER NOT NULL, "
        "UNIQUE (principal, doc))",
        "CREATE TABLE IF NOT EXISTS markers (principal BLOB NOT NULL, key BLOB NOT NULL, "
        "kind TEXT NOT NULL, created INTEGER NOT NULL, PRIMARY KEY (principal, key)) "
        "WITHOUT ROWID",
    ],
    2: [  # key ids, sealing format, keyring (secret rotation; full associated data)
        "ALTER TABLE documents ADD COLUMN key_id BLOB",
        "ALTER TABLE documents ADD COLUMN fmt INTEGER NOT NULL DEFAULT 1",
        "CREATE TABLE keyring (key_id BLOB PRIMARY KEY, wrapped BLOB NOT NULL, "
        "created INTEGER NOT NULL)",
        "CREATE INDEX documents_by_key ON documents (fmt, key_id)",
    ],
}


class SqliteStore(SqlStoreMixin):
    """A HostedStore in one SQLite file. Safe to share between threads (one lock)."""

    upgrades_on_open = True

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        self.q = Sql("", "?")
        if self.path.exists() and self.path.is_dir():
            raise InvalidInput("the hosted database path is a folder", path=str(self.path))
        if not create and not self.path.exists():
            raise NotFound("no hosted database here", path=str(self.path))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(str(self.path), isolation_level=None,
                                        check_same_thread=False, timeout=30)
            self.conn.execute("PRAGMA journal_mode=WAL")
            # FULL: an acknowledged put survives a power loss, not only a crash
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute("PRAGMA secure_delete=ON")
            self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise InvalidInput(f"not a memvault hosted database ({exc})",
                               path=str(self.path)) from None
        self._lock = threading.RLock()

    def describe(self) -> str:
        return str(self.path)

    @contextmanager
    def _connection(self, *, write: bool, lock: bytes | None) -> Iterator[Any]:
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def schema_version(self) -> int:
        with self._lock:
            if not self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                                     "name='meta'").fetchone():
                return 0
            row = self.conn.execute("SELECT value FROM meta WHERE name='schema'").fetchone()
        return int(bytes(row[0]).decode()) if row else 0

    def migrate(self) -> list[int]:
        with self._connection(write=True, lock=None) as conn:
            return apply_migrations(conn, self.q, MIGRATIONS, self.schema_version(),
                                    self.describe())

    def close(self) -> None:
        with self._lock:
            try:
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass
            self.conn.close()
