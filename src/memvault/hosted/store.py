"""The hosted store interface: opaque sealed rows per principal, nothing else.

A store keeps four kinds of rows, all keyed by byte tags the service computes (keyed
hashes), never by a principal id, a document id or content:

- documents: (principal_tag, doc_tag) -> kind, sealed bytes, updated time, the key id of
  the secret that sealed it and the sealing format;
- markers: (principal_tag, key) -> marker kind: content-free tombstones of forgotten
  documents and the ledger of applied event ids. The pair is unique, and `add_marker`
  is an insert that reports whether it inserted: that unique constraint is what makes
  an event apply exactly once, not a read followed by a write;
- the keyring: the index root wrapped under each accepted secret (hosted/keyring.py);
- meta: schema version and, for a store made by 0.1.0, its secret verifier.

Writes of one principal happen inside `transaction(principal_tag)`, which serialises the
writers of that principal (SQLite: BEGIN IMMEDIATE; PostgreSQL: a transaction holding
`pg_advisory_xact_lock` on the principal tag), so the record bound cannot be overrun by
two concurrent writers. `transaction(tag, write=False)` is a plain read.

A store never sees a key or a plaintext and must never try to interpret `sealed`.
`open_store` picks the store from the target: a `postgresql://` (or `postgres://`) URL,
else a SQLite file path (optionally `sqlite:///path`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from memvault.errors import VaultError

SCHEMA_VERSION = 2


class StoreUnavailable(VaultError):
    """The database did not answer or the connection broke; nothing was acknowledged."""


class SchemaError(VaultError):
    """The store's schema is older (run `memvault hosted migrate`) or newer than this code."""


@dataclass(frozen=True, slots=True)
class SealedRow:
    """One stored document as the store sees it."""

    doc_tag: bytes
    kind: str
    sealed: bytes
    updated: int
    key_id: bytes | None
    fmt: int


class PrincipalTxn(Protocol):
    """Reads and writes of one principal inside one transaction."""

    def get(self, doc_tag: bytes) -> SealedRow | None: ...

    def put(self, row: SealedRow) -> None: ...

    def delete(self, doc_tag: bytes) -> bool: ...

    def count(self) -> int: ...

    def rows(self, kind: str | None = None) -> Iterator[SealedRow]: ...

    def legacy_rows(self) -> list[SealedRow]:
        """Rows still sealed in the 0.1.0 format."""
        ...

    def has_marker(self, key: bytes) -> str | None:
        """The marker kind stored under `key`, or None."""
        ...

    def add_marker(self, key: bytes, kind: str, created: int) -> bool:
        """Insert the marker unless one exists; True if this call inserted it."""
        ...

    def remove_marker(self, key: bytes) -> bool: ...


class KeyringTxn(Protocol):
    """The keyring and meta rows, under a store-wide lock."""

    def entries(self) -> dict[bytes, bytes]: ...

    def add(self, key_id: bytes, wrapped: bytes, created: int) -> bool: ...

    def remove(self, key_id: bytes) -> bool: ...

    def meta(self, name: str) -> bytes | None: ...

    def set_meta(self, name: str, value: bytes | None) -> None: ...

    def assign_legacy_key(self, key_id: bytes) -> int:
        """Record `key_id` on format-1 rows that have none; how many."""
        ...


class HostedStore(Protocol):
    """Where sealed documents live: SqliteStore (embedded) or PostgresStore."""

    #: True where an older schema is upgraded on open (an embedded file the app owns)
    upgrades_on_open: bool

    def describe(self) -> str:
        """Where the store is, for messages (a path, or a URL without its password)."""
        ...

    def schema_version(self) -> int:
        """0 for an empty database."""
        ...

    def migrate(self) -> list[int]:
        """Bring the schema to SCHEMA_VERSION; the versions applied."""
        ...

    def keyring(self) -> dict[bytes, bytes]:
        """key id -> wrapped index root ({} before schema 2)."""
        ...

    def meta(self, name: str) -> bytes | None: ...

    def keyring_transaction(self) -> AbstractContextManager[KeyringTxn]: ...

    def transaction(self, principal_tag: bytes, *, write: bool = True
                    ) -> AbstractContextManager[PrincipalTxn]: ...

    def principal_tags(self) -> list[bytes]: ...

    def stats(self) -> dict[str, Any]:
        """Row counts: documents, markers by kind, principals, documents by key id."""
        ...

    def reseal_candidates(self, current_key_id: bytes, limit: int
                          ) -> list[tuple[bytes, bytes]]:
        """Up to `limit` (principal tag, doc tag) of format-2 rows under another key."""
        ...

    def dump(self) -> Iterator[tuple[str, tuple[Any, ...]]]:
        """Every keyring, document and marker row, raw ("keyring"|"document"|"marker")."""
        ...

    def load(self, table: str, rows: Iterable[tuple[Any, ...]]) -> int:
        """Insert raw rows of a dump, skipping ones already present; how many inserted."""
        ...

    def close(self) -> None: ...


def is_postgres_url(target: str | Path) -> bool:
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def open_store(target: str | Path, *, create: bool = True) -> HostedStore:
    """The store for `target`. With `create=False` a missing SQLite file is NotFound."""
    if is_postgres_url(target):
        from memvault.hosted.pg_store import PostgresStore

        return PostgresStore(str(target))
    from memvault.hosted.sqlite_store import SqliteStore

    path = str(target)
    if path.startswith("sqlite:///"):
        path = path[len("sqlite://"):]
    return SqliteStore(path, create=create)
