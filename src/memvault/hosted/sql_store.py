"""The SQL both hosted stores share: one query set, two dialects.

SQLite and PostgreSQL accept the same statements here (`INSERT … ON CONFLICT … DO
UPDATE/NOTHING`, row values, `count(*)`); only the placeholder (`?` / `%s`) and the table
prefix (none / the `memvault.` schema) differ, so queries are written once with `%s` and
`{t}` and translated by `Sql`. Both drivers' connections have `execute(sql, params)`
returning a cursor with `fetchone`, `fetchall` and `rowcount`.

A subclass supplies `_connection(write=, lock=)`: a context manager yielding a connection
inside a transaction that holds the given lock (a principal's tag, or `GLOBAL_LOCK` for
the keyring and migrations) and commits on success.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from memvault.hosted.store import SealedRow

GLOBAL_LOCK = b"\x00memvault-keyring"
_PAGE = 200

_DOC_COLS = "doc, kind, sealed, updated, key_id, fmt"


class Sql:
    """Query text for one dialect, translated once and cached."""

    def __init__(self, prefix: str, placeholder: str) -> None:
        self.prefix = prefix
        self.placeholder = placeholder
        self._cache: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        out = self._cache.get(text)
        if out is None:
            out = self._cache[text] = text.replace("{t}", self.prefix).replace(
                "%s", self.placeholder)
        return out


def _sealed_row(r: tuple[Any, ...]) -> SealedRow:
    return SealedRow(bytes(r[0]), str(r[1]), bytes(r[2]), int(r[3]),
                     None if r[4] is None else bytes(r[4]), int(r[5]))


class SqlPrincipalTxn:
    """A PrincipalTxn over one connection already inside a transaction."""

    def __init__(self, conn: Any, principal: bytes, q: Sql) -> None:
        self.conn = conn
        self.p = principal
        self.q = q

    def _exec(self, text: str, params: tuple[Any, ...]) -> Any:
        return self.conn.execute(self.q(text), params)

    def get(self, doc_tag: bytes) -> SealedRow | None:
        row = self._exec(f"SELECT {_DOC_COLS} FROM {{t}}documents WHERE principal=%s AND doc=%s",
                         (self.p, doc_tag)).fetchone()
        return _sealed_row(row) if row else None

    def put(self, row: SealedRow) -> None:
        self._exec("INSERT INTO {t}documents (principal, doc, kind, sealed, updated, key_id, fmt)"
                   " VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (principal, doc) DO UPDATE SET "
                   "kind=excluded.kind, sealed=excluded.sealed, updated=excluded.updated, "
                   "key_id=excluded.key_id, fmt=excluded.fmt",
                   (self.p, row.doc_tag, row.kind, row.sealed, row.updated, row.key_id, row.fmt))

    def delete(self, doc_tag: bytes) -> bool:
        return self._exec("DELETE FROM {t}documents WHERE principal=%s AND doc=%s",
                          (self.p, doc_tag)).rowcount > 0

    def count(self) -> int:
        return int(self._exec("SELECT count(*) FROM {t}documents WHERE principal=%s",
                              (self.p,)).fetchone()[0])

    def rows(self, kind: str | None = None) -> Iterator[SealedRow]:
        if kind is None:
            cur = self._exec(f"SELECT {_DOC_COLS} FROM {{t}}documents WHERE principal=%s",
                             (self.p,))
        else:
            cur = self._exec(f"SELECT {_DOC_COLS} FROM {{t}}documents WHERE principal=%s "
                             "AND kind=%s", (self.p, kind))
        for r in cur.fetchall():
            yield _sealed_row(r)

    def legacy_rows(self) -> list[SealedRow]:
        return [_sealed_row(r) for r in self._exec(
            f"SELECT {_DOC_COLS} FROM {{t}}documents WHERE principal=%s AND fmt=1",
            (self.p,)).fetchall()]

    def has_marker(self, key: bytes) -> str | None:
        row = self._exec("SELECT kind FROM {t}markers WHERE principal=%s AND key=%s",
                         (self.p, key)).fetchone()
        return str(row[0]) if row else None

    def add_marker(self, key: bytes, kind: str, created: int) -> bool:
        return self._exec("INSERT INTO {t}markers (principal, key, kind, created) "
                          "VALUES (%s,%s,%s,%s) ON CONFLICT (principal, key) DO NOTHING",
                          (self.p, key, kind, created)).rowcount == 1

    def remove_marker(self, key: bytes) -> bool:
        return self._exec("DELETE FROM {t}markers WHERE principal=%s AND key=%s",
                          (self.p, key)).rowcount > 0


class SqlKeyringTxn:
    """A KeyringTxn over one connection holding the store-wide lock."""

    def __init__(self, conn: Any, q: Sql) -> None:
        self.conn = conn
        self.q = q

    def entries(self) -> dict[bytes, bytes]:
        return {bytes(k): bytes(w) for k, w in self.conn.execute(
            self.q("SELECT key_id, wrapped FROM {t}keyring")).fetchall()}

    def add(self, key_id: bytes, wrapped: bytes, created: int) -> bool:
        return self.conn.execute(self.q(
            "INSERT INTO {t}keyring (key_id, wrapped, created) VALUES (%s,%s,%s) "
            "ON CONFLICT (key_id) DO NOTHING"), (key_id, wrapped, created)).rowcount == 1

    def remove(self, key_id: bytes) -> bool:
        return self.conn.execute(self.q("DELETE FROM {t}keyring WHERE key_id=%s"),
                                 (key_id,)).rowcount > 0

    def meta(self, name: str) -> bytes | None:
        row = self.conn.execute(self.q("SELECT value FROM {t}meta WHERE name=%s"),
                                (name,)).fetchone()
        return bytes(row[0]) if row else None

    def set_meta(self, name: str, value: bytes | None) -> None:
        if value is None:
            self.conn.execute(self.q("DELETE FROM {t}meta WHERE name=%s"), (name,))
        else:
            self.conn.execute(self.q("INSERT INTO {t}meta (name, value) VALUES (%s,%s) "
                                     "ON CONFLICT (name) DO UPDATE SET value=excluded.value"),
                              (name, value))

    def assign_legacy_key(self, key_id: bytes) -> int:
        return int(self.conn.execute(self.q(
            "UPDATE {t}documents SET key_id=%s WHERE fmt=1 AND key_id IS NULL"),
            (key_id,)).rowcount)


_DUMP = {
    "keyring": ("key_id", "key_id, wrapped, created"),
    "document": ("principal, doc", "principal, doc, kind, sealed, updated, key_id, fmt"),
    "marker": ("principal, key", "principal, key, kind, created"),
}
_TABLES = {"keyring": "keyring", "document": "documents", "marker": "markers"}


def apply_migrations(conn: Any, q: Sql, migrations: dict[int, list[str]], version: int,
                     describe: str) -> list[int]:
    """Run the migrations after `version` on `conn` (inside the caller's transaction,
    which holds the store-wide lock), recording each version in meta; the versions run."""
    from memvault.hosted.store import SCHEMA_VERSION, SchemaError

    if version > SCHEMA_VERSION:
        raise SchemaError(f"schema {version} was made by a newer memvault", path=describe)
    applied = []
    for target in range(version + 1, SCHEMA_VERSION + 1):
        for statement in migrations[target]:
            conn.execute(statement)
        conn.execute(q("INSERT INTO {t}meta (name, value) VALUES ('schema', %s) "
                       "ON CONFLICT (name) DO UPDATE SET value=excluded.value"),
                     (str(target).encode(),))
        applied.append(target)
    return applied


class SqlStoreMixin:
    """The store-level queries shared by SqliteStore and PostgresStore."""

    q: Sql

    def _connection(self, *, write: bool, lock: bytes | None
                    ) -> AbstractContextManager[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def schema_version(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def transaction(self, principal_tag: bytes, *, write: bool = True
                    ) -> AbstractContextManager[SqlPrincipalTxn]:
        from contextlib import contextmanager

        @contextmanager
        def txn() -> Iterator[SqlPrincipalTxn]:
            with self._connection(write=write, lock=principal_tag if write else None) as conn:
                yield SqlPrincipalTxn(conn, principal_tag, self.q)

        return txn()

    def keyring_transaction(self) -> AbstractContextManager[SqlKeyringTxn]:
        from contextlib import contextmanager

        @contextmanager
        def txn() -> Iterator[SqlKeyringTxn]:
            with self._connection(write=True, lock=GLOBAL_LOCK) as conn:
                yield SqlKeyringTxn(conn, self.q)

        return txn()

    def _read(self, text: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._connection(write=False, lock=None) as conn:
            return list(conn.execute(self.q(text), params).fetchall())

    def keyring(self) -> dict[bytes, bytes]:
        if self.schema_version() < 2:
            return {}
        return {bytes(k): bytes(w)
                for k, w in self._read("SELECT key_id, wrapped FROM {t}keyring")}

    def meta(self, name: str) -> bytes | None:
        if self.schema_version() < 1:
            return None
        rows = self._read("SELECT value FROM {t}meta WHERE name=%s", (name,))
        return bytes(rows[0][0]) if rows else None

    def principal_tags(self) -> list[bytes]:
        return [bytes(r[0]) for r in self._read(
            "SELECT principal FROM {t}documents UNION SELECT principal FROM {t}markers")]

    def stats(self) -> dict[str, Any]:
        version = self.schema_version()
        if version < 1:
            return {"documents": 0, "principals": 0, "markers": {}, "by_key": []}
        out: dict[str, Any] = {
            "documents": int(self._read("SELECT count(*) FROM {t}documents")[0][0]),
            "principals": len(self.principal_tags()),
            "markers": {str(k): int(n) for k, n in self._read(
                "SELECT kind, count(*) FROM {t}markers GROUP BY kind")},
        }
        if version >= 2:
            out["by_key"] = [{"key_id": None if k is None else bytes(k).hex(), "format": int(f),
                              "documents": int(n)} for k, f, n in self._read(
                "SELECT key_id, fmt, count(*) FROM {t}documents GROUP BY key_id, fmt")]
        else:
            out["by_key"] = [{"key_id": None, "format": 1, "documents": out["documents"]}]
        return out

    def reseal_candidates(self, current_key_id: bytes, limit: int) -> list[tuple[bytes, bytes]]:
        return [(bytes(p), bytes(d)) for p, d in self._read(
            "SELECT principal, doc FROM {t}documents WHERE fmt=2 AND key_id<>%s "
            "ORDER BY principal, doc LIMIT %s", (current_key_id, limit))]

    def dump(self) -> Iterator[tuple[str, tuple[Any, ...]]]:
        """Every row, page by page in key order (constant memory, any store size)."""
        for table, (key, cols) in _DUMP.items():
            width = len(key.split(","))
            after: tuple[Any, ...] | None = None
            while True:
                if after is None:
                    page = self._read(f"SELECT {cols} FROM {{t}}{_TABLES[table]} "
                                      f"ORDER BY {key} LIMIT %s", (_PAGE,))
                else:
                    marks = ",".join(["%s"] * width)
                    page = self._read(f"SELECT {cols} FROM {{t}}{_TABLES[table]} "
                                      f"WHERE ({key}) > ({marks}) ORDER BY {key} LIMIT %s",
                                      (*after, _PAGE))
                for row in page:
                    yield table, tuple(bytes(v) if isinstance(v, memoryview) else v
                                       for v in row)
                if len(page) < _PAGE:
                    break
                after = tuple(page[-1][:width])

    def load(self, table: str, rows: Iterable[tuple[Any, ...]]) -> int:
        key, cols = _DUMP[table]
        marks = ",".join(["%s"] * len(cols.split(",")))
        text = self.q(f"INSERT INTO {{t}}{_TABLES[table]} ({cols}) VALUES ({marks}) "
                      f"ON CONFLICT ({key}) DO NOTHING")
        inserted = 0
        with self._connection(write=True, lock=GLOBAL_LOCK) as conn:
            for row in rows:
                inserted += conn.execute(text, row).rowcount
        return inserted
