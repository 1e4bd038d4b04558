"""Ranking remembered records for the context block, in time that follows the budget.

`prepare_records` classifies facts and lessons once per content: what can never be
shown (forgotten, superseded, pending, empty) and why, general facts and structured
preferences in *standing* order (explicit before inferred, proven before trial, newest
first, then id), active lessons newest-accepted first. A caller that keeps the result
(the context service does, per file content) pays this once.

`ordered` then yields records in full rank order for one request: only the records the
request or the feedback touch are sorted again; everything else keeps its prepared
order, and the two are merged lazily, so a block over 10,000 facts looks at a few
hundred of them. Pure functions.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from memvault.core.records import PREFERENCE_CATEGORIES, Fact

PREFERENCE_KINDS = ("preference", *PREFERENCE_CATEGORIES)
"""Categories shown under "Preferences:" (and capped by `max_preferences`)."""
STYLE_CATEGORIES = ("communication", "presentation")
"""Preferences about how answers look: they apply to every request, so among records
equally (un)related to it they come first."""
NEVER_STATUSES = ("superseded", "forgotten", "pending", "rejected")
RELEVANCE_BANDS = 4
"""Relevance scores (0..1) are cut into this many bands before authority is compared:
a clearly better match wins, near-equal matches are ordered by standing."""

RankKey = tuple[int, int, int, int, float, float, int, str, int]


@dataclass(frozen=True, slots=True)
class Relevance:
    """How well a record matches the request: a score in 0..1 and the reason in words."""

    score: float
    reason: str


def standing(record: Fact) -> tuple[bool, bool]:
    """(inferred, proven), as `Fact.authority` / `Fact.status` define them, cheaply."""
    meta = record.meta
    inferred = meta.get("auth") == "inferred"
    return inferred, meta.get("status", "trial" if inferred else "proven") == "proven"


def band(relevance: Relevance | None) -> int:
    """0 / -1 / ... for relevant records (lower sorts first), 1 for the rest."""
    if relevance is None or relevance.score <= 0:
        return 1
    return -min(int(relevance.score * RELEVANCE_BANDS), RELEVANCE_BANDS - 1)


def rank_key(record: Fact, feedback: Mapping[str, float] | None = None,
             relevance: Relevance | None = None) -> RankKey:
    """Relevance band first, then how answers look (`STYLE_CATEGORIES`) before the rest,
    explicit before inferred, proven before trial, the feedback signal (successful use
    raises it, corrections and failures lower it), the exact relevance, newest first,
    then id, line."""
    inferred, proven = standing(record)
    return (band(relevance), 0 if record.category in STYLE_CATEGORIES else 1,
            1 if inferred else 0, 0 if proven else 1,
            -feedback.get(record.id, 0.0) if feedback else 0.0,
            -(relevance.score if relevance is not None else 0.0),
            -(record.updated or 0), record.id, record.line)


def accepted_at(record: Fact) -> int:
    from memvault.core.records import parse_timestamp

    return parse_timestamp(record.meta.get("accepted")) or record.updated or 0


def never_reason(record: Fact, forgotten: frozenset[str]) -> str | None:
    """Why this record may never enter a prompt, or None."""
    if record.id in forgotten:
        return "forgotten"
    status = record.meta.get("status")
    if status in NEVER_STATUSES:
        return status
    if record.task is not None and record.task not in ("x", "X"):
        return "pending (unticked task box)"
    if not record.text.strip():
        return "empty text"
    return None


@dataclass(slots=True)
class PreparedRecords:
    """Facts and lessons classified and put in standing order (see the module doc)."""

    general: list[Fact] = field(default_factory=list)
    preferences: list[Fact] = field(default_factory=list)
    lessons: list[Fact] = field(default_factory=list)
    never: list[tuple[Fact, str, str]] = field(default_factory=list)  # record, kind, why


def _standing_key(record: Fact) -> tuple[int, int, int, int, str, int]:
    inferred, proven = standing(record)
    return (0 if record.category in STYLE_CATEGORIES else 1, 1 if inferred else 0,
            0 if proven else 1, -(record.updated or 0), record.id, record.line)


def prepare_records(facts: Iterable[Fact], lessons: Iterable[Fact],
                    forgotten: Iterable[str] = ()) -> PreparedRecords:
    gone = frozenset(forgotten)
    out = PreparedRecords()
    for fact in facts:
        kind = "preference" if fact.category in PREFERENCE_KINDS else "fact"
        reason = never_reason(fact, gone)
        if reason:
            out.never.append((fact, kind, reason))
        else:
            (out.preferences if kind == "preference" else out.general).append(fact)
    for lesson in lessons:
        reason = never_reason(lesson, gone)
        if reason:
            out.never.append((lesson, "lesson", reason))
        else:
            out.lessons.append(lesson)
    out.general.sort(key=_standing_key)
    out.preferences.sort(key=_standing_key)
    out.lessons.sort(key=lambda r: (-accepted_at(r), r.id, r.line))
    return out


_INDEXES: dict[int, tuple[list[Fact], dict[str, list[Fact]]]] = {}


def _index(records: list[Fact]) -> dict[str, list[Fact]]:
    """Records by id, built once per (prepared, kept) list."""
    kept = _INDEXES.get(id(records))
    if kept is not None and kept[0] is records:
        return kept[1]
    by_id: dict[str, list[Fact]] = {}
    for record in records:
        by_id.setdefault(record.id, []).append(record)
    if len(_INDEXES) > 32:
        _INDEXES.clear()
    _INDEXES[id(records)] = (records, by_id)
    return by_id


def ordered(records: list[Fact], feedback: Mapping[str, float],
            relevance: Mapping[str, Relevance]) -> Iterator[Fact]:
    """`records` (in standing order) in full rank order for this request, lazily."""
    if not feedback and not relevance:
        return iter(records)

    def key(record: Fact) -> RankKey:
        return rank_key(record, feedback, relevance.get(record.id))

    by_id = _index(records)
    touched = [r for rid in {*relevance, *feedback} for r in by_id.get(rid, ())]
    if not touched:
        return iter(records)
    touched.sort(key=key)
    ids = {r.id for r in touched}
    rest = (r for r in records if r.id not in ids)
    return heapq.merge(touched, rest, key=key)
