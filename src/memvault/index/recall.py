"""Recall over one principal's memory records: lexical, semantic and hybrid scores.

- lexical: a request is a sentence ("which hot drink do I like?"), not a search query:
  every word counts, none is required. Words are matched stemmed (the index's Porter
  tokenizer), common English function words are dropped, and a record's BM25 (text
  column weighted over category) is scaled by what holding every word of the request
  would score, so it says how much of the request the record covers.
- semantic: the cosine similarity of the request's and the record's embeddings
  (`index/vectors.py`), scaled from the `SEMANTIC_POOL`-th best (0) to the best (1).
- hybrid: `fuse` adds them, the semantic part weighted `SEMANTIC_WEIGHT` (both values
  chosen on the tuning half of `tests/data/recall_eval`, see `scripts/eval_recall.py`).

Read-only (vectors are stored by `index/vectors.py`).
"""

from __future__ import annotations

import math
import re
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memvault.index.text import segment, unsegment

if TYPE_CHECKING:
    from memvault.index.vectors import Cosines

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
    """Record id -> how much of the request's words a record matches (0..1), for records
    of `scope` and `kinds` sharing at least one word with the request.

    The score is the record's BM25 over the BM25 a record would get for holding every
    word of the request once (the sum of the words' IDFs): a record matching the
    request's rare, telling words scores near 1, one matching only a common word of it
    scores low. (Scaling by the best match instead would give a full score to a record
    that shares one everyday word with a request nothing else matches.)"""
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
    ideal = _ideal_bm25(conn, terms) or -float(rows[0][1]) or 1.0
    out: dict[str, float] = {}
    for rid, rank in rows:
        out.setdefault(rid, min(1.0, max(0.0, -float(rank)) / ideal))
    return out


def _ideal_bm25(conn: sqlite3.Connection, terms: list[str]) -> float:
    """The sum of the terms' IDFs as FTS5's bm25() computes them (over every record of
    the memory table): what a record of average length holding each word once scores."""
    total = conn.execute("SELECT count(*) FROM memory_fts").fetchone()[0]
    ideal = 0.0
    for term in terms:
        (found,) = conn.execute("SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?",
                                (_expression([term]),)).fetchone()
        ideal += max(1e-6, math.log((total - found + 0.5) / (found + 0.5)))
    return ideal


SEMANTIC_WEIGHT = 0.8
SEMANTIC_POOL = 0.35
"""Only the records in this share of the most similar (at least `MIN_POOL` records) count
as close in meaning: similarities are scaled from the pool's last one (0) to the best
one (1). A static model's cosines are small and bunched (0.1–0.3 for a right answer),
so a fixed floor would drop good matches; a rank floor keeps one scale for every
request and memory size."""
MIN_POOL = 100
MIN_SPREAD = 0.15
"""When the best and the pool's last similarity differ by less than this, the records are
all about equally (un)related to the request and meaning ranks nothing."""


@dataclass(frozen=True, slots=True)
class Scored:
    score: float
    lexical: float
    semantic: float


CANDIDATES = 300
"""Records scored as hybrids: the most similar ones and every lexical match."""


def fuse(lexical: dict[str, float], cosine: Any, *, weight: float | None = None,
         pool: float | None = None) -> dict[str, Scored]:
    """Hybrid scores (0..1) from lexical scores (0..1) and cosine similarities (a
    `vectors.Cosines`, or a dict), for the `CANDIDATES` most similar records and every
    lexical match (`weight` and `pool` default to `SEMANTIC_WEIGHT` and `SEMANTIC_POOL`).

    When meaning ranks nothing (no similarities: semantic recall is off or its model is
    missing; or all of them within `MIN_SPREAD`), the hybrid is the lexical score alone:
    a record covering the request's words is as relevant as it would be with a model."""
    import numpy as np

    weight = SEMANTIC_WEIGHT if weight is None else weight
    pool = SEMANTIC_POOL if pool is None else pool
    if isinstance(cosine, dict):
        ids, sims = list(cosine), np.asarray(list(cosine.values()), dtype=np.float32)
    else:
        ids, sims = cosine.ids, cosine.sims
    semantic: dict[str, float] = {}
    count = len(ids)
    if count:
        size = min(max(MIN_POOL, round(pool * count)), count)
        floor = float(np.partition(sims, count - size)[count - size])
        best = float(sims.max())
        if best - floor >= MIN_SPREAD:
            take = min(CANDIDATES, count)
            top = np.argpartition(-sims, take - 1)[:take]
            wanted = set(lexical)
            index = [i for i in range(count) if ids[i] in wanted] if wanted else []
            for i in set(top.tolist()) | set(index):
                value = (float(sims[i]) - floor) / (best - floor)
                if value > semantic.get(ids[i], 0.0):
                    semantic[ids[i]] = value
    if not semantic:
        weight = 0.0
    out: dict[str, Scored] = {}
    for rid in set(lexical) | set(semantic):
        lex, sem = lexical.get(rid, 0.0), semantic.get(rid, 0.0)
        out[rid] = Scored((1.0 - weight) * lex + weight * sem, lex, sem)
    return out


REDUNDANCY_PENALTY = 1.0
REDUNDANCY_OVERLAP = 0.4
"""`diversify`: a record whose similarity to one ranked above it exceeds the overlap
loses `REDUNDANCY_PENALTY` times the excess from its score (chosen on the tuning half
of `tests/data/recall_eval`)."""


def diversify(scores: dict[str, float], cosine: Any, *,
              penalty: float = REDUNDANCY_PENALTY,
              overlap: float = REDUNDANCY_OVERLAP) -> dict[str, float]:
    """`scores` lowered for records that say nearly what a better-scoring one says.

    A memory collects near-repeats ("Rita recommended a restaurant in Cork", "André
    recommended a restaurant in Cork", ...); ranked by relevance alone they fill the
    context block with one piece of information and push out the others. Records are
    taken greedily, best adjusted score first; each one's score is cut by
    `penalty * (similarity - overlap)` for its closest record already taken (similarity
    of the records' own vectors in `cosine.rows`). Without vectors, `scores` is returned
    as it is."""
    rows = getattr(cosine, "rows", None)
    if rows is None or not scores:
        return dict(scores)
    import numpy as np

    position = {rid: n for n, rid in enumerate(cosine.ids)}
    ids = [rid for rid in scores if rid in position]
    if len(ids) < 2:
        return dict(scores)
    vectors = rows[[position[rid] for rid in ids]]
    base = np.asarray([scores[rid] for rid in ids], dtype=np.float32)
    closest = np.full(len(ids), -1.0, dtype=np.float32)
    left = np.ones(len(ids), dtype=bool)
    out = dict(scores)
    for _ in range(len(ids)):
        adjusted = base - penalty * np.maximum(0.0, closest - overlap)
        adjusted[~left] = -np.inf
        pick = int(np.argmax(adjusted))
        out[ids[pick]] = max(0.0, float(adjusted[pick]))
        left[pick] = False
        np.maximum(closest, vectors @ vectors[pick], out=closest)
    return out


MEANING_MIN = 0.6
"""A record found by meaning alone is listed when its semantic score (0..1 in the pool)
is at least this."""


def hybrid_memory_hits(conn: sqlite3.Connection, hits: list[Any],
                       cosine: Cosines | dict[str, float],
                       scope: str, limit: int) -> list[Any]:
    """`hits` (records matching the query's words or id) re-scored with meaning, then the
    records close in meaning that share no word, up to `limit`. Scores shown are 0.5–1 for
    word matches, 0–0.5 for meaning alone, and the list is sorted by them."""
    from memvault.index.query import MemoryHit

    best = max((h.score for h in hits), default=0.0)
    lexical = {h.id: (h.score / best if best > 0 else 1.0) for h in hits}
    fused = fuse(lexical, cosine)
    for hit in hits:
        hit.score = 0.5 + 0.5 * fused[hit.id].score
    seen = {h.id for h in hits}
    extra = sorted(((s.semantic, rid) for rid, s in fused.items()
                    if rid not in seen and s.semantic >= MEANING_MIN),
                   key=lambda pair: (-pair[0], pair[1]))[:max(0, limit - len(hits))]
    if extra:
        marks = ",".join("?" * len(extra))
        rows = {row[0]: row for row in conn.execute(
            f"SELECT r.rid, r.kind, r.category, r.status, m.text, f.path, r.line "
            f"FROM memory_records r JOIN memory_fts m ON m.rowid = r.id "
            f"JOIN files f ON f.id = r.file_id WHERE r.scope = ? AND r.rid IN ({marks})",
            (scope, *[rid for _sem, rid in extra]))}
        for sem, rid in extra:
            if rid in rows:
                _, kind, cat, status, text, path, line = rows[rid]
                clean = unsegment(text)
                hits.append(MemoryHit(rid, kind, cat, status, clean, path, line, clean,
                                      0.5 * sem, "meaning"))
    return sorted(hits, key=lambda h: (-h.score, h.id))[:limit]


def memory_kinds(conn: sqlite3.Connection, scope: str) -> tuple[str, ...]:
    return tuple(k for (k,) in conn.execute(
        "SELECT DISTINCT kind FROM memory_records WHERE scope = ? ORDER BY kind", (scope,)))
