"""HostedMemory: many principals' preference and lesson documents, encrypted at rest.

For an app that keeps its users' memory on a server (docs/hosted.md). Each document is sealed
with its principal's AES-GCM key before it reaches the store; the store only ever holds
keyed-hash tags and ciphertext. Bounds: a document is at most 1 MiB (1,048,576 bytes of
content); a principal holds at most 4,096 documents.

Forgetting deletes the row and leaves a content-free tombstone (a keyed hash of the
content's match key: the vault's notion of "the same text", so case, Unicode form and
invisible characters do not disguise it), and every applied event id is kept as a keyed
hash, so replaying the event that created a forgotten document, or importing the same
content again, does not bring it back. Tombstones stored under the older case-and-
whitespace form are still honoured. Only an explicit `put` by the app on the user's
behalf lifts a tombstone.

The service layer knows nothing of SQL: it talks to a `HostedStore` (hosted/store.py),
the embedded SQLite file or a PostgreSQL server, chosen by `HostedMemory.open(target)`.
It must never log, return or raise with a plaintext of someone else's document, a key or
the secret.
"""

from __future__ import annotations

import builtins
import json
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.core.records import tombstone_forms
from memvault.errors import InvalidInput, NotFound
from memvault.hosted.keyring import Keyring, unlock
from memvault.hosted.keys import FORMAT_CURRENT, DecryptError, PrincipalKeys
from memvault.hosted.secrets import Secrets, secrets_from_env
from memvault.hosted.store import HostedStore, PrincipalTxn, SealedRow, open_store

MAX_DOC_BYTES = 1024 * 1024
MAX_RECORDS = 4096
KINDS = ("preference", "lesson")
MAX_ID_CHARS = 256
_KEY_CACHE = 1024


class LimitExceeded(InvalidInput):
    """A document or a principal is over its bound; nothing was written."""


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    doc_id: str
    kind: str
    size: int
    updated: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.doc_id, "kind": self.kind, "size": self.size,
                "updated": self.updated}


@dataclass(frozen=True, slots=True)
class Document:
    doc_id: str
    kind: str
    content: bytes
    updated: int

    @property
    def text(self) -> str:
        return self.content.decode("utf-8")

    @property
    def info(self) -> DocumentInfo:
        return DocumentInfo(self.doc_id, self.kind, len(self.content), self.updated)


@dataclass(frozen=True, slots=True)
class EventResult:
    """`status`: applied, duplicate (event id seen before) or tombstoned (forgotten)."""

    event_id: str
    status: str
    doc: DocumentInfo | None = None


def _check_id(value: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} is empty")
    if len(value) > MAX_ID_CHARS:
        raise InvalidInput(f"{what} is longer than {MAX_ID_CHARS} characters")
    if any(ord(c) < 32 for c in value):
        raise InvalidInput(f"{what} contains a control character")
    return value


def _content_bytes(content: str | bytes) -> bytes:
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    if len(data) > MAX_DOC_BYTES:
        raise LimitExceeded(f"document is {len(data):,} bytes; the limit is 1 MiB "
                            f"({MAX_DOC_BYTES:,} bytes)")
    return data


def _check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    return kind


def _content_keys(data: bytes) -> tuple[bytes, ...]:
    """What a content tombstone may hash: every comparison form of the text (the first,
    its match key, is what new tombstones hash; see `core.records.tombstone_forms`), or
    the raw bytes of content that is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return (data,)
    return tuple(form.encode("utf-8") for form in tombstone_forms(text))


def _tombstones(keys: PrincipalKeys, data: bytes) -> list[bytes]:
    """The keyed hashes a tombstone of `data` may be stored under (new ones first)."""
    return [keys.keyed_hash("content", form) for form in _content_keys(data)]


def _is_tombstoned(txn: PrincipalTxn, keys: PrincipalKeys, data: bytes) -> bool:
    return any(txn.has_marker(key) is not None for key in _tombstones(keys, data))


class HostedMemory:
    """Per-principal encrypted documents over a HostedStore."""

    def __init__(self, store: HostedStore, *, environ: Mapping[str, str] | None = None,
                 secrets: Secrets | None = None) -> None:
        self.store = store
        self.keyring: Keyring = unlock(store, secrets or secrets_from_env(environ))
        self._keys: dict[str, PrincipalKeys] = {}
        self._keys_lock = threading.Lock()  # one HostedMemory may serve many threads

    @classmethod
    def open(cls, target: str | Path, *,
             environ: Mapping[str, str] | None = None) -> HostedMemory:
        """Open a store: a `postgresql://user@host/db` URL, or a SQLite file path (the
        embedded default). The secrets are checked before anything is opened or created."""
        secrets = secrets_from_env(environ)
        store = open_store(target)
        try:
            return cls(store, secrets=secrets)
        except BaseException:
            store.close()
            raise

    def __repr__(self) -> str:  # never show the secret
        return f"HostedMemory(store={type(self.store).__name__})"

    def close(self) -> None:
        with self._keys_lock:
            self._keys.clear()
        self.store.close()

    def __enter__(self) -> HostedMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- keys --------------------------------------------------------------------------

    def _principal(self, principal: str) -> PrincipalKeys:
        _check_id(principal, "principal id")
        with self._keys_lock:
            keys = self._keys.get(principal)
        if keys is None:
            keys = self.keyring.principal(principal)
            if self.keyring.legacy_key_id is not None:
                self._reseal_legacy(keys)
            self._remember_keys(principal, keys)
        return keys

    def _remember_keys(self, principal: str, keys: PrincipalKeys) -> None:
        with self._keys_lock:
            if len(self._keys) >= _KEY_CACHE:
                self._keys.pop(next(iter(self._keys)))
            self._keys[principal] = keys

    def _reseal_legacy(self, keys: PrincipalKeys) -> int:
        """Reseal this principal's 0.1.0-format rows in the current format (same kind and
        time), so their kind and time are bound too; how many."""
        with self.store.transaction(keys.tag) as txn:
            rows = txn.legacy_rows()
            for row in rows:
                doc = self._open_row(keys, row)
                key_id, sealed = keys.seal(row.doc_tag, row.kind, row.updated,
                                           self._payload(doc.doc_id, doc.kind, doc.content))
                txn.put(SealedRow(row.doc_tag, row.kind, sealed, row.updated, key_id,
                                  FORMAT_CURRENT))
        return len(rows)

    def reseal_legacy(self, principal: str) -> int:
        """Reseal one principal's documents written by memvault 0.1.0 (done anyway the
        first time this process uses the principal); how many were resealed."""
        _check_id(principal, "principal id")
        keys = self.keyring.principal(principal)
        count = self._reseal_legacy(keys)
        self._remember_keys(principal, keys)
        return count

    # -- sealing -----------------------------------------------------------------------

    @staticmethod
    def _payload(doc_id: str, kind: str, data: bytes) -> bytes:
        header = json.dumps({"v": 1, "id": doc_id, "kind": kind}, separators=(",", ":"))
        return header.encode("utf-8") + b"\n" + data

    def _open_row(self, keys: PrincipalKeys, row: SealedRow) -> Document:
        plain = keys.open(row)
        head, _, data = plain.partition(b"\n")
        header = json.loads(head)
        if header.get("kind") != row.kind:  # format 1 did not bind the kind column
            raise DecryptError("a stored document's kind was altered in the database")
        return Document(str(header["id"]), row.kind, data, row.updated)

    def _write(self, txn: PrincipalTxn, keys: PrincipalKeys, doc_id: str, data: bytes,
               kind: str, now: int, held: list[int] | None = None) -> DocumentInfo:
        """Seal and store one document. `held` carries the principal's document count
        through a batch (counted once), so a batch does not re-count per document."""
        tag = keys.doc_tag(doc_id)
        if txn.get(tag) is None:
            if held is None:
                held = [txn.count()]
            if held[0] >= MAX_RECORDS:
                raise LimitExceeded(f"this principal already holds {MAX_RECORDS:,} documents "
                                    "(the limit); forget some before adding more")
            held[0] += 1
        key_id, sealed = keys.seal(tag, kind, now, self._payload(doc_id, kind, data))
        txn.put(SealedRow(tag, kind, sealed, now, key_id, FORMAT_CURRENT))
        return DocumentInfo(doc_id, kind, len(data), now)

    # -- the API -----------------------------------------------------------------------

    def put(self, principal: str, doc_id: str, content: str | bytes, *,
            kind: str = "preference") -> DocumentInfo:
        """Store (or replace) a document the user explicitly saved; lifts a tombstone of
        the same content, as an explicit `remember` does in a vault."""
        return self.put_many(principal, [(doc_id, content, kind)])[0]

    def put_many(self, principal: str,
                 items: Iterable[tuple[str, str | bytes, str]]) -> list[DocumentInfo]:
        """Several explicit puts in one transaction: all are stored, or none."""
        keys = self._principal(principal)
        checked = [(_check_id(d, "document id"), _content_bytes(c), _check_kind(k))
                   for d, c, k in items]
        now = int(time.time())
        out = []
        with self.store.transaction(keys.tag) as txn:
            held = [txn.count()]
            for doc_id, data, kind in checked:
                for key in _tombstones(keys, data):
                    txn.remove_marker(key)
                out.append(self._write(txn, keys, doc_id, data, kind, now, held))
        return out

    def get(self, principal: str, doc_id: str) -> Document:
        keys = self._principal(principal)
        with self.store.transaction(keys.tag, write=False) as txn:
            row = txn.get(keys.doc_tag(_check_id(doc_id, "document id")))
        if row is None:
            raise NotFound(f"no document with id {doc_id!r}")
        return self._open_row(keys, row)

    def load_all(self, principal: str, *, kind: str | None = None) -> list[Document]:
        """Every document of a principal, decrypted (e.g. to build a prompt)."""
        keys = self._principal(principal)
        with self.store.transaction(keys.tag, write=False) as txn:
            rows = list(txn.rows(_check_kind(kind) if kind else None))
        docs = [self._open_row(keys, r) for r in rows]
        return sorted(docs, key=lambda d: (-d.updated, d.doc_id))

    def list(self, principal: str, *, kind: str | None = None) -> list[DocumentInfo]:
        return [d.info for d in self.load_all(principal, kind=kind)]

    def count(self, principal: str) -> int:
        keys = self._principal(principal)
        with self.store.transaction(keys.tag, write=False) as txn:
            return txn.count()

    def principal_count(self) -> int:
        """How many principals have documents or tombstones (their ids are not stored)."""
        return len(self.store.principal_tags())

    def forget(self, principal: str, doc_id: str) -> DocumentInfo:
        """Delete a document and keep a content-free tombstone of it."""
        keys = self._principal(principal)
        with self.store.transaction(keys.tag) as txn:
            return self._forget(txn, keys, _check_id(doc_id, "document id"))

    def _forget(self, txn: PrincipalTxn, keys: PrincipalKeys, doc_id: str) -> DocumentInfo:
        tag = keys.doc_tag(doc_id)
        row = txn.get(tag)
        if row is None:
            raise NotFound(f"no document with id {doc_id!r}")
        doc = self._open_row(keys, row)
        txn.add_marker(_tombstones(keys, doc.content)[0], "tombstone", int(time.time()))
        txn.delete(tag)
        return doc.info

    def forget_all(self, principal: str) -> int:
        """Forget every document of a principal (e.g. the account is closed), keeping a
        tombstone for each; returns how many were forgotten."""
        keys = self._principal(principal)
        now = int(time.time())
        with self.store.transaction(keys.tag) as txn:
            rows = list(txn.rows())
            for row in rows:
                doc = self._open_row(keys, row)
                txn.add_marker(_tombstones(keys, doc.content)[0], "tombstone", now)
                txn.delete(row.doc_tag)
        return len(rows)

    def is_forgotten(self, principal: str, content: str | bytes) -> bool:
        keys = self._principal(principal)
        data = _content_bytes(content)
        with self.store.transaction(keys.tag, write=False) as txn:
            return _is_tombstoned(txn, keys, data)

    def apply_event(self, principal: str, event_id: str, *, op: str = "put",
                    doc_id: str, content: str | bytes | None = None,
                    kind: str = "preference") -> EventResult:
        """Apply one event from the app's journal or queue, exactly once.

        `op` is `put` or `forget`. A replayed event id is a no-op (`duplicate`); a put
        whose content was forgotten is refused (`tombstoned`) and nothing is stored.
        """
        keys = self._principal(principal)
        _check_id(event_id, "event id")
        _check_id(doc_id, "document id")
        if op not in ("put", "forget"):
            raise InvalidInput(f"op must be put or forget, not {op!r}")
        data = None
        if op == "put":
            if content is None:
                raise InvalidInput("a put event needs content")
            data = _content_bytes(content)
            _check_kind(kind)
        ledger = keys.keyed_hash("event", event_id.encode("utf-8"))
        now = int(time.time())
        with self.store.transaction(keys.tag) as txn:
            # the ledger row is claimed first: its unique key makes a second worker
            # applying the same event a duplicate, whatever the timing
            if not txn.add_marker(ledger, "event", now):
                return EventResult(event_id, "duplicate")
            info = None
            status = "applied"
            if data is not None:
                if _is_tombstoned(txn, keys, data):
                    status = "tombstoned"
                else:
                    info = self._write(txn, keys, doc_id, data, kind, now)
            else:
                tag = keys.doc_tag(doc_id)
                info = self._forget(txn, keys, doc_id) if txn.get(tag) else None
        return EventResult(event_id, status, info)

    def import_documents(self, principal: str,
                         items: Iterable[tuple[str, str | bytes, str]]
                         ) -> builtins.list[EventResult]:  # `list` here is the method above
        """Import documents (another tool's export, a migration): forgotten content stays
        forgotten. Event ids are derived from the content, so re-running an import is
        idempotent."""
        import hashlib

        results = []
        for doc_id, content, kind in items:
            data = _content_bytes(content)
            digest = hashlib.sha256(doc_id.encode("utf-8") + b"\x00" + data).hexdigest()
            results.append(self.apply_event(principal, f"import-{digest}", doc_id=doc_id,
                                            content=data, kind=kind))
        return results
