"""Moving a hosted store between SQLite and PostgreSQL: `export` and `import` of a dump.

A dump is JSON Lines, opaque like the store itself: keyring entries, documents and
markers exactly as stored (tags, ciphertext, key ids; bytes in base64), never a
plaintext or an id. Its first line names the format; its last line counts every row,
so a truncated dump is refused before anything is imported.

Both ends check the secrets from the environment: export only what the secret opens;
import only a dump whose keyring the secret opens, into an empty store or one with the
same index root (re-running an interrupted import is safe: rows already there are
skipped). Rows are copied, not re-encrypted, so tags, tombstones and the event ledger
carry over unchanged.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from memvault.errors import InvalidInput
from memvault.hosted.keyring import LEGACY_KEY, check
from memvault.hosted.keys import unwrap_root
from memvault.hosted.secrets import SecretError, Secrets, secrets_from_env
from memvault.hosted.service import HostedMemory
from memvault.hosted.store import SCHEMA_VERSION, HostedStore, open_store

FORMAT = "memvault-hosted-dump"
VERSION = 1
_BATCH = 500
Progress = Callable[[str, int], None]


def _enc(value: Any) -> Any:
    return base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value


def _dec(table: str, row: list[Any]) -> tuple[Any, ...]:
    # which positions hold bytes, per table (see sql_store._DUMP)
    binary = {"keyring": {0, 1}, "document": {0, 1, 3, 5}, "marker": {0, 1}}[table]
    return tuple(base64.b64decode(v) if i in binary and v is not None else v
                 for i, v in enumerate(row))


def export(target: str | Path, out: str | Path, environ: Mapping[str, str] | None = None,
           progress: Progress | None = None) -> dict[str, int]:
    """Write the whole store to `out` (atomically: a temporary file renamed at the end)."""
    secrets = secrets_from_env(environ)
    store = open_store(target, create=False)
    try:
        if check(store, secrets) is None:
            raise InvalidInput("the hosted database is empty; there is nothing to export",
                               path=store.describe())
        HostedMemory(store, secrets=secrets)  # an older SQLite schema is upgraded first
        counts = {"keyring": 0, "document": 0, "marker": 0}
        out = Path(out)
        fd, tmp = tempfile.mkstemp(prefix=".memvault-dump-", dir=out.parent or ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                head = {"format": FORMAT, "version": VERSION, "schema": SCHEMA_VERSION,
                        "legacy_key": _enc(store.meta(LEGACY_KEY))}
                fh.write(json.dumps(head) + "\n")
                for table, row in store.dump():
                    fh.write(json.dumps({table: [_enc(v) for v in row]}) + "\n")
                    counts[table] += 1
                    if progress and counts[table] % 1000 == 0:
                        progress(table, counts[table])
                fh.write(json.dumps({"end": counts}) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, out)
        except BaseException:
            os.unlink(tmp)
            raise
        return counts
    finally:
        store.close()


def _lines(fh: IO[str]) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(fh, 1):
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            raise InvalidInput(f"line {number} of the dump is not JSON") from None


def _check_dump(path: Path) -> dict[str, Any]:
    """The header, after making sure the last line is the end record."""
    with path.open("rb") as fh:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - 4096))
        tail = fh.read().decode("utf-8", "replace").strip().splitlines()
    try:
        end = json.loads(tail[-1]) if tail else {}
    except json.JSONDecodeError:
        end = {}
    if "end" not in end:
        raise InvalidInput("the dump is incomplete (no end line); nothing was imported",
                           path=str(path))
    with path.open(encoding="utf-8") as fh:
        head = json.loads(fh.readline() or "{}")
    if head.get("format") != FORMAT or head.get("version") != VERSION:
        raise InvalidInput("not a memvault hosted dump", path=str(path))
    return head


def _dump_root(keyring: list[tuple[Any, ...]], secrets: Secrets) -> bytes:
    for _kid, wrapped, _created in keyring:
        for secret in (secrets.current, secrets.previous):
            if secret:
                root = unwrap_root(secret, wrapped)
                if root is not None:
                    return root
    raise SecretError("neither SESSION_SECRET nor SESSION_SECRET_PREVIOUS opens this dump; "
                      "nothing was imported")


def import_dump(target: str | Path, dump: str | Path,
                environ: Mapping[str, str] | None = None,
                progress: Progress | None = None) -> dict[str, int]:
    """Load a dump into `target` (see the module docstring); rows inserted per table."""
    secrets = secrets_from_env(environ)
    path = Path(dump)
    head = _check_dump(path)
    with path.open(encoding="utf-8") as fh:
        keyring = [_dec("keyring", rec["keyring"]) for rec in _lines(fh) if "keyring" in rec]
    root = _dump_root(keyring, secrets)
    store = open_store(target)
    try:
        found = check(store, secrets) if store.schema_version() else None
        if found is not None and found[0] != root:
            raise InvalidInput("this database already holds another store's data; import "
                               "into an empty database", path=store.describe())
        store.migrate()
        inserted = {"keyring": store.load("keyring", keyring), "document": 0, "marker": 0}
        _load_rows(store, path, inserted, progress)
        if head.get("legacy_key"):
            with store.keyring_transaction() as txn:
                txn.set_meta(LEGACY_KEY, base64.b64decode(head["legacy_key"]))
        HostedMemory(store, secrets=secrets)  # registers the current secret if new
        return inserted
    finally:
        store.close()


def _load_rows(store: HostedStore, path: Path, inserted: dict[str, int],
               progress: Progress | None) -> None:
    batch: dict[str, list[tuple[Any, ...]]] = {"document": [], "marker": []}
    seen = {"document": 0, "marker": 0}

    def flush(table: str) -> None:
        inserted[table] += store.load(table, batch[table])
        seen[table] += len(batch[table])
        batch[table].clear()
        if progress:
            progress(table, seen[table])

    with path.open(encoding="utf-8") as fh:
        for rec in _lines(fh):
            for table in ("document", "marker"):
                if table in rec:
                    batch[table].append(_dec(table, rec[table]))
                    if len(batch[table]) >= _BATCH:
                        flush(table)
            if "end" in rec:
                expected = rec["end"]
                for table in batch:
                    flush(table)
                if any(seen[t] != expected.get(t) for t in seen):
                    raise InvalidInput(f"the dump's rows do not match its end line "
                                       f"({seen} read, {expected} expected)", path=str(path))
