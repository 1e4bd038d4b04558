"""The hosted store interface: opaque sealed rows per principal, nothing else.

A store keeps three kinds of rows, all keyed by byte tags the service computes (keyed
hashes), never by a principal id, a document id or content:

- documents: (principal_tag, doc_tag) -> kind, sealed bytes, updated time;
- markers: (principal_tag, key) -> marker kind: content-free tombstones of forgotten
  documents and the ledger of applied event ids (so a replayed event is a no-op);
- one store-wide verifier of the secret.

All changes for one principal happen inside `transaction(principal_tag)`, which must
serialise writers of that principal (SQLite: BEGIN IMMEDIATE; PostgreSQL: a transaction
holding `pg_advisory_xact_lock` on the principal tag), so the record limit cannot be
overrun by two concurrent writers.

A store never sees a key or a plaintext and must never try to interpret `sealed`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class SealedRow:
    """One stored document as the store sees it."""

    doc_tag: bytes
    kind: str
    sealed: bytes
    updated: int


class PrincipalTxn(Protocol):
    """Reads and writes of one principal inside one transaction."""

    def get(self, doc_tag: bytes) -> SealedRow | None: ...

    def put(self, row: SealedRow) -> None: ...

    def delete(self, doc_tag: bytes) -> bool: ...

    def count(self) -> int: ...

    def rows(self, kind: str | None = None) -> Iterator[SealedRow]: ...

    def has_marker(self, key: bytes) -> str | None:
        """The marker kind stored under `key`, or None."""
        ...

    def add_marker(self, key: bytes, kind: str, created: int) -> None: ...

    def remove_marker(self, key: bytes) -> bool: ...


class HostedStore(Protocol):
    """Where sealed documents live (embedded SQLite here; PostgreSQL could follow)."""

    def verifier(self) -> bytes | None: ...

    def set_verifier(self, value: bytes) -> None:
        """Store the verifier once; a store that has one keeps it."""
        ...

    def transaction(self, principal_tag: bytes) -> AbstractContextManager[PrincipalTxn]: ...

    def principal_tags(self) -> list[bytes]: ...

    def close(self) -> None: ...
