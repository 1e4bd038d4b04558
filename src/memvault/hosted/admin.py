"""Operating a hosted store: `status` (read-only) and `migrate` (schema and 0.1.0 rows).

Both take the secrets from the environment and check them before anything else; neither
prints a secret, a key, an id or a plaintext (only counts and key ids, which are public
names of secrets, the first 8 bytes of a keyed hash).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from memvault.hosted.keyring import LEGACY_KEY, check
from memvault.hosted.keys import FORMAT_CURRENT, key_id
from memvault.hosted.secrets import secrets_from_env
from memvault.hosted.service import HostedMemory
from memvault.hosted.store import SCHEMA_VERSION, is_postgres_url, open_store


def status(target: str | Path, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What the store holds and whether the secrets open it; changes nothing (a missing
    SQLite file is an error, not created)."""
    secrets = secrets_from_env(environ)
    store = open_store(target, create=False)
    try:
        found = check(store, secrets)
        version = store.schema_version()
        stats = store.stats()
        ring = store.keyring()
    finally:
        store.close()
    current = key_id(secrets.current)
    needs_rekey = sum(e["documents"] for e in stats["by_key"]
                      if e["format"] == FORMAT_CURRENT and e["key_id"] != current.hex())
    legacy = sum(e["documents"] for e in stats["by_key"] if e["format"] != FORMAT_CURRENT)
    return {
        "db": store.describe(),
        "store": "postgresql" if is_postgres_url(target) else "sqlite",
        "schema": version,
        "schema_expected": SCHEMA_VERSION,
        "secret": "ok" if found is not None else "new store",
        "current_key": current.hex(),
        "previous_key": key_id(secrets.previous).hex() if secrets.previous else None,
        "keyring": sorted(k.hex() for k in ring),
        "principals": stats["principals"],
        "documents": stats["documents"],
        "tombstones": stats["markers"].get("tombstone", 0),
        "events": stats["markers"].get("event", 0),
        "by_key": stats["by_key"],
        "needs_rekey": needs_rekey,
        "legacy_documents": legacy,
    }


def migrate(target: str | Path, environ: Mapping[str, str] | None = None,
            principals: Iterable[str] = ()) -> dict[str, Any]:
    """Bring the schema up to date (creating it in an empty database), then reseal the
    0.1.0-format documents of the given principals. Safe to re-run."""
    secrets = secrets_from_env(environ)
    store = open_store(target)
    try:
        check(store, secrets)  # a wrong secret changes nothing
        before = store.schema_version()
        applied = store.migrate()
        hm = HostedMemory(store, secrets=secrets)
        resealed = sum(hm.reseal_legacy(p) for p in principals)
        legacy = sum(e["documents"] for e in store.stats()["by_key"]
                     if e["format"] != FORMAT_CURRENT)
        if legacy == 0 and hm.keyring.legacy_key_id is not None:
            with store.keyring_transaction() as txn:
                txn.set_meta(LEGACY_KEY, None)
        return {"db": store.describe(), "schema_before": before,
                "schema": store.schema_version(), "applied": applied,
                "resealed": resealed, "legacy_documents": legacy}
    finally:
        store.close()
