"""Embeddings of one principal's memory records, cached in the index.

A record's vector is stored once per model and text digest (`vectors` table, int8
components of the unit vector × 127), so an unchanged text is never embedded again, the
same text under another id shares its vector, and a text no record has any more loses
its vector with the next refresh (`IndexStore._purge_freed_text`), as forgotten text
must. A long-running process keeps the assembled matrix per memory-file content, so a
call costs one matrix-vector product.

Similarities are measured *centred*: the mean of this memory's record vectors is taken
off every record and off the request before the cosine. Averaged token vectors share a
large common direction (the function words and the first-person style every fact has),
which bunches all similarities together; without it, what distinguishes a text shows
(tuning half of `tests/data/recall_eval`: semantic recall@5 0.50 -> 0.53, the right fact
in the first 30 for 82 % -> 86 % of questions). A memory of fewer than `CENTRE_MIN`
records is too small to say what is common, and is not centred.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from memvault.index.text import unsegment

if TYPE_CHECKING:
    from memvault.embeddings.settings import Embedder
    from memvault.index.store import IndexStore

SCALE = 127.0
CENTRE_MIN = 50
EMBED_CHUNK = 128
"""Texts embedded and committed together when a memory's vectors are first computed
(about a second's work for the built-in model on one core)."""
EMBED_BUDGET = 10.0
"""Seconds one ranking spends embedding records that have no vector yet. A large memory's
first embedding (about 8 ms a record for the built-in model on one core: 80 s at 10,000
facts; minutes for e5) is spread over the calls that need it: until it is done, recall is
by words, and a notice says how far it is. `memvault index embed` does it all at once."""
PROGRESS_EVERY = 3.0
"""Seconds between the progress lines of a long embedding (`memvault index embed`)."""
_LOCK = threading.Lock()
_MATRICES: dict[tuple[str, str, str, tuple[str, ...]], tuple[Any, list[str], Any, Any]] = {}


def record_matrix(store: IndexStore, embedder: Embedder, scope: str,
                  kinds: tuple[str, ...]) -> tuple[list[str], Any, Any]:
    """(record ids, centred unit vectors as rows, the centre taken off) for this
    principal's records of `kinds` (the centre is None for a memory too small to
    centre). Records without a vector are embedded for at most `EMBED_BUDGET` seconds;
    if some are still without one, no record is returned (recall stays by words until
    every record has its vector: a ranking that changed with each call would make the
    manifest's pages overlap)."""
    import numpy as np

    conn = store.connection()
    marks = ",".join("?" * len(kinds))
    signature = tuple(conn.execute(
        f"SELECT f.path || ':' || coalesce(f.hash, '') FROM files f WHERE f.kind = 'memory' "
        f"AND f.id IN (SELECT DISTINCT file_id FROM memory_records WHERE scope = ? "
        f"AND kind IN ({marks})) ORDER BY f.path", (scope, *kinds)).fetchall())
    key = (str(store.path), embedder.model_id, scope, kinds)
    with _LOCK:
        cached = _MATRICES.get(key)
    if cached is not None and cached[0] == signature:
        return cached[1], cached[2], cached[3]
    rows = conn.execute(
        f"SELECT r.rid, r.text_hash, v.vector FROM memory_records r LEFT JOIN vectors v "
        f"ON v.model = ? AND v.text_hash = r.text_hash WHERE r.scope = ? "
        f"AND r.kind IN ({marks}) ORDER BY r.id", (embedder.model_id, scope, *kinds)).fetchall()
    missing = sorted({digest for _rid, digest, vec in rows if vec is None and digest})
    fresh, complete = (_embed_missing(store, embedder, missing, EMBED_BUDGET) if missing
                       else ({}, True))
    if not complete:
        total = len({digest for _rid, digest, _vec in rows if digest})
        _note_partial(store, embedder, total - len(missing) + len(fresh), total)
        return [], np.zeros((0, 1), dtype=np.float32), None
    ids: list[str] = []
    vectors: list[Any] = []
    for rid, digest, blob in rows:
        vec = fresh.get(digest) if blob is None else np.frombuffer(blob, dtype=np.int8)
        if vec is None:
            continue
        ids.append(rid)
        vectors.append(vec)
    matrix = (np.vstack(vectors).astype(np.float32) / SCALE if vectors
              else np.zeros((0, 1), dtype=np.float32))
    centre = None
    if len(ids) >= CENTRE_MIN:
        centre = matrix.mean(axis=0)
        matrix = _unit_rows(matrix - centre)
    with _LOCK:
        _MATRICES[key] = (signature, ids, matrix, centre)
    return ids, matrix, centre


def _note_partial(store: IndexStore, embedder: Embedder, done: int, total: int) -> None:
    """Say (on stderr, and in the search notices) that recall is by words until the
    memory's first embedding is done, and how far it is."""
    notice = (f"recall is by words until every memory text is embedded for recall by "
              f"meaning ({embedder.model_id}): {done:,} of {total:,} so far, up to "
              f"{EMBED_BUDGET:.0f} seconds' worth per call (once, then cached); "
              f"`memvault index embed` does the rest now")
    if notice not in store.notices:
        store.notices.append(notice)
    print(f"note: {notice}", file=sys.stderr, flush=True)


def embed_all(store: IndexStore, embedder: Embedder, scope: str,
              kinds: tuple[str, ...]) -> tuple[int, int]:
    """Embed every record of `kinds` that has no vector yet, however long it takes
    (progress on stderr). Returns (texts embedded now, texts in all)."""
    conn = store.connection()
    marks = ",".join("?" * len(kinds))
    rows = conn.execute(
        f"SELECT DISTINCT r.text_hash, v.vector IS NOT NULL FROM memory_records r "
        f"LEFT JOIN vectors v ON v.model = ? AND v.text_hash = r.text_hash "
        f"WHERE r.scope = ? AND r.kind IN ({marks}) AND r.text_hash IS NOT NULL",
        (embedder.model_id, scope, *kinds)).fetchall()
    missing = sorted(digest for digest, have in rows if not have)
    done, _complete = _embed_missing(store, embedder, missing, None) if missing else ({}, True)
    return len(done), len(rows)


def _unit_rows(matrix: Any) -> Any:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def _embed_missing(store: IndexStore, embedder: Embedder, digests: list[str],
                   budget: float | None) -> tuple[dict[str, Any], bool]:
    """Embed the texts of these digests and store their vectors, `EMBED_CHUNK` texts at a
    time, each chunk committed: an embedding that is interrupted (a stopped command, an
    endpoint that goes away) or stopped by its `budget` (seconds; None: no limit) keeps
    what it did, and the next call goes on from there. When it takes longer than
    `PROGRESS_EVERY` seconds, a line on stderr says how far it is, every
    `PROGRESS_EVERY` seconds. Returns (digest -> vector, whether every text was done)."""
    conn = store.connection()
    texts: dict[str, str] = {}
    for start in range(0, len(digests), 500):
        chunk = digests[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for digest, text in conn.execute(
                f"SELECT r.text_hash, m.text FROM memory_records r JOIN memory_fts m "
                f"ON m.rowid = r.id WHERE r.text_hash IN ({marks})", chunk):
            texts.setdefault(digest, unsegment(text))
    order = sorted(texts)
    out: dict[str, Any] = {}
    started = last_note = time.monotonic()
    for start in range(0, len(order), EMBED_CHUNK):
        chunk = order[start:start + EMBED_CHUNK]
        out.update(_embed_and_store(store, embedder, chunk, [texts[d] for d in chunk]))
        now = time.monotonic()
        if budget is not None and now - started >= budget and start + EMBED_CHUNK < len(order):
            return out, False
        if now - last_note >= PROGRESS_EVERY and len(out) < len(order):
            last_note = now
            print(f"note: embedding memory records for recall by meaning "
                  f"({embedder.model_id}): {len(out):,} of {len(order):,} "
                  f"({100 * len(out) // len(order)}%, {now - started:.0f} s); once, then "
                  "cached in the index", file=sys.stderr, flush=True)
    return out, True


def _embed_and_store(store: IndexStore, embedder: Embedder, digests: list[str],
                     texts: list[str]) -> dict[str, Any]:
    import numpy as np

    matrix = embedder.embed(texts)
    quantised = np.clip(np.rint(np.asarray(matrix, dtype=np.float32) * SCALE), -127, 127) \
        .astype(np.int8)
    out = {digest: quantised[n] for n, digest in enumerate(digests)}
    if store.read_only:
        return out  # a read-only vault's index: the vectors serve this call only
    conn = store.connection()
    with store.writer():
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR REPLACE INTO vectors(model, text_hash, vector) "
                             "VALUES (?, ?, ?)",
                             [(embedder.model_id, d, v.tobytes()) for d, v in out.items()])
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return out


class Cosines:
    """Cosine similarities of one request to every record: ids and a numpy array, and
    the records' (centred) unit vectors as rows in the same order when known, so callers
    can tell how alike two records are (`index.recall.diversify`)."""

    def __init__(self, ids: list[str], sims: Any, rows: Any = None) -> None:
        self.ids = ids
        self.sims = sims
        self.rows = rows

    def __len__(self) -> int:
        return len(self.ids)

    def as_dict(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for rid, sim in zip(self.ids, self.sims.tolist(), strict=True):
            if rid not in out or sim > out[rid]:
                out[rid] = float(sim)
        return out


def cosine_scores(store: IndexStore, embedder: Embedder, request: str, scope: str,
                  kinds: tuple[str, ...] = ("fact", "lesson")) -> Cosines:
    """The (centred) cosine similarity between the request and each record's text."""
    import numpy as np

    ids, matrix, centre = record_matrix(store, embedder, scope, kinds)
    if not ids:
        return Cosines([], np.zeros(0, dtype=np.float32))
    embed_query = getattr(embedder, "embed_query", None)
    query = np.asarray(embed_query(request) if embed_query is not None
                       else embedder.embed([request]), dtype=np.float32)
    if centre is not None:
        query = _unit_rows(query - centre)
    return Cosines(ids, matrix @ query[0], matrix)
