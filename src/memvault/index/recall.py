"""Recall over one principal's memory records: lexical (BM25) scores for a request.

A request is a sentence ("which hot drink do I like?"), not a search query: every word
counts, none is required. Words are matched stemmed (the index's Porter tokenizer),
common English function words are dropped, and the BM25 scores (text column weighted
over category) are scaled so the best record scores 1. Read-only.
"""

from __future__ import annotations

import re
import sqlite3

from memvault.index.text import segment

_WORD = re.compile(r"\w+")
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for
from further had has have having he her here hers herself him himself his how i if in
into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their
theirs them themselves then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your
yours yourself yourselves please tell give show let know get like want need make use
""".split())
LEXICAL_LIMIT = 300


def request_terms(request: str) -> list[str]:
    """The words of a request worth matching, lower-cased, in order, without repeats."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(request.lower()):
        if len(word) > 1 and word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


def _expression(terms: list[str]) -> str:
    return " OR ".join('"' + segment(t).replace('"', '""') + '"' for t in terms)


def lexical_scores(conn: sqlite3.Connection, request: str, scope: str,
                   kinds: tuple[str, ...] = ("fact", "lesson"),
                   limit: int = LEXICAL_LIMIT) -> dict[str, float]:
    """Record id -> BM25 score scaled to 0..1 (the best match is 1), for records of
    `scope` and `kinds` sharing at least one word with the request."""
    terms = request_terms(request)
    if not terms:
        return {}
    marks = ",".join("?" * len(kinds))
    rows = conn.execute(
        f"SELECT r.rid, bm25(memory_fts, 1.0, 0.3, 0.0) AS rank FROM memory_fts m "
        f"JOIN memory_records r ON r.id = m.rowid WHERE memory_fts MATCH ? AND r.scope = ? "
        f"AND r.kind IN ({marks}) ORDER BY rank, r.rid LIMIT ?",
        (_expression(terms), scope, *kinds, limit)).fetchall()
    if not rows:
        return {}
    best = -float(rows[0][1]) or 1.0
    out: dict[str, float] = {}
    for rid, rank in rows:
        out.setdefault(rid, max(0.0, -float(rank)) / best)
    return out
