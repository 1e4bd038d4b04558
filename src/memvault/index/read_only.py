"""The search index of a vault this process cannot write: a backup snapshot, a read-only
mount or share, a vault owned by another user, a folder made read-only with
`chmod -R a-w`.

Nothing here writes into the vault, not even SQLite's shared-memory file
(`fresh.open_read_only`). When the vault's index is complete and in step with the notes
it is searched where it is. Otherwise (behind the notes, missing, damaged, of another
version) searches run on a temporary copy: the vault's index is copied into a private
temporary folder (mode 0700), brought in step there the usual way (only changed files
are parsed) and deleted when the search service closes or the process exits; a notice
says so in one line. The vault's own index is never refreshed, migrated or deleted
from here, and `index rebuild` says it cannot.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.index.fresh import fresh_connection, open_read_only
from memvault.index.store import IndexStore, IndexUnavailable, RefreshResult, _differs
from memvault.state_paths import INDEX

if TYPE_CHECKING:
    from memvault.index.store import Progress

READ_ONLY = "the vault is read-only for memvault here"
BEHIND = "its search index is behind the notes"
NO_INDEX = "it has no search index"


def _fresh(root: Path, home_root: str) -> sqlite3.Connection | None:
    """The vault's index opened read-only when it is in step with the notes: by its
    files signature, or, when only change times moved (`chmod -R a-w` itself changes
    every file's change time), by the digest of each such file's bytes."""
    try:
        conn = fresh_connection(str(root), home_root)
        if conn is not None:
            return conn
        conn = open_read_only(root / INDEX)
        if conn is None:
            return None
    except sqlite3.DatabaseError:
        return None
    try:
        if _same_bytes(conn, root, home_root):
            return conn
    except sqlite3.DatabaseError:
        pass
    conn.close()
    return None


def _same_bytes(conn: sqlite3.Connection, root: Path, home_root: str) -> bool:
    """Whether a complete index of this version lists exactly the files on disk, with
    their sizes and modification times, and every file whose change time differs still
    has the bytes it was indexed with."""
    from memvault.index import schema
    from memvault.index.scan import content_hash, read_file, scan_vault

    if conn.execute("PRAGMA user_version").fetchone()[0] != schema.SCHEMA_VERSION:
        return False
    state = conn.execute("SELECT value FROM meta WHERE key = 'build_state'").fetchone()
    if state is None or state[0] != "complete":
        return False
    known = {path: rest for path, *rest in conn.execute(
        "SELECT path, size, mtime_ns, ctime_ns, hash FROM files")}
    scanned = scan_vault(root, home_root)
    if scanned.keys() != known.keys():
        return False
    for path, entry in scanned.items():
        size, mtime, ctime, digest = known[path]
        if (size, mtime) != (entry.size, entry.mtime_ns):
            return False
        if ctime != entry.ctime_ns:
            data = read_file(root, entry, home_root)
            if digest is None or not isinstance(data, bytes) or content_hash(data) != digest:
                return False
    return True


class ReadOnlyIndexStore(IndexStore):
    """The index of a vault this process cannot write (see the module doc)."""

    def __init__(self, root: Path, home_root: str) -> None:
        super().__init__(root, home_root)
        self.vault_index = root / INDEX
        self.read_only = True  # while searching the vault's own index in place
        self._temp: str | None = None
        self._just_checked = False  # opened in step a moment ago: no second walk

    # -- the vault's own index, read in place --------------------------------------------

    def connection(self) -> sqlite3.Connection:
        if self._conn is None:
            if self._temp is None:
                self._conn = _fresh(self.root, self.home_root)
                if self._conn is not None:
                    self._just_checked = True
                    return self._conn
                self._to_copy(BEHIND if self.vault_index.exists() else NO_INDEX)
            self._conn = self._open_checked()
        return self._conn

    def refresh(self, progress: Progress | None = None, *, full: bool = False
                ) -> RefreshResult:
        if self._temp is None and not full:
            started = time.perf_counter()
            fresh = self._conn is None
            self.connection()
            if self._temp is None and fresh and self._just_checked:
                self._just_checked = False
                return RefreshResult(seconds=time.perf_counter() - started)
            if self._temp is None:  # in step when opened: still in step?
                from memvault.index.walk import files_signature, walk_notes

                listing = walk_notes(self.root, self.home_root)
                stored = self._conn.execute(  # type: ignore[union-attr]
                    "SELECT value FROM meta WHERE key = 'files_signature'").fetchone()
                if stored is not None and stored[0] == files_signature(listing):
                    return RefreshResult(scanned=len(listing),
                                         seconds=time.perf_counter() - started)
                self._to_copy(BEHIND)
        return super().refresh(progress, full=full)

    def refresh_paths(self, paths: set[str]) -> RefreshResult:
        if self._temp is None:
            from memvault.index.scan import scan_paths, stored_path

            conn = self.connection()
            if self._temp is None:
                wanted = tuple(sorted({stored_path(p)[0] for p in paths}))
                if not _differs(scan_paths(self.root, self.home_root, set(paths)),
                                self._known(conn, wanted)):
                    return RefreshResult()
                self._to_copy(BEHIND)
        return super().refresh_paths(paths)

    # -- a temporary copy, brought in step -----------------------------------------------

    def _to_copy(self, why: str) -> None:
        """Search a private temporary copy of the vault's index from now on."""
        import atexit
        import shutil
        import tempfile

        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._temp = tempfile.mkdtemp(prefix="memvault-index-")  # mode 0700
        atexit.register(shutil.rmtree, self._temp, True)
        self.path = Path(self._temp) / "index.sqlite"
        self.read_only = False
        source = open_read_only(self.vault_index)
        if source is not None:
            try:
                target = sqlite3.connect(self.path)
                try:
                    source.backup(target)
                finally:
                    target.close()
            except sqlite3.DatabaseError:
                for suffix in ("", "-journal"):
                    try:
                        os.remove(f"{self.path}{suffix}")
                    except FileNotFoundError:
                        pass
            finally:
                source.close()
        self.notices.append(f"{READ_ONLY} and {why}: searched a temporary copy of the "
                            "index (nothing in the vault was written)")

    def discard(self, reason: str) -> None:
        if self._temp is None:  # the vault's index is never deleted from here
            self._to_copy(f"its search index cannot be used ({reason})")
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.remove(f"{self.path}{suffix}")
                except FileNotFoundError:
                    pass
            return
        super().discard(reason)

    def rebuild(self, progress: Progress | None = None) -> RefreshResult:
        raise IndexUnavailable(f"{READ_ONLY}: the index cannot be rebuilt (search still "
                               "works, from a temporary copy when the index is behind)")

    def status(self) -> dict[str, object]:
        info = super().status()
        info["path"] = str(self.vault_index)
        info["read_only"] = True
        return info

    def close(self) -> None:
        super().close()
        if self._temp is not None:
            import shutil

            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None
            self.path = self.vault_index
            self.read_only = True
