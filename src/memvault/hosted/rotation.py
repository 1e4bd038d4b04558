"""Rotating SESSION_SECRET without downtime: re-encrypt every document, batch by batch.

While the app runs with `SESSION_SECRET=<new>` and `SESSION_SECRET_PREVIOUS=<old>`, rows
sealed with either secret open, and every write uses the new one. `rekey` then walks
the rows whose key id is not the current secret's, a batch at a time: each principal's
part of a batch is re-read, opened, resealed (same kind and time) and written back in
one transaction holding that principal's lock, so it interleaves safely with the app's
own writes. Progress is the rows themselves, nothing else is recorded: killed at any
point, the uncommitted batch rolls back and the next run carries on from what is left.

When no row needs any other secret, the other secrets' keyring entries are removed, and
from then on the old secret no longer opens the store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import groupby

from memvault.hosted.keyring import LEGACY_KEY
from memvault.hosted.keys import FORMAT_CURRENT
from memvault.hosted.secrets import PREVIOUS_SECRET_ENV, SECRET_ENV, SecretError
from memvault.hosted.service import HostedMemory

DEFAULT_BATCH = 200


@dataclass
class RekeyResult:
    resealed: int = 0
    legacy_left: int = 0  # 0.1.0-format rows: they need their principal's id
    removed_keys: list[str] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.legacy_left == 0

    def to_dict(self) -> dict[str, object]:
        return {"resealed": self.resealed, "legacy_left": self.legacy_left,
                "removed_keys": self.removed_keys, "finished": self.finished}


def _pending(hm: HostedMemory) -> tuple[int, int]:
    """(format-2 rows under another key, 0.1.0-format rows); refuses up front if some rows
    need a secret this process does not hold."""
    known = {hm.keyring.current_id.hex()}
    if hm.keyring.previous_id:
        known.add(hm.keyring.previous_id.hex())
    other = legacy = 0
    for entry in hm.store.stats()["by_key"]:
        if entry["format"] != FORMAT_CURRENT:
            legacy += entry["documents"]
            continue
        if entry["key_id"] == hm.keyring.current_id.hex():
            continue
        if entry["key_id"] not in known:
            raise SecretError(f"{entry['documents']} document(s) are sealed with a secret that "
                              f"is neither {SECRET_ENV} nor {PREVIOUS_SECRET_ENV} (key id "
                              f"{entry['key_id']}); set {PREVIOUS_SECRET_ENV} to it")
        other += entry["documents"]
    return other, legacy


def rekey(hm: HostedMemory, *, batch: int = DEFAULT_BATCH,
          progress: Callable[[int, int], None] | None = None) -> RekeyResult:
    """Re-encrypt every document under the current secret; see the module docstring."""
    ring, store = hm.keyring, hm.store
    total, _ = _pending(hm)
    result = RekeyResult()
    while True:
        candidates = store.reseal_candidates(ring.current_id, max(1, batch))
        if not candidates:
            break
        for principal_tag, group in groupby(candidates, key=lambda c: c[0]):
            keys = ring.for_tag(principal_tag)
            with store.transaction(principal_tag) as txn:
                for _, doc_tag in group:
                    row = txn.get(doc_tag)  # re-read under the lock: the app may have written
                    if row is None or row.fmt != FORMAT_CURRENT or row.key_id == ring.current_id:
                        continue
                    key_id, sealed = keys.seal(doc_tag, row.kind, row.updated, keys.open(row))
                    txn.put(replace(row, sealed=sealed, key_id=key_id))
                    result.resealed += 1
        if progress:
            progress(result.resealed, max(total, result.resealed))
    _, result.legacy_left = _pending(hm)
    if result.legacy_left == 0:
        with store.keyring_transaction() as txn:
            for kid in txn.entries():
                if kid != ring.current_id and txn.remove(kid):
                    result.removed_keys.append(kid.hex())
            txn.set_meta(LEGACY_KEY, None)
        ring.legacy_key_id = None
    return result
