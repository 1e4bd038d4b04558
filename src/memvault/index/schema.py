"""The index schema, as ordered, named migrations applied when the index opens.

`PRAGMA user_version` records how many migrations ran. A new version appends a
function to `MIGRATIONS`; an index written by a newer memvault (a higher version than
this one knows) is rebuilt, since the index is only a cache.
"""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

TOKENIZE = "porter unicode61 remove_diacritics 2"
INFLATE = "memvault_inflate"
"""SQL function (registered on every connection) that decompresses a stored body."""


def inflate(blob: bytes | None) -> str | None:
    import zlib

    return None if blob is None else zlib.decompress(blob).decode("utf-8")


def deflate(text: str) -> bytes:
    import zlib

    return zlib.compress(text.encode("utf-8"), 1)


def m001_notes(conn: sqlite3.Connection) -> None:
    """Files seen on disk, notes' full text, tags, aliases and wikilinks."""
    _run(conn, f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            kind TEXT NOT NULL,          -- note | memory | skipped
            title TEXT,
            problem TEXT                 -- why a skipped file could not be indexed
        );
        CREATE TABLE tags (file_id INTEGER NOT NULL, tag TEXT NOT NULL);
        CREATE INDEX tags_by_tag ON tags (tag);
        CREATE INDEX tags_by_file ON tags (file_id);
        CREATE TABLE aliases (file_id INTEGER NOT NULL, alias TEXT NOT NULL);
        CREATE INDEX aliases_by_file ON aliases (file_id);
        CREATE TABLE links (file_id INTEGER NOT NULL, target TEXT NOT NULL);
        CREATE INDEX links_by_file ON links (file_id);
        CREATE VIRTUAL TABLE notes_fts USING fts5(
            title, aliases, tags, props, body, tokenize = '{TOKENIZE}');
    """)


def m002_memory_records(conn: sqlite3.Connection) -> None:
    """Facts, lessons and proposals, one row per record, searchable with their ids."""
    _run(conn, f"""
        CREATE TABLE memory_records (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL,
            scope TEXT NOT NULL,
            kind TEXT NOT NULL,          -- fact | lesson | proposal
            rid TEXT NOT NULL,
            category TEXT,
            status TEXT,
            line INTEGER
        );
        CREATE INDEX memory_by_file ON memory_records (file_id);
        CREATE VIRTUAL TABLE memory_fts USING fts5(
            text, category, rid, tokenize = '{TOKENIZE}');
    """)


def m003_compact_notes(conn: sqlite3.Connection) -> None:
    """Notes' text stored once, the body compressed (`notes_store`), read by the full-text
    index through the `notes_text` view (an external-content FTS5 table), so the index
    stays near the size of the Markdown; a content digest per file, so a file whose
    modification time changed but whose bytes did not is not read again. The notes are
    indexed anew by the next refresh."""
    _run(conn, f"""
        DROP TABLE notes_fts;
        DELETE FROM tags;
        DELETE FROM aliases;
        DELETE FROM links;
        DELETE FROM files WHERE kind != 'memory';
        DELETE FROM meta WHERE key = 'build_state';
        ALTER TABLE files ADD COLUMN hash TEXT;
        CREATE TABLE notes_store (
            id INTEGER PRIMARY KEY,      -- files.id
            title TEXT, aliases TEXT, tags TEXT, props TEXT,
            body BLOB                    -- zlib-compressed UTF-8
        );
        CREATE VIEW notes_text AS SELECT id, title, aliases, tags, props,
            {INFLATE}(body) AS body FROM notes_store;
        CREATE VIRTUAL TABLE notes_fts USING fts5(
            title, aliases, tags, props, body, content = 'notes_text', content_rowid = 'id',
            tokenize = '{TOKENIZE}');
    """)


def m004_vocabulary(conn: sqlite3.Connection) -> None:
    """The words of the notes' full-text index (stemmed, folded) with how many notes hold
    each, for correcting typos in queries (`index/typos.py`)."""
    _run(conn, "CREATE VIRTUAL TABLE notes_vocab USING fts5vocab(notes_fts, 'row')")


def m005_memory_vectors(conn: sqlite3.Connection) -> None:
    """Embeddings of memory records for semantic recall, keyed by model and a digest of
    the text, so a vector is computed once per distinct text and model; memory files are
    indexed anew (their rows gain the digest)."""
    _run(conn, """
        DELETE FROM memory_fts;
        DELETE FROM memory_records;
        DELETE FROM files WHERE kind = 'memory';
        ALTER TABLE memory_records ADD COLUMN text_hash TEXT;
        CREATE INDEX memory_by_scope ON memory_records (scope, kind);
        CREATE TABLE vectors (
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            vector BLOB NOT NULL,        -- int8 components of a unit vector, times 127
            PRIMARY KEY (model, text_hash)
        ) WITHOUT ROWID;
    """)


def m006_links_by_target(conn: sqlite3.Connection) -> None:
    """Symlinks are judged by where they lead (`core.paths.private_link_target`): every
    file is checked again by the next refresh (its bytes hashed; only a file whose bytes
    changed, or a link now refused, is indexed anew)."""
    _run(conn, """
        UPDATE files SET mtime_ns = -1;
        DELETE FROM meta WHERE key = 'files_signature'
    """)


def m007_change_times(conn: sqlite3.Connection) -> None:
    """Each file's change time (`st_ctime_ns`), which a program cannot set back: an edit
    that keeps the size and restores the modification time is seen. Existing rows have
    none, so the next refresh hashes every file once (only a file whose bytes differ from
    what was indexed is read again)."""
    _run(conn, """
        ALTER TABLE files ADD COLUMN ctime_ns INTEGER;
        DELETE FROM meta WHERE key = 'files_signature'
    """)


def _run(conn: sqlite3.Connection, script: str) -> None:
    """Run statements one by one (executescript would commit the open transaction)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    m001_notes,
    m002_memory_records,
    m003_compact_notes,
    m004_vocabulary,
    m005_memory_vectors,
    m006_links_by_target,
    m007_change_times,
)
SCHEMA_VERSION = len(MIGRATIONS)


class NewerIndex(Exception):
    """The index was written by a newer memvault."""


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the missing migrations, each in its own transaction. Returns how many ran."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise NewerIndex(f"index schema {version} is newer than {SCHEMA_VERSION}")
    ran = 0
    for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("PRAGMA user_version").fetchone()[0] >= number:
                conn.execute("ROLLBACK")  # another process got there first
                continue
            migration(conn)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        ran += 1
    return ran
