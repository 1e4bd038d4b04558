"""The parse cache and forgetting: removing entries without ever following a link.

- `drop`: the entry of one memory file, before a write that removes records from it;
- `drop_stale`: every file in the cache folder (but the key) that is not this clone's
  entry of the bytes its memory file holds now, run by every forget and by sync;
- `remove_files`: parse-cache files git tracks (someone force-added them), for sync;
- `doctor_findings`: a cache folder reached through a symlink, odd entries.

A link is unlinked itself, an empty folder removed, a folder holding something left
alone (it is never read); so the cache never stops a forget. See `parse_cache`.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from memvault.services import parse_cache_files as files
from memvault.services.parse_cache import enabled, entry_name, path_of, root_of
from memvault.state_paths import PARSED

if TYPE_CHECKING:
    from memvault.backends.base import Backend


def drop(backend: Backend, path: str) -> None:
    """Remove the entry of `path` (before a write that removes records from it), without
    following it: a link goes itself, an empty folder goes, a folder with something in it
    stays (it is never read). No usable cache folder: nothing to remove."""
    if not enabled(backend):
        return
    with files.opened(root_of(backend)) as folder:
        key = files.load_key(folder) if folder is not None else None
        if folder is not None and key is not None:  # without a key every entry is a miss
            _remove(folder, entry_name(key, path))  # (and the forget's drop_stale removes it)


def _remove(folder: int, name: str) -> bool:
    from memvault.errors import VaultError

    try:
        return files.remove(folder, name)
    except OSError as exc:
        raise VaultError(f"cannot remove a parse-cache entry: {exc.strerror or exc}",
                         path=f"{PARSED}/{name}") from None


def is_cache_file(rel: str) -> bool:
    """Whether the vault-relative `rel` names a file directly in the cache folder."""
    return rel.startswith(f"{PARSED}/") and "/" not in rel[len(PARSED) + 1:]


def remove_files(backend: Backend, rels: list[str]) -> None:
    """Remove these files of the cache folder (the key included), without following
    links: for files git tracks, which no clone should share."""
    if not enabled(backend):
        return
    with files.opened(root_of(backend)) as folder:
        if folder is not None:
            for rel in rels:
                if is_cache_file(rel):
                    _remove(folder, rel[len(PARSED) + 1:])


def drop_stale(backend: Backend) -> int:
    """Remove every entry that is not this clone's entry of the bytes its memory file
    holds now (a forget that arrived through sync, a hand edit no read has seen yet, an
    entry made elsewhere) and everything else in the cache folder but the key (links and
    empty folders without following them); returns how many were removed. Run by every
    forget (also one completed after a crash) and by sync."""
    if not enabled(backend):
        return 0
    dropped = 0
    with files.opened(root_of(backend)) as folder:
        if folder is None:
            return 0
        key = files.load_key(folder)
        for name in files.names(folder):
            path = path_of(key, name) if key is not None else None
            if key is not None and path is not None and \
                    _is_current(backend, folder, key, name, path):
                continue
            if _remove(folder, name):
                dropped += 1
    return dropped


def _is_current(backend: Backend, folder: int, key: bytes, name: str, path: str) -> bool:
    entry = files.read(folder, name)
    try:
        source = backend.read(path)
    except Exception:  # noqa: BLE001 - unreadable: delete the entry to be safe
        return False
    if entry is None or source is None:
        return False
    tag, _, rest = entry.partition(b"\n")
    head = rest.partition(b"\n")[0]
    if not files.verify(key, head, tag):
        return False
    try:
        meta = json.loads(head)
    except ValueError:
        return False
    return isinstance(meta, dict) and meta.get("path") == path and \
        meta.get("source") == hashlib.sha256(source.data).hexdigest()


def doctor_findings(vault: Any) -> list[Any]:
    """For doctor: a cache folder reached through a symlink (no cache is used), and
    things in it where entries belong that are not files (never read; a forget removes
    links and empty folders, never what a link points to)."""
    from memvault.services.doctor import Finding

    root = vault.backend.capabilities.local_root
    if root is None or not files.SUPPORTED:
        return []
    if files.folder_is_a_link(root):
        return [Finding("info", PARSED, "is reached through a symlink, so memvault keeps no "
                        "parse cache (commands parse every time); files behind the link are "
                        "not memvault's to read or delete: remove the link to use the cache")]
    return [Finding("info", f"{PARSED}/{name}", "is not a file: memvault never reads it as "
                    "a parse-cache entry (delete it by hand)")
            for name in files.odd_entries(root)]
