"""Opening a store with the secrets from the environment: the keyring.

The store's index root (hosted/keys.py) is kept only wrapped, once per accepted secret,
keyed by that secret's key id. Opening:

1. the secret rule is checked before anything is touched (hosted/secrets.py);
2. read-only: unwrap the root with SESSION_SECRET, else with SESSION_SECRET_PREVIOUS;
   a store made by 0.1.0 (no keyring yet) is recognised by its old verifier. None
   matching is a SecretError and nothing was read or written;
3. only then: create or upgrade the schema, and under the store-wide lock create the
   keyring (a new store: a random root) or add a wrap for a new SESSION_SECRET that was
   unlocked through the previous one (the start of a rotation).

Finishing a rotation (`memvault hosted rekey`) removes every other secret's wrap once no
row needs it, so an old secret stops opening the store.
"""

from __future__ import annotations

import hmac
import time

from memvault.hosted.keys import (
    IndexKeys,
    PrincipalKeys,
    key_id,
    legacy_index_root,
    new_index_root,
    store_verifier,
    unwrap_root,
    wrap_root,
)
from memvault.hosted.secrets import PREVIOUS_SECRET_ENV, SECRET_ENV, SecretError, Secrets
from memvault.hosted.store import SCHEMA_VERSION, HostedStore, SchemaError

LEGACY_VERIFIER = "verifier"  # meta row written by 0.1.0
LEGACY_KEY = "legacy_key"  # meta row: key id of the secret that sealed 0.1.0 rows


class Keyring:
    """The keys of one open store, in memory only."""

    def __init__(self, root: bytes, secrets: Secrets, legacy_key_id: bytes | None) -> None:
        self.index = IndexKeys(root)
        self._root = root
        self.current_id = key_id(secrets.current)
        self.previous_id = key_id(secrets.previous) if secrets.previous else None
        self.legacy_key_id = legacy_key_id
        self._secrets = {self.current_id: secrets.current}
        if secrets.previous and self.previous_id:
            self._secrets[self.previous_id] = secrets.previous
        self._current = secrets.current

    def __repr__(self) -> str:  # never show a key
        return f"Keyring(current={self.current_id.hex()})"

    def principal(self, principal: str) -> PrincipalKeys:
        return PrincipalKeys(self.index.principal_tag(principal), principal,
                             self.index.mac_key(principal), self._secrets, self.current_id)

    def for_tag(self, principal_tag: bytes) -> PrincipalKeys:
        """Keys for a principal known only by its tag (re-encrypting format-2 rows)."""
        return PrincipalKeys(principal_tag, None, None, self._secrets, self.current_id)

    def wrap_current(self) -> bytes:
        return wrap_root(self._current, self._root)


def _mismatch() -> SecretError:
    return SecretError(f"{SECRET_ENV} does not match the secret this hosted database was "
                       f"created with (nor does {PREVIOUS_SECRET_ENV}); nothing was read "
                       "or written")


def _find_root(ring: dict[bytes, bytes], legacy_verifier: bytes | None,
               secrets: Secrets) -> tuple[bytes, bytes | None]:
    """(index root, key id of the 0.1.0 secret if recognised by its verifier)."""
    candidates = [s for s in (secrets.current, secrets.previous) if s]
    for secret in candidates:
        wrapped = ring.get(key_id(secret))
        if wrapped is not None:
            root = unwrap_root(secret, wrapped)
            if root is None:
                raise SecretError("the keyring entry of this secret fails authentication "
                                  "(altered in the database); nothing was read or written")
            return root, None
    if not ring and legacy_verifier is not None:
        for secret in candidates:
            if hmac.compare_digest(store_verifier(secret), legacy_verifier):
                return legacy_index_root(secret), key_id(secret)
    raise _mismatch()


def check(store: HostedStore, secrets: Secrets) -> tuple[bytes, bytes | None] | None:
    """Read-only: the root (and legacy key id) these secrets open, None for an empty store."""
    version = store.schema_version()
    if version > SCHEMA_VERSION:
        raise SchemaError(f"schema {version} was made by a newer memvault; upgrade memvault",
                          path=store.describe())
    ring = store.keyring()
    legacy = store.meta(LEGACY_VERIFIER)
    if not ring and legacy is None:
        return None
    return _find_root(ring, legacy, secrets)


def unlock(store: HostedStore, secrets: Secrets) -> Keyring:
    """Check the secrets, bring the schema up to date, and return the open keyring."""
    found = check(store, secrets)
    version = store.schema_version()
    if version < SCHEMA_VERSION:
        if version > 0 and not store.upgrades_on_open:
            raise SchemaError(f"schema {version} is older than this memvault's "
                              f"({SCHEMA_VERSION}); run `memvault hosted migrate`",
                              path=store.describe())
        store.migrate()
    current = key_id(secrets.current)
    if found is not None and current in store.keyring():
        legacy_key = store.meta(LEGACY_KEY)
        return Keyring(found[0], secrets, legacy_key)
    with store.keyring_transaction() as txn:
        ring = txn.entries()
        legacy = txn.meta(LEGACY_VERIFIER)
        if not ring and legacy is None:
            root, legacy_key = new_index_root(), None
        else:
            root, legacy_key = _find_root(ring, legacy, secrets)
        if legacy_key is not None:  # first open of a 0.1.0 store
            txn.set_meta(LEGACY_KEY, legacy_key)
            txn.assign_legacy_key(legacy_key)
        keyring = Keyring(root, secrets, txn.meta(LEGACY_KEY))
        txn.add(current, keyring.wrap_current(), int(time.time()))
    return keyring
