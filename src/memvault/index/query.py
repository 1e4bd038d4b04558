"""Searching the index: the query syntax, BM25 ranking with boosts, the fuzzy fallback.

Query syntax (docs/recall.md): words are all required; `"an exact phrase"`; `word*`
for a prefix; `-word` or `-"a phrase"` to exclude; `a OR b`. Anything else is taken
literally (no FTS5 syntax errors reach the user). When every word is required and few
notes match, words no note contains are corrected from the index's vocabulary
(`typos.py`); then titles, aliases and tags are matched fuzzily (rapidfuzz), and any-word
matching fills up the list.

Ranking: BM25 with column weights title 10, aliases 8, tags 5, properties 2, body 1;
the score shown is 0..1 in bands by how a note was found (`BANDS`: a title or alias
equal to the query first), and results are sorted by it. Read-only.
"""

from __future__ import annotations

import re
import sqlite3

from memvault.index.hits import HL_CLOSE, HL_OPEN, Hit, MemoryHit
from memvault.index.text import segment, unsegment

__all__ = ["HL_CLOSE", "HL_OPEN", "Hit", "MemoryHit", "notes_with_phrases", "search_memory",
           "search_notes"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

WEIGHTS = (10.0, 8.0, 5.0, 2.0, 1.0)
FUZZY_CUTOFF = 75.0
PLAIN_FLOOR = 60.0
FEW_RESULTS = 3
_TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')
_WORDISH = re.compile(r"\w")


def _literal(text: str, prefix: bool = False) -> str | None:
    text = segment(text.strip())
    if not _WORDISH.search(text):
        return None
    return '"' + text.replace('"', '""') + '"' + ("*" if prefix else "")


def parse_query(query: str) -> tuple[list[str], list[str]]:
    """([required clauses], [excluded clauses]) in FTS5 syntax; OR groups stay together."""
    required: list[str] = []
    excluded: list[str] = []
    join_next = False
    for m in _TOKEN.finditer(query):
        negative, phrase, word = m.group(1), m.group(2), m.group(3)
        if word == "OR":
            join_next = bool(required)
            continue
        if word is not None:
            negative = "-" if word.startswith("-") and len(word) > 1 else ""
            word = word[1:] if negative else word
            prefix = word.endswith("*") and len(word) > 1
            clause = _literal(word.rstrip("*") if prefix else word, prefix)
        else:
            clause = _literal(phrase)
        if clause is None:
            continue
        if negative:
            excluded.append(clause)
        elif join_next:
            required[-1] = f"({required[-1]} OR {clause})"
            join_next = False
        else:
            required.append(clause)
    return required, excluded


def fts_expression(required: list[str], excluded: list[str], *, any_word: bool = False) -> str:
    expr = (" OR " if any_word else " AND ").join(required)
    if excluded:
        expr = f"({expr})" + "".join(f" NOT {c}" for c in excluded)
    return expr


if TYPE_CHECKING:
    Visible = Callable[[str], bool]
    """Whether the asking principal may see a note (by vault path); see `Layout.can_see`."""
_VISIBLE_FN = "memvault_visible"


def _filters(path_glob: str | None, tag: str | None, conn: sqlite3.Connection | None = None,
             visible: Visible | None = None) -> tuple[str, list[Any]]:
    sql = ""
    args: list[Any] = []
    if visible is not None and conn is not None:
        # Another principal's memory home is never a result, whatever the query.
        conn.create_function(_VISIBLE_FN, 1, lambda p: bool(visible(p)), deterministic=True)
        sql += f" AND {_VISIBLE_FN}(f.path)"
    if path_glob:
        sql += " AND f.path GLOB ?"
        args.append(path_glob)
    if tag:
        clean = tag.strip().lstrip("#").strip("/").lower()
        sql += (" AND EXISTS (SELECT 1 FROM tags t WHERE t.file_id = f.id AND "
                "(t.tag = ? OR substr(t.tag, 1, ?) = ?))")
        args += [clean, len(clean) + 1, clean + "/"]
    return sql, args


def notes_with_phrases(conn: sqlite3.Connection, texts: list[str], *,
                       visible: Visible | None = None) -> set[str]:
    """Paths of the notes (memory files aside) holding any of `texts` as a phrase: its
    words in that order, matched as search matches words (case, accents and word
    endings aside), in the title, aliases, tags, properties or body."""
    clauses = [c for c in (_literal(t) for t in texts) if c is not None]
    filt, fargs = _filters(None, None, conn, visible)
    found: set[str] = set()
    for start in range(0, len(clauses), 100):
        expression = " OR ".join(clauses[start:start + 100])
        found.update(row[0] for row in conn.execute(
            f"SELECT f.path FROM notes_fts JOIN files f ON f.id = notes_fts.rowid "
            f"WHERE notes_fts MATCH ? AND f.kind = 'note'{filt}", (expression, *fargs)))
    return found


def search_notes(conn: sqlite3.Connection, query: str, *, limit: int = 10,
                 path_glob: str | None = None, tag: str | None = None,
                 visible: Visible | None = None) -> list[Hit]:
    """Notes matching `query`, best first by the score shown (see the module doc); with
    `visible`, only the notes it allows."""
    required, excluded = parse_query(query)
    filt, fargs = _filters(path_glob, tag, conn, visible)
    if not required:
        if excluded or not (path_glob or tag):
            return []
        rows = conn.execute(f"SELECT f.id, f.path, f.title, 0, '' FROM files f "
                            f"WHERE f.kind = 'note'{filt} ORDER BY f.path LIMIT ?",
                            (*fargs, limit)).fetchall()
        return _hits(conn, rows, "filter")
    weights = ", ".join(str(w) for w in WEIGHTS)
    sql = (f"SELECT f.id, f.path, f.title, bm25(notes_fts, {weights}) AS rank "
           f"FROM notes_fts JOIN files f ON f.id = notes_fts.rowid "
           f"WHERE notes_fts MATCH ?{filt} ORDER BY rank LIMIT ?")
    fetch = max(limit * 2, 20)
    expression = fts_expression(required, excluded)
    rows = _ranked(conn, sql, expression, (*fargs, fetch))
    exact = _exact_title_ids(conn, query, {r[0] for r in rows})
    if exact:
        marks = ",".join("?" * len(exact))
        rows += _ranked(conn, sql.replace("ORDER BY", f"AND f.id IN ({marks}) ORDER BY"),
                        expression, (*fargs, *exact, fetch))
    hits = _hits(conn, rows, "full text")
    by_exactness: list[list[Hit]] = [[], [], []]
    for hit in hits:
        by_exactness[_exactness(query, hit)].append(hit)
    _banded(by_exactness[0], *BANDS["exact as typed"])
    _banded(by_exactness[1], *BANDS["exact"])
    _banded(by_exactness[2], *BANDS["full text"])
    found = Found(hits)
    if found.enough(limit):
        return found.best(limit)
    corrected = correct_query(conn, query)
    if corrected is not None:
        req, exc = parse_query(corrected)
        rows = _ranked(conn, sql, fts_expression(req, exc), (*fargs, fetch))
        found.add(_banded(_hits(conn, rows, "typo corrected"), *BANDS["typo corrected"]))
        if found.enough(limit):
            return found.best(limit)
    if not excluded:
        found.add(fuzzy_notes(conn, query, limit=limit, path_glob=path_glob, tag=tag,
                              visible=visible))
    if len(required) > 1:
        rows = _ranked(conn, sql, fts_expression(required, excluded, any_word=True),
                       (*fargs, fetch))
        found.add(_banded(_hits(conn, rows, "any word"), *BANDS["any word"]))
    return found.best(limit)


def _ranked(conn: sqlite3.Connection, sql: str, expression: str,
            args: tuple[Any, ...]) -> list[Any]:
    """Rows (id, path, title, rank, snippet) of the ranking query `sql` (which selects
    the first four) for the FTS `expression`, with the snippets made afterwards for the
    rows it returned only: asked in the same query, FTS5 makes a snippet for every match
    before the best are picked (at 10,000 notes most of a search's time)."""
    rows = conn.execute(sql, (expression, *args)).fetchall()
    if not rows:
        return rows
    marks = ",".join("?" * len(rows))
    snippets = dict(conn.execute(
        f"SELECT rowid, snippet(notes_fts, 4, '{HL_OPEN}', '{HL_CLOSE}', '\u2026', 14) "
        f"FROM notes_fts WHERE notes_fts MATCH ? AND rowid IN ({marks})",
        (expression, *(row[0] for row in rows))).fetchall())
    return [(*row, snippets.get(row[0], "")) for row in rows]


BANDS = {"exact as typed": (0.975, 1.0), "exact": (0.95, 0.97), "full text": (0.5, 0.9),
         "typo corrected": (0.3, 0.5), "fuzzy": (0.2, 0.3), "any word": (0.0, 0.2)}
"""The score shown (0..1) by how a note was found (a title or alias equal to the query as
typed, or ignoring case, then all words, corrected words, fuzzy names, any word); within
a band, by BM25 relative to the best hit of that kind (for fuzzy names, by similarity).
Results are sorted by it."""


class Found:
    """Hits collected from the successive ways of matching, one per note."""

    def __init__(self, hits: list[Hit]) -> None:
        self.hits: list[Hit] = []
        self.paths: set[str] = set()
        self.add(hits)

    def add(self, hits: list[Hit]) -> None:
        for hit in hits:
            if hit.path not in self.paths:
                self.paths.add(hit.path)
                self.hits.append(hit)

    def enough(self, limit: int) -> bool:
        return len(self.hits) >= min(limit, FEW_RESULTS)

    def best(self, limit: int) -> list[Hit]:
        return sorted(self.hits, key=lambda h: (-h.score, h.path))[:limit]


def _banded(hits: list[Hit], low: float, high: float) -> list[Hit]:
    best = max((h.score for h in hits), default=0.0)
    for hit in hits:
        hit.score = low + (high - low) * (hit.score / best if best > 0 else 1.0)
    return hits


def correct_query(conn: sqlite3.Connection, query: str) -> str | None:
    """The query with each plain word no note contains widened to its likely corrections
    (`word OR correction …`), or None when nothing could be corrected."""
    from memvault.index.typos import corrections, is_known

    if re.search(r"(?:^|\s)OR(?:\s|$)", query):
        return None  # the user already chose alternatives
    out: list[str] = []
    changed = False
    for m in _TOKEN.finditer(query):
        word = m.group(3)
        clause = _literal(word) if word and not word.startswith("-") and \
            not word.endswith("*") else None
        fixes = corrections(conn, word) if clause and not is_known(conn, clause) else []
        if fixes:
            out.append(" OR ".join([word, *fixes]))
            changed = True
        else:
            out.append(m.group(0))
    return " ".join(out) if changed else None


def _exactness(query: str, hit: Hit) -> int:
    """0: the title or an alias is the query as typed; 1: the same ignoring case; 2: no."""
    wanted = query.strip().strip('"')
    names = [hit.title, *hit.aliases]
    if wanted in names:
        return 0
    folded = wanted.casefold()
    return 1 if any(folded == n.casefold() for n in names) else 2


def _exact_title_ids(conn: sqlite3.Connection, query: str, have: set[int]) -> list[int]:
    """Notes whose title or alias is exactly the query (case-insensitive), not yet fetched."""
    wanted = query.strip().strip('"')
    if not wanted:
        return []
    rows = conn.execute("SELECT id FROM files WHERE kind = 'note' AND title = ? COLLATE NOCASE "
                        "UNION SELECT file_id FROM aliases WHERE alias = ? COLLATE NOCASE "
                        "LIMIT 50", (wanted, wanted)).fetchall()
    return [r[0] for r in rows if r[0] not in have]


def _hits(conn: sqlite3.Connection, rows: list[Any], match: str) -> list[Hit]:
    if not rows:
        return []
    ids = [r[0] for r in rows]
    marks = ",".join("?" * len(ids))
    tags: dict[int, list[str]] = {}
    for fid, tag in conn.execute(f"SELECT file_id, tag FROM tags WHERE file_id IN ({marks})",
                                 ids):
        tags.setdefault(fid, []).append(tag)
    aliases: dict[int, list[str]] = {}
    for fid, alias in conn.execute(
            f"SELECT file_id, alias FROM aliases WHERE file_id IN ({marks})", ids):
        aliases.setdefault(fid, []).append(alias)
    return [Hit(path, title, _clean_snippet(snip), -float(rank), match, tags.get(fid, []),
                aliases.get(fid, [])) for fid, path, title, rank, snip in rows]


def _clean_snippet(snippet: str) -> str:
    text = unsegment(snippet or "")
    return " ".join(text.split())


_NAMES: dict[tuple[Any, ...], Any] = {}


def _name_choices(conn: sqlite3.Connection, path_glob: str | None, tag: str | None,
                  visible: Visible | None = None
                  ) -> tuple[list[tuple[str, int, str]], list[str], set[int]]:
    """Every title, alias and tag name (with filters; titles and aliases only of notes
    `visible` allows) and the ids of the files it allows, kept until the index changes
    (its connection's own writes or another process's commits). The principal is part
    of the key: one never gets another's list."""
    version = conn.execute("PRAGMA data_version").fetchone()[0]
    owner = getattr(visible, "__self__", visible)  # the Layout behind `can_see`
    key = (id(conn), conn.total_changes, version, path_glob, tag, owner)
    kept = _NAMES.get(key)
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    # Visibility is decided once per note in Python (not once per title, alias and tag
    # row through an SQL function): after an edit the list is rebuilt, and 70,000
    # callbacks were most of a search's time.
    filt, fargs = _filters(path_glob, tag)
    choices: list[tuple[str, int, str]] = []
    shown: set[int] = set()
    for fid, path, title, kind in conn.execute(f"SELECT f.id, f.path, f.title, f.kind "
                                               f"FROM files f WHERE 1{filt}", fargs):
        if visible is None or visible(path):
            shown.add(fid)
            if kind == "note":
                choices.append((title, fid, "fuzzy title"))
    for fid, alias in conn.execute(f"SELECT f.id, a.alias FROM aliases a JOIN files f ON "
                                   f"f.id = a.file_id WHERE 1{filt}", fargs):
        if fid in shown:
            choices.append((alias, fid, "fuzzy alias"))
    # Tags are offered by name (a hundred names for 40,000 tag rows at 10,000 notes);
    # the notes holding a matched tag are read when it matches (`_tagged`).
    for (name,) in conn.execute(f"SELECT t.tag FROM tags t JOIN files f ON f.id = t.file_id "
                                f"WHERE 1{filt} GROUP BY t.tag "
                                f"ORDER BY min(f.id), min(t.rowid)", fargs):
        choices.append((name, 0, "fuzzy tag"))  # in the order notes first carry them
    kept = (choices, [c[0] for c in choices], shown)
    if len(_NAMES) > 8:
        _NAMES.clear()
    _NAMES[key] = kept
    return kept


def _tagged(conn: sqlite3.Connection, name: str, shown: set[int], limit: int,
            path_glob: str | None, tag: str | None) -> list[int]:
    """The first `limit` files (of `shown`, within the filters) that carry tag `name`."""
    filt, fargs = _filters(path_glob, tag)
    out: list[int] = []
    for (fid,) in conn.execute(f"SELECT f.id FROM tags t JOIN files f ON f.id = t.file_id "
                               f"WHERE t.tag = ?{filt} ORDER BY f.id", (name, *fargs)):
        if fid in shown:
            out.append(fid)
            if len(out) >= limit:
                break
    return out


def fuzzy_notes(conn: sqlite3.Connection, query: str, *, limit: int,
                path_glob: str | None = None, tag: str | None = None,
                visible: Visible | None = None) -> list[Hit]:
    """Notes whose title, alias or tag is close to `query` (typos forgiven)."""
    from rapidfuzz import fuzz, process, utils

    q = query.strip().strip('"')
    if len(q) < 3:
        return []
    choices, names, shown = _name_choices(conn, path_glob, tag, visible)
    found = process.extract(q, names, scorer=fuzz.WRatio,
                            processor=utils.default_process, score_cutoff=FUZZY_CUTOFF,
                            limit=limit * 3)
    best: dict[int, tuple[float, float, int, str]] = {}
    preference = {"fuzzy title": 0, "fuzzy alias": 1, "fuzzy tag": 2}
    for _text, score, idx in found:
        text, fid, how = choices[idx]
        plain = fuzz.ratio(utils.default_process(q), utils.default_process(text))
        if plain < PLAIN_FLOOR:
            continue  # a partial match of a few letters is noise, not a typo
        key = (plain, float(score), -preference[how], how)
        fids = _tagged(conn, text, shown, limit, path_glob, tag) if how == "fuzzy tag" \
            else [fid]
        for one in fids:
            if one not in best or best[one][:3] < key[:3]:
                best[one] = key
    ordered = sorted(best.items(), key=lambda kv: (-kv[1][0], -kv[1][1], -kv[1][2],
                                                  kv[0]))[:limit]
    hits: list[Hit] = []
    low, high = BANDS["fuzzy"]
    for fid, (plain, wratio, pref, how) in ordered:
        row = conn.execute("SELECT f.id, f.path, f.title, 0, substr(n.body, 1, 160) FROM files f "
                           "JOIN notes_fts n ON n.rowid = f.id WHERE f.id = ?", (fid,)).fetchone()
        if row:
            hit = _hits(conn, [row], how)[0]
            # similarity first, then the closer overall match, then title > alias > tag
            closeness = (plain * 100 + wratio) / 10_100 * (1 + 0.001 * pref)
            hit.score = low + (high - low) * min(closeness, 1.0)
            hits.append(hit)
    return hits


def search_memory(conn: sqlite3.Connection, query: str, scope: str, *,
                  limit: int = 10) -> list[MemoryHit]:
    """Facts, lessons and proposals of one principal matching `query`, with their ids."""
    required, excluded = parse_query(query)
    if not required:
        return []
    sql = (f"SELECT r.rid, r.kind, r.category, r.status, m.text, f.path, r.line, "
           f"snippet(memory_fts, 0, '{HL_OPEN}', '{HL_CLOSE}', '\u2026', 20), bm25(memory_fts) "
           f"FROM memory_fts m JOIN memory_records r ON r.id = m.rowid "
           f"JOIN files f ON f.id = r.file_id WHERE memory_fts MATCH ? AND r.scope = ? "
           f"ORDER BY bm25(memory_fts), r.rid LIMIT ?")
    rows = conn.execute(sql, (fts_expression(required, excluded), scope, limit)).fetchall()
    if not rows and len(required) > 1:
        rows = conn.execute(sql, (fts_expression(required, excluded, any_word=True), scope,
                                  limit)).fetchall()
    return [MemoryHit(rid, kind, cat, status, unsegment(text), path, line,
                      _clean_snippet(snip), -float(rank))
            for rid, kind, cat, status, text, path, line, snip, rank in rows]
