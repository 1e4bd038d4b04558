"""Keys and sealing for hosted mode: HKDF per-principal keys, AES-GCM envelopes.

`SESSION_SECRET` is read from the environment only; it is never stored, logged or put in
an error message. From it, HKDF-SHA256 derives (with the principal id as HKDF `info`):

- a 256-bit AES-GCM key per principal for the documents,
- a keyed-hash (HMAC-SHA256) key per principal for row tags and tombstones, so the
  database holds no principal id, no document id and no content in the clear,
- one store-wide verifier, so a wrong secret is detected before anything is read or written.

Every seal uses a fresh random 96-bit nonce; the associated data binds the principal tag
and the document tag, so a row copied to another principal or document fails to open.

This module must never print, log or persist a secret, a derived key or a plaintext.
`cryptography` is imported lazily (the CLI does not pay for it).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memvault.errors import VaultError

SECRET_ENV = "SESSION_SECRET"
MIN_SECRET_BYTES = 32
NONCE_BYTES = 12
_SALT = b"memvault-hosted-v1"


class SecretError(VaultError):
    """SESSION_SECRET is missing, too short, or not the one this store was created with."""


class DecryptError(VaultError):
    """A sealed document did not authenticate (tampered, moved, or a different key)."""


def secret_from_env(environ: Mapping[str, str] | None = None) -> bytes:
    """The secret from the environment, or a SecretError that never echoes its value."""
    env = os.environ if environ is None else environ
    raw = env.get(SECRET_ENV)
    if not raw:
        raise SecretError(f"{SECRET_ENV} is not set; hosted mode needs it in the environment "
                          f"(at least {MIN_SECRET_BYTES} random characters)")
    data = raw.encode("utf-8")
    if len(data) < MIN_SECRET_BYTES:
        raise SecretError(f"{SECRET_ENV} is too short: use at least {MIN_SECRET_BYTES} random "
                          "characters (e.g. `python -c 'import secrets; "
                          "print(secrets.token_urlsafe(48))'`)")
    return data


def _hkdf(secret: bytes, info: bytes, length: int = 32) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=length, salt=_SALT, info=info).derive(secret)


def store_verifier(secret: bytes) -> bytes:
    """A keyed hash of a fixed label: equal for the same secret, reveals nothing of it."""
    key = _hkdf(secret, b"memvault/verifier")
    return hmac.new(key, b"memvault hosted store verifier v1", hashlib.sha256).digest()


@dataclass(slots=True)
class PrincipalKeys:
    """The derived keys of one principal (kept in memory only)."""

    tag: bytes
    _aead: Any
    _mac_key: bytes

    @classmethod
    def derive(cls, secret: bytes, principal: str) -> PrincipalKeys:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        pid = principal.encode("utf-8")
        enc_key = _hkdf(secret, b"memvault/doc-key/" + pid)
        mac_key = _hkdf(secret, b"memvault/tag-key/" + pid)
        index_key = _hkdf(secret, b"memvault/principal-index")
        tag = hmac.new(index_key, pid, hashlib.sha256).digest()
        return cls(tag=tag, _aead=AESGCM(enc_key), _mac_key=mac_key)

    def keyed_hash(self, label: str, data: bytes) -> bytes:
        """HMAC-SHA256 under this principal's tag key, domain-separated by `label`."""
        return hmac.new(self._mac_key, label.encode() + b"\x00" + data, hashlib.sha256).digest()

    def doc_tag(self, doc_id: str) -> bytes:
        return self.keyed_hash("doc", doc_id.encode("utf-8"))

    def _aad(self, doc_tag: bytes) -> bytes:
        return b"memvault-hosted-v1\x00" + self.tag + doc_tag

    def seal(self, doc_tag: bytes, plaintext: bytes) -> bytes:
        """nonce (12 bytes) || AES-GCM ciphertext+tag."""
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plaintext, self._aad(doc_tag))

    def open(self, doc_tag: bytes, sealed: bytes) -> bytes:
        from cryptography.exceptions import InvalidTag

        if len(sealed) < NONCE_BYTES + 16:
            raise DecryptError("a stored document is truncated; it cannot be opened")
        try:
            return bytes(self._aead.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:],
                                            self._aad(doc_tag)))
        except InvalidTag:
            raise DecryptError("a stored document failed authentication (wrong "
                               f"{SECRET_ENV}, or the row was altered or moved)") from None
