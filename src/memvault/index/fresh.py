"""Reading the index without refreshing it, when nothing on disk changed since the last
refresh: the cold path of `memvault search`.

`fresh_connection` opens `.memvault/index.sqlite` only if a search after a refresh would
read exactly what is there now: the index is complete, of this version, not truncated,
in WAL mode, and the files signature stored with it (`walk.files_signature`) is that of
the files on disk. Otherwise it returns None and the caller takes the ordinary path
(`IndexStore.refresh`, which updates, migrates or rebuilds with its writer lock).
Nothing here writes: no refresh, no lock, no state folder; a reader in WAL mode never
blocks or is blocked by a writer.

A vault this process cannot write (a read-only mount, a backup snapshot, `chmod -R a-w`,
another user's vault) is read without any write, not even SQLite's shared-memory file
(`open_read_only`): SQLite reads a read-only WAL database (`mode=ro`) only when its
`-wal` and `-shm` files already exist, which is the case while another process has the
index open; otherwise the file holds every committed page and is opened `immutable=1`.
"""

from __future__ import annotations

import os
import sqlite3

from memvault.index import schema
from memvault.index.walk import files_signature, hand_over, walk_notes
from memvault.state_paths import GITIGNORE, INDEX, STATE_DIR


def connect(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A connection to the index file at `path` as every memvault reader uses it (busy
    timeout, the body-inflating SQL function); the writer's pragmas are set by
    `IndexStore`."""
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.create_function(schema.INFLATE, 1, schema.inflate, deterministic=True)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def _may_write(path: str) -> bool:
    effective = os.access in os.supports_effective_ids
    return os.access(path, os.W_OK, effective_ids=effective)


def index_writable(root: str | os.PathLike[str]) -> bool:
    """Whether this process can keep the vault's index in step: its state folder (or,
    before there is one, the vault folder) and the index files that exist are writable
    (on a read-only mount no path is)."""
    root = os.fspath(root)
    state = os.path.join(root, STATE_DIR)
    if not os.path.isdir(state):
        return _may_write(root)
    if not _may_write(state):
        return False
    index = os.path.join(root, INDEX)
    return all(_may_write(f"{index}{suffix}") for suffix in ("", "-wal", "-shm", "-lock")
               if os.path.lexists(f"{index}{suffix}"))


def _uri(path: str, option: str) -> str:
    """A `file:` URI naming `path` exactly: every byte that URI syntax could read
    otherwise (`?`, `#`, `%`, spaces, non-ASCII) is percent-encoded."""
    safe = frozenset(b"-._~/0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    raw = os.fsencode(os.path.abspath(path))
    return "file:" + "".join(chr(b) if b in safe else f"%{b:02X}" for b in raw) + f"?{option}"


def open_read_only(path: str | os.PathLike[str]) -> sqlite3.Connection | None:
    """The index file at `path` opened without any write (see the module doc), or None
    when it cannot be read that way (missing, a log without its `-shm`, not a database)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        return None
    wal = f"{path}-wal"
    logged = os.path.exists(wal) and os.stat(wal).st_size > 0
    option = "mode=ro" if logged else "mode=ro&immutable=1"
    try:
        conn = sqlite3.connect(_uri(path, option), uri=True,
                               timeout=30.0, isolation_level=None, check_same_thread=False)
    except sqlite3.DatabaseError:
        return None
    try:
        conn.create_function(schema.INFLATE, 1, schema.inflate, deterministic=True)
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA user_version").fetchone()
    except sqlite3.DatabaseError:
        conn.close()
        return None
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
    writable = index_writable(root)
    found = connect(path) if writable else open_read_only(path)
    if found is None:
        return None
    conn = found
    try:
        if (writable and conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal") \
                or conn.execute("PRAGMA user_version").fetchone()[0] != schema.SCHEMA_VERSION \
                or truncated(conn, path):
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
