"""The search index of a vault this process cannot write: a backup snapshot, a read-only
mount or share, a vault owned by another user, a folder made read-only with
`chmod -R a-w`.

Nothing here writes into the vault, not even SQLite's shared-memory file
(`fresh.open_read_only`). When the vault's index is complete and in step with the notes
it is searched where it is. Otherwise (behind the notes, missing, damaged, of another
version) searches run on a temporary copy held in memory only: the vault's index is
copied into an in-memory SQLite database (`Connection.backup`) and brought in step there
the usual way (only changed files are parsed); a notice says so in one line. Nothing of
it reaches the disk, so a process stopped by SIGTERM or SIGKILL leaves no copy of the
notes or memory anywhere (no temporary folder outside the vault, where a later
permanent forget would never look). The copy costs memory about the size of the index
file while the search service is open. The vault's own index is never refreshed, migrated or deleted
from here, and `index rebuild` says it cannot.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.index.fresh import connect, fresh_connection, open_read_only, truncated
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
        self._copying = False  # searching the in-memory copy (see `_to_copy`)
        self._copy: sqlite3.Connection | None = None
        self._just_checked = False  # opened in step a moment ago: no second walk

    # -- the vault's own index, read in place --------------------------------------------

    def connection(self) -> sqlite3.Connection:
        if self._conn is None:
            if not self._copying:
                self._conn = _fresh(self.root, self.home_root)
                if self._conn is not None:
                    self._just_checked = True
                    return self._conn
                self._to_copy(BEHIND if self.vault_index.exists() else NO_INDEX)
            self._conn = self._open_checked()
        return self._conn

    def refresh(self, progress: Progress | None = None, *, full: bool = False
                ) -> RefreshResult:
        if not self._copying and not full:
            started = time.perf_counter()
            fresh = self._conn is None
            self.connection()
            if not self._copying and fresh and self._just_checked:
                self._just_checked = False
                return RefreshResult(seconds=time.perf_counter() - started)
            if not self._copying:  # in step when opened: still in step?
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
        if not self._copying:
            from memvault.index.scan import scan_paths, stored_path

            conn = self.connection()
            if not self._copying:
                wanted = tuple(sorted({stored_path(p)[0] for p in paths}))
                if not _differs(scan_paths(self.root, self.home_root, set(paths)),
                                self._known(conn, wanted)):
                    return RefreshResult()
                self._to_copy(BEHIND)
        return super().refresh_paths(paths)

    # -- a temporary copy, brought in step -----------------------------------------------

    def _to_copy(self, why: str) -> None:
        """Search a private in-memory copy of the vault's index from now on."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._copying = True
        self.read_only = False
        self._copy = connect(":memory:")
        source = open_read_only(self.vault_index)
        if source is not None:
            try:
                if not truncated(source, self.vault_index):
                    source.backup(self._copy)
            except (sqlite3.DatabaseError, OSError):
                self._copy.close()
                self._copy = connect(":memory:")  # start from an empty index
            finally:
                source.close()
        self.notices.append(f"{READ_ONLY} and {why}: searched a temporary copy of the "
                            "index held in memory (nothing was written to disk)")

    # The copy lives in one in-memory connection: no file, no lock file, no other writer.

    def _connect(self) -> sqlite3.Connection:
        if not self._copying:
            return super()._connect()
        if self._copy is None:
            self._copy = connect(":memory:")
        self._copy.execute("PRAGMA secure_delete = ON")
        return self._copy

    def _damage(self, conn: sqlite3.Connection, existed: bool) -> str | None:
        if not self._copying:
            return super()._damage(conn, existed)
        if conn.execute("PRAGMA user_version").fetchone()[0] >= 1:
            row = conn.execute("SELECT value FROM meta WHERE key = 'build_state'").fetchone()
            if row is not None and row[0] != "complete":
                return "an earlier build was interrupted"
        return None

    @contextmanager
    def _writer(self) -> Iterator[None]:
        if not self._copying:
            with super()._writer():
                yield
            return
        self._lock_depth += 1
        try:
            yield
        finally:
            self._lock_depth -= 1

    def _writer_alive(self) -> bool:
        return bool(self._lock_depth) if self._copying else super()._writer_alive()

    def discard(self, reason: str) -> None:
        if not self._copying:  # the vault's index is never deleted from here
            self._to_copy(f"its search index cannot be used ({reason})")
        self._drop_copy()
        self.notices.append(f"the search index was discarded because {reason}: rebuilt it")

    def _drop_copy(self) -> None:
        if self._conn is not None and self._conn is not self._copy:
            self._conn.close()
        self._conn = None
        if self._copy is not None:
            self._copy.close()
            self._copy = None

    def rebuild(self, progress: Progress | None = None) -> RefreshResult:
        raise IndexUnavailable(f"{READ_ONLY}: the index cannot be rebuilt (search still "
                               "works, from a temporary copy in memory when the index is "
                               "behind)")

    def status(self) -> dict[str, object]:
        info = super().status()
        info["path"] = str(self.vault_index)
        info["read_only"] = True
        if self._copying and self._copy is not None:
            pages = self._copy.execute("PRAGMA page_count").fetchone()[0]
            info["bytes"] = pages * self._copy.execute("PRAGMA page_size").fetchone()[0]
            info["copy_in_memory"] = True
        return info

    def close(self) -> None:
        self._drop_copy()
        self._copying = False
        self.read_only = True
