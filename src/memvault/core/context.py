"""Choosing what goes into a prompt: `select_context` builds a `ContextBlock`.

Inputs are values (facts, lessons, the request, the policy limits as a plain mapping,
the settings, and optionally each record's relevance to the request); the output is the
selection with a `whyApplied` for every shown record, a bounded manifest of what did
not fit (counts per section and one page of ids), what was skipped and why, and the
rendered text. The same inputs always give the same block.

The rules, in order (docs/recall.md explains them for users):

1. Never: forgotten, superseded, pending (unticked task box, `status:pending`) records.
2. Rank: relevance to the request first (in coarse bands, when the caller measured it),
   then explicit before inferred, proven before trial, the application-feedback signal
   (`used` raises it; `corrected` / `failed` lower it), the exact relevance score, most
   recently updated first, then by id (so ties are deterministic).
3. General facts (identity, project, instruction, other, unknown categories) are all
   candidates; preferences (the `preference` category and the structured
   communication, presentation, workflow, research) are capped at `max_preferences`
   (12) and shown under "Preferences:".
4. Lessons: the `lesson_pool` (12) most relevant, then most recently accepted; minus
   categories the request overrides (`quoting.LESSON_OVERRIDE_CUES`); at most
   `max_lessons` (8).
5. The budget (4,000 characters of memory lines) is filled in this order: the
   `relevant_first` (15) facts that match the request best, preferences, lessons, the
   other matching facts, then the rest. A line that does not
   fit is left out and the next one is tried. What is left out is counted per section,
   and one page of it (`manifest_ids` entries) is listed with id, summary and why.
6. Personal memory is skipped when the request asks for it, `--no-personal` is given,
   or `retrieval = false`. In a vault that uses trading (`trading=True`: it has a
   Policy.md or recorded trades) the `## Limits` section is always there: the policy's
   keys when it is valid, a plain statement when it is missing or invalid (never a
   guess). A memory-only vault has no limits to state, so the block has no such section
   and its quoting note names no trading terms.

Only what is shown (and the one manifest page) is neutralised, so the cost follows the
budget, not the size of the memory. This module never reads files and never decides
anything about permissions: limits come only from the policy mapping the caller passes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any

from memvault.core.context_order import (
    NEVER_STATUSES,
    PreparedRecords,
    Relevance,
    accepted_at,
    band,
    ordered,
    prepare_records,
    rank_key,
)
from memvault.core.context_render import (
    KINDS,
    LIMITS_HEADING,
    MEMORY_HEADING,
    item_line,
    render_context,
)
from memvault.core.quoting import (
    asks_to_ignore_personal,
    neutralise,
    one_line_summary,
    request_overrides,
)
from memvault.core.records import Fact
from memvault.state_paths import CONFIG

__all__ = ["LIMITS_HEADING", "MEMORY_HEADING", "NEVER_STATUSES", "ContextBlock", "ContextSettings",
           "PolicyLimits",
           "PreparedRecords", "Relevance", "accepted_at", "prepare_records", "rank_key",
           "render_context", "select_context"]

MIN_LINE = 16
"""No memory line is shorter than this (`> - (id, c) x`): below it the budget is full."""
MAX_MISFITS = 64
"""Stop trying to fill the budget after this many lines in a row did not fit."""


@dataclass(frozen=True, slots=True)
class ContextSettings:
    """Caps and budgets; tunable in `.memvault/config.toml` under `[context]`."""

    budget: int = 4000
    max_preferences: int = 12
    lesson_pool: int = 12
    max_lessons: int = 8
    manifest_budget: int = 1000
    manifest_ids: int = 20
    relevant_first: int = 15

    @classmethod
    def from_section(cls, section: Mapping[str, Any]) -> ContextSettings:
        """Read the `[context]` table; unknown keys are ignored, bad values refused."""
        from memvault.errors import InvalidInput

        values: dict[str, int] = {}
        for key in cls.__dataclass_fields__:
            if key not in section:
                continue
            value = section[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInput(f"[context] {key} must be a whole number >= 0, not "
                                   f"{value!r}", path=CONFIG)
            values[key] = value
        return cls(**values)


@dataclass(frozen=True, slots=True)
class PolicyLimits:
    """What the caller knows of Policy.md: its limits, or why there are none."""

    path: str
    exists: bool
    limits: Mapping[str, Any] | None = None
    invalid_reason: str | None = None

    @property
    def state(self) -> str:
        if self.invalid_reason:
            return "invalid"
        return "valid" if self.exists else "missing"


@dataclass(slots=True)
class ContextItem:
    """A record injected into the prompt."""

    id: str
    kind: str  # fact | preference | lesson
    category: str
    text: str
    shown: str
    authority: str
    status: str
    updated: int | None
    why: str
    neutralised: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "category": self.category,
                "text": self.text, "authority": self.authority, "status": self.status,
                "updated": self.updated, "whyApplied": self.why,
                "neutralised": self.neutralised}


@dataclass(slots=True)
class ManifestEntry:
    """A record that matched but did not fit the budget: fetch it by id."""

    id: str
    kind: str
    category: str
    summary: str
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "category": self.category,
                "summary": self.summary, "whyApplied": self.why}


@dataclass(slots=True)
class SkippedRecord:
    id: str | None
    kind: str
    reason: str
    category: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "category": self.category,
                "reason": self.reason}


@dataclass(slots=True)
class _Candidate:
    kind: str
    record: Fact
    extra: str = ""


@dataclass(slots=True)
class ContextBlock:
    request: str
    personal: bool
    personal_skipped: str | None
    selected: list[ContextItem]
    manifest: list[ManifestEntry]
    skipped: list[SkippedRecord]
    overrides: dict[str, str]
    policy: PolicyLimits
    settings: ContextSettings
    used: int
    text: str = ""
    manifest_total: int = 0
    manifest_offset: int = 0
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped_total: int = 0
    skipped_counts: dict[str, int] = field(default_factory=dict)
    trading: bool = True
    warnings: list[str] = field(default_factory=list)
    """About the vault, not the user: e.g. a merge conflict left open in Memory.md."""

    @property
    def manifest_next(self) -> int | None:
        end = self.manifest_offset + len(self.manifest)
        return end if end < self.manifest_total else None

    def to_dict(self, *, compact: bool = False) -> dict[str, Any]:
        """Everything as JSON. `compact` (for MCP) lists the shown records' ids grouped by
        their whyApplied (their text is in `text`) and only the skips the request caused
        (the rest are counted in `skipped_counts`), so the result stays small."""
        pol = self.policy
        selected = (_grouped_by_why(self.selected) if compact
                    else [i.to_dict() for i in self.selected])
        skipped = [s for s in self.skipped if not compact or s.reason.startswith(
            "the request overrides")]
        return {
            "request": self.request,
            "personal": self.personal,
            "personal_skipped": self.personal_skipped,
            "budget": self.settings.budget,
            "used": self.used,
            "counts": self.counts,
            "selected": selected,
            "manifest": [m.to_dict() for m in self.manifest],
            "manifest_total": self.manifest_total,
            "manifest_offset": self.manifest_offset,
            "manifest_next": self.manifest_next,
            "skipped": [s.to_dict() for s in skipped],
            "skipped_total": self.skipped_total,
            "skipped_counts": dict(self.skipped_counts),
            "overrides": dict(self.overrides),
            "policy": {"path": pol.path, "state": pol.state,
                       "limits": dict(pol.limits) if pol.limits is not None else None,
                       "reason": pol.invalid_reason},
            "trading": self.trading,
            "warnings": list(self.warnings),
            "text": self.text,
        }


def _grouped_by_why(items: list[ContextItem]) -> list[dict[str, Any]]:
    groups: dict[str, list[str]] = {}
    for item in items:
        groups.setdefault(item.why, []).append(item.id)
    return [{"whyApplied": why, "ids": ids} for why, ids in groups.items()]


def _why(record: Fact, request_words: set[str], feedback: Mapping[str, float],
         relevance: Relevance | None, extra: str = "") -> str:
    parts: list[str] = []
    if relevance is not None and relevance.score > 0:
        parts.append(relevance.reason)
    parts += [record.authority, record.status]
    if record.category in request_words:
        parts.append("category matches the request")
    signal = feedback.get(record.id, 0.0)
    if signal > 0:
        parts.append("recently used successfully")
    elif signal < 0:
        parts.append("ranked lower after corrections or failures")
    if extra:
        parts.append(extra)
    return "; ".join(parts)


def select_context(facts: Iterable[Fact], lessons: Iterable[Fact], *, request: str = "",
                   policy: PolicyLimits, settings: ContextSettings = ContextSettings(),
                   no_personal: bool = False, retrieval: bool = True,
                   forgotten_ids: Iterable[str] = (),
                   feedback: Mapping[str, float] | None = None,
                   relevance: Mapping[str, Relevance] | None = None,
                   manifest_offset: int = 0,
                   prepared: PreparedRecords | None = None,
                   trading: bool = True) -> ContextBlock:
    """Select and render the context block (see the module doc for the rules).

    `prepared` is `prepare_records(facts, lessons, forgotten_ids)` kept from an earlier
    call over the same records (then `facts`, `lessons` and `forgotten_ids` are unused).
    `trading` says whether the vault uses trading (a Policy.md or recorded trades): only
    then is there a `## Limits` section."""
    request = request or ""
    overrides = request_overrides(request)
    skip_reason = None
    if not retrieval:
        skip_reason = "retrieval = false in config"
    elif no_personal:
        skip_reason = "--no-personal"
    else:
        phrase = asks_to_ignore_personal(request)
        if phrase:
            skip_reason = f"the request says {phrase!r}"
    block = ContextBlock(request=request, personal=skip_reason is None,
                         personal_skipped=skip_reason, selected=[], manifest=[], skipped=[],
                         overrides=overrides, policy=policy, settings=settings, used=0,
                         manifest_offset=max(0, manifest_offset),
                         trading=trading or policy.exists)
    if skip_reason is None:
        if prepared is None:
            prepared = prepare_records(facts, lessons, forgotten_ids)
        _select_personal(block, prepared, dict(feedback or {}), relevance or {})
    block.text = render_context(block)
    return block


class _Skips:
    """Skipped records: all counted by reason, only the first `manifest_ids` listed.
    Entries caused by the request itself (overrides) are always listed."""

    def __init__(self, block: ContextBlock) -> None:
        self.block = block
        self.listed: list[SkippedRecord] = []
        self.by_request: list[SkippedRecord] = []

    def count(self, kind: str, reason: str, n: int = 1) -> None:
        if n <= 0:
            return
        counts = self.block.skipped_counts
        counts[reason] = counts.get(reason, 0) + n
        self.block.skipped_total += n
        self.block.counts[kind]["skipped"] += n

    def add(self, record: Fact, kind: str, reason: str, *, counted_as: str | None = None,
            by_request: bool = False) -> None:
        self.count(kind, counted_as or reason)
        entry = SkippedRecord(record.id, kind, reason, record.category)
        if by_request:
            self.by_request.append(entry)
        elif len(self.listed) < self.block.settings.manifest_ids:
            self.listed.append(entry)

    def wants_more(self) -> bool:
        return len(self.listed) < self.block.settings.manifest_ids

    def finish(self) -> None:
        room = max(0, self.block.settings.manifest_ids - len(self.by_request))
        self.block.skipped = self.by_request + self.listed[:room]


def _select_personal(block: ContextBlock, prepared: PreparedRecords,
                     feedback: dict[str, float], relevance: Mapping[str, Relevance]) -> None:
    settings = block.settings
    block.counts = {k: {"candidates": 0, "shown": 0, "not_shown": 0, "skipped": 0}
                    for k in KINDS}
    skips = _Skips(block)
    for record, kind, reason in prepared.never:
        if skips.wants_more():
            skips.add(record, kind, reason)
        else:
            skips.count(kind, reason)

    prefs_in_order = ordered(prepared.preferences, feedback, relevance)
    prefs = list(islice(prefs_in_order, settings.max_preferences))
    cap_note = f"over the cap of {settings.max_preferences} preferences"
    over = len(prepared.preferences) - len(prefs)
    listed = list(islice(prefs_in_order, min(over, settings.manifest_ids)))
    for fact in listed:
        skips.add(fact, "preference", cap_note)
    skips.count("preference", cap_note, over - len(listed))

    pool = _lesson_pool(block, prepared.lessons, relevance, skips)
    pool.sort(key=lambda r: rank_key(r, feedback, relevance.get(r.id)))
    lesson_note = f"over the cap of {settings.max_lessons} lessons"
    for lesson in pool[settings.max_lessons:]:
        skips.add(lesson, "lesson", lesson_note)
    pool = pool[:settings.max_lessons]
    skips.finish()

    general = ordered(prepared.general, feedback, relevance)
    matching: list[Fact] = []
    first_other: list[Fact] = []
    for fact in general:
        if band(relevance.get(fact.id)) < 1:
            matching.append(fact)
        else:
            first_other.append(fact)
            break
    lead = settings.relevant_first
    order = chain((_Candidate("fact", f) for f in matching[:lead]),
                  (_Candidate("preference", f) for f in prefs),
                  (_Candidate("lesson", f, "recently accepted lesson") for f in pool),
                  (_Candidate("fact", f) for f in chain(matching[lead:], first_other,
                                                        general)))
    block.counts["fact"]["candidates"] = len(prepared.general)
    block.counts["preference"]["candidates"] = len(prefs)
    block.counts["lesson"]["candidates"] = len(pool)
    words = {w.strip(".,;:!?()\"'").lower() for w in block.request.split()}

    def why(c: _Candidate) -> str:
        return _why(c.record, words, feedback, relevance.get(c.record.id), c.extra)

    _fill(block, order, why)


def _lesson_pool(block: ContextBlock, lessons: list[Fact],
                 relevance: Mapping[str, Relevance], skips: _Skips) -> list[Fact]:
    """The `lesson_pool` most relevant, then most recently accepted lessons, minus those
    whose category the request overrides."""
    settings = block.settings
    active = sorted(lessons, key=lambda r: band(relevance.get(r.id))) if relevance \
        else lessons  # stable: newest accepted first within a band
    pool_note = f"not among the {settings.lesson_pool} most recently accepted lessons"
    for lesson in active[settings.lesson_pool:]:
        skips.add(lesson, "lesson", pool_note)
    pool: list[Fact] = []
    for lesson in active[:settings.lesson_pool]:
        cue = block.overrides.get(lesson.category)
        if cue:
            skips.add(lesson, "lesson", f"the request overrides {lesson.category} ({cue!r})",
                      counted_as=f"the request overrides {lesson.category}", by_request=True)
        else:
            pool.append(lesson)
    return pool


def _fill(block: ContextBlock, order: Iterator[_Candidate],
          why: Callable[[_Candidate], str]) -> None:
    """Add lines in `order` while they fit; list one page of the rest (see module doc).
    Only the lines tried and the one manifest page are neutralised."""
    settings = block.settings
    left_out: list[_Candidate] = []
    misfits = 0
    for c in order:
        room = settings.budget - block.used
        if room < MIN_LINE or misfits >= MAX_MISFITS:
            left_out.append(c)
            break
        record = c.record
        shown, defused = neutralise(record.text)
        item = ContextItem(record.id, c.kind, record.category_raw or record.category,
                           record.text, shown, record.authority, record.status,
                           record.updated, why(c), defused)
        cost = len(item_line(item)) + 1
        if cost <= room:
            block.selected.append(item)
            block.used += cost
            misfits = 0
        else:
            left_out.append(c)
            misfits += 1
    page_end = block.manifest_offset + settings.manifest_ids
    left_out.extend(islice(order, max(0, page_end - len(left_out))))
    for chosen in block.selected:
        block.counts[chosen.kind]["shown"] += 1
    for counts in block.counts.values():
        counts["not_shown"] = counts["candidates"] - counts["shown"]
    block.manifest_total = sum(c["not_shown"] for c in block.counts.values())
    page = left_out[block.manifest_offset:page_end]
    block.manifest = [ManifestEntry(c.record.id, c.kind,
                                    c.record.category_raw or c.record.category,
                                    one_line_summary(c.record.text), why(c)) for c in page]
