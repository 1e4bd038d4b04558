"""The hosted store on a PostgreSQL server: psycopg 3 with a psycopg_pool connection pool.

For an app that runs several workers against one database. Install with
`pip install 'memvault[postgres]'`; open with
`HostedMemory.open("postgresql://app@db.internal/app")` (the password from `PGPASSWORD`
or `~/.pgpass`, which libpq reads, rather than in the URL).

Tables live in their own schema, `memvault` (the same columns as the SQLite store, as
`bytea` and `bigint`; `sealed` is stored out of line and uncompressed, since ciphertext
does not compress). A principal's write transaction holds
`pg_advisory_xact_lock(<memvault class>, <first 4 bytes of the principal tag>)`, so writers
of one principal are serialised while other principals run in parallel; the lock goes
with the commit or rollback. The record bound is counted under that lock, and the event
ledger is a primary key, so a replayed event loses the insert rather than a race.

Connections are checked before use, so after a server restart the pool hands out fresh
ones. A connection that breaks mid-operation (a restart, a failover) raises
`StoreUnavailable` with one line: the operation was not acknowledged and is safe to retry.
Schema changes: a new database gets the schema on first open; an older schema is
upgraded only by `memvault hosted migrate` (several workers share the server).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from memvault.errors import InvalidInput
from memvault.hosted.sql_store import GLOBAL_LOCK, Sql, SqlStoreMixin, apply_migrations
from memvault.hosted.store import StoreUnavailable

POOL_MAX = 8
POOL_TIMEOUT = 15.0
_LOCK_CLASS = 0x6D76  # "mv": the advisory-lock class of memvault's principal locks
_GLOBAL_CLASS = 0x6D77

MIGRATIONS: dict[int, list[str]] = {
    1: [
        "CREATE SCHEMA IF NOT EXISTS memvault",
        "CREATE TABLE memvault.meta (name text PRIMARY KEY, value bytea NOT NULL)",
        "CREATE TABLE memvault.documents (principal bytea NOT NULL, doc bytea NOT NULL, "
        "kind text NOT NULL, sealed bytea NOT NULL, updated bigint NOT NULL, "
        "PRIMARY KEY (principal, doc))",
        "ALTER TABLE memvault.documents ALTER COLUMN sealed SET STORAGE EXTERNAL",
        "CREATE TABLE memvault.markers (principal bytea NOT NULL, key bytea NOT NULL, "
        "kind text NOT NULL, created bigint NOT NULL, PRIMARY KEY (principal, key))",
    ],
    2: [
        "ALTER TABLE memvault.documents ADD COLUMN key_id bytea, "
        "ADD COLUMN fmt smallint NOT NULL DEFAULT 1",
        "CREATE TABLE memvault.keyring (key_id bytea PRIMARY KEY, wrapped bytea NOT NULL, "
        "created bigint NOT NULL)",
        "CREATE INDEX documents_by_key ON memvault.documents (fmt, key_id)",
    ],
}


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + host))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class PostgresStore(SqlStoreMixin):
    """A HostedStore on a PostgreSQL server (thread-safe; one pool per process)."""

    upgrades_on_open = False

    def __init__(self, url: str, *, pool_size: int = POOL_MAX) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise InvalidInput("the PostgreSQL store needs psycopg: "
                               "pip install 'memvault[postgres]'") from None
        self.url = url
        self.q = Sql("memvault.", "%s")
        self._errors: tuple[type[BaseException], ...] = (psycopg.OperationalError,)
        self.pool = ConnectionPool(url, min_size=1, max_size=max(1, pool_size), open=False,
                                   kwargs={"autocommit": True}, timeout=POOL_TIMEOUT,
                                   check=ConnectionPool.check_connection,
                                   name="memvault-hosted")
        try:
            self.pool.open(wait=True, timeout=POOL_TIMEOUT)
        except Exception as exc:
            self.pool.close()
            raise StoreUnavailable(f"cannot connect to {redact(url)}: "
                                   f"{_first_line(exc)}") from None

    def describe(self) -> str:
        return redact(self.url)

    @staticmethod
    def _lock_args(lock: bytes) -> tuple[int, int]:
        if lock == GLOBAL_LOCK:
            return _GLOBAL_CLASS, 0
        return _LOCK_CLASS, struct.unpack(">i", lock[:4])[0]

    @contextmanager
    def _connection(self, *, write: bool, lock: bytes | None) -> Iterator[Any]:
        try:
            with self.pool.connection() as conn:
                if not write:
                    yield conn
                    return
                with conn.transaction():
                    if lock is not None:
                        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                                     self._lock_args(lock))
                    yield conn
        except self._errors as exc:
            raise StoreUnavailable(f"the hosted database connection failed "
                                   f"({_first_line(exc)}); the operation was not "
                                   "acknowledged: retry it") from None

    def schema_version(self) -> int:
        with self._connection(write=False, lock=None) as conn:
            return self.schema_version_in(conn)

    def migrate(self) -> list[int]:
        lock = self._lock_args(GLOBAL_LOCK)
        try:
            with self.pool.connection() as conn:
                # a session lock, then a fresh transaction: one started before the lock
                # was granted could see the catalog as it was before another worker's DDL
                conn.execute("SELECT pg_advisory_lock(%s, %s)", lock)
                try:
                    with conn.transaction():
                        return apply_migrations(conn, self.q, MIGRATIONS,
                                                self.schema_version_in(conn), self.describe())
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s, %s)", lock)
        except self._errors as exc:
            raise StoreUnavailable(f"the hosted database connection failed "
                                   f"({_first_line(exc)}); the migration was rolled back: "
                                   "retry it") from None

    @staticmethod
    def schema_version_in(conn: Any) -> int:
        if conn.execute("SELECT to_regclass('memvault.meta')").fetchone()[0] is None:
            return 0
        row = conn.execute("SELECT value FROM memvault.meta WHERE name='schema'").fetchone()
        return int(bytes(row[0]).decode()) if row else 0

    def close(self) -> None:
        self.pool.close()
