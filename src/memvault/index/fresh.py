"""Reading the index without refreshing it, when nothing on disk changed since the last
refresh: the cold path of `memvault search`.

`fresh_connection` opens `.memvault/index.sqlite` only if a search after a refresh would
read exactly what is there now: the index is complete, of this version, not truncated,
in WAL mode, and the files signature stored with it (`walk.files_signature`) is that of
the files on disk. Otherwise it returns None and the caller takes the ordinary path
(`IndexStore.refresh`, which updates, migrates or rebuilds with its writer lock).
Nothing here writes: no refresh, no lock, no state folder; a reader in WAL mode never
blocks or is blocked by a writer.
"""

from __future__ import annotations

import os
import sqlite3

from memvault.index import schema
from memvault.index.walk import files_signature, hand_over, walk_notes
from memvault.state_paths import GITIGNORE, INDEX


def connect(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A connection to the index file at `path` as every memvault reader uses it (busy
    timeout, the body-inflating SQL function); the writer's pragmas are set by
    `IndexStore`."""
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.create_function(schema.INFLATE, 1, schema.inflate, deterministic=True)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def truncated(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> bool:
    """Whether the index file is shorter than its pages say (cut off by a copy or a full
    disk); only meaningful when no write-ahead log holds pages."""
    wal = f"{os.fspath(path)}-wal"
    if os.path.exists(wal) and os.stat(wal).st_size > 0:
        return False
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    return bool(os.stat(path).st_size < pages * size)


def fresh_connection(root: str, home_root: str) -> sqlite3.Connection | None:
    """The index of the vault at `root` opened for reading when it is in step with the
    files (see the module doc), else None."""
    path = os.path.join(root, INDEX)
    if not os.path.isfile(path) or not os.path.lexists(os.path.join(root, GITIGNORE)):
        return None  # no index yet, or the state folder would be set up first
    conn = connect(path)
    try:
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal" or \
                conn.execute("PRAGMA user_version").fetchone()[0] != schema.SCHEMA_VERSION or \
                truncated(conn, path):
            conn.close()
            return None
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN "
                                 "('build_state', 'files_signature')").fetchall())
        if meta.get("build_state") != "complete":
            conn.close()
            return None
        listing = walk_notes(root, home_root)
        if meta.get("files_signature") != files_signature(listing):
            conn.close()
            hand_over(root, home_root, listing)  # the refresh that follows lists no more
            return None
    except BaseException:
        conn.close()
        raise
    return conn
