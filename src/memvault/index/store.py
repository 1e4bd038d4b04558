"""Opening `.memvault/index.sqlite` safely and keeping it in step with the notes.

- WAL mode and a busy timeout, so searchers never block each other or an editor; every
  writer first takes an exclusive lock on `index.sqlite-lock`, so two refreshes never
  index the same change twice.
- A damaged file (not a database, truncated, malformed pages), a file left by an
  interrupted build, or one written by a newer version is deleted and rebuilt, with a
  notice; the index is a cache, so nothing is lost.
- `refresh` looks again only at files whose size, modification time or change time
  changed, and removes rows of deleted files. The change time catches an edit that kept
  the size and put the modification time back (a tool restoring times, a coarse-clock
  file system); since a checkout, `cp -a` or `chmod -R` changes it for every file, a file
  is parsed again only when a digest of its bytes differs from the one it was indexed
  with, otherwise only its row's times are updated. When nothing changed it compares
  one signature of the scan (`files_signature`) with the one stored for the files table,
  not every row. Memory files (Memory.md, Lessons.md, Inbox.md of every principal) are
  indexed per record; when they change, the FTS segments are merged and the WAL
  truncated with `secure_delete` on, so forgotten text does not survive in the index
  file.

It reads files from the vault folder and writes only the index files: never a note.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.index import schema
from memvault.index.fresh import connect, truncated
from memvault.index.scan import (
    MemoryFileInfo,
    ScannedFile,
    content_hash,
    parse_indexable,
    read_file,
    scan_paths,
    scanned_files,
    stored_path,
)
from memvault.index.walk import files_signature, walk_notes
from memvault.state_folder import ensure_state_folder
from memvault.state_paths import INDEX

Progress = Callable[[int, int], None]
Known = tuple[int, int, int, int | None, str | None]
"""A files row: file id, size, mtime_ns, ctime_ns (None before it was recorded), digest."""
BATCH = 400
LOCK_TIMEOUT = 120.0


class IndexUnavailable(Exception):
    """The index cannot be opened for a reason rebuilding will not fix (permissions)."""


@dataclass(slots=True)
class RefreshResult:
    added: int = 0
    updated: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    scanned: int = 0
    seconds: float = 0.0
    unchanged: int = 0
    """Files whose size or times changed but whose bytes did not (not parsed)."""

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed

    def to_dict(self) -> dict[str, Any]:
        return {"added": self.added, "updated": self.updated, "removed": self.removed,
                "unchanged": self.unchanged, "scanned": self.scanned,
                "seconds": round(self.seconds, 3),
                "skipped": [{"path": p, "problem": why} for p, why in self.skipped]}


def _is_transient(exc: sqlite3.DatabaseError) -> bool:
    msg = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and any(
        word in msg for word in ("locked", "busy", "unable to open", "disk i/o",
                                 "readonly", "read-only", "interrupted"))


class IndexStore:
    """One index file for one vault folder."""

    read_only = False
    """True while the index is read where it is and must not be written (a read-only
    vault's index in step with its notes, `index/read_only.py`): derived rows such as
    embedding vectors are then computed for the call and not stored."""

    def __init__(self, root: Path, home_root: str, db_path: Path | None = None) -> None:
        self.root = root
        self.home_root = home_root
        self.path = db_path or root / INDEX
        self.notices: list[str] = []
        self._conn: sqlite3.Connection | None = None
        self._lock_depth = 0
        self.refreshes = 0
        """How many refreshes wrote to the index (for tests and benchmarks)."""

    # -- opening -----------------------------------------------------------------------

    def connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open_checked()
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connect(self) -> sqlite3.Connection:
        if self.path == self.root / INDEX:
            ensure_state_folder(self.root)  # git-ignored from the start
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = connect(self.path)
        except sqlite3.OperationalError as exc:
            raise IndexUnavailable(f"cannot open the index: {exc}") from None
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA secure_delete = ON")
        return conn

    def _open_checked(self) -> sqlite3.Connection:
        existed = self.path.exists()
        for attempt in range(2):
            try:
                conn = self._connect()
                problem = self._damage(conn, existed)
                if problem is None:
                    schema.migrate(conn)
                    return conn
                conn.close()
            except schema.NewerIndex:
                problem = "it was written by a newer memvault"
            except sqlite3.DatabaseError as exc:
                if _is_transient(exc):
                    raise IndexUnavailable(f"cannot open the index: {exc}") from None
                problem = f"it is damaged ({exc})"
            if attempt == 1:
                break
            self.discard(problem)
            existed = False
        raise IndexUnavailable("the index could not be rebuilt")

    def _damage(self, conn: sqlite3.Connection, existed: bool) -> str | None:
        """Why this index file cannot be trusted, or None."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            if existed and conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0]:
                return "it has no schema version"
            if existed:
                self.notices.append("the search index was empty or damaged: rebuilt it")
            return None
        if truncated(conn, self.path):
            return "the file is truncated"
        if version >= 1:
            row = conn.execute("SELECT value FROM meta WHERE key = 'build_state'").fetchone()
            if row is not None and row[0] != "complete" and not self._writer_alive():
                return "an earlier build was interrupted"
        return None

    def discard(self, reason: str) -> None:
        """Delete the index files (it is a cache) and note why."""
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.remove(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass
        self.notices.append(f"the search index was discarded because {reason}: rebuilt it")

    # -- the writer lock -----------------------------------------------------------------

    @contextmanager
    def _writer(self) -> Iterator[None]:
        """Exclusive among memvault processes (re-entrant within this one): a lock on
        `index.sqlite-lock` (`flock` on POSIX, a byte lock on Windows; see
        `backends.fs_lock`), polled until LOCK_TIMEOUT."""
        from memvault.backends.fs_lock import try_lock, unlock

        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        fd = self._open_lock_file()
        try:
            deadline = time.monotonic() + LOCK_TIMEOUT
            while not try_lock(fd):
                if time.monotonic() > deadline:
                    raise IndexUnavailable("another memvault process has been updating "
                                           "the index for too long")
                time.sleep(0.05)
            self._lock_depth = 1
            try:
                yield
            finally:
                self._lock_depth = 0
                unlock(fd)
        finally:
            os.close(fd)

    def _open_lock_file(self) -> int:
        return os.open(f"{self.path}-lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0)
                       | getattr(os, "O_CLOEXEC", 0), 0o644)

    def writer(self) -> Any:
        """The exclusive writer lock (for callers that store derived rows, e.g. vectors)."""
        return self._writer()

    def _writer_alive(self) -> bool:
        """Whether another process holds the writer lock right now."""
        from memvault.backends.fs_lock import try_lock, unlock

        if self._lock_depth:
            return True  # this process is the writer (its build is in progress)
        try:
            fd = self._open_lock_file()
        except OSError:
            return False
        try:
            if try_lock(fd):
                unlock(fd)
                return False
            return True
        finally:
            os.close(fd)

    # -- refreshing ------------------------------------------------------------------------

    def _known(self, conn: sqlite3.Connection, paths: tuple[str, ...] | None = None
               ) -> dict[str, Known]:
        if paths is None:
            rows = conn.execute("SELECT id, path, size, mtime_ns, ctime_ns, hash FROM files")
        else:
            marks = ",".join("?" * len(paths))
            rows = conn.execute(f"SELECT id, path, size, mtime_ns, ctime_ns, hash FROM files "
                                f"WHERE path IN ({marks})", paths)
        return {row[1]: (row[0], *row[2:]) for row in rows}

    def refresh(self, progress: Progress | None = None, *, full: bool = False) -> RefreshResult:
        """Bring the index in step with the files (see the module doc)."""
        started = time.perf_counter()
        result = RefreshResult()
        conn = self.connection()
        listing = walk_notes(self.root, self.home_root)
        signature = files_signature(listing)
        scanned = scanned_files(listing, self.home_root)
        result.scanned = len(scanned)
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN "
                                 "('build_state', 'files_signature')").fetchall())
        if not full and meta.get("build_state") == "complete" and (
                meta.get("files_signature") == signature
                or self._in_step(conn, scanned, signature)):
            result.seconds = time.perf_counter() - started
            return result
        with self._writer():
            known = self._known(conn)
            state = conn.execute("SELECT value FROM meta WHERE key = 'build_state'").fetchone()
            building = full or state is None or state[0] != "complete"
            changed = [f for f in scanned.values() if _stat_changed(f, known.get(f.path))]
            gone = [path for path in known if path not in scanned]
            if building:
                _set_state(conn, "building")
            memory_touched = self._apply(conn, changed, gone, known, result, progress,
                                         commit_every=BATCH if building else None)
            if building:
                _set_state(conn, "complete")
            if memory_touched or gone:
                self._purge_freed_text(conn, memory_touched)
            _set_meta(conn, "files_signature", signature)  # the files table is `scanned` now
        result.seconds = time.perf_counter() - started
        return result

    def _in_step(self, conn: sqlite3.Connection, scanned: dict[str, ScannedFile],
                 signature: str) -> bool:
        """Compare the scan with the files table row by row; when nothing differs, keep
        the scan's signature, so the next refresh compares one value instead."""
        if _differs(scanned, self._known(conn)):
            return False
        with self._writer():
            if _differs(scanned, self._known(conn)):  # another process changed it since
                return False
            _set_meta(conn, "files_signature", signature)
        return True

    def refresh_memory(self, paths: tuple[str, ...]) -> RefreshResult:
        """Bring only these memory files in step (three `stat`s instead of a walk of the
        vault): what context relevance needs. Notes are left for the next full refresh."""
        return self.refresh_paths(set(paths))

    def refresh_paths(self, paths: set[str]) -> RefreshResult:
        """Bring only these vault-relative paths in step (a watcher reported them), not
        the whole vault: a stat per path, and only changed files are read."""
        started = time.perf_counter()
        result = RefreshResult()
        conn = self.connection()
        if not paths:
            return result
        wanted = tuple(sorted({stored_path(p)[0] for p in paths}))
        scanned = scan_paths(self.root, self.home_root, set(paths))
        known = self._known(conn, wanted)
        if not _differs(scanned, known):
            return result
        with self._writer():
            known = self._known(conn, wanted)
            changed = [f for f in scanned.values() if _stat_changed(f, known.get(f.path))]
            gone = [path for path in known if path not in scanned]
            touched = self._apply(conn, changed, gone, known, result, None, commit_every=None)
            if touched or gone:
                self._purge_freed_text(conn, touched)
        result.scanned = len(scanned)
        result.seconds = time.perf_counter() - started
        return result

    def _apply(self, conn: sqlite3.Connection, changed: list[ScannedFile], gone: list[str],
               known: dict[str, Known], result: RefreshResult,
               progress: Progress | None, commit_every: int | None) -> bool:
        """Index `changed` files and drop `gone` ones. A changed file whose bytes have the
        digest it was indexed with only gets its new size and times (it is not parsed)."""
        from memvault.index.writer import delete_file_rows, insert_file

        memory_touched = False
        total = len(changed) + len(gone)
        conn.execute("BEGIN IMMEDIATE")
        try:
            # The files table changes: its signature no longer describes it.
            conn.execute("DELETE FROM meta WHERE key = 'files_signature'")
            for path in gone:
                fid = known[path][0]
                memory_touched |= delete_file_rows(conn, fid)
                conn.execute("DELETE FROM files WHERE id = ?", (fid,))
                result.removed += 1
            done = len(gone)
            for n, entry in enumerate(changed, 1):
                old = known.get(entry.path)
                data = read_file(self.root, entry, self.home_root)
                digest = content_hash(data) if isinstance(data, bytes) else None
                if old is not None and (old[4] == digest if digest is not None
                                        else _same_problem(conn, old[0], data)):
                    conn.execute("UPDATE files SET size = ?, mtime_ns = ?, ctime_ns = ? "
                                 "WHERE id = ?",
                                 (entry.size, entry.mtime_ns, entry.ctime_ns, old[0]))
                    result.unchanged += 1
                else:
                    if old is not None:
                        memory_touched |= delete_file_rows(conn, old[0])
                        conn.execute("DELETE FROM files WHERE id = ?", (old[0],))
                        result.updated += 1
                    else:
                        result.added += 1
                    indexed = data if isinstance(data, str) else parse_indexable(entry, data)
                    memory_touched |= isinstance(indexed, MemoryFileInfo)
                    problem = insert_file(conn, entry, indexed, digest)
                    if problem:
                        result.skipped.append((entry.path, problem))
                done += 1
                if commit_every and n % commit_every == 0:
                    conn.execute("COMMIT")
                    conn.execute("BEGIN IMMEDIATE")
                if progress and (n % 50 == 0 or done == total):
                    progress(done, total)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self.refreshes += 1
        return memory_touched

    def _purge_freed_text(self, conn: sqlite3.Connection, memory_touched: bool) -> None:
        """Make deleted text unrecoverable: merge FTS segments and truncate the WAL."""
        if memory_touched:
            conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('optimize')")
            conn.execute("DELETE FROM vectors WHERE text_hash NOT IN "
                         "(SELECT text_hash FROM memory_records WHERE text_hash IS NOT NULL)")
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError:
            pass  # a reader holds an old snapshot; the next refresh checkpoints again

    def rebuild(self, progress: Progress | None = None) -> RefreshResult:
        """Start from an empty index and read every file again."""
        with self._writer():
            self.close()
            for suffix in ("", "-wal", "-shm", "-journal"):
                try:
                    os.remove(f"{self.path}{suffix}")
                except FileNotFoundError:
                    pass
            return self.refresh(progress, full=True)

    # -- status ------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        conn = self.connection()
        counts = dict(conn.execute("SELECT kind, count(*) FROM files GROUP BY kind").fetchall())
        records = conn.execute("SELECT count(*) FROM memory_records").fetchone()[0]
        state = conn.execute("SELECT value FROM meta WHERE key = 'build_state'").fetchone()
        problems = [{"path": p, "problem": why} for p, why in conn.execute(
            "SELECT path, problem FROM files WHERE kind = 'skipped' ORDER BY path")]
        size = sum(Path(f"{self.path}{s}").stat().st_size for s in ("", "-wal")
                   if Path(f"{self.path}{s}").exists())
        return {"path": str(self.path), "schema_version": schema.SCHEMA_VERSION,
                "state": state[0] if state else "empty", "notes": counts.get("note", 0),
                "memory_files": counts.get("memory", 0), "memory_records": records,
                "skipped": problems, "bytes": size}


def _set_state(conn: sqlite3.Connection, value: str) -> None:
    _set_meta(conn, "build_state", value)


def _set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO meta(key, value) VALUES (?, ?) "
                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))


def _same_problem(conn: sqlite3.Connection, file_id: int, data: bytes | str) -> bool:
    """Whether a file that cannot be read is still skipped for the reason it was."""
    row = conn.execute("SELECT problem FROM files WHERE id = ? AND kind = 'skipped'",
                       (file_id,)).fetchone()
    return row is not None and row[0] == data


def _stat_changed(entry: ScannedFile, old: Known | None) -> bool:
    """Whether a file must be looked at again: new, or its size, modification time or
    change time differs from its row (the bytes decide whether it is parsed again)."""
    return old is None or old[1:4] != (entry.size, entry.mtime_ns, entry.ctime_ns)


def _differs(scanned: dict[str, ScannedFile], known: dict[str, Known]) -> bool:
    if len(scanned) != len(known):
        return True
    return any(_stat_changed(entry, known.get(path)) for path, entry in scanned.items())
