"""Authority, lifecycle and application feedback (docs/learning.md).

Where the state lives:

- **Markdown (what a person reads):** `auth:inferred` marks a record the system derived
  (no key = explicit, the user said or confirmed it); `status:trial|proven|superseded`
  is the lifecycle (no key = proven for explicit, trial for inferred records);
  `supersedes:ID` names the record a correction replaced.
- **Journal (`.memvault/events.jsonl`):** every `feedback` event (`outcome` used, ignored,
  overridden, corrected, failed) and every `lifecycle` event (`status`, `from`).
  The rank signal is derived from the feedback events only (`rank()`), never stored in
  the Markdown, so it can always be rebuilt; `replay()` recomputes each record's status
  from the lifecycle events and reports (or, with `fix`, repairs) Markdown that drifted.

Rules: `used` promotes trial -> proven; `corrected` and `failed` demote proven -> trial
and lower the rank; a correction with new wording supersedes the record with a new
explicit one (the old line stays, `status:superseded`, for history). Superseded records
are never offered for recall (`recallable`). Inferred content never overwrites explicit
content (`may_overwrite`). This module never writes Policy.md.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from memvault.core.bullets import BulletDocument, BulletItem, render_new_item, render_updated_item
from memvault.core.kinds import FACT, RecordKind, all_kinds
from memvault.core.records import Record, check_record_text, record_from_item
from memvault.errors import BadInput, InvalidInput, NotFound
from memvault.services.bullet_files import (
    NoChange,
    edit_bullet_file,
    find_one,
    ids_beside,
    load_bullet_file,
    new_record_id,
)

if TYPE_CHECKING:
    from memvault.services.vault import Vault

OUTCOMES = ("used", "ignored", "overridden", "corrected", "failed")
RANK_WEIGHTS = {"used": 1.0, "ignored": -0.1, "overridden": 0.0, "corrected": -1.0,
                "failed": -2.0}
STATUSES = ("trial", "proven", "superseded")


_RANKS_LOCK = threading.Lock()
_RANKS: dict[tuple[str, str], tuple[int, bytes, dict[str, float]]] = {}


def _add_feedback(out: dict[str, float], data: bytes, scope: str) -> None:
    from memvault.services.journal import scan_events

    for ev in scan_events(data, ("feedback",), scope=scope):
        rec = str(ev.get("record"))
        out[rec] = round(out.get(rec, 0.0) + RANK_WEIGHTS.get(str(ev.get("outcome")), 0.0), 3)


@dataclass(slots=True)
class StatusDrift:
    """A record whose status in the Markdown differs from the journal's."""

    id: str
    file: str
    markdown: str
    journal: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "file": self.file, "markdown": self.markdown,
                "journal": self.journal}


@dataclass(slots=True)
class ReplayReport:
    """What `replay` found: how many records it read, the drifted ones, how many it
    fixed, and the rank of every record with feedback."""

    records: int
    drift: list[StatusDrift]
    fixed: int
    ranks: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"records": self.records, "drift": [d.to_dict() for d in self.drift],
                "fixed": self.fixed, "ranks": self.ranks}


def _record(item: BulletItem, kind: RecordKind) -> Record:
    return record_from_item(item, kind.record_type, kind.categories)


R = TypeVar("R", bound=Record)


def recallable(records: list[R]) -> list[R]:
    """Records that may enter a prompt: never superseded ones."""
    return [r for r in records if r.status != "superseded"]


def may_overwrite(existing: Record, incoming_authority: str) -> bool:
    """Inferred content never overwrites explicit content."""
    return not (existing.authority == "explicit" and incoming_authority == "inferred")


@dataclass(slots=True)
class FeedbackResult:
    record: Record
    outcome: str
    status_before: str
    status_after: str
    rank: float
    replaced_by: Record | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"record": self.record.to_dict(), "outcome": self.outcome,
                "status_before": self.status_before, "status_after": self.status_after,
                "rank": self.rank,
                "replaced_by": self.replaced_by.to_dict() if self.replaced_by else None}


class LifecycleService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    # -- locating ----------------------------------------------------------------------

    def _files(self) -> list[tuple[str, RecordKind]]:
        """The files of accepted records (every kind but the inbox), with their kind."""
        lay = self.vault.layout
        return [(lay.path(k), k) for k in all_kinds() if not k.inbox]

    def _kind(self, path: str) -> RecordKind:
        return self.vault.layout.kind_at(path) or FACT

    def locate(self, record_id: str) -> tuple[str, Record]:
        for path, kind in self._files():
            doc = load_bullet_file(self.vault.backend, path).doc
            found = doc.find(record_id)
            if found:
                return path, _record(found[0], kind)
        raise NotFound(f"no fact or lesson with id {record_id!r} in "
                       f"{self.vault.layout.memory} or {self.vault.layout.lessons}")

    # -- feedback ----------------------------------------------------------------------

    def feedback(self, record_id: str, outcome: str, *, text: str | None = None,
                 event_id: str | None = None) -> FeedbackResult:
        if outcome not in OUTCOMES:
            raise BadInput(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
        if text is not None and outcome != "corrected":
            raise BadInput("new wording (--text) goes with the outcome `corrected` only")
        if text is not None:  # checked before anything is journalled
            text = check_record_text(text)
        path, record = self.locate(record_id)
        added = self.vault.events.append("feedback", event_id=event_id, record=record.id,
                                         outcome=outcome)
        before = record.status
        after = before
        replaced = None
        if added and before != "superseded":
            if outcome == "used" and before == "trial":
                after = "proven"
            elif outcome in ("corrected", "failed") and before == "proven":
                after = "trial"
            if text is not None:
                replaced = self.supersede(record.id, text)
                after = "superseded"
            elif after != before:
                self.set_status(path, record.id, after, reason=f"feedback:{outcome}")
        _, record = self.locate(record.id)
        return FeedbackResult(record, outcome, before, after, self.rank(record.id), replaced)

    def set_status(self, path: str, record_id: str, status: str, *, reason: str) -> Record:
        kind = self._kind(path)
        before: list[str] = []

        def apply(doc: BulletDocument) -> Record:
            item = find_one(doc, record_id, path)
            fact = _record(item, kind)
            before[:] = [fact.status]
            if fact.status == status:
                raise NoChange(fact)
            meta = dict(item.meta)
            meta["id"] = item.id
            meta["status"] = status
            if item.provisional:  # its id gets written: never one a forget left dead
                self.vault.tombstones.revive(item.id, item.text)
            doc.replace_item(item, render_updated_item(item, meta=meta))
            return _record(doc.find(record_id)[0], kind)

        fact = edit_bullet_file(self.vault.backend, path, apply,
                                message="memvault: lifecycle change")
        if before and before[0] != status:
            self.vault.events.append("lifecycle", record=record_id, status=status,
                                     **{"from": before[0]}, reason=reason)
        return fact

    def supersede(self, record_id: str, new_text: str) -> Record:
        """Replace a record by a new explicit one; the old stays, marked superseded."""
        new_text = check_record_text(new_text)
        path, old = self.locate(record_id)
        if old.status == "superseded":
            raise InvalidInput(f"{record_id} is already superseded", path=path)
        kind = self._kind(path)

        def add(doc: BulletDocument) -> Record:
            new_id = new_record_id({it.id for it in doc.items} | ids_beside(
                self.vault.backend, self.vault.layout.memory_files, path))
            meta = {"id": new_id, "updated": str(int(time.time())), "supersedes": old.id}
            if old.meta.get("evidence"):
                meta["evidence"] = old.meta["evidence"]
            doc.insert_item(render_new_item(new_text, old.category_raw or "other", meta))
            return _record(doc.find(new_id)[0], kind)

        with self.vault.backend.lock():  # saved, then journalled (see `MemoryService.remember`)
            new = edit_bullet_file(self.vault.backend, path, add, message="memvault: correction")
            self.vault.events.append("fact.remembered", record=new.id, text=new.text,
                                     category=new.category_raw, source="correction",
                                     supersedes=old.id)
        self.set_status(path, old.id, "superseded", reason=f"superseded-by:{new.id}")
        self.vault.tombstones.lift(new_text, new.id)
        return new

    # -- derived state -----------------------------------------------------------------

    def ranks(self) -> dict[str, float]:
        """The rank signal of every record with feedback (sum of outcome weights).

        Derived from the journal's feedback events, incrementally: the signal up to the
        last complete line is kept per journal and principal with a digest of those
        bytes, and a later call reads only what was appended. Any other change (a
        rewrite by `forget --permanent`, a merge that interleaved lines) starts over."""
        from memvault.state_paths import EVENTS

        blob = self.vault.backend.read(EVENTS)
        if blob is None:
            return {}
        data, scope = blob.data, self.vault.layout.scope_name
        key = (str(self.vault.root), scope)
        end = data.rfind(b"\n") + 1
        with _RANKS_LOCK:
            cached = _RANKS.get(key)
        start, out = 0, {}
        if cached is not None and cached[0] <= end and \
                hashlib.sha1(data[:cached[0]]).digest() == cached[1]:
            start, out = cached[0], dict(cached[2])
        _add_feedback(out, data[start:end], scope)
        with _RANKS_LOCK:
            _RANKS[key] = (end, hashlib.sha1(data[:end]).digest(), dict(out))
        if end < len(data):  # a last line without its newline counts, but is not kept
            _add_feedback(out, data[end:], scope)
        return out

    def rank(self, record_id: str) -> float:
        return self.ranks().get(record_id, 0.0)

    def replay(self, *, fix: bool = False) -> ReplayReport:
        """Rebuild lifecycle state from the journal and compare it with the Markdown."""
        expected: dict[str, str] = {}
        for ev in self.vault.events.events(type_prefix="lifecycle"):
            if ev.get("status") in STATUSES:
                expected[str(ev.get("record"))] = str(ev["status"])
        drift: list[StatusDrift] = []
        count = 0
        for path, kind in self._files():
            for item in load_bullet_file(self.vault.backend, path).doc.items:
                count += 1
                fact = _record(item, kind)
                want = expected.get(fact.id)
                if want is not None and fact.status != want:
                    drift.append(StatusDrift(fact.id, path, fact.status, want))
        fixed = 0
        if fix:
            for d in drift:
                self._write_status_quietly(d.file, d.id, d.journal)
                fixed += 1
        return ReplayReport(count, drift, fixed, self.ranks())

    def _write_status_quietly(self, path: str, record_id: str, status: str) -> None:
        def apply(doc: BulletDocument) -> None:
            item = find_one(doc, record_id, path)
            meta = dict(item.meta)
            meta["id"] = item.id
            meta["status"] = status
            if item.provisional:
                self.vault.tombstones.revive(item.id, item.text)
            doc.replace_item(item, render_updated_item(item, meta=meta))

        edit_bullet_file(self.vault.backend, path, apply, message="memvault: journal replay")
