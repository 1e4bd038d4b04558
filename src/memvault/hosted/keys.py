"""Keys and sealing for hosted mode: HKDF-derived keys, AES-GCM envelopes.

Two families of keys, so the secret can be rotated without losing anything:

- **Index keys** come from the store's *index root*, 32 bytes kept in the store only
  wrapped (AES-GCM) under a key derived from each accepted secret (hosted/keyring.py).
  From it: the principal tag (HMAC of the principal id) and, per principal, the key for
  document tags, tombstones and the event ledger. The root never changes, so tags and
  tombstones survive a rotation (a tombstone is a one-way hash: it could not be redone).
- **Document keys** come from a secret directly: HKDF-SHA256(secret, info = label +
  principal tag), a 256-bit AES-GCM key per principal. Each row records the *key id* of
  the secret that sealed it, so a rotation can re-encrypt rows in batches while both the
  current and the previous secret open them.

A sealed row is `nonce (12 random bytes) || ciphertext || tag`. Its associated data binds
the principal tag, the document tag (a keyed hash of the document id), the `updated`
time and the `kind`, so a row moved to another principal or document, or whose kind or
time column was edited in the database, fails to open.

Rows written by memvault 0.1.0 (format 1) bound only the two tags and derived the
document key from the principal id; they still open (their kind is checked against the
sealed header) and are resealed in format 2 when their principal is next used.

This module never prints, logs or stores a secret, a key or a plaintext.
`cryptography` is imported lazily (the CLI does not pay for it).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct
from typing import TYPE_CHECKING, Any

from memvault.errors import VaultError
from memvault.hosted.secrets import PREVIOUS_SECRET_ENV, SECRET_ENV

if TYPE_CHECKING:
    from memvault.hosted.store import SealedRow

NONCE_BYTES = 12
KEY_ID_BYTES = 8
ROOT_BYTES = 32
FORMAT_LEGACY = 1  # memvault 0.1.0: AAD binds the two tags only
FORMAT_CURRENT = 2  # AAD binds principal, document, updated and kind
_SALT = b"memvault-hosted-v1"  # the HKDF salt since 0.1.0 (keeps 0.1.0 keys identical)


class DecryptError(VaultError):
    """A sealed document did not authenticate (tampered, moved, or a different key)."""


def _hkdf(secret: bytes, info: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=info).derive(secret)


def _expand(root: bytes, info: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

    return HKDFExpand(algorithm=hashes.SHA256(), length=32, info=info).derive(root)


def _aead(key: bytes) -> Any:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(key)


def store_verifier(secret: bytes) -> bytes:
    """A keyed hash of a fixed label: equal for the same secret, reveals nothing of it.
    (0.1.0 stored it to recognise its secret; its first bytes are the key id.)"""
    key = _hkdf(secret, b"memvault/verifier")
    return hmac.new(key, b"memvault hosted store verifier v1", hashlib.sha256).digest()


def key_id(secret: bytes) -> bytes:
    """The public name of a secret in the keyring and on each row it sealed."""
    return store_verifier(secret)[:KEY_ID_BYTES]


def legacy_index_root(secret: bytes) -> bytes:
    """The index root a 0.1.0 store implicitly used: HKDF-Extract of its secret, so
    expanding it gives exactly the tag keys 0.1.0 derived (and not the secret itself)."""
    return hmac.new(_SALT, secret, hashlib.sha256).digest()


def new_index_root() -> bytes:
    return os.urandom(ROOT_BYTES)


def _wrap_aad(kid: bytes) -> bytes:
    return b"memvault-keyring-v2\x00" + kid


def wrap_root(secret: bytes, root: bytes) -> bytes:
    """The index root sealed under a key derived from `secret`."""
    nonce = os.urandom(NONCE_BYTES)
    aead = _aead(_hkdf(secret, b"memvault/keyring-wrap"))
    return nonce + aead.encrypt(nonce, root, _wrap_aad(key_id(secret)))


def unwrap_root(secret: bytes, wrapped: bytes) -> bytes | None:
    """The index root, or None if `wrapped` was not sealed under this secret (or altered)."""
    from cryptography.exceptions import InvalidTag

    aead = _aead(_hkdf(secret, b"memvault/keyring-wrap"))
    try:
        return bytes(aead.decrypt(wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:],
                                  _wrap_aad(key_id(secret))))
    except (InvalidTag, ValueError):
        return None


class IndexKeys:
    """Keys derived from the index root (stable across secret rotations)."""

    def __init__(self, root: bytes) -> None:
        self._root = root
        self._principal_key = _expand(root, b"memvault/principal-index")

    def principal_tag(self, principal: str) -> bytes:
        return hmac.new(self._principal_key, principal.encode("utf-8"), hashlib.sha256).digest()

    def mac_key(self, principal: str) -> bytes:
        return _expand(self._root, b"memvault/tag-key/" + principal.encode("utf-8"))


class PrincipalKeys:
    """One principal's keys. `principal` is None when only the tag is known (a rekey
    batch): such keys open and seal format-2 rows but cannot compute tags or hashes."""

    def __init__(self, tag: bytes, principal: str | None, mac_key: bytes | None,
                 secrets: dict[bytes, bytes], current_id: bytes) -> None:
        self.tag = tag
        self.principal = principal
        self._mac_key = mac_key
        self._secrets = secrets  # key id -> secret, for the secrets this process holds
        self._current_id = current_id
        self._aeads: dict[tuple[int, bytes], Any] = {}

    def keyed_hash(self, label: str, data: bytes) -> bytes:
        """HMAC-SHA256 under this principal's tag key, domain-separated by `label`."""
        assert self._mac_key is not None, "keyed hashes need the principal id"
        return hmac.new(self._mac_key, label.encode() + b"\x00" + data, hashlib.sha256).digest()

    def doc_tag(self, doc_id: str) -> bytes:
        return self.keyed_hash("doc", doc_id.encode("utf-8"))

    def _doc_aead(self, fmt: int, kid: bytes) -> Any:
        aead = self._aeads.get((fmt, kid))
        if aead is None:
            secret = self._secrets.get(kid)
            if secret is None:
                raise DecryptError(f"a document is sealed with a secret that is neither "
                                   f"{SECRET_ENV} nor {PREVIOUS_SECRET_ENV}; set the previous "
                                   "secret until `memvault hosted rekey` has finished")
            if fmt == FORMAT_LEGACY:
                if self.principal is None:
                    raise DecryptError("a document in the 0.1.0 format needs its principal "
                                       "id to be opened")
                info = b"memvault/doc-key/" + self.principal.encode("utf-8")
            else:
                info = b"memvault/doc-key-v2/" + self.tag
            aead = self._aeads[(fmt, kid)] = _aead(_hkdf(secret, info))
        return aead

    def _aad(self, fmt: int, doc_tag: bytes, kind: str, updated: int) -> bytes:
        if fmt == FORMAT_LEGACY:
            return b"memvault-hosted-v1\x00" + self.tag + doc_tag
        return (b"memvault-hosted-v2\x00" + self.tag + doc_tag + struct.pack(">q", updated)
                + kind.encode("utf-8"))

    def seal(self, doc_tag: bytes, kind: str, updated: int, plaintext: bytes
             ) -> tuple[bytes, bytes]:
        """(key id, sealed bytes) under the current secret, in the current format."""
        nonce = os.urandom(NONCE_BYTES)
        aead = self._doc_aead(FORMAT_CURRENT, self._current_id)
        sealed = nonce + aead.encrypt(nonce, plaintext,
                                      self._aad(FORMAT_CURRENT, doc_tag, kind, updated))
        return self._current_id, sealed

    def open(self, row: SealedRow) -> bytes:
        from cryptography.exceptions import InvalidTag

        if row.fmt not in (FORMAT_LEGACY, FORMAT_CURRENT):
            raise DecryptError(f"a stored document has an unknown format ({row.fmt})")
        if len(row.sealed) < NONCE_BYTES + 16 or row.key_id is None:
            raise DecryptError("a stored document is truncated or has no key id; it cannot "
                               "be opened")
        aead = self._doc_aead(row.fmt, row.key_id)
        try:
            return bytes(aead.decrypt(row.sealed[:NONCE_BYTES], row.sealed[NONCE_BYTES:],
                                      self._aad(row.fmt, row.doc_tag, row.kind, row.updated)))
        except InvalidTag:
            raise DecryptError("a stored document failed authentication (the row was "
                               "altered or moved, or the secret is wrong)") from None
