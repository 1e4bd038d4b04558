"""Vault format versions, and the ordered, named migrations that bring an older vault up to date.

A vault records the format of its files as `vault_format = N` in `.memvault/config.toml`
(no key: format 1, the vault layout of memvault 0.1.0). `Vault.open` calls `upgrade`
whenever that number is below `CURRENT_FORMAT`; a vault of a *newer* format is refused,
so an old memvault never misreads or damages it.

Each `Migration` turns format `version - 1` into `version`. Its `apply(backend)` reads
what it needs and returns the file changes (`Change`, with the version it read as
`expected`); it must be:

- **idempotent**: on a vault it already migrated it returns no changes (the runner may
  call it again after a crash, and a test applies every migration twice);
- **lossless**: files the person writes are edited line by line, never re-serialised,
  and no byte of their text changes beyond the lines the migration owns.

The runner installs one migration at a time as one `backend.commit`: the migration's
changes, a `vault.migrated` event in the journal (its id is fixed per version, so it is
never recorded twice) and the new `vault_format` line in config.toml, written last. A
crash leaves either the old format or the new one; re-running finishes the job. To add a
migration, append one entry to `MIGRATIONS` (see docs/architecture.md).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from memvault.backends.base import MISSING, Backend, Change
from memvault.config import VAULT_FORMAT, parse_config, set_config_value
from memvault.errors import Conflict, InvalidInput
from memvault.state_folder import GITIGNORE_TEXT
from memvault.state_paths import CACHE_PATTERNS, CONFIG, EVENTS, GITIGNORE

ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class Migration:
    """One step: files of format `version - 1` become format `version`."""

    version: int
    name: str
    summary: str
    apply: Callable[[Backend], list[Change]]


@dataclass(slots=True)
class UpgradeReport:
    from_format: int = 0
    to_format: int = 0
    applied: list[str] = field(default_factory=list)


def ensure_caches_ignored(backend: Backend) -> list[Change]:
    """`.memvault/.gitignore` lists every local cache, so none is ever committed.

    Missing patterns are appended, one line each, in the file's own line ending; every
    existing line (the person's included) stays as it is. Register it again under a new
    version whenever a cache file is added to `state_paths.CACHE_PATTERNS`.
    """
    blob = backend.read(GITIGNORE)
    old = blob.data if blob else b""
    present = {line.strip() for line in old.replace(b"\r", b"").split(b"\n")}
    missing = [p.encode() for p in CACHE_PATTERNS if p.encode() not in present]
    if not missing:
        return []
    if blob is None:
        return [Change(GITIGNORE, GITIGNORE_TEXT.encode(), MISSING)]
    eol = b"\r\n" if old.count(b"\r\n") * 2 > old.count(b"\n") else b"\n"
    new = old if not old or old.endswith(b"\n") else old + eol
    new += b"".join(p + eol for p in missing)
    return [Change(GITIGNORE, new, blob.version)]


def _union_merge_attributes(backend: Backend) -> list[Change]:
    from memvault.services.git_setup import union_merge_attributes

    return union_merge_attributes(backend)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(2, "caches-git-ignored",
              f"number the vault format; {GITIGNORE} lists every local cache",
              ensure_caches_ignored),
    Migration(3, "memory-files-merge-as-union",
              "the .gitattributes lines memvault 0.1 wrote (merge=memvault, plain text in a "
              "clone without the driver) become merge=union, which every clone applies",
              _union_merge_attributes),
)

CURRENT_FORMAT = VAULT_FORMAT
if (MIGRATIONS[-1].version if MIGRATIONS else 1) != CURRENT_FORMAT:
    raise RuntimeError("config.VAULT_FORMAT must be the version of the last migration")


def event_id(migration: Migration) -> str:
    return f"ev-vault-format-{migration.version}"


def upgrade(backend: Backend) -> UpgradeReport:
    """Bring the vault behind `backend` to `CURRENT_FORMAT`; a no-op when it is there.

    Raises InvalidInput for a vault of a newer format than this memvault knows.
    """
    for attempt in range(ATTEMPTS):
        try:
            with backend.lock():
                return _upgrade_locked(backend)
        except Conflict:
            if attempt == ATTEMPTS - 1:
                raise  # another machine kept changing the same files (GitHub backend)
    raise AssertionError("unreachable")


def _upgrade_locked(backend: Backend) -> UpgradeReport:
    blob = backend.read(CONFIG)
    report = UpgradeReport()
    if blob is None:
        return report  # not set up yet: `init` writes the current format
    fmt = parse_config(blob.data).vault_format
    report.from_format = report.to_format = fmt
    if fmt > CURRENT_FORMAT:
        raise InvalidInput(f"this vault has format {fmt}, newer than this memvault understands "
                           f"(up to {CURRENT_FORMAT}); upgrade memvault", path=CONFIG)
    for migration in MIGRATIONS:
        if migration.version <= fmt:
            continue
        changes = migration.apply(backend)
        journal = _journal_change(backend, migration, fmt)
        if journal is not None:
            changes.append(journal)
        text = blob.data.decode("utf-8")
        new_config = set_config_value(text, "vault_format", migration.version)
        changes.append(Change(CONFIG, new_config.encode("utf-8"), blob.version))
        backend.commit(changes, message=f"memvault: vault format {migration.version} "
                                        f"({migration.name})")
        blob = backend.read(CONFIG)
        assert blob is not None
        fmt = report.to_format = migration.version
        report.applied.append(migration.name)
    return report


def _journal_change(backend: Backend, migration: Migration, from_format: int) -> Change | None:
    """The journal with this migration's event appended, or None if it is already there."""
    blob = backend.read(EVENTS)
    old = blob.data if blob else b""
    if _has_event(old, event_id(migration)):
        return None
    event = {"id": event_id(migration), "ts": int(time.time()), "type": "vault.migrated",
             "scope": "default", "from": from_format, "to": migration.version,
             "migration": migration.name}
    line = (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    if old and not old.endswith(b"\n"):
        old += b"\n"  # a torn last line stays on its own line
    return Change(EVENTS, old + line, blob.version if blob else MISSING)


def _has_event(journal: bytes, wanted: str) -> bool:
    """Whether the journal holds an event with id `wanted` (however the line is spaced)."""
    needle = wanted.encode()
    for raw in journal.split(b"\n"):
        if needle not in raw:
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue  # a torn line
        if isinstance(obj, dict) and obj.get("id") == wanted:
            return True
    return False
