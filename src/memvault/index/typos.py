"""Forgiving typos in the words of a note's text: corrections from the index's vocabulary.

A query word that no note contains is compared (rapidfuzz, `ratio`) with the words the
full-text index knows (its `fts5vocab` table, stemmed and folded as indexed) that start
with the same letter, and the closest ones — at least `MIN_SIMILARITY` alike, the more
notes a word is in the better — are searched instead. Words shorter than `MIN_LENGTH`
letters are never corrected (too many near neighbours), nor is the first letter of a word
(the vocabulary is read by first letter, which keeps it to a few thousand words). Read-only.
"""

from __future__ import annotations

import sqlite3
import unicodedata

MIN_LENGTH = 5
MIN_SIMILARITY = 80.0
MAX_CORRECTIONS = 3


def fold(word: str) -> str:
    """Lower-case without diacritics, as the index's tokenizer stores words."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def is_known(conn: sqlite3.Connection, clause: str) -> bool:
    """Whether any note contains this (FTS5-quoted) word."""
    return conn.execute("SELECT 1 FROM notes_fts WHERE notes_fts MATCH ? LIMIT 1",
                        (clause,)).fetchone() is not None


def corrections(conn: sqlite3.Connection, word: str) -> list[str]:
    """Indexed words that `word` is probably a misspelling of, best first."""
    from rapidfuzz import fuzz, process

    wanted = fold(word)
    if len(wanted) < MIN_LENGTH or not wanted.isalpha():
        return []
    first = wanted[0]
    rows = conn.execute("SELECT term, doc FROM notes_vocab WHERE term >= ? AND term < ?",
                        (first, chr(ord(first) + 1))).fetchall()
    if not rows:
        return []
    terms = [term for term, _ in rows]
    found = process.extract(wanted, terms, scorer=fuzz.ratio, score_cutoff=MIN_SIMILARITY,
                            limit=MAX_CORRECTIONS * 4)
    ranked = sorted(found, key=lambda f: (-round(f[1]), -rows[f[2]][1], f[0]))
    return [term for term, _score, _i in ranked if term != wanted][:MAX_CORRECTIONS]
