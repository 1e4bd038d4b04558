"""Writing one file's rows into the index, and deleting them. Called inside a transaction
by `store.IndexStore`; never touches the vault's files."""

from __future__ import annotations

import sqlite3

from memvault.core.notes import Note, tag_words
from memvault.index.scan import Indexable, MemoryFileInfo, ScannedFile
from memvault.index.text import segment


def delete_file_rows(conn: sqlite3.Connection, file_id: int) -> bool:
    """Remove everything indexed for one file. True when it held memory records."""
    conn.execute("DELETE FROM notes_fts WHERE rowid = ?", (file_id,))
    conn.execute("DELETE FROM tags WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM aliases WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM links WHERE file_id = ?", (file_id,))
    ids = [r[0] for r in conn.execute("SELECT id FROM memory_records WHERE file_id = ?",
                                      (file_id,))]
    if ids:
        conn.executemany("DELETE FROM memory_fts WHERE rowid = ?", [(i,) for i in ids])
        conn.execute("DELETE FROM memory_records WHERE file_id = ?", (file_id,))
    return bool(ids)


def insert_file(conn: sqlite3.Connection, entry: ScannedFile, indexed: Indexable) -> str | None:
    """Index one file; returns the problem when it could not be indexed."""
    if isinstance(indexed, str):
        conn.execute("INSERT INTO files(path, size, mtime_ns, kind, problem) "
                     "VALUES (?, ?, ?, 'skipped', ?)",
                     (entry.path, entry.size, entry.mtime_ns, indexed))
        return indexed
    if isinstance(indexed, MemoryFileInfo):
        cur = conn.execute("INSERT INTO files(path, size, mtime_ns, kind, title) "
                           "VALUES (?, ?, ?, 'memory', ?)",
                           (entry.path, entry.size, entry.mtime_ns, entry.path))
        file_id = cur.lastrowid
        for rec in indexed.records:
            cur = conn.execute(
                "INSERT INTO memory_records(file_id, scope, kind, rid, category, status, line)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (file_id, entry.scope or "default", rec.kind, rec.rid, rec.category,
                 rec.status, rec.line))
            conn.execute("INSERT INTO memory_fts(rowid, text, category, rid) VALUES (?, ?, ?, ?)",
                         (cur.lastrowid, segment(rec.text), rec.category or "", rec.rid))
        return None
    note: Note = indexed
    cur = conn.execute("INSERT INTO files(path, size, mtime_ns, kind, title) "
                       "VALUES (?, ?, ?, 'note', ?)",
                       (entry.path, entry.size, entry.mtime_ns, note.title))
    file_id = cur.lastrowid
    conn.execute("INSERT INTO notes_fts(rowid, title, aliases, tags, props, body) "
                 "VALUES (?, ?, ?, ?, ?, ?)",
                 (file_id, segment(note.title), segment(" ; ".join(note.aliases)),
                  segment(tag_words(note.tags)), segment(note.properties), segment(note.body)))
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
