"""Writing one file's rows into the index, and deleting them. Called inside a transaction
by `store.IndexStore`; never touches the vault's files.

A note's text is stored once, in `notes_store` (the body zlib-compressed); the
full-text table `notes_fts` indexes it and reads it back through the `notes_text` view
for snippets. Removing a note from `notes_fts` therefore passes the values it was
indexed with (FTS5's `delete` command for external-content tables)."""

from __future__ import annotations

import sqlite3

from memvault.core.notes import Note, tag_words
from memvault.index.scan import Indexable, MemoryFileInfo, ScannedFile
from memvault.index.schema import deflate
from memvault.index.text import segment


def text_digest(text: str) -> str:
    """The key of a text's embedding (see `index/vectors.py`)."""
    import hashlib

    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def delete_file_rows(conn: sqlite3.Connection, file_id: int) -> bool:
    """Remove everything indexed for one file. True when it held memory records."""
    old = conn.execute("SELECT title, aliases, tags, props, body FROM notes_text "
                       "WHERE id = ?", (file_id,)).fetchone()
    if old is not None:
        conn.execute("INSERT INTO notes_fts(notes_fts, rowid, title, aliases, tags, props, "
                     "body) VALUES ('delete', ?, ?, ?, ?, ?, ?)", (file_id, *old))
        conn.execute("DELETE FROM notes_store WHERE id = ?", (file_id,))
    conn.execute("DELETE FROM tags WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM aliases WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM links WHERE file_id = ?", (file_id,))
    ids = [r[0] for r in conn.execute("SELECT id FROM memory_records WHERE file_id = ?",
                                      (file_id,))]
    if ids:
        conn.executemany("DELETE FROM memory_fts WHERE rowid = ?", [(i,) for i in ids])
        conn.execute("DELETE FROM memory_records WHERE file_id = ?", (file_id,))
    return bool(ids)


def insert_file(conn: sqlite3.Connection, entry: ScannedFile, indexed: Indexable,
                digest: str | None = None) -> str | None:
    """Index one file (`digest`: of its bytes); returns the problem when it could not be
    indexed."""
    if isinstance(indexed, str):
        conn.execute("INSERT INTO files(path, size, mtime_ns, ctime_ns, kind, problem, hash) "
                     "VALUES (?, ?, ?, ?, 'skipped', ?, ?)",
                     (entry.path, entry.size, entry.mtime_ns, entry.ctime_ns, indexed, digest))
        return indexed
    if isinstance(indexed, MemoryFileInfo):
        cur = conn.execute("INSERT INTO files(path, size, mtime_ns, ctime_ns, kind, title, "
                           "hash) VALUES (?, ?, ?, ?, 'memory', ?, ?)",
                           (entry.path, entry.size, entry.mtime_ns, entry.ctime_ns, entry.path,
                            digest))
        file_id = cur.lastrowid
        for rec in indexed.records:
            cur = conn.execute(
                "INSERT INTO memory_records(file_id, scope, kind, rid, category, status, line,"
                " text_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (file_id, entry.scope or "default", rec.kind, rec.rid, rec.category,
                 rec.status, rec.line, text_digest(rec.text)))
            conn.execute("INSERT INTO memory_fts(rowid, text, category, rid) VALUES (?, ?, ?, ?)",
                         (cur.lastrowid, segment(rec.text), rec.category or "", rec.rid))
        return None
    note: Note = indexed
    cur = conn.execute("INSERT INTO files(path, size, mtime_ns, ctime_ns, kind, title, hash) "
                       "VALUES (?, ?, ?, ?, 'note', ?, ?)",
                       (entry.path, entry.size, entry.mtime_ns, entry.ctime_ns, note.title,
                        digest))
    file_id = cur.lastrowid
    values = (segment(note.title), segment(" ; ".join(note.aliases)),
              segment(tag_words(note.tags)), segment(note.properties), segment(note.body))
    conn.execute("INSERT INTO notes_store(id, title, aliases, tags, props, body) "
                 "VALUES (?, ?, ?, ?, ?, ?)", (file_id, *values[:4], deflate(values[4])))
    conn.execute("INSERT INTO notes_fts(rowid, title, aliases, tags, props, body) "
                 "VALUES (?, ?, ?, ?, ?, ?)", (file_id, *values))
    if note.tags:
        conn.executemany("INSERT INTO tags(file_id, tag) VALUES (?, ?)",
                         [(file_id, t) for t in note.tags])
    if note.aliases:
        conn.executemany("INSERT INTO aliases(file_id, alias) VALUES (?, ?)",
                         [(file_id, a) for a in note.aliases])
    if note.links:
        conn.executemany("INSERT INTO links(file_id, target) VALUES (?, ?)",
                         [(file_id, t) for t in note.links])
    return None
